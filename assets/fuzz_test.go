package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image/color"
	"image/png"
	"testing"
)

func pifSeeds() [][]byte {
	return [][]byte{
		WritePIF(4, 4, 8, testPalette(256, 1), testIndices(4, 4, 256, 1)),
		WritePIF(5, 3, 4, testPalette(16, 2), testIndices(5, 3, 16, 2)),
		WritePIF(1, 1, 4, nil, []byte{0}),
		pifHeader(16384, 16384, 0x13),
		pifHeader(2, 2, 0x94),
		append(pifHeader(1, 1, 0x13), make([]byte, 1024)...),
	}
}

// checkTexturePNG is the guard every image fuzz target applies: the PNG is
// exactly PNGSize bytes, within the bound of the accepted shapes, image/png
// reads it back to the texture's pixels, and ranges read through PNGView
// match it.
func checkTexturePNG(t *testing.T, tex *Texture, size int64) {
	enc := EncodePNG(tex)
	if enc == nil || int64(len(enc)) != size || size != PNGSize(tex.Shape) {
		t.Fatalf("PNG %d bytes, header says %d", len(enc), size)
	}
	if size > PNGSize(Shape{MaxDimension, MaxDimension, 32}) {
		t.Fatalf("PNG %d bytes past the bound", size)
	}
	img, err := png.Decode(bytes.NewReader(enc))
	if err != nil {
		t.Fatalf("image/png: %v", err)
	}
	for y := 0; y < tex.Height; y++ {
		for x := 0; x < tex.Width; x++ {
			if got := img.At(x, y).(color.NRGBA); got != tex.NRGBAAt(x, y) {
				t.Fatalf("pixel (%d,%d) %v, want %v", x, y, got, tex.NRGBAAt(x, y))
			}
		}
	}
	v, _ := NewPNGView(tex)
	for _, r := range [][2]int64{{0, 1}, {size / 3, 100}, {size - 5, 5}, {size / 2, size}} {
		off, n := r[0], min(r[1], size-r[0])
		buf := make([]byte, n)
		if k, _ := v.ReadAt(buf, off); int64(k) != n || !bytes.Equal(buf, enc[off:off+n]) {
			t.Fatalf("PNGView range %v differs", r)
		}
	}
}

func FuzzPIF(f *testing.F) {
	for _, s := range pifSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tex, err := ReadPIF(bytes.NewReader(b), int64(len(b)))
		tex2, err2 := DecodePIF(b)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("ReadPIF %v, DecodePIF %v", err, err2)
		}
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if !bytes.Equal(tex.Pix, tex2.Pix) {
			t.Fatal("ReadPIF and DecodePIF differ")
		}
		h, err := StatPIF(bytes.NewReader(b), int64(len(b)))
		if err != nil || h.DataSize() > int64(len(b)) {
			t.Fatalf("stat %v", err)
		}
		checkTexturePNG(t, tex, h.PNGSize())
	})
}

