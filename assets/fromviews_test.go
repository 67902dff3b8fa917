package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

func TestPS2AlphaInverse(t *testing.T) {
	for a := 0; a <= 0x80; a++ {
		if got := PS2AlphaFrom8(PS2Alpha(uint8(a))); int(got) != a {
			t.Errorf("alpha %#x -> %d -> %#x", a, PS2Alpha(uint8(a)), got)
		}
	}
	if PS2AlphaFrom8(255) != 0x80 || PS2AlphaFrom8(0) != 0 {
		t.Error("ends")
	}
}

func testPIF(depth int) []byte {
	pal := make([]color.RGBA, 1<<depth)
	for i := range pal {
		pal[i] = color.RGBA{uint8(i * 9), uint8(255 - i), uint8(i * 3), uint8(i % 0x81)}
	}
	idx := make([]byte, 12*10)
	for i := range idx {
		idx[i] = byte((i * 7) % len(pal))
	}
	return WritePIF(12, 10, depth, pal, idx)
}

// TestPIFFromPNGRoundTrip: the PNG gcfs shows, taken back, is the texture's
// bytes (both depths), and an RGBA blob's too.
func TestPIFFromPNGRoundTrip(t *testing.T) {
	for _, d := range []int{4, 8} {
		orig := testPIF(d)
		tex, err := DecodePIF(orig)
		if err != nil {
			t.Fatal(err)
		}
		out, note, err := PIFFromPNG(orig, EncodePNG(tex))
		if err != nil || note != "" || !bytes.Equal(out, orig) {
			t.Errorf("depth %d: %v %q, same %v", d, err, note, bytes.Equal(out, orig))
		}
	}
	px := make([]color.RGBA, 6)
	for i := range px {
		px[i] = color.RGBA{uint8(i), 2, 3, uint8(i * 20)}
	}
	blob := WriteRGBABlob(3, 2, px)
	tex, _ := DecodeRGBABlob(blob)
	if out, err := RGBABlobFromPNG(blob, EncodePNG(tex)); err != nil || !bytes.Equal(out, blob) {
		t.Errorf("blob: %v", err)
	}
}

