package codec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// roundTrip encodes src both ways and checks decode, Validate, Scan and the
// index.
func roundTrip(t *testing.T, name string, src []byte) {
	t.Helper()
	for _, best := range []bool{false, true} {
		enc := Encode(src, EncodeOptions{Tag: "gameplay", Best: best})
		if err := Validate(enc); err != nil {
			t.Fatalf("%s best=%v: Validate: %v", name, best, err)
		}
		for _, opt := range []Options{{}, {Align: 0x2000, Strict: true}} {
			got, err := decodeAgree(t, enc, opt)
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("%s best=%v opt=%+v: err %v, %d bytes back of %d", name, best, opt, err, len(got), len(src))
			}
		}
		if h, _ := ParseHeader(enc); h.Tag != "gameplay" || h.Size != int64(len(enc)) {
			t.Fatalf("%s: header %+v", name, h)
		}
	}
}

func TestRoundTripTiny(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 300; n++ {
		src := make([]byte, n)
		for i := range src {
			src[i] = byte(rng.IntN(3)) // small alphabet: matches of every size
		}
		roundTrip(t, "tiny-low-entropy", src)
		for i := range src {
			src[i] = byte(rng.Uint32())
		}
		roundTrip(t, "tiny-random", src)
	}
}

func TestRoundTripShapes(t *testing.T) {
	sequentialTest(t)
	rng := rand.New(rand.NewPCG(3, 4))
	noise := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	zeros := make([]byte, 1<<20)
	roundTrip(t, "long run", zeros)
	roundTrip(t, "random 1 MiB", noise(1<<20))
	for _, d := range []int{2048, 2049, 16384, 16385, 20000, 32704, 32705, 40000, 49151} {
		blk := noise(1000)
		src := append(append(bytes.Clone(blk), noise(d-1000)...), blk...)
		roundTrip(t, "far repeat", src)
	}
	// Around the 0x2000 blocks of the packet data: random data is literal
	// packets, so these sizes put packet ends at and around block ends.
	for n := 0x1F00; n < 0x2100; n += 7 {
		roundTrip(t, "block boundary", noise(n))
	}
	roundTrip(t, "sample", SampleData(9, 3<<20))
	// Alternating runs and noise, literal runs of every awkward length.
	var mix []byte
	for i := 0; i < 400; i++ {
		mix = append(mix, noise(rng.IntN(280))...)
		mix = append(mix, bytes.Repeat([]byte{byte(i)}, rng.IntN(300))...)
	}
	roundTrip(t, "mix", mix)
}

func TestEncodeUsesEveryKind(t *testing.T) {
	sequentialTest(t)
	src := SampleData(5, 4<<20)
	enc := Encode(src, EncodeOptions{})
	st, err := Scan(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Literals == 0 || st.LongLiterals == 0 || st.LongLiterals == st.Literals ||
		st.ShortMatches == 0 || st.Matches == 0 || st.FarMatches == 0 || st.Dummies == 0 || st.BlockMarkers == 0 {
		t.Errorf("some packet kind unused: %+v", st)
	}
	best := Encode(src, EncodeOptions{Best: true})
	if len(best) > len(enc) {
		t.Errorf("Best (%d) larger than default (%d)", len(best), len(enc))
	}
	// Better than a first-greedy single-probe encoder on the same data.
	e := &encoder{src: src, out: make([]byte, HeaderSize), head: make([]int32, 1<<encHashBits),
		chain: make([]int32, encWindowMask+1), depth: 1, nice: 3, lazyMax: 0}
	e.compress()
	if len(enc) >= len(e.out) {
		t.Errorf("default %d bytes, greedy single probe %d", len(enc), len(e.out))
	}
	t.Logf("ratio default %.3f best %.3f greedy-1 %.3f", float64(len(src))/float64(len(enc)),
		float64(len(src))/float64(len(best)), float64(len(src))/float64(len(e.out)))
}

func TestValidateRejects(t *testing.T) {
	// Validate's block rule needs packets placed as a writer would; build
	// streams with the encoder's packet writer.
	w := func(f func(e *encoder)) []byte {
		e := &encoder{out: make([]byte, HeaderSize)}
		f(e)
		putHeader(e.out, len(e.out), "")
		return e.out
	}
	prefix := func(e *encoder) {
		_, out := bigPrefix(0x8000 + 100)
		e.flush(out) // literal packets and dummies, placed with markers
	}
	cases := []struct {
		name  string
		s     []byte
		limit bool // a LimitError (else a CorruptError)
	}{
		{"bit 3", w(func(e *encoder) { prefix(e); e.packet([]byte{0x19, 0x04, 0x00}, nil) }), true},
		{"far past 32704", w(func(e *encoder) { prefix(e); e.packet([]byte{0x11, 0xFC, 0xFF}, nil) }), true},
		{"LZO first byte", stream(b(0x15, "abcd")), true},
		{"literal pair", stream(b(0x01, "abcd", 0x01, "efgh")), false},
		{"literal after little literals", stream(b(0x01, "abcd", 0x41, 0x00, "x", 0x01, "efgh")), false},
		{"marker other shape", w(func(e *encoder) { e.literal([]byte("abcd")); e.out = append(e.out, 0x13, 0, 0) }), true},
		{"packet crossing a block", stream(bytes.Repeat(b(0x00, 0xFF, rep("z", 273), 0x11, 0, 0), 40)), true},
		{"marker skip disagrees", stream(b(0x01, "abcd", 0x12, 0, 0), make([]byte, 0x1000-8), b(0x01, "efgh")), true},
		{"distance", stream(b(0x01, "abcd", 0x50, 0x00)), false},
	}
	for _, tc := range cases {
		err := Validate(tc.s)
		var le *LimitError
		var ce *CorruptError
		if tc.limit && (!errors.As(err, &le) || !errors.Is(err, ErrWriterLimit)) || !tc.limit && !errors.As(err, &ce) {
			t.Errorf("%s: Validate = %v", tc.name, err)
		}
	}
	// And the same builders without the fault pass.
	ok := w(func(e *encoder) { prefix(e); e.match(3, 0x4001, nil) })
	if err := Validate(ok); err != nil {
		t.Errorf("valid far match: %v", err)
	}
}
