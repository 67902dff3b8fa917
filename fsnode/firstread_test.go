package fsnode

import (
	"bytes"
	"io"
	"sync"
	"testing"

	"gcfs/cache"
	"gcfs/codec"
	"gcfs/fsnode/testdisc"
)

// TestFirstReadWhole: the first read of a decoded file of several blocks,
// even one at its end, decodes the stream whole (in parallel: the 4 MiB
// sample's stream spans several of the codec's chunks) and caches every
// block: one decode for the file, readers at once anywhere in it get
// the sample's bytes, and a second read of any block is a hit. A cache of
// less than four times the file reads it block by block.
// sampleDisc writes a test disc whose G/MISC.WAD/frontend decodes to size
// bytes of sample and returns it, a tree of it with opt and that file.
func sampleDisc(t *testing.T, size int, opt Options) (*testdisc.Disc, *Tree, *Node) {
	t.Helper()
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{SampleSize: size})
	if err != nil {
		t.Fatal(err)
	}
	tree, _ := openDisc(t, d.Path, -1, opt)
	return d, tree, mustLookup(t, tree, "G/MISC.WAD/frontend")
}

func TestFirstReadWhole(t *testing.T) {
	const size = 4 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	dr := r.(*decodedReader)
	nb := dr.ix.NumBlocks()
	if nb < 16 || n.streamLen() < 1<<20 {
		t.Fatalf("test setup: %d blocks, stream of %d bytes", nb, n.streamLen())
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(size - 1000 - w*(size/4))
			p := make([]byte, 900)
			if k, err := r.ReadAt(p, off); err != nil || !bytes.Equal(p[:k], d.Sample[off:off+900]) {
				t.Errorf("reader %d at %d: %d bytes, %v", w, off, k, err)
			}
		}()
	}
	wg.Wait()
	if got := tree.wholeDecodes.Load(); got != 1 {
		t.Fatalf("%d whole decodes, want 1", got)
	}
	for j := range nb {
		if _, ok := tree.Cache.Peek(cache.Key{File: dr.key, Block: j}); !ok {
			t.Fatalf("block %d of %d not cached after the first read", j, nb)
		}
	}
	first := tree.Cache.Stats().Misses // the four readers' (three waited for the one decode)
	if first > 4 {
		t.Errorf("%d cache misses for 4 first reads", first)
	}
	all := make([]byte, size)
	if k, err := r.ReadAt(all, 0); k != size || !bytes.Equal(all, d.Sample) {
		t.Fatalf("whole file: %d bytes, %v, equal %v", k, err, bytes.Equal(all, d.Sample))
	}
	if st := tree.Cache.Stats(); st.Misses != first {
		t.Errorf("reading the whole file after the first reads: %d cache misses", st.Misses-first)
	}
	if dr.ix.MemSize() != dr.ix.MaxMemSize() {
		t.Error("the whole decode left window snapshots unfilled")
	}

	// A fresh cache (the blocks evicted): the stream was decoded, its
	// snapshots are known, so a read in the middle decodes one group.
	tree.Cache = cache.New(64 << 20)
	r, err = n.Open()
	if err != nil {
		t.Fatal(err)
	}
	p0 := make([]byte, 100)
	if _, err := r.ReadAt(p0, size/2); err != nil || !bytes.Equal(p0, d.Sample[size/2:size/2+100]) {
		t.Fatalf("read after eviction: %v", err)
	}
	if got := tree.wholeDecodes.Load(); got != 1 {
		t.Errorf("a read in a decoded-before stream decoded it whole (%d whole decodes)", got)
	}

	// A cache of less than 4 × the file: block by block.
	tree2, _ := openDisc(t, d.Path, -1, Options{CacheSize: size*4 - 1})
	n2 := mustLookup(t, tree2, "G/MISC.WAD/frontend")
	r2, err := n2.Open()
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 100)
	if _, err := r2.ReadAt(p, 10); err != nil || !bytes.Equal(p, d.Sample[10:110]) {
		t.Fatalf("small cache: %v", err)
	}
	if tree2.wholeDecodes.Load() != 0 {
		t.Error("a file over a quarter of the cache was decoded whole")
	}
}

