package fsnode

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"gcfs/cache"
	"gcfs/codec"
)

// waitFileAhead waits for the tree's file-ahead worker to stop (a minute
// at most).
func waitFileAhead(t *testing.T, tree *Tree) {
	t.Helper()
	waitUntil(t, "the file-ahead worker to stop", time.Minute, func() bool {
		tree.ahead.mu.Lock()
		defer tree.ahead.mu.Unlock()
		return !tree.ahead.running
	})
}

// waitUntil polls cond until it holds, failing the test after limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s after %v", what, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// cachedBytes is how many bytes of n's decoded blocks the tree's cache
// holds, and whether it holds its first block.
func cachedBytes(t *testing.T, tree *Tree, n *Node) (int64, bool) {
	t.Helper()
	n.Size() // (openDecoded wants the size step done)
	r, err := n.openDecoded()
	if err != nil {
		t.Fatal(err)
	}
	dr := r.(*decodedReader)
	var total int64
	var first bool
	for j := 0; j < dr.ix.NumBlocks(); j++ {
		if b, ok := tree.Cache.Peek(cache.Key{File: dr.key, Block: j}); ok {
			total += int64(len(b))
			first = first || j == 0
		}
	}
	return total, first
}

// TestFileAhead: reading a decoded file from its start in a tree that
// reads ahead (a mount's options) leaves the decoded file after it, in
// tree order, sized and decoded in the cache; reading it then decodes
// nothing more and gives the reference bytes. Without read-ahead (the
// CLI's and the model's options) nothing is done ahead.
func TestFileAhead(t *testing.T) {
	d := writeDisc(t)
	ref, _ := openDisc(t, d.Path, -1, Options{})
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
	order := tree.ahead.order
	if len(order) < 3 {
		t.Fatalf("test setup: %d decoded files", len(order))
	}
	var prev *Node
	_ = tree.Walk(func(n *Node) error {
		if n.Kind == Decoded && n.staticErr == nil {
			if n.seq < 0 || int(n.seq) >= len(order) || order[n.seq] != n {
				t.Fatalf("%s: not in the order (seq %d)", n.Path(), n.seq)
			}
			if prev != nil && n.seq != prev.seq+1 {
				t.Errorf("%s follows %s in the tree, has seq %d after %d", n.Path(), prev.Path(), n.seq, prev.seq)
			}
			prev = n
		} else if n.seq != -1 {
			t.Errorf("%s (kind %v): seq %d", n.Path(), n.Kind, n.seq)
		}
		return nil
	})

	from, next := order[1], order[2]
	if from.Err() != nil || next.Err() != nil {
		t.Fatalf("test setup: %v, %v", from.Err(), next.Err())
	}
	r, err := from.Open()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadAt(make([]byte, 100), 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	waitFileAhead(t, tree)
	waitReadAhead(from)
	if got, hasFirst := cachedBytes(t, tree, next); !hasFirst || got != next.Size() {
		t.Fatalf("%s: %d of %d bytes decoded ahead (first block: %v)", next.Path(), got, next.Size(), hasFirst)
	}
	misses := tree.Cache.Stats().Misses
	if got, want := readAll(t, next), readAll(t, mustLookup(t, ref, next.Path())); !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes differ from the reference's %d", next.Path(), len(got), len(want))
	}
	waitFileAhead(t, tree)
	if st := tree.Cache.Stats(); st.Misses != misses {
		t.Errorf("%d blocks decoded by the read of a file decoded ahead", st.Misses-misses)
	}

	plain, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20})
	pn := mustLookup(t, plain, from.Path())
	readAll(t, pn)
	waitFileAhead(t, plain)
	if n := plain.ahead.files.Load(); n != 0 {
		t.Errorf("without read-ahead, %d files prepared ahead", n)
	}
	if got, _ := cachedBytes(t, plain, mustLookup(t, plain, next.Path())); got != 0 {
		t.Errorf("without read-ahead, %s has %d bytes cached", next.Path(), got)
	}
}

// TestFileAheadNotForModel: the model's own reads of a decoded file from
// its start (a view's encode, a table's parse: openForModel) ask for no
// files ahead, where a reader's (Open) does.
func TestFileAheadNotForModel(t *testing.T) {
	d := writeDisc(t)
	for _, forModel := range []bool{true, false} {
		tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
		if len(tree.ahead.order) < 3 || tree.ahead.order[1].Err() != nil {
			t.Fatalf("test setup: %d decoded files", len(tree.ahead.order))
		}
		n := tree.ahead.order[1] // as TestFileAhead's, with a file after it
		open := n.Open
		if forModel {
			open = n.openForModel
		}
		r, err := open()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.ReadAt(make([]byte, 100), 0); err != nil && err != io.EOF {
			t.Fatal(err)
		}
		waitFileAhead(t, tree)
		if got := tree.ahead.files.Load(); forModel && got != 0 {
			t.Errorf("a read for the model prepared %d files ahead", got)
		} else if !forModel && got == 0 {
			t.Error("a reader's read prepared no files ahead")
		}
	}
}

