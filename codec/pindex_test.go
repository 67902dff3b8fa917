package codec

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// pindexAgree fails unless NewIndexParallel with each worker count gives
// NewIndex's error and, on success, an index of NewIndex's size that passes
// checkShape and (with ranges >= 0) checkBlocks. It returns the statistics
// of the last run.
func pindexAgree(t *testing.T, s []byte, opt Options, ranges int, workers ...int) parStats {
	t.Helper()
	want, werr := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
	full, derr := Decode(s, opt)
	if !sameErr(werr, derr) {
		t.Fatalf("NewIndex %v, Decode %v", werr, derr)
	}
	in := bytes.Clone(s)
	var ps parStats
	for _, w := range workers {
		ps = parStats{}
		ix, err := newIndexParallel(s, w, opt, &ps)
		if !bytes.Equal(in, s) {
			t.Fatal("NewIndexParallel mutated its input")
		}
		if !sameErr(err, werr) {
			t.Fatalf("workers %d %+v: parallel %v, NewIndex %v; %+v", w, opt, err, werr, ps)
		}
		if err != nil {
			continue
		}
		if ix.Size() != want.Size() {
			t.Fatalf("workers %d %+v: Size %d, NewIndex %d; %+v", w, opt, ix.Size(), want.Size(), ps)
		}
		chunk := int64(0) // no parallel chunks: NewIndex itself
		if ps.chunks > 0 {
			chunk = syncBlock * chunkBlocks
			if ps.taken+ps.redone > ps.chunks {
				t.Fatalf("%+v: more chunks handled than there are", ps)
			}
		} else if !sameIndex(ix, want) {
			t.Fatalf("workers %d %+v: not NewIndex's index", w, opt)
		}
		checkShape(t, ix, s, opt, chunk)
		if ranges >= 0 {
			checkBlocks(t, ix, s, full, ranges, uint64(w), func(i int) bool { return spansChunk(ix, i, chunk) })
		}
	}
	return ps
}

func sameIndex(a, b *Index) bool {
	return slices.Equal(a.cps, b.cps) && slices.Equal(a.groupFirst, b.groupFirst) &&
		slices.Equal(a.snapLen, b.snapLen) && a.maxSnaps == b.maxSnaps && len(a.snaps) == len(b.snaps)
}

// spansChunk tells whether block i of ix runs to or past the end of a
// parallel chunk of chunk bytes (chunk 0: none), where it may end short.
func spansChunk(ix *Index, i int, chunk int64) bool {
	if chunk <= 0 {
		return false
	}
	b := HeaderSize + ((ix.cps[i].in-HeaderSize)/chunk+1)*chunk // the first chunk boundary past the block's start
	return b <= ix.cps[i+1].in
}