// TestParallelScan: a long stream's size scan runs on every core (here
// two, whatever the machine) and gives the size and bytes the sequential
// scan gives.
func TestParallelScan(t *testing.T) {
	old := wholeWorkers
	wholeWorkers = 2
	t.Cleanup(func() { wholeWorkers = old })
	const size = 4 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	if n.streamLen() < parallelScanMin {
		t.Fatalf("test setup: a stream of %d bytes", n.streamLen())
	}
	if n.Size() != size || tree.parallelScans.Load() < 1 {
		t.Fatalf("size %d, %d parallel scans", n.Size(), tree.parallelScans.Load())
	}
	if got := readAll(t, n); !bytes.Equal(got, d.Sample) {
		t.Fatal("a file scanned in parallel reads other bytes")
	}
}

// TestWholeDecodeBounds: with the tree's slots for streams held whole all
// taken, a first read and a long stream's size scan take their streaming
// paths and read the same bytes.
func TestWholeDecodeBounds(t *testing.T) {
	const size = 4 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	if got := readAll(t, n); !bytes.Equal(got, d.Sample) || tree.wholeDecodes.Load() != 1 {
		t.Fatalf("test setup: %d whole decodes", tree.wholeDecodes.Load())
	}

	_, tree2, n2 := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	for range cap(tree2.bigSem) {
		tree2.bigSem <- struct{}{}
	}
	if got := readAll(t, n2); !bytes.Equal(got, d.Sample) {
		t.Fatal("with no slot free: other bytes")
	}
	if tree2.wholeDecodes.Load() != 0 || tree2.parallelScans.Load() != 0 {
		t.Errorf("with no slot free: %d whole decodes, %d parallel scans", tree2.wholeDecodes.Load(), tree2.parallelScans.Load())
	}
}

// TestIndexRebuiltOtherLayout: an index the LRU dropped may be rebuilt
// another way (a sequential scan where a parallel one ran, or the reverse),
// cutting the output into other blocks; the blocks cached through the first
// are never served as blocks of the second (they were: extract of the
// retail layout failed on hundreds of level core blocks with "decoded block
// N has X bytes ..., index says Y").
func TestIndexRebuiltOtherLayout(t *testing.T) {
	const size = 3 << 20
	d, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	src, err := n.streamInput()
	if err != nil {
		t.Fatal(err)
	}
	stream := make([]byte, src.Size())
	if _, err := src.ReadAt(stream, 0); err != nil {
		t.Fatal(err)
	}
	seq, err := codec.NewIndex(bytes.NewReader(stream), int64(len(stream)), n.codecOptions())
	if err != nil {
		t.Fatal(err)
	}
	par, err := codec.NewIndexParallel(stream, 2, n.codecOptions())
	if err != nil {
		t.Fatal(err)
	}
	same := seq.NumBlocks() == par.NumBlocks()
	for j := 0; same && j < seq.NumBlocks(); j++ {
		o1, n1 := seq.Block(j)
		o2, n2 := par.Block(j)
		same = o1 == o2 && n1 == n2
	}
	if same {
		t.Fatal("test setup: the sequential and parallel indexes cut the stream alike")
	}
	readAll := func(ix *codec.Index) {
		t.Helper()
		tree.indexes.put(n, ix)
		r, err := n.Open()
		if err != nil {
			t.Fatal(err)
		}
		got := make([]byte, size)
		if k, err := r.ReadAt(got, 0); k != size || (err != nil && err != io.EOF) || !bytes.Equal(got, d.Sample) {
			t.Fatalf("read %d bytes through an index of %d blocks: %v (equal: %v)", k, ix.NumBlocks(), err, bytes.Equal(got, d.Sample))
		}
	}
	readAll(seq)
	readAll(par)
	readAll(seq)
}
