package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// setChunking sets the sync block and the blocks per parallel chunk for one
// test.
func setChunking(t testing.TB, block, blocks int64) {
	oldS, oldC := syncBlock, chunkBlocks
	syncBlock, chunkBlocks = block, blocks
	t.Cleanup(func() { syncBlock, chunkBlocks = oldS, oldC })
}

// fuzzChunking sets the parallel fuzz targets' chunking: blk 0, the real
// 0x2000-byte sync blocks, one a chunk; else blocks of blk bytes.
func fuzzChunking(t testing.TB, blk uint8) {
	block := int64(0x2000)
	if blk != 0 {
		block = int64(blk)
	}
	setChunking(t, block, 1)
}

// parallelAgree fails unless DecodeParallel with each worker count gives
// Decode's bytes and error, and returns the statistics of the last run.
func parallelAgree(t *testing.T, s []byte, opt Options, workers ...int) parStats {
	t.Helper()
	want, werr := Decode(s, opt)
	in := bytes.Clone(s)
	var ps parStats
	for _, w := range workers {
		ps = parStats{}
		got, err := appendDecodeParallel(nil, s, w, opt, &ps)
		if !sameErr(err, werr) || !bytes.Equal(got, want) {
			t.Fatalf("workers %d %+v: parallel %v (%d bytes), sequential %v (%d bytes); %+v",
				w, opt, err, len(got), werr, len(want), ps)
		}
		if !bytes.Equal(in, s) {
			t.Fatal("DecodeParallel mutated its input")
		}
		if ps.chunks > 0 && ps.taken+ps.redone > ps.chunks {
			t.Fatalf("%+v: more chunks handled than there are", ps)
		}
	}
	return ps
}

func TestDecodeParallelSample(t *testing.T) {
	blockCounts := []int64{1, 3, 32}
	if raceEnabled && testing.Short() {
		blockCounts = []int64{1, 32} // (the non-race run has all three)
	}
	for _, blocks := range blockCounts {
		setChunking(t, 0x2000, blocks)
		for i, n := range []int{0, 5000, 0x2000 * 3, 300 << 10, 2 << 20} {
			raw := SampleData(int64(i), n)
			enc := Encode(raw, EncodeOptions{})
			ps := parallelAgree(t, enc, Options{}, 1, 2, 3, 8)
			if chunks := (int64(len(enc)) - HeaderSize + 0x2000*blocks - 1) / (0x2000 * blocks); chunks > 1 {
				// The encoder pads to every block: every chunk has a sync point.
				if ps.chunks != int(chunks) || ps.taken != ps.chunks || ps.redone != 0 {
					t.Errorf("%d bytes, %d blocks a chunk: %+v, want all %d chunks taken", n, blocks, ps, chunks)
				}
				if n >= 300<<10 && ps.markers == 0 {
					t.Errorf("%d bytes: no markers resolved (%+v): the window path is untested", n, ps)
				}
			}
			for _, opt := range []Options{{Align: 0x2000}, {Strict: true}, {MaxOutput: int64(n)}, {MaxOutput: int64(n / 2)}, {MaxOutput: int64(n) - 1}} {
				parallelAgree(t, enc, opt, 2)
			}
		}
	}
}

// A stream with no block markers: packets cross block boundaries, so most
// boundaries are no sync points and those chunks are decoded again.
func TestDecodeParallelNoSync(t *testing.T) {
	setChunking(t, 0x2000, 1)
	pk, want := bigPrefix(200000)
	// far matches over the boundaries, between the literals
	pk = append(pk, 0x11, 0, 0, 0x19, 0x04, 0x00, 0x10, 0xFF, 0x04, 0x00)
	s := stream(pk)
	ps := parallelAgree(t, s, Options{}, 1, 2)
	if ps.redone == 0 {
		t.Errorf("%+v: no chunk decoded again on a stream without sync points", ps)
	}
	got, _ := DecodeParallel(s, 2, Options{})
	if !bytes.Equal(got[:len(want)], want) {
		t.Fatal("prefix differs")
	}
}

// Corrupt streams: one changed byte, a cut declared size or a tight limit
// anywhere must give Decode's first error at the same offset, with the same
// clean prefix.
func TestDecodeParallelCorrupt(t *testing.T) {
	setChunking(t, 0x2000, 1)
	raw := SampleData(9, 400<<10)
	enc := Encode(raw, EncodeOptions{})
	rng := rand.New(rand.NewPCG(3, 4))
	trials := 300
	if testing.Short() {
		trials = 60
	}
	for range trials {
		s := bytes.Clone(enc)
		switch rng.IntN(4) {
		case 0, 1:
			p := HeaderSize + rng.IntN(len(s)-HeaderSize)
			s[p] = byte(rng.IntN(256))
		case 2: // break the first packet of a block (the sync point itself)
			blk := rng.IntN((len(s) - HeaderSize) / 0x2000)
			s[HeaderSize+blk*0x2000] = byte(rng.IntN(0x20))
		case 3: // the declared size cut
			n := HeaderSize + rng.IntN(len(s)-HeaderSize)
			s = s[:n]
			putHeader(s, n, "cut")
		}
		parallelAgree(t, s, Options{Strict: rng.IntN(2) == 0}, 2)
	}
	for range 20 {
		parallelAgree(t, enc, Options{MaxOutput: 1 + rng.Int64N(int64(len(raw)))}, 2)
	}
}

