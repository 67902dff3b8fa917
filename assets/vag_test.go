package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// refDecode is a straightforward PS-ADPCM decoder written independently of
// DecodeFrames: nibbles sign-extended by subtraction, the step as a power of
// two, predictions floored by explicit division.
func refDecode(adpcm []byte) []int16 {
	pos := []int{0, 60, 115, 98, 122}
	neg := []int{0, 0, -52, -55, -60}
	floorDiv := func(a, b int) int {
		q := a / b
		if a%b != 0 && a < 0 {
			q--
		}
		return q
	}
	var out []int16
	old, older := 0, 0
	for f := 0; f+16 <= len(adpcm); f += 16 {
		shift := int(adpcm[f] & 15)
		if shift > 12 {
			shift = 9
		}
		filter := int(adpcm[f] >> 4)
		if filter > 4 {
			filter = 0
		}
		for i := 0; i < 28; i++ {
			b := int(adpcm[f+2+i/2])
			n := b & 15
			if i%2 == 1 {
				n = b >> 4
			}
			if n >= 8 {
				n -= 16
			}
			s := n*(1<<(12-shift)) + floorDiv(old*pos[filter]+older*neg[filter]+32, 64)
			if s > 32767 {
				s = 32767
			}
			if s < -32768 {
				s = -32768
			}
			out = append(out, int16(s))
			older, old = old, s
		}
	}
	return out
}

// parseWAV is an independent reader of the 16-bit mono PCM WAV: it checks
// every header field and returns the rate and the samples.
func parseWAV(t *testing.T, b []byte) (uint32, []int16) {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 44 || string(b[0:4]) != "RIFF" || string(b[8:16]) != "WAVEfmt " || string(b[36:40]) != "data" {
		t.Fatalf("not a canonical WAV header: % x", b[:min(len(b), 44)])
	}
	if int(le.Uint32(b[4:])) != len(b)-8 || le.Uint32(b[16:]) != 16 || le.Uint16(b[20:]) != 1 || le.Uint16(b[22:]) != 1 ||
		le.Uint16(b[32:]) != 2 || le.Uint16(b[34:]) != 16 || le.Uint32(b[28:]) != 2*le.Uint32(b[24:]) || int(le.Uint32(b[40:])) != len(b)-44 {
		t.Fatalf("WAV header fields: % x", b[:44])
	}
	s := make([]int16, (len(b)-44)/2)
	for i := range s {
		s[i] = int16(le.Uint16(b[44+2*i:]))
	}
	return le.Uint32(b[24:]), s
}

func snr(signal, decoded []int16) float64 {
	var ps, pe float64
	for i := range signal {
		d := float64(signal[i]) - float64(decoded[i])
		ps += float64(signal[i]) * float64(signal[i])
		pe += d * d
	}
	if pe == 0 {
		return math.Inf(1)
	}
	return 10 * math.Log10(ps/pe)
}

func TestSineSweepDeterministic(t *testing.T) {
	s := SineSweep(48000, 48000, 100, 4000, 20000)
	// A few fixed values pin the generator (integers only, so the same on
	// every machine).
	if s[0] != 0 {
		t.Errorf("s[0] = %d", s[0])
	}
	peak := 0
	zero := 0
	for i, v := range s {
		peak = max(peak, int(v), -int(v))
		if i > 0 && (s[i-1] < 0) != (v < 0) {
			zero++
		}
	}
	if peak < 19900 || peak > 20000 {
		t.Errorf("peak %d", peak)
	}
	// a sweep 100..4000 Hz over one second crosses zero about 2*(100+4000)/2 times
	if zero < 4000 || zero > 4200 {
		t.Errorf("%d zero crossings", zero)
	}
	if !equal16(s, SineSweep(48000, 48000, 100, 4000, 20000)) {
		t.Error("not deterministic")
	}
}