// checkShape checks index ix of stream s against one forward decode: the
// invariants the rest of Index relies on; every checkpoint at a packet
// boundary, with the true output offset and decoder state there; every block
// ending at the first packet boundary with blockTarget more output (followed
// by packets of no output at most), or short at the end of a parallel chunk
// (chunk > 0); every group's snapshot length exactly how far its matches
// reach back; and NewIndex's rule closing every group at the first block it
// allows, but for groups ending at a chunk's end or the stream's.
func checkShape(t *testing.T, ix *Index, s []byte, opt Options, chunk int64) {
	t.Helper()
	h, err := ParseHeader(s)
	if err != nil {
		t.Fatal(err)
	}
	cps, gf, nb := ix.cps, ix.groupFirst, len(ix.cps)-1
	if nb < 1 || cps[0] != (checkpoint{in: HeaderSize}) || cps[nb] != (checkpoint{in: h.Size, out: ix.Size()}) {
		t.Fatalf("checkpoints %v ... %v, stream of %d", cps[0], cps[nb], h.Size)
	}
	if ix.Size() == 0 && nb != 1 || ix.Size() > 0 && ix.NumBlocks() != nb {
		t.Fatalf("%d blocks of %d checkpoints, size %d", ix.NumBlocks(), len(cps), ix.Size())
	}
	for i := range nb {
		if cps[i+1].in <= cps[i].in && h.Size > HeaderSize || cps[i+1].out <= cps[i].out && ix.Size() > 0 {
			t.Fatalf("block %d: checkpoints %v, %v", i, cps[i], cps[i+1])
		}
	}
	if len(gf) == 0 || gf[0] != 0 || len(ix.snapLen) != len(gf) || ix.snapLen[0] != 0 || len(ix.snaps) != len(gf) {
		t.Fatalf("groups %v, snapshot lengths %v, %d snapshots", gf, ix.snapLen, len(ix.snaps))
	}
	var sum int64
	for g := range gf {
		if g > 0 && gf[g] <= gf[g-1] || int(gf[g]) >= nb {
			t.Fatalf("group %d starts at block %d of %d (groups %v)", g, gf[g], nb, gf)
		}
		sum += int64(ix.snapLen[g])
	}
	if sum != ix.maxSnaps {
		t.Fatalf("snapshots %d bytes, maxSnaps %d", sum, ix.maxSnaps)
	}

	d := decoder{in: s[HeaderSize:h.Size], inBase: HeaderSize, end: h.Size, full: true, first: true,
		out: make([]byte, 0, ix.Size()+writeSlack), trackRef: true, minRef: math.MaxInt64}
	d.setOptions(opt)
	at := func() (int64, int64) { return d.inBase + int64(d.pos), int64(len(d.out)) }
	checkGroup := func(g int) {
		t.Helper()
		f, e := int(gf[g]), nb
		if g+1 < len(gf) {
			e = int(gf[g+1])
		}
		start, snap := cps[f].out, int64(ix.snapLen[g])
		if want := start - min(d.minRef, start); snap != want {
			t.Fatalf("group %d (blocks %d-%d): snapshot %d bytes, its matches reach %d", g, f, e-1, snap, want)
		}
		if e-f > maxGroupBlocks {
			t.Fatalf("group %d has %d blocks", g, e-f)
		}
		for k := f + groupBlocks; k < e; k++ {
			if snap*8 <= cps[k].out-start || k-f >= maxGroupBlocks {
				t.Fatalf("group %d (blocks %d-%d, snapshot %d) not closed at block %d", g, f, e-1, snap, k)
			}
		}
		rule := e-f >= groupBlocks && snap*8 <= cps[e].out-start || e-f >= maxGroupBlocks
		if g+1 < len(gf) && !rule && !spansChunk(ix, e-1, chunk) {
			t.Fatalf("group %d (blocks %d-%d, snapshot %d, output %d) closed early", g, f, e-1, snap, cps[e].out-start)
		}
	}
	g := 0
	for i := range nb {
		cp, stop := cps[i], cps[i+1]
		if in, out := at(); in != cp.in || out != cp.out || d.state != cp.state {
			t.Fatalf("block %d: checkpoint %+v, decode at %#x output %d state %d", i, cp, in, out, d.state)
		}
		if g < len(gf) && int(gf[g]) == i {
			if g > 0 {
				checkGroup(g - 1)
			}
			d.minRef = math.MaxInt64
			g++
		}
		if err := d.run(stop.in, cp.out+blockTarget); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if in, o := at(); in < stop.in {
			// The target reached before the block's end: the rest of it is
			// packets of no output (a tail, or a parallel chunk of none).
			if err := d.run(stop.in, math.MaxInt64); err != nil {
				t.Fatalf("block %d: %v", i, err)
			}
			if _, o2 := at(); o2 != o {
				t.Fatalf("block %d %+v-%+v runs past its target at %#x", i, cp, stop, in)
			}
		}
		if in, out := at(); in != stop.in || out != stop.out {
			t.Fatalf("block %d ends at %+v, decode at %#x output %d", i, stop, in, out)
		}
		if i < nb-1 && stop.out-cp.out < blockTarget && !spansChunk(ix, i, chunk) {
			t.Fatalf("block %d %+v-%+v short", i, cp, stop)
		}
	}
	checkGroup(len(gf) - 1)
}

// setBlockTarget sets blockTarget for one test.
func setBlockTarget(t testing.TB, n int64) {
	old := blockTarget
	blockTarget = n
	t.Cleanup(func() { blockTarget = old })
}