// TestFileAheadBounds: what is decoded ahead stays within an eighth of the
// cache (and fileAheadBytes), give or take the block that crosses it.
func TestFileAheadBounds(t *testing.T) {
	const cacheSize = 8 << 20
	_, tree, n := sampleDisc(t, 4<<20, Options{CacheSize: cacheSize, ReadAhead: 2})
	budget := min(int64(fileAheadBytes), cacheSize/8)
	if n.Size() < 2*budget {
		t.Fatalf("test setup: %s has %d bytes", n.Path(), n.Size())
	}
	tree.prepareFiles(int(n.seq), tree.ahead.gen.Load(), nil)
	got, _ := cachedBytes(t, tree, n)
	if got < budget || got > budget+256<<10 {
		t.Errorf("%d bytes decoded ahead, bound %d", got, budget)
	}
}

// TestFileAheadNewerRequest: a request the worker has been given a newer
// one than stops before its next file; the current one passes over a
// corrupt file (which still fails its open) and prepares the others.
func TestFileAheadNewerRequest(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
	gen := tree.ahead.gen.Add(1)
	tree.ahead.gen.Add(1)
	tree.prepareFiles(0, gen, nil)
	if n := tree.ahead.files.Load(); n != 0 {
		t.Errorf("a superseded request prepared %d files", n)
	}
	order := tree.ahead.order
	if order[0].Err() == nil {
		t.Fatalf("test setup: %s is not corrupt", order[0].Path())
	}
	tree.prepareFiles(0, tree.ahead.gen.Load(), nil)
	if n := tree.ahead.files.Load(); n != int64(len(order)-1) {
		t.Errorf("the current request prepared %d files of %d", n, len(order)-1)
	}
	if _, err := order[0].Open(); err == nil {
		t.Errorf("%s: opens after the worker passed it", order[0].Path())
	}
}