func equal16(a, b []int16) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVAGRoundTrip(t *testing.T) {
	for _, c := range []struct {
		n, rate int
	}{{0, 22050}, {1, 22050}, {28, 44100}, {29, 48000}, {24000, 24000}, {100000, 44100}} {
		sig := SineSweep(c.n, c.rate, 50, c.rate/8, 24000) // 4-bit ADPCM keeps ~45 dB up to rate/8
		vag := EncodeVAG(sig, c.rate, "sweep")
		frames := (c.n + 27) / 28
		if len(vag) != 0x30+16*frames {
			t.Fatalf("n=%d: %d bytes", c.n, len(vag))
		}
		h, pcm, err := DecodeVAG(vag)
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "sweep" || h.SampleRate != uint32(c.rate) || int(h.Samples()) != 28*frames {
			t.Fatalf("header %+v", h)
		}
		if ref := refDecode(vag[0x30:]); !equal16(pcm, ref) {
			t.Fatalf("n=%d: DecodeVAG differs from the reference decoder", c.n)
		}
		if c.n >= 1000 {
			if r := snr(sig, pcm[:c.n]); r < 35 {
				t.Errorf("n=%d: SNR %.1f dB, want at least 35", c.n, r)
			} else {
				t.Logf("n=%d rate=%d: SNR %.1f dB", c.n, c.rate, r)
			}
		}
		if frames > 0 && vag[0x30+16*(frames-1)+1] != 1 {
			t.Errorf("last frame flags %#x", vag[0x30+16*(frames-1)+1])
		}
		// The WAV through the view, read whole.
		v, err := NewVAGView(bytes.NewReader(vag), int64(len(vag)))
		if err != nil {
			t.Fatal(err)
		}
		if v.Size() != WAVSize(h) || v.Size() != int64(44+2*28*frames) {
			t.Fatalf("WAV size %d", v.Size())
		}
		wav := make([]byte, v.Size())
		if n, err := v.ReadAt(wav, 0); n != len(wav) || (err != nil && err.Error() != "EOF") {
			t.Fatalf("ReadAt: %d, %v", n, err)
		}
		rate, samples := parseWAV(t, wav)
		if rate != uint32(c.rate) || !equal16(samples, pcm) {
			t.Fatalf("WAV rate %d or samples differ", rate)
		}
	}
}

// TestVAGEncoderSearch checks the filter/shift search does real work: a loud
// low tone needs prediction (filters 1..4) and small shifts for silence.
func TestVAGEncoderSearch(t *testing.T) {
	sig := SineSweep(28*200, 44100, 200, 200, 30000)
	vag := EncodeVAG(sig, 44100, "")
	filters := map[int]int{}
	for f := 0; f < 200; f++ {
		filters[int(vag[0x30+16*f]>>4)]++
	}
	if filters[0] == 200 {
		t.Fatalf("only filter 0 used: %v", filters)
	}
	silent := EncodeVAG(make([]int16, 280), 44100, "")
	_, pcm, _ := DecodeVAG(silent)
	for i, v := range pcm {
		if v != 0 {
			t.Fatalf("silence decodes to %d at %d", v, i)
		}
	}
	// Clipping input does not wrap.
	square := make([]int16, 28*20)
	for i := range square {
		square[i] = 32767
		if i/50%2 == 1 {
			square[i] = -32768
		}
	}
	_, pcm, _ = DecodeVAG(EncodeVAG(square, 8000, ""))
	if r := snr(square, pcm[:len(square)]); r < 15 {
		t.Errorf("square wave SNR %.1f dB", r)
	}
}

// TestVAGViewRanges reads random byte ranges of a long WAV (many
// checkpoints) in random order and compares them with the whole decode.
func TestVAGViewRanges(t *testing.T) {
	sig := SineSweep(28*5000, 22050, 30, 8000, 16000)
	vag := EncodeVAG(sig, 22050, "long")
	// Hostile frames too: reserved filters and shifts, and clipping.
	r := rand.New(rand.NewPCG(5, 6))
	for f := 1000; f < 1100; f++ {
		for i := 0; i < 16; i++ {
			vag[0x30+16*f+i] = byte(r.UintN(256))
		}
	}
	ref := refDecode(vag[0x30:])
	want := append(WAVHeader(22050, int64(len(ref))), make([]byte, 2*len(ref))...)
	for i, s := range ref {
		binary.LittleEndian.PutUint16(want[44+2*i:], uint16(s))
	}
	v, err := NewVAGView(bytes.NewReader(vag), int64(len(vag)))
	if err != nil {
		t.Fatal(err)
	}
	if v.Size() != int64(len(want)) {
		t.Fatalf("size %d, want %d", v.Size(), len(want))
	}
	// A read near the end first: checkpoints fill up to it, nothing further.
	end := make([]byte, 10)
	if _, err := v.ReadAt(end, v.Size()-10); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(end, want[len(want)-10:]) {
		t.Fatal("last bytes differ")
	}
	if got, max := v.Checkpoints(), 5000/CheckpointFrames+1; got != max {
		t.Errorf("%d checkpoints after reading the end, want %d", got, max)
	}
	for i := 0; i < 400; i++ {
		off := r.Int64N(int64(len(want)))
		n := 1 + r.IntN(1<<17)
		if i%2 == 0 {
			n = 1 + r.IntN(7)
		}
		buf := make([]byte, n)
		got, err := v.ReadAt(buf, off)
		exp := want[off:min(int(off)+n, len(want))]
		if got != len(exp) || !bytes.Equal(buf[:got], exp) {
			t.Fatalf("ReadAt(%d, %d): %d bytes, mismatch (%v)", n, off, got, err)
		}
	}
	dst := make([]int16, 28*3)
	if err := v.DecodeRange(dst, 4000); err != nil || !equal16(dst, ref[4000*28:4003*28]) {
		t.Fatalf("DecodeRange: %v", err)
	}
	if err := v.DecodeRange(dst, 4998); err == nil {
		t.Fatal("DecodeRange past the end succeeded")
	}
}