// With tiny sync blocks, speculation starts inside packets and filler: it
// must never change a result.
func TestDecodeParallelDenseSync(t *testing.T) {
	raw := SampleData(5, 100<<10)
	enc := Encode(raw, EncodeOptions{})
	for _, blk := range []int64{16, 37, 300, 0x1000} {
		setChunking(t, blk, 1)
		parallelAgree(t, enc, Options{}, 1, 2, 5)
		parallelAgree(t, enc, Options{Strict: true, Align: 0x2000}, 3)
	}
}

// addParallelSeeds seeds the parallel fuzz targets: every stream body with
// the real blocks and with tiny ones, and a sample stream.
func addParallelSeeds(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0), uint8(0))
		f.Add(s, uint8(4), uint8(20))
	}
	f.Add(Encode(SampleData(11, 60000), EncodeOptions{})[HeaderSize:], uint8(0), uint8(0))
}

func FuzzDecodeParallel(f *testing.F) {
	addParallelSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte, flags, blk uint8) {
		fuzzChunking(t, blk)
		s := fuzzStream(body, flags&1 != 0)
		parallelAgree(t, s, fuzzOptions(flags), 1, 3)
	})
}

// scanAgree fails unless ScanParallel gives Scan's Stats and error.
func scanAgree(t *testing.T, s []byte, opt Options, workers ...int) {
	t.Helper()
	want, werr := Scan(bytes.NewReader(s), int64(len(s)), opt)
	for _, w := range workers {
		got, err := ScanParallel(s, w, opt)
		if !sameErr(err, werr) || got != want {
			t.Fatalf("workers %d %+v: parallel %+v %v, sequential %+v %v", w, opt, got, err, want, werr)
		}
	}
}

func TestScanParallel(t *testing.T) {
	for _, blocks := range []int64{1, 3} {
		setChunking(t, 0x2000, blocks)
		for i, n := range []int{0, 5000, 0x2000 * 3, 300 << 10, 1 << 20} {
			enc := Encode(SampleData(int64(i), n), EncodeOptions{})
			scanAgree(t, enc, Options{}, 2, 3, 8)
			for _, opt := range []Options{{Align: 0x2000}, {Strict: true}, {MaxOutput: int64(n / 2)}, {MaxOutput: int64(n) - 1}} {
				scanAgree(t, enc, opt, 2)
			}
		}
	}
	setChunking(t, 0x2000, 1)
	pk, _ := bigPrefix(200000)
	scanAgree(t, stream(append(pk, 0x11, 0, 0, 0x19, 0x04, 0x00, 0x10, 0xFF, 0x04, 0x00)), Options{}, 2)
	enc := Encode(SampleData(9, 400<<10), EncodeOptions{})
	rng := rand.New(rand.NewPCG(5, 6))
	for range 100 {
		s := bytes.Clone(enc)
		if rng.IntN(2) == 0 {
			s[HeaderSize+rng.IntN(len(s)-HeaderSize)] = byte(rng.IntN(256))
		} else {
			s[HeaderSize+rng.IntN((len(s)-HeaderSize)/0x2000)*0x2000] = byte(rng.IntN(0x20))
		}
		scanAgree(t, s, Options{Strict: rng.IntN(2) == 0}, 2)
	}
	for _, blk := range []int64{16, 37, 300} {
		setChunking(t, blk, 1)
		scanAgree(t, Encode(SampleData(5, 60<<10), EncodeOptions{}), Options{}, 2, 5)
	}
}

func FuzzScanParallel(f *testing.F) {
	addParallelSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte, flags, blk uint8) {
		fuzzChunking(t, blk)
		scanAgree(t, fuzzStream(body, flags&1 != 0), fuzzOptions(flags), 2, 3)
	})
}

// The default chunking on a stream of several chunks: corruptions near and
// at chunk boundaries and limits give Decode's result.
func TestDecodeParallelDefaultChunks(t *testing.T) {
	if testing.Short() {
		t.Skip("12 MiB of decodes")
	}
	raw := SampleData(17, 3<<20)
	enc := Encode(raw, EncodeOptions{})
	chunk := int(syncBlock * chunkBlocks)
	if len(enc) < 2*chunk {
		t.Fatalf("stream of %d bytes: fewer than 2 chunks", len(enc))
	}
	ps := parallelAgree(t, enc, Options{}, 2, 4)
	if ps.taken != ps.chunks {
		t.Errorf("%+v: not every chunk taken", ps)
	}
	rng := rand.New(rand.NewPCG(8, 9))
	for range 12 {
		s := bytes.Clone(enc)
		c := 1 + rng.IntN((len(s)-HeaderSize)/chunk)
		p := HeaderSize + c*chunk + rng.IntN(64) - 32 // around a chunk's start
		s[p] = byte(rng.IntN(256))
		parallelAgree(t, s, Options{Strict: rng.IntN(2) == 0}, 2)
	}
	parallelAgree(t, enc, Options{MaxOutput: int64(len(raw)) - 1}, 3)
	parallelAgree(t, enc, Options{MaxOutput: int64(rng.IntN(len(raw)))}, 3)
}
