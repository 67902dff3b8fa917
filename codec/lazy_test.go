package codec

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// The lazy index: NewIndex learns only snapshot lengths; snapshots are filled
// by the decodes that pass a group's start, or by a catch-up decode from the
// nearest known snapshot when a block is asked for cold.

// farStream is noise repeating with a period of 40,000 bytes: every match
// reaches ~40 KB back, so every group has a snapshot near the largest, and a
// block decoded without one would be wrong.
func farStream(n int) []byte {
	rng := rand.New(rand.NewPCG(5, 5))
	period := make([]byte, 40000)
	for i := range period {
		period[i] = byte(rng.Uint32())
	}
	src := bytes.Repeat(period, n/len(period)+1)[:n]
	return Encode(src, EncodeOptions{})
}

// filledGroups counts groups whose snapshot is known (group 0 and groups that
// reach nothing before their start count as known).
func filledGroups(ix *Index) int {
	n := 0
	for g := range ix.groupFirst {
		if _, ok := ix.snapshot(g); ok {
			n++
		}
	}
	return n
}

// needsSnap counts groups that need a snapshot.
func needsSnap(ix *Index) int {
	n := 0
	for g := range ix.groupFirst {
		if ix.snapLen[g] > 0 {
			n++
		}
	}
	return n
}

func lazyStreams(t *testing.T) map[string][]byte {
	t.Helper()
	return map[string][]byte{
		"sample": Encode(SampleData(11, 2<<20), EncodeOptions{}),
		"best":   Encode(SampleData(12, 1<<20), EncodeOptions{Best: true}),
		"far":    farStream(2 << 20),
	}
}

// TestLazyRandomOrder: on a fresh index, blocks decoded cold in a random order
// equal the full decode, for real and tiny blocks.
func TestLazyRandomOrder(t *testing.T) {
	sequentialTest(t)
	old := blockTarget
	defer func() { blockTarget = old }()
	for _, bt := range []int64{64 << 10, 5000, 300} {
		blockTarget = bt
		for name, enc := range lazyStreams(t) {
			full, err := Decode(enc, Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := bytes.NewReader(enc)
			ix, err := NewIndex(r, int64(len(enc)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if needsSnap(ix) == 0 || filledGroups(ix) == len(ix.groupFirst) {
				t.Fatalf("%s/%d: %d groups, %d need a snapshot, %d known before any decode",
					name, bt, len(ix.groupFirst), needsSnap(ix), filledGroups(ix))
			}
			if ix.MemSize() >= ix.MaxMemSize() {
				t.Fatalf("%s/%d: fresh index MemSize %d, max %d", name, bt, ix.MemSize(), ix.MaxMemSize())
			}
			rng := rand.New(rand.NewPCG(uint64(bt), 3))
			order := rng.Perm(ix.NumBlocks())
			if len(order) > 250 {
				order = order[:250]
			}
			for _, i := range order {
				off, n := ix.Block(i)
				got, err := ix.DecodeBlock(r, i, nil)
				if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
					t.Fatalf("%s/%d: block %d of %d: err %v, equal %v", name, bt, i, ix.NumBlocks(), err, bytes.Equal(got, full[off:off+int64(n)]))
				}
			}
			if m := ix.MemSize(); m > ix.MaxMemSize() {
				t.Fatalf("%s/%d: MemSize %d past MaxMemSize %d", name, bt, m, ix.MaxMemSize())
			}
			// Everything filled so far is right: check every block cold again.
			for i := 0; i < ix.NumBlocks(); i += max(1, ix.NumBlocks()/200) {
				off, n := ix.Block(i)
				got, err := ix.DecodeBlock(r, i, nil)
				if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
					t.Fatalf("%s/%d: block %d second pass: %v", name, bt, i, err)
				}
			}
		}
	}
}

// TestLazyLastBlockFirst: the last block asked for first decodes the stream
// forward from the start (or from the last group that needs no snapshot:
// none does on the far stream), fills every snapshot on the way, and every
// block then decodes cold from its own group's snapshot.
func TestLazyLastBlockFirst(t *testing.T) {
	for name, enc := range lazyStreams(t) {
		full, _ := Decode(enc, Options{})
		r := bytes.NewReader(enc)
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		last := ix.NumBlocks() - 1
		lastG := ix.groupOf(last)
		from := ix.startFor(lastG, lastG)
		if name == "far" && from != 0 {
			t.Fatalf("far: catch-up from group %d", from)
		}
		off, n := ix.Block(last)
		got, err := ix.DecodeBlock(r, last, nil)
		if err != nil || !bytes.Equal(got, full[off:]) || off+int64(n) != int64(len(full)) {
			t.Fatalf("%s: last block: %v", name, err)
		}
		for g := from; g < len(ix.groupFirst); g++ {
			if _, ok := ix.snapshot(g); !ok {
				t.Fatalf("%s: snapshot %d unknown after a catch-up from group %d", name, g, from)
			}
		}
		if from == 0 && ix.MemSize() != ix.MaxMemSize() {
			t.Fatalf("%s: MemSize %d, MaxMemSize %d with every snapshot filled", name, ix.MemSize(), ix.MaxMemSize())
		}
		for g := from + 1; g < len(ix.groupFirst); g++ {
			s, _ := ix.snapshot(g)
			end := ix.cps[ix.groupFirst[g]].out
			if !bytes.Equal(s, full[end-int64(len(s)):end]) || len(s) != int(ix.snapLen[g]) {
				t.Fatalf("%s: snapshot %d wrong", name, g)
			}
		}
		// Each block now decodes from its group's start: count nothing
		// more being filled, and check the bytes.
		for i := ix.NumBlocks() - 1; i >= 0; i-- {
			off, n := ix.Block(i)
			got, err := ix.DecodeBlock(r, i, nil)
			if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
				t.Fatalf("%s: block %d after the catch-up: %v", name, i, err)
			}
		}
	}
}

