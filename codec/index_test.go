package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkIndex compares every block (with and without prev) and random ranges
// of the index against a full decode.
func checkIndex(t *testing.T, enc []byte, opt Options, ranges int, seed uint64) {
	t.Helper()
	full, err := Decode(enc, opt)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), opt)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
	checkBlocks(t, ix, enc, full, ranges, seed, nil)
}

// checkBlocks is checkIndex of index ix of enc, whose decode is full. Every
// block but the last holds at least blockTarget bytes, but those for which
// short (when not nil) says so.
func checkBlocks(t *testing.T, ix *Index, enc, full []byte, ranges int, seed uint64, short func(i int) bool) {
	t.Helper()
	r := bytes.NewReader(enc)
	if ix.Size() != int64(len(full)) {
		t.Fatalf("Size %d, decode %d", ix.Size(), len(full))
	}
	var prev []byte
	var sum int64
	for i := 0; i < ix.NumBlocks(); i++ {
		off, n := ix.Block(i)
		if off != sum {
			t.Fatalf("block %d at %d, want %d", i, off, sum)
		}
		sum += int64(n)
		if i < ix.NumBlocks()-1 && int64(n) < blockTarget && (short == nil || !short(i)) {
			t.Fatalf("block %d has %d bytes, below %d", i, n, blockTarget)
		}
		if ix.BlockAt(off) != i || ix.BlockAt(off+int64(n)-1) != i {
			t.Fatalf("BlockAt disagrees at block %d", i)
		}
		cold, err := ix.DecodeBlock(r, i, nil)
		if err != nil || !bytes.Equal(cold, full[off:off+int64(n)]) {
			t.Fatalf("block %d cold: err %v equal %v", i, err, bytes.Equal(cold, full[off:off+int64(n)]))
		}
		if i > 0 {
			warm, err := ix.DecodeBlock(r, i, prev)
			if err != nil || !bytes.Equal(warm, cold) {
				t.Fatalf("block %d with prev: err %v", i, err)
			}
		}
		prev = cold
	}
	if sum != ix.Size() {
		t.Fatalf("blocks sum to %d, size %d", sum, ix.Size())
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for k := 0; k < ranges && len(full) > 0; k++ {
		off := rng.Int64N(int64(len(full)))
		n := 1 + rng.IntN(200000)
		p := make([]byte, n)
		got, err := ix.ReadAt(r, p, off)
		want := full[off:min(int64(len(full)), off+int64(n))]
		if got != len(want) || !bytes.Equal(p[:got], want) {
			t.Fatalf("ReadAt(%d, %d): n=%d err=%v", off, n, got, err)
		}
		if (got < n) != (err != nil) {
			t.Fatalf("ReadAt(%d, %d): n=%d err=%v", off, n, got, err)
		}
	}
}

func TestIndexMatchesDecode(t *testing.T) {
	sequentialTest(t)
	for _, n := range []int{0, 1, 5, 65535, 65536, 65537, 300000, 3 << 20} {
		src := SampleData(int64(n)+7, n)
		enc := Encode(src, EncodeOptions{})
		checkIndex(t, enc, Options{}, 50, uint64(n))
	}
}

func TestIndexMemoryBound(t *testing.T) {
	sequentialTest(t)
	// Noise repeating with a period of 40,000 bytes: every match reaches
	// ~40 KB back, so every group's snapshot is near its largest and groups
	// must grow to keep snapshots within 1/8 of the output.
	rng := rand.New(rand.NewPCG(5, 5))
	period := make([]byte, 40000)
	for i := range period {
		period[i] = byte(rng.Uint32())
	}
	src := bytes.Repeat(period, 60) // 2.4 MB
	enc := Encode(src, EncodeOptions{})
	ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.FillSnapshots(bytes.NewReader(enc)); err != nil {
		t.Fatal(err)
	}
	if ix.MemSize() != ix.MaxMemSize() {
		t.Errorf("filled index: MemSize %d, MaxMemSize %d", ix.MemSize(), ix.MaxMemSize())
	}
	if ix.MemSize() > ix.Size()/8+int64(ix.NumBlocks())*32+4096 {
		t.Errorf("index %d bytes for %d decoded (%.1f%%)", ix.MemSize(), ix.Size(), 100*float64(ix.MemSize())/float64(ix.Size()))
	}
	for g := range ix.groupFirst {
		end := ix.NumBlocks()
		if g+1 < len(ix.groupFirst) {
			end = int(ix.groupFirst[g+1])
		}
		if n := end - int(ix.groupFirst[g]); n > maxGroupBlocks || n < 1 {
			t.Errorf("group %d has %d blocks", g, n)
		}
	}
	checkIndex(t, enc, Options{}, 30, 5)
	// On the sample corpus groups stay at 3 blocks and the index is ~10%.
	enc = Encode(SampleData(8, 8<<20), EncodeOptions{})
	ix, err = NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.FillSnapshots(bytes.NewReader(enc)); err != nil {
		t.Fatal(err)
	}
	if ix.MemSize() > ix.Size()/8 || ix.MemSize() != ix.MaxMemSize() {
		t.Errorf("sample index %.1f%% of decoded", 100*float64(ix.MemSize())/float64(ix.Size()))
	}
	t.Logf("sample: %d blocks, %d groups, index %.1f%%", ix.NumBlocks(), len(ix.groupFirst), 100*float64(ix.MemSize())/float64(ix.Size()))
}

// variedStreams are hand-built streams (far matches, markers, an LZO-style
// first byte) and encoded ones.
func variedStreams() map[string][]byte {
	pk, _ := bigPrefix(0xC000)
	return map[string][]byte{
		"far matches and markers": stream(pk, b(0x19, 0x04, 0x00, 0x11, 0x04, 0x00, 0x10, 0xFF, 0x07, 0x00, "abc"),
			b(0x12, 0, 0), make([]byte, 0x1000), b(0x10, 0xFF, 0x04, 0x00)),
		"LZO first byte": stream(b(0x15, "abcd", 0x20, 0xFF, 0x00, 0x00, 0xE0, 0x00, 0x11, 0x00, 0x00, 0x00, 0xFF, rep("z", 273))),
		"sample":         Encode(SampleData(77, 600000), EncodeOptions{}),
		"sample small":   Encode(SampleData(79, 60000), EncodeOptions{}),
		"sample best":    Encode(SampleData(78, 600000), EncodeOptions{Best: true}),
		"runs":           Encode(bytes.Repeat([]byte("ab"), 300000), EncodeOptions{}),
	}
}

func TestIndexSmallBlocksVariedStreams(t *testing.T) {
	sequentialTest(t)
	old := blockTarget
	defer func() { blockTarget = old }()
	streams := variedStreams()
	tested := map[string]bool{}
	for _, bt := range []int64{1, 100, 4096, 50000} {
		blockTarget = bt
		for name, s := range streams {
			if bt == 1 && len(s) > 100000 && raceEnabled {
				continue // a block a packet: minutes under -race; "sample small" has it
			}
			for _, opt := range []Options{{}, {Align: 0x2000, Strict: true}} {
				if _, err := Decode(s, opt); err != nil {
					continue // e.g. the hand-built stream under 0x2000 alignment
				}
				tested[name] = true
				t.Run(name, func(t *testing.T) { checkIndex(t, s, opt, 20, uint64(bt)) })
			}
		}
	}
	for name := range streams {
		if !tested[name] {
			t.Errorf("stream %q does not decode: test setup", name)
		}
	}
}

// DecodeAll gives the blocks a full decode gives, each capped at its own
// length, and leaves every snapshot filled, with the stream cut into
// parallel chunks (small sync blocks, so chunks are many) and whole.
func TestIndexDecodeAll(t *testing.T) {
	setChunking(t, 0x2000, 4) // 32 KiB chunks
	for _, n := range []int{1, 70000, 3 << 20} {
		enc := Encode(SampleData(int64(n)+3, n), EncodeOptions{})
		full, err := Decode(enc, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, workers := range []int{1, 2, 4} {
			ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			blocks, err := ix.DecodeAll(enc, workers)
			if err != nil {
				t.Fatalf("%d bytes, %d workers: %v", n, workers, err)
			}
			if len(blocks) != ix.NumBlocks() {
				t.Fatalf("%d blocks, index has %d", len(blocks), ix.NumBlocks())
			}
			for i, b := range blocks {
				off, bn := ix.Block(i)
				if len(b) != bn || cap(b) != bn || !bytes.Equal(b, full[off:off+int64(bn)]) {
					t.Fatalf("%d bytes, %d workers: block %d differs (len %d cap %d, want %d)", n, workers, i, len(b), cap(b), bn)
				}
			}
			if ix.MemSize() != ix.MaxMemSize() {
				t.Errorf("%d bytes: snapshots %d of %d filled", n, ix.MemSize()-ix.baseMem(), ix.maxSnaps)
			}
			// DecodeAllTo: into a reused buffer's array when it has the
			// room (its stale bytes overwritten), else into a new one.
			for _, room := range []int{n + writeSlack, n + writeSlack - 1} {
				dst := bytes.Repeat([]byte{0xA5}, room)
				to, err := ix.DecodeAllTo(dst, enc, workers)
				if err != nil {
					t.Fatalf("%d bytes, DecodeAllTo with room %d: %v", n, room, err)
				}
				for i, b := range to {
					if !bytes.Equal(b, blocks[i]) {
						t.Fatalf("%d bytes, room %d: DecodeAllTo's block %d differs from DecodeAll's", n, room, i)
					}
				}
				if inDst := &to[0][:1][0] == &dst[0]; inDst != (room >= n+writeSlack) {
					t.Errorf("%d bytes, room %d (%d needed): output in the given buffer %v", n, room, n+writeSlack, inDst)
				}
			}
			// A cold block now decodes from its own group's snapshot.
			if nb := ix.NumBlocks(); nb > 1 {
				off, bn := ix.Block(nb - 1)
				b, err := ix.DecodeBlock(bytes.NewReader(enc), nb-1, nil)
				if err != nil || !bytes.Equal(b, full[off:off+int64(bn)]) {
					t.Fatalf("last block after DecodeAll: %v", err)
				}
			}
		}
	}
	// A stream that is not the one indexed: an error, not wrong blocks.
	a := Encode(SampleData(1, 200000), EncodeOptions{})
	b := Encode(SampleData(2, 100000), EncodeOptions{})
	ix, err := NewIndex(bytes.NewReader(a), int64(len(a)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.DecodeAll(b, 2); err == nil {
		t.Fatal("DecodeAll of another stream: no error")
	}
}