// TestFileAheadAdvice: the worker asks the kernel to read the streams of
// the files it is about to prepare, each file once, within its bounds; on
// an image evicted from the page cache, the advised streams then come into
// it without anything reading them.
func TestFileAheadAdvice(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
	order := tree.ahead.order
	if len(order) < 3 {
		t.Fatalf("test setup: %d decoded files", len(order))
	}
	f, err := os.Open(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem, err := unix.Mmap(int(f.Fd()), 0, int(tree.Image.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	// resident: the fraction of [lo, hi) of the image in the page cache.
	resident := func(lo, hi int64) float64 {
		lo &^= int64(os.Getpagesize() - 1)
		vec := make([]byte, (hi-lo+int64(os.Getpagesize())-1)/int64(os.Getpagesize()))
		if _, _, e := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[lo])), uintptr(hi-lo), uintptr(unsafe.Pointer(&vec[0]))); e != 0 {
			t.Fatal(e)
		}
		in := 0
		for _, v := range vec {
			in += int(v & 1)
		}
		return float64(in) / float64(len(vec))
	}
	_ = f.Sync() // (dirty pages stay in the page cache)
	_ = unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)

	spans := tree.adviseAhead(1)
	var in int64
	for k, n := range order {
		inWindow := k >= 1 && k < 1+fileAheadFiles && in < fileAheadInput
		if k >= 1 {
			in += n.streamLen()
		}
		if n.advised.Load() != inWindow {
			t.Errorf("%s (file %d): advised %v, in the window %v", n.Path(), k, n.advised.Load(), inWindow)
		}
	}
	if len(spans) == 0 {
		t.Fatal("nothing advised")
	}
	if again := tree.adviseAhead(1); len(again) != 0 {
		t.Errorf("advised again: %v", again)
	}
	s := spans[0]
	if r := resident(s.lo, s.hi); r > 0.5 {
		t.Logf("the image stays in the page cache after FADV_DONTNEED (%.0f%% of the span): residency not checked", 100*r)
		return
	}
	deadline := time.Now().Add(10 * time.Second)
	for resident(s.lo, s.hi) < 1 {
		if time.Now().After(deadline) {
			t.Fatalf("advised span [%d, %d): %.0f%% in the page cache after 10 s", s.lo, s.hi, 100*resident(s.lo, s.hi))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestWholeScratch: the worker's buffers are sized once for the largest
// budget and then serve smaller files, and a decode of a budget's output
// into them does not grow them.
func TestWholeScratch(t *testing.T) {
	var sc wholeScratch
	in, out := sc.buffers(1000, 4<<20)
	if len(in) != 1000 || len(out) != 0 || int64(cap(out)) < 4<<20 {
		t.Fatalf("buffers(1000, 4 MiB): %d input bytes, output %d/%d", len(in), len(out), cap(out))
	}
	first := &out[:1][0]
	in, out = sc.buffers(3000, 1<<20)
	if len(in) != 3000 || &out[:1][0] != first {
		t.Fatalf("a smaller budget got %d input bytes and a new output buffer", len(in))
	}
	// A stream that decodes to the whole budget lands in that buffer: its
	// decode never grows it.
	want := bytes.Repeat([]byte("a whole budget of output "), (1<<20)/25)
	src := codec.Encode(want, codec.EncodeOptions{})
	var fresh wholeScratch // sized for exactly this budget
	in, dst := fresh.buffers(int64(len(src)), int64(len(want)))
	copy(in, src)
	_, got, err := codec.NewIndexDecode(dst, in, codec.Options{}, int64(len(want)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("decode through the scratch: %d bytes, %v", len(got), err)
	}
	if &got[:1][0] != &dst[:1][0] {
		t.Fatal("the decode grew the output into a new buffer")
	}
}

// TestFileAheadDecodesIndex: the worker sizes a file not sized yet by
// decoding it once for its index and its blocks (no scan), within its
// budget: the files read the reference's bytes and sizes, with no block
// decoded again; a file whose output is past what is left of the budget is
// scanned as before.
func TestFileAheadDecodesIndex(t *testing.T) {
	d := writeDisc(t)
	ref, _ := openDisc(t, d.Path, -1, Options{})
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
	scanned := tree.scanned.Load()
	// One scratch for every file, as the worker keeps it: each file's
	// output lands in the buffer the one before it used.
	var sc wholeScratch
	tree.prepareFiles(0, tree.ahead.gen.Load(), &sc)
	decoded := tree.decodedIndexes.Load()
	if decoded == 0 {
		t.Fatal("no file sized by decoding it")
	}
	if got := tree.scanned.Load() - scanned; got+decoded > int64(len(tree.ahead.order)) {
		t.Errorf("%d scans and %d decodes for %d files: some sized twice", got, decoded, len(tree.ahead.order))
	}
	// The files the worker decoded whole first: reading them decodes
	// nothing more. Then the others.
	var whole, rest []*Node
	for _, n := range tree.ahead.order {
		if n.wholeIn.Load() == tree.Cache {
			whole = append(whole, n)
		} else {
			rest = append(rest, n)
		}
	}
	if int64(len(whole)) < decoded {
		t.Errorf("%d files decoded whole, %d counted", len(whole), decoded)
	}
	check := func(n *Node) {
		rn := mustLookup(t, ref, n.Path())
		if n.Err() != nil || rn.Err() != nil {
			if (n.Err() == nil) != (rn.Err() == nil) {
				t.Errorf("%s: error %v, the reference's %v", n.Path(), n.Err(), rn.Err())
			}
			return
		}
		if n.Size() != rn.Size() || !bytes.Equal(readAll(t, n), readAll(t, rn)) {
			t.Errorf("%s: %d bytes, the reference's %d, or other bytes", n.Path(), n.Size(), rn.Size())
		}
	}
	misses := tree.Cache.Stats().Misses
	for _, n := range whole {
		check(n)
	}
	if st := tree.Cache.Stats(); st.Misses != misses {
		t.Errorf("%d blocks decoded again reading the %d files the worker decoded whole", st.Misses-misses, len(whole))
	}
	for _, n := range rest {
		check(n)
	}

	// A budget smaller than the next file's output: scanned, not decoded.
	_, small, n := sampleDisc(t, 1<<20, Options{CacheSize: 64 << 20, ReadAhead: 2})
	n.scanDecoding(256<<10, nil)
	if got, _ := cachedBytes(t, small, n); small.decodedIndexes.Load() != 0 || got != 0 || n.Size() != 1<<20 {
		t.Errorf("over the budget: %d files decoded, %d bytes cached, size %d", small.decodedIndexes.Load(), got, n.Size())
	}
	// Within it: decoded, every block cached.
	_, big, n2 := sampleDisc(t, 1<<20, Options{CacheSize: 64 << 20, ReadAhead: 2})
	n2.scanDecoding(8<<20, nil)
	if got, _ := cachedBytes(t, big, n2); big.decodedIndexes.Load() != 1 || got != 1<<20 {
		t.Errorf("within the budget: %d files decoded, %d bytes cached", big.decodedIndexes.Load(), got)
	}
}