// TestLazyMidStream: a block in the middle, then one further on: the second
// catch-up starts from the snapshots the first one filled, not from the
// stream's start, and a later part reached only lazily decodes identically.
func TestLazyMidStream(t *testing.T) {
	enc := farStream(3 << 20)
	full, _ := Decode(enc, Options{})
	r := &countingReader{r: bytes.NewReader(enc)}
	ix, err := NewIndex(r, int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	nb := ix.NumBlocks()
	mid := nb / 2
	check := func(i int) {
		t.Helper()
		off, n := ix.Block(i)
		got, err := ix.DecodeBlock(r, i, nil)
		if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
			t.Fatalf("block %d: %v", i, err)
		}
	}
	r.n = 0
	check(mid)
	first := r.n
	for g := range ix.groupFirst {
		if _, ok := ix.snapshot(g); ok != (int(ix.groupFirst[g]) <= mid+1) {
			t.Errorf("after block %d: group %d (from block %d) known %v", mid, g, ix.groupFirst[g], ok)
		}
	}
	r.n = 0
	check(nb - 1)
	second := r.n
	// The second catch-up reads the stream from about mid on.
	if midIn := ix.cps[ix.groupFirst[ix.groupOf(mid)]].in; second > int64(len(enc))-midIn+int64(scanChunk)+4096 {
		t.Errorf("second catch-up read %d bytes of the stream, want about %d (from block %d on); first read %d",
			second, int64(len(enc))-midIn, mid, first)
	}
	for i := 0; i < nb; i++ {
		check(i)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r  *bytes.Reader
	mu sync.Mutex
	n  int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.mu.Lock()
	c.n += int64(n)
	c.mu.Unlock()
	return n, err
}

// TestLazyConcurrent: 8 goroutines decoding blocks cold, in their own random
// orders, on one fresh index (run under -race).
func TestLazyConcurrent(t *testing.T) {
	old := blockTarget
	defer func() { blockTarget = old }()
	for _, bt := range []int64{64 << 10, 2000} {
		blockTarget = bt
		enc := farStream(2 << 20)
		full, _ := Decode(enc, Options{})
		r := bytes.NewReader(enc)
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan string, 8)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 9))
				order := rng.Perm(ix.NumBlocks())
				if len(order) > 150 {
					order = order[:150]
				}
				for k, i := range order {
					var p []byte
					if k%3 == 0 && i > 0 { // sometimes with block i-1 as prev
						po, pn := ix.Block(i - 1)
						p = full[po : po+int64(pn)]
					}
					off, n := ix.Block(i)
					got, err := ix.DecodeBlock(r, i, p)
					if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
						errs <- "block decode differs"
						return
					}
				}
				if w == 0 {
					if err := ix.FillSnapshots(r); err != nil {
						errs <- err.Error()
					}
				}
			}(w)
		}
		wg.Wait()
		close(errs)
		for e := range errs {
			t.Fatalf("blockTarget %d: %s", bt, e)
		}
		if ix.MemSize() != ix.MaxMemSize() {
			t.Errorf("blockTarget %d: after FillSnapshots MemSize %d, MaxMemSize %d", bt, ix.MemSize(), ix.MaxMemSize())
		}
	}
}