// With small chunks, streams of several sizes and kinds span many chunks:
// every chunk of an encoded stream is taken (the encoder ends a packet at
// every sync block), and the index agrees with NewIndex's.
func TestNewIndexParallel(t *testing.T) {
	blockCounts := []int64{2, 4}
	if raceEnabled && testing.Short() {
		blockCounts = blockCounts[:1] // (the workers race the same way; the non-race run has both)
	}
	for _, blocks := range blockCounts {
		setChunking(t, 0x2000, blocks)
		chunk := 0x2000 * blocks
		streams := map[string][]byte{
			"runs":  Encode(bytes.Repeat([]byte("ab"), 300000), EncodeOptions{}),
			"zeros": Encode(make([]byte, 3<<20), EncodeOptions{}),
			"far":   farStream(1 << 20),
		}
		for i, n := range []int{0, 5000, 0x2000 * 3, 300 << 10, 1 << 20} {
			raw := SampleData(int64(i), n)
			streams[fmt.Sprintf("sample %d", n)] = Encode(raw, EncodeOptions{})
			streams[fmt.Sprintf("sample %d best", n)] = Encode(raw, EncodeOptions{Best: true})
		}
		for name, enc := range streams {
			for _, opt := range []Options{{}, {Align: 0x2000, Strict: true}} {
				ps := pindexAgree(t, enc, opt, 20, 1, 2, 4)
				if chunks := (int64(len(enc)) - HeaderSize + chunk - 1) / chunk; chunks > 1 && (ps.chunks != int(chunks) || ps.taken != ps.chunks) {
					t.Errorf("%s, %d blocks a chunk: %+v, want all %d chunks taken", name, blocks, ps, chunks)
				}
			}
			size, _ := Scan(bytes.NewReader(enc), int64(len(enc)), Options{})
			for _, m := range []int64{size.DecodedSize / 2, size.DecodedSize - 1, size.DecodedSize} {
				pindexAgree(t, enc, Options{MaxOutput: max(m, 1)}, 5, 2)
			}
		}
	}
}

// Small blocks, so that chunks hold many blocks and groups, on the streams
// of TestIndexSmallBlocksVariedStreams, with chunks of whole sync blocks and
// with dense sync points (speculation from inside packets and filler).
func TestNewIndexParallelSmallBlocks(t *testing.T) {
	streams := variedStreams()
	chunkings := [][2]int64{{0x2000, 2}, {0x2000, 4}, {300, 1}, {37, 1}}
	if raceEnabled && testing.Short() {
		chunkings = [][2]int64{{0x2000, 2}, {37, 1}} // (the non-race run has all four)
	}
	for _, ch := range chunkings {
		setChunking(t, ch[0], ch[1])
		for _, bt := range []int64{1, 100, 4096, 50000} {
			setBlockTarget(t, bt)
			for name, s := range streams {
				if bt == 1 && len(s) > 100000 && (ch[0] < 0x2000 || raceEnabled) {
					continue // (a block a packet, thousands of chunks: slow, and covered otherwise)
				}
				for _, opt := range []Options{{}, {Align: 0x2000, Strict: true}} {
					if _, err := Decode(s, opt); err != nil {
						continue // (the hand-built stream under 0x2000 alignment)
					}
					ranges := 10
					if bt == 1 || raceEnabled {
						ranges = -1 // (checkShape alone)
					}
					t.Run(fmt.Sprintf("%s/sync %d/blocks %d/%+v", name, ch[0], bt, opt), func(t *testing.T) {
						pindexAgree(t, s, opt, ranges, 1, 2, 4)
					})
				}
			}
		}
	}
}

// The chunks taken are counted: all of an encoded stream's, and on a stream
// whose packets cross the sync blocks, few of them, the rest indexed again.
func TestNewIndexParallelTakesChunks(t *testing.T) {
	setChunking(t, 0x2000, 1)
	setBlockTarget(t, 5000)
	enc := Encode(SampleData(3, 1<<20), EncodeOptions{})
	ps := pindexAgree(t, enc, Options{}, 10, 2)
	if ps.chunks < 10 || ps.taken != ps.chunks || ps.redone != 0 {
		t.Errorf("encoded stream: %+v, want every chunk taken", ps)
	}
	pk, _ := bigPrefix(200000)
	s := stream(append(pk, 0x11, 0, 0, 0x19, 0x04, 0x00, 0x10, 0xFF, 0x04, 0x00))
	ps = pindexAgree(t, s, Options{}, 10, 2)
	if ps.chunks < 10 || ps.redone == 0 || ps.taken+ps.redone != ps.chunks {
		t.Errorf("stream without sync points: %+v, want chunks indexed again", ps)
	}
}

