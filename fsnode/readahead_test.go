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
		if _, ok := tree.Cache.Peek(cache.Key{File: dr.key, Block: j}); !ok {
			t.Errorf("block %d not cached after a read of block 0", j)
		}
	}
	if _, ok := tree.Cache.Peek(cache.Key{File: dr.key, Block: 3}); ok {
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

// streamingFirstRead makes the tree stream first decodes (as a mount on
// fewer than parallelWholeMin cores does), whatever the machine.
func streamingFirstRead(t *testing.T) {
	old := wholeWorkers
	wholeWorkers = parallelWholeMin - 1
	t.Cleanup(func() { wholeWorkers = old })
}

// TestStreamedReadInOrder: where a file's first decode streams, a read
// of a block a little past the read-ahead chain (the kernel's request for
// the next MiB, arriving while the chain decodes the first) follows the
// chain in order: no whole decode beside it, every block decoded once, the
// sample's bytes. A read far past anything decoded still decodes the
// stream whole.
func TestStreamedReadInOrder(t *testing.T) {
	streamingFirstRead(t)
	const size = 4 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20, ReadAhead: 16})
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	dr := r.(*decodedReader)
	if nb := dr.ix.NumBlocks(); nb < 2*inOrderMax || !dr.streams() {
		t.Fatalf("test setup: %d blocks, streams %v", nb, dr.streams())
	}
	p := make([]byte, 100)
	if _, err := r.ReadAt(p, 10); err != nil { // block 0; the chain starts on 1..16
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off, _ := dr.ix.Block(18 + w)
			q := make([]byte, 64<<10)
			k, err := r.ReadAt(q, off)
			if err != nil || !bytes.Equal(q[:k], d.Sample[off:off+int64(k)]) {
				t.Errorf("read at %d: %d bytes, %v", off, k, err)
			}
		}()
	}
	wg.Wait()
	waitReadAhead(n)
	if got := tree.wholeDecodes.Load(); got != 0 {
		t.Errorf("%d whole decodes beside the read-ahead chain", got)
	}
	if st := tree.Cache.Stats(); st.Misses != int64(st.Entries) || st.Evictions != 0 {
		t.Errorf("%d block decodes for %d blocks cached: some decoded twice", st.Misses, st.Entries)
	}

	// A fresh cache, and a read past where the first decode went: nothing
	// within inOrderMax blocks before it is cached or decoding, so it
	// decodes whole.
	tree.Cache = cache.New(64 << 20)
	r2, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	off, _ := r2.(*decodedReader).ix.Block(2*inOrderMax - 1)
	if k, err := r2.ReadAt(p, off); err != nil || !bytes.Equal(p[:k], d.Sample[off:off+int64(k)]) {
		t.Fatalf("read at %d: %v", off, err)
	}
	if got := tree.wholeDecodes.Load(); got != 1 {
		t.Errorf("a read far past anything decoded: %d whole decodes, want 1", got)
	}
}