// TestFillSnapshots: one forward decode fills every snapshot, with the
// right bytes, on a fresh index and on one partly filled.
func TestFillSnapshots(t *testing.T) {
	old := blockTarget
	defer func() { blockTarget = old }()
	for _, bt := range []int64{64 << 10, 700} {
		blockTarget = bt
		enc := farStream(1 << 20)
		full, _ := Decode(enc, Options{})
		r := bytes.NewReader(enc)
		for _, warm := range []bool{false, true} {
			ix, err := NewIndex(r, int64(len(enc)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if warm {
				if _, err := ix.DecodeBlock(r, ix.NumBlocks()/2, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := ix.FillSnapshots(r); err != nil {
				t.Fatal(err)
			}
			if f := filledGroups(ix); f != len(ix.groupFirst) {
				t.Fatalf("bt %d warm %v: %d of %d snapshots", bt, warm, f, len(ix.groupFirst))
			}
			for g := 1; g < len(ix.groupFirst); g++ {
				s, _ := ix.snapshot(g)
				end := ix.cps[ix.groupFirst[g]].out
				if len(s) != int(ix.snapLen[g]) || !bytes.Equal(s, full[end-int64(len(s)):end]) {
					t.Fatalf("bt %d: snapshot %d wrong", bt, g)
				}
			}
			if err := ix.FillSnapshots(r); err != nil || ix.MemSize() != ix.MaxMemSize() {
				t.Fatalf("second FillSnapshots: %v, mem %d of %d", err, ix.MemSize(), ix.MaxMemSize())
			}
		}
	}
	// A stream with one group (or none) has nothing to fill.
	enc := Encode([]byte("tiny"), EncodeOptions{})
	ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil || ix.FillSnapshots(bytes.NewReader(enc)) != nil {
		t.Fatal(err)
	}
}

// TestLazyCatchUpMemory: decoding the last block of a large stream on a
// fresh index decodes all of it, in memory bounded by the snapshots it keeps
// and a fixed window, not by the stream.
func TestLazyCatchUpMemory(t *testing.T) {
	sequentialTest(t)
	enc := farStream(16 << 20) // every group needs a snapshot: from the start
	r := bytes.NewReader(enc)
	ix, err := NewIndex(r, int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := ix.NumBlocks() - 1
	if g := ix.groupOf(last); ix.startFor(g, g) != 0 {
		t.Fatal("test setup: the catch-up would not start at the stream's start")
	}
	scratchPool.Get() // drop a pooled buffer, if any: count a fresh one
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	blk, err := ix.DecodeBlock(r, last, nil)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(m1.TotalAlloc - m0.TotalAlloc)
	// Kept: the snapshots (at most 1/8 of the output) and the block; scratch:
	// the window buffer and one input chunk (under 1 MiB).
	bound := ix.MemSize() + int64(len(blk)) + 1<<20
	if grew > bound || grew > ix.Size()/6 {
		t.Errorf("catch-up over %d MiB allocated %d bytes, want at most %d", ix.Size()>>20, grew, bound)
	}
	if ix.MemSize() != ix.MaxMemSize() || ix.MemSize() > ix.Size()/8+int64(ix.NumBlocks())*32+4096 {
		t.Errorf("snapshots %d bytes for %d decoded", ix.MemSize(), ix.Size())
	}
	t.Logf("catch-up over %d MiB: %d bytes allocated, snapshots %d", ix.Size()>>20, grew, ix.filled.Load())
}

// FuzzLazyIndex: on a fresh index with small blocks, blocks in a random order
// (some with their predecessor as prev) equal the full decode.
func FuzzLazyIndex(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0), uint16(100), uint64(1))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8, block uint16, seed uint64) {
		r, full, ix := fuzzIndex(t, body, flags, block)
		if ix == nil {
			return
		}
		rng := rand.New(rand.NewPCG(seed, 2))
		for k, i := range rng.Perm(ix.NumBlocks()) {
			bo, bn := ix.Block(i)
			var p []byte
			if k%2 == 1 && i > 0 { // sometimes with block i-1 as prev
				po, pn := ix.Block(i - 1)
				p = full[po : po+int64(pn)]
			}
			got, err := ix.DecodeBlock(r, i, p)
			if err != nil || !bytes.Equal(got, full[bo:bo+int64(bn)]) {
				t.Fatalf("block %d: %v", i, err)
			}
		}
		if ix.MemSize() > ix.MaxMemSize() {
			t.Fatalf("MemSize %d past MaxMemSize %d", ix.MemSize(), ix.MaxMemSize())
		}
	})
}

// farthestStream: a 48 KiB prefix, then far matches reaching the farthest a
// match can (49,151 bytes, bit 3 set) interleaved with 4-byte literals, over
// ~420 KB of output: the catch-up's sliding window must keep every byte of
// its maxWindow.
func farthestStream() []byte {
	pk, _ := bigPrefix(0xC000)
	for i := 0; i < 60000; i++ {
		pk = append(pk, 0x19, 0xFC, 0xFF, 0x01, byte(i), byte(i>>8), byte(i*7), 'x')
	}
	return stream(pk)
}

func TestLazyFarthestMatches(t *testing.T) {
	old := blockTarget
	defer func() { blockTarget = old }()
	enc := farthestStream()
	full, err := Decode(enc, Options{})
	if err != nil || len(full) < 400000 {
		t.Fatalf("test stream: %d bytes, %v", len(full), err)
	}
	for _, bt := range []int64{64 << 10, 20000, 1000} {
		blockTarget = bt
		r := bytes.NewReader(enc)
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if s := ix.snapLen[len(ix.snapLen)-1]; s < maxWindow-8 {
			t.Fatalf("bt %d: last snapshot %d bytes: the stream does not reach the farthest", bt, s)
		}
		last := ix.NumBlocks() - 1
		off, _ := ix.Block(last)
		if got, err := ix.DecodeBlock(r, last, nil); err != nil || !bytes.Equal(got, full[off:]) {
			t.Fatalf("bt %d: last block first: %v", bt, err)
		}
		ix2, _ := NewIndex(r, int64(len(enc)), Options{})
		if err := ix2.FillSnapshots(r); err != nil {
			t.Fatalf("bt %d: FillSnapshots: %v", bt, err)
		}
		for _, x := range []*Index{ix, ix2} {
			for i := 0; i < x.NumBlocks(); i++ {
				off, n := x.Block(i)
				if got, err := x.DecodeBlock(r, i, nil); err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
					t.Fatalf("bt %d: block %d: %v", bt, i, err)
				}
			}
		}
	}
}