func FuzzRGBABlob(f *testing.F) {
	f.Add(WriteRGBABlob(3, 2, make([]color.RGBA, 6)))
	f.Add(WriteRGBABlob(1, 1, []color.RGBA{{1, 2, 3, 0x90}}))
	huge := make([]byte, 16)
	binary.LittleEndian.PutUint32(huge, 16384)
	binary.LittleEndian.PutUint32(huge[4:], 16384)
	f.Add(huge)
	f.Fuzz(func(t *testing.T, b []byte) {
		tex, err := ReadRGBABlob(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		h, _ := StatRGBABlob(bytes.NewReader(b), int64(len(b)))
		for i := 3; i < len(tex.Pix); i += 4 {
			if want := PS2Alpha(b[16+i]); tex.Pix[i] != want {
				t.Fatalf("alpha %d", i)
			}
		}
		checkTexturePNG(t, tex, h.PNGSize())
	})
}

func FuzzVAG(f *testing.F) {
	f.Add(EncodeVAG(SineSweep(300, 22050, 100, 2000, 20000), 22050, "seed"), int64(0))
	f.Add(EncodeVAG(nil, 8000, ""), int64(0))
	f.Add(append(vagHeader(0x20, 44100), 0xff, 0x07, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0x4d, 0, 0x88, 0x77), int64(3))
	f.Add(vagHeader(0xffffffff, 1), int64(-1))
	f.Fuzz(func(t *testing.T, b []byte, slack int64) {
		size := int64(len(b))
		if slack < 0 && -slack < size {
			size += slack // a smaller extent than the bytes
		}
		v, err := NewVAGView(bytes.NewReader(b), size)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		h := v.Header()
		if 0x30+int64(h.DataSize) > size || v.Size() != WAVSize(h) || v.Size() > 44+(size-0x30)/16*56 {
			t.Fatalf("WAV size %d for a %d-byte extent", v.Size(), size)
		}
		wav := make([]byte, v.Size()+10)
		n, _ := v.ReadAt(wav, 0)
		if int64(n) != v.Size() {
			t.Fatalf("read %d of %d", n, v.Size())
		}
		wav = wav[:n]
		rate, samples := parseWAV(t, wav)
		if rate != h.SampleRate || !equal16(samples, refDecode(b[0x30:0x30+h.Frames()*16])) {
			t.Fatal("WAV differs from the reference decode")
		}
		if n > 50 {
			part := make([]byte, n/3)
			if k, _ := v.ReadAt(part, int64(n/2)); k != len(part) || !bytes.Equal(part, wav[n/2:n/2+len(part)]) {
				t.Fatal("range differs")
			}
		}
	})
}

func FuzzSubtitles(f *testing.F) {
	f.Add(WriteSubtitles(testCues()), uint8(4))
	f.Add(WriteSubtitles(nil), uint8(1))
	f.Add([]byte{1, 0, 2, 0, 0x10, 0, 0x10, 0, 0x10, 0, 0x10, 0, 0x10, 0, 0, 0, 0xff, 0xff}, uint8(3))
	f.Fuzz(func(t *testing.T, b []byte, code uint8) {
		s, err := ParseSubtitles(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		rate, ok := FrameRateOfCode(int(code % 9))
		if !ok {
			rate = DefaultFrameRate
		}
		if int64(len(s.Records)+1)*16 != s.TableEnd || s.TableEnd > int64(len(b)) {
			t.Fatalf("%d records, table end %d", len(s.Records), s.TableEnd)
		}
		for l := range Languages {
			srt, err := s.SRT(l, rate)
			if (err != nil) != (s.Err(l) != nil) {
				t.Fatalf("%s: SRT err %v, Err %v", Languages[l], err, s.Err(l))
			}
			if err != nil {
				if !errors.Is(err, ErrText) {
					t.Fatalf("%s: %v", Languages[l], err)
				}
				continue
			}
			// Each cue is at most its number, two times, the arrows and
			// blank line (64 bytes) plus its text, at most twice the
			// bytes to the blob's end (Latin-1 doubles).
			if bound := int64(len(s.Records)) * (64 + 2*int64(len(b))); int64(len(srt)) > bound {
				t.Fatalf("SRT %d bytes past %d", len(srt), bound)
			}
			if bytes.Contains(srt, []byte{0}) {
				t.Fatal("NUL in SRT")
			}
		}
	})
}

func FuzzSequenceHeader(f *testing.F) {
	f.Add(WritePSS(MinPSSSize, 4))
	f.Add([]byte{0, 0, 1, 0xb3, 0x20, 0x01, 0xc0, 0x24, 0x0e, 0xa6, 0x23, 0x80, 0, 0, 1, 0xb5, 0x14, 0x82, 0, 1, 0, 0x20})
	f.Add([]byte{0, 0, 1, 0xb3, 0, 0, 0, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := FrameRateIn(b)
		if err != nil {
			if r != DefaultFrameRate || !errors.Is(err, ErrNoSequenceHeader) {
				t.Fatalf("rate %v, err %v", r, err)
			}
			return
		}
		if r.Num <= 0 || r.Den <= 0 || r.FPS() < 23.976/32 || r.FPS() > 60*4 {
			t.Fatalf("rate %v", r)
		}
		r2, err := FindFrameRate(bytes.NewReader(b), int64(len(b)))
		if len(b) <= SequenceSearchLimit && (err != nil || r2 != r) {
			t.Fatalf("FindFrameRate %v %v, FrameRateIn %v", r2, err, r)
		}
	})
}