func vagHeader(dataSize, rate uint32) []byte {
	b := make([]byte, 0x30)
	copy(b, "VAGp")
	binary.BigEndian.PutUint32(b[0xc:], dataSize)
	binary.BigEndian.PutUint32(b[0x10:], rate)
	return b
}

func TestVAGRefused(t *testing.T) {
	good := EncodeVAG(SineSweep(280, 22050, 100, 100, 1000), 22050, "x")
	cases := []struct {
		name string
		b    []byte
		size int64
		want error
	}{
		{"past extent", good, int64(len(good) - 1), ErrTruncated},
		{"declared huge", append(vagHeader(0xfffffff0, 22050), make([]byte, 64)...), 0x30 + 64, ErrTruncated},
		{"rate 0", append(vagHeader(16, 0), make([]byte, 16)...), 0x40, ErrValue},
		{"rate huge", append(vagHeader(16, 1<<30), make([]byte, 16)...), 0x40, ErrValue},
		{"magic", append([]byte("VAGx"), good[4:]...), int64(len(good)), ErrMagic},
		{"short", good[:0x2f], 0x2f, ErrTruncated},
	}
	for _, c := range cases {
		_, err := NewVAGView(bytes.NewReader(c.b), c.size)
		if !errors.Is(err, ErrFormat) || !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	// A data size that is not a whole number of frames: the partial frame is
	// left out of the WAV.
	odd := bytes.Clone(good)
	binary.BigEndian.PutUint32(odd[0xc:], uint32(len(good)-0x30-5))
	h, pcm, err := DecodeVAG(odd)
	if err != nil || h.Frames() != 9 || len(pcm) != 9*28 || h.WAVSize() != 44+2*9*28 {
		t.Fatalf("partial frame: %+v %d %v", h, len(pcm), err)
	}
	// A VAG whose extent is larger than its declared data: the WAV has the
	// declared frames only.
	big := append(bytes.Clone(good), make([]byte, 1000)...)
	v, err := NewVAGView(bytes.NewReader(big), int64(len(big)))
	if err != nil || v.Size() != 44+2*280 {
		t.Fatalf("slack after the sound: %v, size %d", err, v.Size())
	}
}

// errReader fails every read past the header.
type errReader struct{ b []byte }

var errIO = errors.New("disk on fire")

func (r errReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= 0x30 {
		return 0, errIO
	}
	return copy(p, r.b[off:]), nil
}

func TestVAGViewReadError(t *testing.T) {
	vag := EncodeVAG(SineSweep(2800, 22050, 100, 100, 1000), 22050, "x")
	v, err := NewVAGView(errReader{vag}, int64(len(vag)))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := v.ReadAt(make([]byte, 100), 44); !errors.Is(err, errIO) || n != 0 {
		t.Fatalf("%d, %v, want the reader's error", n, err)
	}
	if n, err := v.ReadAt(make([]byte, 100), 4); !errors.Is(err, errIO) || n != 40 {
		t.Fatalf("%d, %v, want the 40 header bytes and the reader's error", n, err)
	}
	hdr := make([]byte, 44)
	if n, err := v.ReadAt(hdr, 0); n != 44 || err != nil {
		t.Fatalf("header read: %d %v", n, err)
	}
}
