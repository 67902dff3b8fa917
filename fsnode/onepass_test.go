package fsnode

import (
	"bytes"
	"io"
	"sync/atomic"
	"testing"

	"gcfs/fsnode/testdisc"
)

// countingImage counts the image bytes read through it.
type countingImage struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingImage) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// TestDecodedOnePass: a decoded file's size step reads its stream once and
// decodes nothing (it builds the index, whose snapshots are still empty); Open
// reuses that index (no reads); a sequential read then reads the stream once
// more (each block decoded once, with its predecessor from the cache as the
// window), fills every snapshot, and the index LRU has reserved room for them.
func TestDecodedOnePass(t *testing.T) {
	const size = 4 << 20
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{SampleSize: size})
	if err != nil {
		t.Fatal(err)
	}
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20})
	ci := &countingImage{r: tree.Image.R}
	tree.Image.R = ci
	n := mustLookup(t, tree, "G/MISC.WAD/frontend")
	stream := int64(len(d.Files["G/MISC.WAD/frontend.wad"]))
	if ci.n.Load() != 0 {
		t.Fatalf("lookup read %d bytes", ci.n.Load())
	}

	if n.Size() != size {
		t.Fatalf("size %d", n.Size())
	}
	if got := ci.n.Load(); got < stream-4096 || got > stream+4096 {
		t.Errorf("size step read %d bytes of a %d-byte stream, want one pass", got, stream)
	}
	ix := tree.indexes.get(n)
	if ix == nil {
		t.Fatal("the size step left no index in the LRU")
	}
	if ix.MemSize() >= ix.MaxMemSize() {
		t.Errorf("index after the size step: MemSize %d, MaxMemSize %d: snapshots filled (a decode) or none needed (test setup)", ix.MemSize(), ix.MaxMemSize())
	}

	ci.n.Store(0)
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	if ci.n.Load() != 0 {
		t.Errorf("Open read %d bytes: the index was rebuilt", ci.n.Load())
	}
	if dr, ok := r.(*decodedReader); !ok || dr.ix != ix {
		t.Errorf("Open did not reuse the index of the size step")
	}

	got := make([]byte, 0, size)
	buf := make([]byte, 128<<10)
	for off := int64(0); off < size; off += int64(len(buf)) {
		k, err := r.ReadAt(buf, off)
		if err != nil && err != io.EOF {
			t.Fatal(err)
		}
		got = append(got, buf[:k]...)
	}
	if !bytes.Equal(got, d.Sample) {
		t.Fatal("sequential read differs from the sample")
	}
	if rd := ci.n.Load(); rd > stream+stream/8 {
		t.Errorf("sequential read read %d bytes of a %d-byte stream, want about one pass", rd, stream)
	}
	if ix.MemSize() != ix.MaxMemSize() {
		t.Errorf("after a sequential read: MemSize %d, MaxMemSize %d (snapshots not filled on the way)", ix.MemSize(), ix.MaxMemSize())
	}
	if _, used := tree.indexes.stats(); used < ix.MemSize() {
		t.Errorf("index LRU accounts %d bytes, the index holds %d", used, ix.MemSize())
	}
}
