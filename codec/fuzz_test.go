package codec

import (
	"bytes"
	"testing"
)

// fuzzSeeds are the hand-built vectors plus a few encoded samples.
func fuzzSeeds() [][]byte {
	bodies := [][]byte{
		b(0x01, "abcd", 0xC0, 0x00), b(0x01, "xyzw", 0x21, 0x02, 0x00, "!?"), b(0x01, "abcd", 0x11, 0x02, 0x00, "ef"),
		b(0x01, "abcd", 0x12, 0x00, 0x00, 0xEE), b(0x01, "abcd", 0x01, "efgh"), b(0x01, "abcd", 0x21, 0xFC, 0x00),
		b(0x00, 0x02, rep("0123456789", 2), 0x20, 0x05, 0x00, 0x00), b(0x15, "abcd", 0x4C, 0x00), b(0x12, "a", 0x01, "bcde"),
		b(0x01, "abcd", 0x41, 0x00, "x", 0x01, "efgh"), b(0x01, "abcd", 0x10, 0x05, 0x03, 0x00),
		b(0x01, "abcd", 0x20, 0xFF, 0x00, 0x00, 0x20, 0xFF, 0x00, 0x00, 0x20, 0xFF, 0x00, 0x00),
	}
	var out [][]byte
	for _, bd := range bodies {
		out = append(out, bd)
	}
	for i, n := range []int{100, 3000, 20000} {
		enc := Encode(SampleData(int64(i), n), EncodeOptions{})
		out = append(out, enc[HeaderSize:])
	}
	pk, _ := bigPrefix(0x4100)
	out = append(out, append(pk, 0x11, 0x04, 0x00, 0x19, 0x04, 0x00, 0x10, 0xFF, 0x04, 0x00))
	return out
}

// fuzzStream turns fuzz input into a stream: with raw set the bytes are the
// whole stream (header and all), else they are packet data behind a correct
// header.
func fuzzStream(body []byte, raw bool) []byte {
	if raw {
		return body
	}
	return stream(body)
}

func fuzzOptions(flags uint8) Options {
	var o Options
	if flags&2 != 0 {
		o.Strict = true
	}
	if flags&4 != 0 {
		o.Align = 0x2000
	}
	if flags&8 != 0 {
		o.MaxOutput = int64(flags) * 97
	}
	return o
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0))
		f.Add(s, uint8(2))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8) {
		s := fuzzStream(body, flags&1 != 0)
		opt := fuzzOptions(flags)
		out, err := decodeAgree(t, s, opt) // also: input not mutated, Scan and index agree
		if want, werr := refDecode(s, opt); !sameErr(err, werr) || !bytes.Equal(out, want) {
			t.Fatalf("fast decoder %v (%d bytes), reference %v (%d bytes)", err, len(out), werr, len(want))
		}
		// Guard bytes past the declared size change nothing.
		if h, herr := ParseHeader(s); herr == nil && h.Size <= int64(len(s)) {
			guarded := append(bytes.Clone(s[:h.Size]), 0x01, 'G', 'G', 'G', 'G', 0x00, 0xFF)
			out2, err2 := Decode(guarded, opt)
			if !bytes.Equal(out, out2) || !sameErr(err, err2) {
				t.Fatalf("bytes past the declared size changed the result: %v / %v", err, err2)
			}
		}
		if opt.MaxOutput > 0 && int64(len(out)) > opt.MaxOutput {
			t.Fatalf("output %d past MaxOutput %d", len(out), opt.MaxOutput)
		}
	})
}

func FuzzScan(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8, chunk uint16) {
		// Small chunks force refills at every kind of packet boundary.
		old := scanChunk
		scanChunk = maxPacket + 1 + int64(chunk%2048)
		defer func() { scanChunk = old }()
		s := fuzzStream(body, flags&1 != 0)
		decodeAgree(t, s, fuzzOptions(flags))
	})
}

func FuzzRangeDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0), uint32(5), uint16(100), uint16(3000))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8, off uint32, n uint16, block uint16) {
		r, full, ix := fuzzIndex(t, body, flags, block)
		if ix == nil {
			return
		}
		if ix.Size() != int64(len(full)) {
			t.Fatalf("size %d vs %d", ix.Size(), len(full))
		}
		var prev []byte
		for i := 0; i < ix.NumBlocks(); i++ {
			bo, bn := ix.Block(i)
			cold, err := ix.DecodeBlock(r, i, nil)
			if err != nil || !bytes.Equal(cold, full[bo:bo+int64(bn)]) {
				t.Fatalf("block %d cold: %v", i, err)
			}
			warm, err := ix.DecodeBlock(r, i, prev)
			if err != nil || !bytes.Equal(warm, cold) {
				t.Fatalf("block %d warm: %v", i, err)
			}
			// Into a dirty buffer with room (a recycled one): written
			// there, whole.
			dst := bytes.Repeat([]byte{0xa5}, bn+int(flags))
			into, err := ix.DecodeBlockTo(r, i, prev, dst[:0])
			if err != nil || !bytes.Equal(into, cold) || len(into) > 0 && &into[0] != &dst[0] {
				t.Fatalf("block %d into a buffer: %v", i, err)
			}
			prev = cold
		}
		if len(full) == 0 {
			return
		}
		o := int64(off) % int64(len(full))
		p := make([]byte, int(n))
		got, err := ix.ReadAt(r, p, o)
		want := full[o:min(int64(len(full)), o+int64(n))]
		if got != len(want) || !bytes.Equal(p[:got], want) {
			t.Fatalf("ReadAt(%d,%d): %d %v", o, n, got, err)
		}
	})
}

func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte{}, false)
	f.Add([]byte("abc"), true)
	f.Add(bytes.Repeat([]byte("abcd"), 100), false)
	f.Add(SampleData(1, 5000), false)
	f.Add(SampleData(2, 40000), true)
	f.Fuzz(func(t *testing.T, src []byte, best bool) {
		in := bytes.Clone(src)
		enc := Encode(src, EncodeOptions{Tag: "fuzz", Best: best})
		if !bytes.Equal(in, src) {
			t.Fatal("Encode mutated its input")
		}
		if err := Validate(enc); err != nil {
			t.Fatalf("Validate: %v", err)
		}
		for _, opt := range []Options{{}, {Strict: true, Align: 0x2000}} {
			got, err := Decode(enc, opt)
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("round trip %+v: %v", opt, err)
			}
		}
		st, err := Scan(bytes.NewReader(enc), int64(len(enc)), Options{})
		if err != nil || st.DecodedSize != int64(len(src)) {
			t.Fatalf("Scan: %d %v", st.DecodedSize, err)
		}
	})
}

// fuzzIndex builds the index of a fuzzed stream with tiny blocks and read
// chunks (restored when the test ends) and checks that its error agrees with
// a full decode. ix is nil when the stream is corrupt.
func fuzzIndex(t *testing.T, body []byte, flags uint8, block uint16) (r *bytes.Reader, full []byte, ix *Index) {
	oldB, oldC := blockTarget, scanChunk
	blockTarget = 1 + int64(block%8192)
	scanChunk = maxPacket + 1 + int64(block%1500)
	t.Cleanup(func() { blockTarget, scanChunk = oldB, oldC })
	s := fuzzStream(body, flags&1 != 0)
	opt := fuzzOptions(flags)
	full, err := Decode(s, opt)
	r = bytes.NewReader(s)
	ix, ierr := NewIndex(r, int64(len(s)), opt)
	if !sameErr(err, ierr) {
		t.Fatalf("Decode %v, NewIndex %v", err, ierr)
	}
	if ierr != nil {
		return r, full, nil
	}
	return r, full, ix
}
