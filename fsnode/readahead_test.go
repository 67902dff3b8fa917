package fsnode

import (
	"bytes"
	"io"
	"runtime"
	"sync"
	"testing"

	"gcfs/cache"
	"gcfs/fsnode/testdisc"
)

// waitReadAhead waits for the file's read-ahead chain to end (no timeout:
// the test's own).
func waitReadAhead(n *Node) {
	for n.raRunning.Load() {
		runtime.Gosched()
	}
}

// noWholeDecode turns the whole-stream first decode off for one test (one
// that reads block by block).
func noWholeDecode(t *testing.T) {
	old := wholeMax
	wholeMax = 0
	t.Cleanup(func() { wholeMax = old })
}

// TestReadAhead: a read that ends in block i leaves blocks i+1 and i+2 in
// the cache once the chain ends; a sequential read of the whole file, with
// several readers at once asking for the same ranges (as the kernel's
// readahead does), decodes every block exactly once (one cache miss each)
// and reads the sample's bytes.
func TestReadAhead(t *testing.T) {
	noWholeDecode(t)
	const size = 2 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20, ReadAhead: 2})
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	dr := r.(*decodedReader)
	nb := dr.ix.NumBlocks()
	if nb < 8 {
		t.Fatalf("test setup: %d blocks", nb)
	}
	buf := make([]byte, 100)
	if _, err := r.ReadAt(buf, 10); err != nil {
		t.Fatal(err)
	}
	waitReadAhead(n)
	for j := 0; j <= 2; j++ {
		if _, ok := tree.Cache.Peek(cache.Key{File: n.Ino, Block: j}); !ok {
			t.Errorf("block %d not cached after a read of block 0", j)
		}
	}
	if _, ok := tree.Cache.Peek(cache.Key{File: n.Ino, Block: 3}); ok {
		t.Error("block 3 cached: read-ahead went past its depth")
	}

	got := make([][]byte, 4)
	var wg sync.WaitGroup
	for w := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := make([]byte, 0, size)
			p := make([]byte, 128<<10)
			for off := int64(0); off < size; off += int64(len(p)) {
				k, err := r.ReadAt(p, off)
				if err != nil && err != io.EOF {
					t.Error(err)
					return
				}
				b = append(b, p[:k]...)
			}
			got[w] = b
		}()
	}
	wg.Wait()
	waitReadAhead(n)
	for w, b := range got {
		if !bytes.Equal(b, d.Sample) {
			t.Errorf("reader %d: bytes differ from the sample", w)
		}
	}
	if st := tree.Cache.Stats(); st.Misses != int64(nb) {
		t.Errorf("%d cache misses (block decodes) for %d blocks", st.Misses, nb)
	}
}

// TestReadAheadOff: without Options.ReadAhead, or with a cache too small
// for it, a read decodes only the blocks it needs.
func TestReadAheadOff(t *testing.T) {
	noWholeDecode(t)
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{SampleSize: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, opt := range []Options{{CacheSize: 64 << 20}, {CacheSize: 256 << 10, ReadAhead: 2}} {
		tree, _ := openDisc(t, d.Path, -1, opt)
		n := mustLookup(t, tree, "G/MISC.WAD/frontend")
		r, err := n.Open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadAt(make([]byte, 100), 10); err != nil {
			t.Fatal(err)
		}
		waitReadAhead(n)
		if st := tree.Cache.Stats(); st.Misses != 1 {
			t.Errorf("options %+v: %d blocks decoded for a read of one", opt, st.Misses)
		}
	}
}