// The default chunking, on a stream of several chunks.
func TestNewIndexParallelDefaultChunks(t *testing.T) {
	enc := Encode(SampleData(17, 4<<20), EncodeOptions{})
	chunk := int(syncBlock * chunkBlocks)
	if len(enc) < 2*chunk {
		t.Fatalf("stream of %d bytes: fewer than 2 chunks", len(enc))
	}
	ps := pindexAgree(t, enc, Options{}, 30, 2, 4)
	if ps.chunks < 2 || ps.taken != ps.chunks {
		t.Errorf("%+v: not every chunk taken", ps)
	}
	ix, err := NewIndexParallel(enc, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	// A chunk's blocks: NewIndex's, but for its last, short one.
	if nb := ix.NumBlocks(); nb < want.NumBlocks() || nb > want.NumBlocks()+ps.chunks {
		t.Errorf("%d blocks, NewIndex %d, %d chunks", nb, want.NumBlocks(), ps.chunks)
	}
	t.Logf("%d chunks: %d blocks, %d groups, index %.1f%% (NewIndex: %d, %d, %.1f%%)", ps.chunks,
		ix.NumBlocks(), len(ix.groupFirst), 100*float64(ix.MaxMemSize())/float64(ix.Size()),
		want.NumBlocks(), len(want.groupFirst), 100*float64(want.MaxMemSize())/float64(want.Size()))
	// Corrupt bytes around chunk starts.
	rng := rand.New(rand.NewPCG(8, 10))
	for range 8 {
		s := bytes.Clone(enc)
		c := 1 + rng.IntN((len(s)-HeaderSize)/chunk)
		s[HeaderSize+c*chunk+rng.IntN(64)-32] = byte(rng.IntN(256))
		pindexAgree(t, s, Options{Strict: rng.IntN(2) == 0}, -1, 2)
	}
}

// Corrupt streams: a changed byte anywhere or at a sync point, a cut
// declared size or a tight limit give NewIndex's error.
func TestNewIndexParallelCorrupt(t *testing.T) {
	enc := Encode(SampleData(9, 400<<10), EncodeOptions{})
	trials := 300
	if testing.Short() || raceEnabled {
		trials = 60
	}
	// (Small blocks: several groups a chunk, each of whose reach counts.)
	for _, ch := range [][3]int64{{0x2000, 1, 64 << 10}, {0x2000, 1, 500}, {37, 1, 64 << 10}} {
		setChunking(t, ch[0], ch[1])
		setBlockTarget(t, ch[2])
		rng := rand.New(rand.NewPCG(3, uint64(ch[0]+ch[2])))
		for range trials {
			s := bytes.Clone(enc)
			switch rng.IntN(4) {
			case 0, 1:
				s[HeaderSize+rng.IntN(len(s)-HeaderSize)] = byte(rng.IntN(256))
			case 2: // break a sync point
				blk := rng.IntN((len(s) - HeaderSize) / 0x2000)
				s[HeaderSize+blk*0x2000] = byte(rng.IntN(0x20))
			case 3: // cut the declared size
				n := HeaderSize + rng.IntN(len(s)-HeaderSize)
				s = s[:n]
				putHeader(s, n, "cut")
			}
			pindexAgree(t, s, Options{Strict: rng.IntN(2) == 0}, -1, 2)
		}
		for range 10 {
			pindexAgree(t, enc, Options{MaxOutput: 1 + rng.Int64N(400<<10)}, -1, 2)
		}
	}
}

func FuzzNewIndexParallel(f *testing.F) {
	addParallelSeeds(f)
	f.Fuzz(func(t *testing.T, body []byte, flags, blk uint8) {
		fuzzChunking(t, blk)
		setBlockTarget(t, 1+int64(blk)*5)
		s := fuzzStream(body, flags&1 != 0)
		opt := fuzzOptions(flags)
		in := bytes.Clone(s)
		want, werr := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
		full, derr := Decode(s, opt)
		for _, w := range []int{2, 3} {
			var ps parStats
			ix, err := newIndexParallel(s, w, opt, &ps)
			if !bytes.Equal(in, s) {
				t.Fatal("NewIndexParallel mutated its input")
			}
			if !sameErr(err, werr) {
				t.Fatalf("workers %d: parallel %v, NewIndex %v; %+v", w, err, werr, ps)
			}
			if err != nil {
				continue
			}
			if derr != nil || ix.Size() != want.Size() || ix.Size() != int64(len(full)) {
				t.Fatalf("workers %d: Size %d, NewIndex %d, Decode %d (%v)", w, ix.Size(), want.Size(), len(full), derr)
			}
			p := make([]byte, len(full))
			if n, err := ix.ReadAt(bytes.NewReader(s), p, 0); n != len(full) || err != nil || !bytes.Equal(p, full) {
				t.Fatalf("workers %d: ReadAt %d bytes, %v", w, n, err)
			}
			chunk := int64(0)
			if ps.chunks > 0 {
				chunk = syncBlock * chunkBlocks
			}
			checkShape(t, ix, s, opt, chunk)
		}
	})
}

// literalsTo is packet data of exactly n >= 5 bytes ending in a literal:
// literals of 18 bytes, each followed by a dummy (no output), then one that
// fills the rest.
func literalsTo(n int) []byte {
	var pk []byte
	for i := 0; n-len(pk)-22 >= 5; i++ {
		pk = append(pk, 0x0F)
		pk = append(pk, rep(string(rune('a'+i%26)), 18)...)
		pk = append(pk, 0x11, 0, 0)
	}
	if r := n - len(pk); r <= 19 {
		pk = append(pk, byte(r-4))
		pk = append(pk, rep("x", r-1)...)
	} else {
		pk = append(pk, 0, byte(r-20))
		pk = append(pk, rep("y", r-2)...)
	}
	return pk
}

// The rules a chunk is taken by, each on a stream where only it decides: the
// literal-pair rules across a chunk's start, and a group of a chunk, not its
// first, reaching before the output's start.
func TestNewIndexParallelChunkRules(t *testing.T) {
	setChunking(t, 0x400, 1)
	setBlockTarget(t, 10)
	tail := bytes.Repeat(b(0x11, 0, 0), 0x200) // (a second chunk and more)
	// A literal right after a literal, at the second chunk's start.
	s := stream(literalsTo(0x400), b(0x01, "abcd"), tail)
	pindexAgree(t, s, Options{}, -1, 2)
	_, err := NewIndexParallel(s, 2, Options{})
	wantRule(t, "literal pair", err, RuleLiteralPair, HeaderSize+0x400)
	// A literal after a match with little literals: strict only.
	s = stream(literalsTo(0x400-3), b(0x41, 0x00, "z"), b(0x01, "abcd"), tail)
	pindexAgree(t, s, Options{}, 5, 2)
	pindexAgree(t, s, Options{Strict: true}, -1, 2)
	_, err = NewIndexParallel(s, 2, Options{Strict: true})
	wantRule(t, "strict literal", err, RuleStrictLiteral, HeaderSize+0x400)
	// 20 bytes of output in the first chunk, 720 in the second's first
	// groups, then a match 800 back.
	pk := append(b(0x00, 2, rep("q", 20)), bytes.Repeat(b(0x11, 0, 0), (0x400-22)/3)...)
	for range 40 {
		pk = append(pk, 0x0F)
		pk = append(pk, rep("r", 18)...)
		pk = append(pk, 0x11, 0, 0)
	}
	s = stream(pk, b(0x21, 31<<2, 12), tail)
	pindexAgree(t, s, Options{}, -1, 2)
	_, err = NewIndexParallel(s, 2, Options{})
	wantRule(t, "far match", err, RuleDistance, HeaderSize+0x400+40*22)
}

// Chunks of no output (dummies) at the start, in the middle and at the end
// of a stream, and a stream of nothing else: no block is empty.
func TestNewIndexParallelNoOutputChunks(t *testing.T) {
	setChunking(t, 0x400, 1)
	dummies := func(chunks int) []byte { return bytes.Repeat(b(0x11, 0, 0), chunks*0x400/3) }
	lits := literalsTo(3*0x400 + 7)
	streams := map[string][]byte{
		"none":   stream(dummies(5)),
		"start":  stream(dummies(3), lits),
		"middle": stream(lits, dummies(4), lits),
		"end":    stream(lits, dummies(3)),
		"mixed":  stream(dummies(2), lits, dummies(1), b(0x15, "abcd"), dummies(2), lits, dummies(1)),
	}
	for _, bt := range []int64{10, 1000, 64 << 10} {
		setBlockTarget(t, bt)
		for name, s := range streams {
			t.Run(fmt.Sprintf("%s/%d", name, bt), func(t *testing.T) { pindexAgree(t, s, Options{}, 10, 1, 2, 3) })
		}
	}
}