// TestPIFFromPNGQuantises: more colours than a 4-bit texture holds are
// quantised (and said); a PNG of another size is refused.
func TestPIFFromPNGQuantises(t *testing.T) {
	orig := testPIF(4)
	img := image.NewNRGBA(image.Rect(0, 0, 12, 10))
	for i := range 120 {
		img.SetNRGBA(i%12, i/12, color.NRGBA{uint8(i * 2), uint8(255 - 2*i), 40, 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	out, note, err := PIFFromPNG(orig, buf.Bytes())
	if err != nil || !strings.Contains(note, "120 colours quantised to the 16") {
		t.Fatalf("%v, note %q", err, note)
	}
	tex, err := DecodePIF(out)
	if err != nil {
		t.Fatal(err)
	}
	if c := tex.NRGBAAt(0, 0); c.A != 255 || c.R > 40 {
		t.Errorf("pixel 0 quantised to %v", c)
	}
	small := image.NewNRGBA(image.Rect(0, 0, 4, 4))
	buf.Reset()
	png.Encode(&buf, small)
	if _, _, err := PIFFromPNG(orig, buf.Bytes()); !errors.Is(err, ErrEdit) {
		t.Fatalf("got %v", err)
	}
}

func wavOf(rate uint32, channels, bits uint16, n int) []byte {
	w := WAVHeader(rate, int64(n))
	binary.LittleEndian.PutUint16(w[22:], channels)
	binary.LittleEndian.PutUint16(w[34:], bits)
	return append(w, make([]byte, 2*n)...)
}

// TestVAGFromWAV: a mono 16-bit WAV becomes a VAG at its rate with the
// original's name; stereo, 8-bit and out-of-range rates are refused.
func TestVAGFromWAV(t *testing.T) {
	orig := EncodeVAG(make([]int16, 100), 11025, "sndname")
	v, err := VAGFromWAV(orig, wavOf(32000, 1, 16, 280))
	if err != nil {
		t.Fatal(err)
	}
	h, s, err := DecodeVAG(v)
	if err != nil || h.SampleRate != 32000 || len(s) != 280 || string(bytes.TrimRight(v[0x20:0x30], "\x00")) != "sndname" {
		t.Fatalf("%+v %d %v", h, len(s), err)
	}
	for _, c := range []struct {
		w    []byte
		want string
	}{
		{wavOf(32000, 2, 16, 10), "channels"},
		{wavOf(32000, 1, 8, 10), "8-bit"},
		{wavOf(0, 1, 16, 10), "outside"},
		{wavOf(500000, 1, 16, 10), "outside"},
		{[]byte("RIFF\x04\x00\x00\x00WAVE"), "no fmt"},
	} {
		if _, err := VAGFromWAV(orig, c.w); !errors.Is(err, ErrEdit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

func FuzzVAGFromWAV(f *testing.F) {
	f.Add(wavOf(22050, 1, 16, 30))
	f.Add(wavOf(22050, 2, 16, 3))
	orig := EncodeVAG(make([]int16, 28), 11025, "x")
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		if v, err := VAGFromWAV(orig, b); err == nil {
			if _, _, err := DecodeVAG(v); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzPIFFromPNG(f *testing.F) {
	orig := testPIF(4)
	tex, _ := DecodePIF(orig)
	f.Add(EncodePNG(tex))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		if out, _, err := PIFFromPNG(orig, b); err == nil {
			if _, err := DecodePIF(out); err != nil || len(out) != len(orig) {
				t.Fatal(err)
			}
		}
	})
}

// testIndexed8 is a 12×10 level texture: its pixels and stored palette.
func testIndexed8() (pix, pal []byte) {
	pix = make([]byte, 12*10)
	for i := range pix {
		pix[i] = byte((i * 7) % 200)
	}
	pal = make([]byte, IndexedPaletteBytes)
	for i := 0; i < 256; i++ {
		copy(pal[4*i:], []byte{byte(i * 9), byte(255 - i), byte(i * 3), byte(i % 0x81)})
	}
	return pix, pal
}

// TestIndexed8FromPNG: a level texture's PNG taken back unchanged gives its
// pixels and palette back byte for byte; a recoloured one decodes to the
// recolouring, the palette rebuilt; more colours than 256 are quantised,
// said in the note; a PNG of another size is refused.
func TestIndexed8FromPNG(t *testing.T) {
	pix, pal := testIndexed8()
	tex, err := DecodeIndexed8(12, 10, pix, pal)
	if err != nil {
		t.Fatal(err)
	}
	p2, pal2, note, err := Indexed8FromPNG(12, 10, pix, pal, EncodePNG(tex), false)
	if err != nil || note != "" || !bytes.Equal(p2, pix) || !bytes.Equal(pal2, pal) {
		t.Fatalf("unchanged: %v %q, pixels same %v, palette same %v", err, note, bytes.Equal(p2, pix), bytes.Equal(pal2, pal))
	}
	// Recoloured: every pixel a new colour of the index's.
	img := image.NewNRGBA(image.Rect(0, 0, 12, 10))
	for i, ix := range pix {
		img.SetNRGBA(i%12, i/12, color.NRGBA{ix, 7, 200 - ix, 255})
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	p2, pal2, note, err = Indexed8FromPNG(12, 10, pix, pal, buf.Bytes(), false)
	if err != nil || note != "" {
		t.Fatal(err, note)
	}
	got, err := DecodeIndexed8(12, 10, p2, pal2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range pix {
		if c := got.Palette[got.Pix[i]]; c != img.NRGBAAt(i%12, i/12) {
			t.Fatalf("pixel %d reads %v, want %v", i, c, img.NRGBAAt(i%12, i/12))
		}
	}
	// A shared palette is kept: the recolouring maps to its nearest colours.
	p3, pal3, note, err := Indexed8FromPNG(12, 10, pix, pal, buf.Bytes(), true)
	if err != nil || !bytes.Equal(pal3, pal) || !strings.Contains(note, "shared") {
		t.Fatalf("shared palette: %v, palette kept %v, %q", err, bytes.Equal(pal3, pal), note)
	}
	for i := range pix {
		w := img.NRGBAAt(i%12, i/12)
		best := -1
		for _, p := range tex.Palette {
			d := sq(int(w.R)-int(p.R)) + sq(int(w.G)-int(p.G)) + sq(int(w.B)-int(p.B)) + sq(int(w.A)-int(p.A))
			if best < 0 || d < best {
				best = d
			}
		}
		c := tex.Palette[p3[i]]
		if d := sq(int(w.R)-int(c.R)) + sq(int(w.G)-int(c.G)) + sq(int(w.B)-int(c.B)) + sq(int(w.A)-int(c.A)); d != best {
			t.Fatalf("pixel %d: %v at distance %d, the nearest is at %d", i, c, d, best)
		}
	}
	// 300 colours: quantised.
	big := image.NewNRGBA(image.Rect(0, 0, 20, 15))
	for i := 0; i < 300; i++ {
		big.SetNRGBA(i%20, i/20, color.NRGBA{byte(i), byte(i >> 8 * 90), byte(i * 3), 255})
	}
	buf.Reset()
	png.Encode(&buf, big)
	bpix := make([]byte, 300)
	if _, _, note, err := Indexed8FromPNG(20, 15, bpix, pal, buf.Bytes(), false); err != nil || !strings.Contains(note, "quantised") {
		t.Fatalf("300 colours: %q, %v", note, err)
	}
	if _, _, _, err := Indexed8FromPNG(12, 10, pix, pal, buf.Bytes(), false); !errors.Is(err, ErrEdit) {
		t.Fatalf("a 20x15 PNG over a 12x10 texture: %v", err)
	}
}

func FuzzIndexed8FromPNG(f *testing.F) {
	pix, pal := testIndexed8()
	tex, _ := DecodeIndexed8(12, 10, pix, pal)
	f.Add(EncodePNG(tex))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<16 {
			return
		}
		if p2, pal2, _, err := Indexed8FromPNG(12, 10, pix, pal, b, len(b)%2 == 0); err == nil {
			if _, err := DecodeIndexed8(12, 10, p2, pal2); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func sq(v int) int { return v * v }
