package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"runtime"
	"testing"
)

// testPalette is a deterministic palette of n colours with PS2 alphas
// covering 0, 0x80, values between, and values above 0x80.
func testPalette(n int, seed uint64) []color.RGBA {
	r := rand.New(rand.NewPCG(seed, 1))
	alphas := []uint8{0, 0x80, 0x40, 1, 0x7f, 0xff, 0x81, 0x20}
	p := make([]color.RGBA, n)
	for i := range p {
		p[i] = color.RGBA{uint8(r.UintN(256)), uint8(r.UintN(256)), uint8(r.UintN(256)), alphas[i%len(alphas)]}
	}
	return p
}

func testIndices(w, h, colors int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	ix := make([]byte, w*h)
	for i := range ix {
		ix[i] = byte(r.UintN(uint(colors)))
	}
	return ix
}

// wantAlpha is the expected PS2 alpha mapping, written out independently:
// Wrench's (DISC-FACTS), twice the stored value below 0x80, opaque from 0x80
// up.
func wantAlpha(a uint8) uint8 {
	if a >= 0x80 {
		return 255
	}
	return a + a
}

// TestPS2Alpha checks the mapping for every stored value 0..255 and its
// inverse for every 8-bit value; the pair round-trips 0..0x80.
func TestPS2Alpha(t *testing.T) {
	// The values where a*255/128 (the rule before Wrench's) differs show
	// the table: 0x41 → 130, 0x7f → 254.
	fixed := map[uint8]uint8{0: 0, 1: 2, 0x20: 64, 0x40: 128, 0x41: 130, 0x60: 192, 0x7e: 252, 0x7f: 254, 0x80: 255, 0x81: 255, 0xc0: 255, 0xff: 255}
	for a, want := range fixed {
		if got := PS2Alpha(a); got != want {
			t.Errorf("PS2Alpha(%#x) = %d, want %d", a, got, want)
		}
	}
	for a := 0; a < 256; a++ {
		if got, want := PS2Alpha(uint8(a)), wantAlpha(uint8(a)); got != want {
			t.Errorf("PS2Alpha(%#x) = %d, want %d", a, got, want)
		}
		want := uint8(a / 2)
		if a == 255 {
			want = 0x80
		}
		if got := PS2AlphaStored(uint8(a)); got != want {
			t.Errorf("PS2AlphaStored(%d) = %#x, want %#x", a, got, want)
		}
	}
	for a := 0; a <= 0x80; a++ {
		if back := PS2AlphaStored(PS2Alpha(uint8(a))); back != uint8(a) {
			t.Errorf("stored %#x → %d → %#x", a, PS2Alpha(uint8(a)), back)
		}
	}
}

// TestTextureWritersRoundTrip: EncodePIF and EncodeRGBABlob store a decoded
// texture's alphas back as they were, for every stored alpha 0..0x80, and
// the PNG image/png reads has Wrench's alphas.
func TestTextureWritersRoundTrip(t *testing.T) {
	pal := make([]color.RGBA, 256)
	for i := range pal {
		pal[i] = color.RGBA{uint8(i), uint8(255 - i), uint8(i * 3), uint8(i % 0x81)}
	}
	ix := testIndices(16, 16, 256, 3)
	for i := range 256 {
		ix[i] = byte(i) // every colour used
	}
	pix := make([]color.RGBA, 0x81)
	for i := range pix {
		pix[i] = color.RGBA{uint8(i), 1, 2, uint8(i)}
	}
	for _, c := range []struct {
		name   string
		stored []byte
		decode func([]byte) (*Texture, error)
		encode func(*Texture) ([]byte, error)
		want   func(x, y int) color.RGBA
	}{
		{"pif8", WritePIF(16, 16, 8, pal, ix), DecodePIF, EncodePIF, func(x, y int) color.RGBA { return pal[ix[16*y+x]] }},
		{"pif4", WritePIF(16, 16, 4, pal[0x70:0x80], testIndices(16, 16, 16, 4)), DecodePIF, EncodePIF, nil},
		{"rgba", WriteRGBABlob(0x81, 1, pix), DecodeRGBABlob, EncodeRGBABlob, func(x, y int) color.RGBA { return pix[x] }},
	} {
		tex, err := c.decode(c.stored)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		back, err := c.encode(tex)
		if err != nil || !bytes.Equal(back, c.stored) {
			t.Fatalf("%s: written back differs (%v)", c.name, err)
		}
		if c.want != nil {
			checkPNG(t, EncodePNG(tex), tex.Width, tex.Height, c.want)
		}
	}
	if _, err := EncodePIF(&Texture{Shape: Shape{1, 1, 32}, Pix: make([]byte, 4)}); !errors.Is(err, ErrShape) {
		t.Errorf("EncodePIF of an RGBA texture: %v", err)
	}
	if _, err := EncodeRGBABlob(&Texture{Shape: Shape{1, 1, 8}, Palette: make([]color.NRGBA, 256), Pix: []byte{0}}); !errors.Is(err, ErrShape) {
		t.Errorf("EncodeRGBABlob of a paletted texture: %v", err)
	}
}

// TestPNG4PixelOrder: a 4-bit PNG's left pixel of each pair is the stored
// byte's low nibble (the GS's order, not Wrench's), as image/png reads it.
func TestPNG4PixelOrder(t *testing.T) {
	pal := make([]color.RGBA, 16)
	for i := range pal {
		pal[i] = color.RGBA{uint8(16 * i), 0, 0, 0x80}
	}
	b := WritePIF(4, 1, 4, pal, []byte{1, 2, 3, 4})
	if px := b[PIFHeaderSize+64:]; px[0] != 0x21 || px[1] != 0x43 {
		t.Fatalf("stored pixels % x, want 21 43", px)
	}
	tex, _ := DecodePIF(b)
	img, err := png.Decode(bytes.NewReader(EncodePNG(tex)))
	if err != nil {
		t.Fatal(err)
	}
	for x, want := range []uint8{16, 32, 48, 64} {
		if r, _, _, _ := img.At(x, 0).RGBA(); uint8(r>>8) != want {
			t.Errorf("pixel %d red %d, want %d", x, r>>8, want)
		}
	}
}

func TestSwizzle(t *testing.T) {
	// Entries 8..15 and 16..23 trade places in every block of 32.
	cases := map[int]int{0: 0, 7: 7, 8: 16, 15: 23, 16: 8, 23: 15, 24: 24, 31: 31, 40: 48, 255: 255, 0x48: 0x50}
	for i, want := range cases {
		if got := SwizzlePaletteIndex(i); got != want {
			t.Errorf("SwizzlePaletteIndex(%d) = %d, want %d", i, got, want)
		}
	}
	for i := 0; i < 256; i++ {
		if SwizzlePaletteIndex(SwizzlePaletteIndex(i)) != i {
			t.Fatalf("swizzle is not an involution at %d", i)
		}
	}
}

// handPIF builds an 8-bit PIF without WritePIF: the palette is stored at the
// swizzled positions computed here bit by bit.
func handPIF(w, h int, pal []color.RGBA, ix []byte) []byte {
	b := make([]byte, 0x20+1024+w*h)
	copy(b, "2FIP")
	binary.LittleEndian.PutUint32(b[4:], uint32(len(b)))
	binary.LittleEndian.PutUint32(b[8:], uint32(w))
	binary.LittleEndian.PutUint32(b[12:], uint32(h))
	binary.LittleEndian.PutUint32(b[16:], 0x13)
	binary.LittleEndian.PutUint32(b[0x1c:], 1) // mip_levels
	for i, c := range pal {
		bit3, bit4 := (i>>3)&1, (i>>4)&1
		j := i&^(1<<3|1<<4) | bit3<<4 | bit4<<3
		b[0x20+4*j], b[0x20+4*j+1], b[0x20+4*j+2], b[0x20+4*j+3] = c.R, c.G, c.B, c.A
	}
	copy(b[0x20+1024:], ix)
	return b
}

// checkPNG decodes png bytes with image/png and compares every pixel with
// pal[ix] (or rgba) after PS2 alpha scaling.
func checkPNG(t *testing.T, data []byte, w, h int, want func(x, y int) color.RGBA) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("image/png: %v", err)
	}
	if img.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("bounds %v, want %dx%d", img.Bounds(), w, h)
	}
	bad := 0
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			c := want(x, y)
			exp := color.NRGBA{c.R, c.G, c.B, wantAlpha(c.A)}
			got, ok := img.At(x, y).(color.NRGBA) // non-premultiplied, so transparent pixels keep their colour
			if !ok {
				t.Fatalf("pixel type %T", img.At(x, y))
			}
			if got != exp {
				if bad < 5 {
					t.Errorf("pixel (%d,%d) = %v, want %v", x, y, got, exp)
				}
				bad++
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d pixels differ", bad)
	}
}

func TestPIF8RoundTrip(t *testing.T) {
	for _, d := range [][2]int{{1, 1}, {16, 16}, {64, 32}, {33, 7}, {300, 257}} {
		w, h := d[0], d[1]
		pal := testPalette(256, uint64(w))
		ix := testIndices(w, h, 256, uint64(h))
		b := WritePIF(w, h, 8, pal, ix)
		if hand := handPIF(w, h, pal, ix); !bytes.Equal(b, hand) {
			t.Fatalf("%dx%d: WritePIF differs from the hand-built texture", w, h)
		}
		tex, err := ReadPIF(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%dx%d: %v", w, h, err)
		}
		if !bytes.Equal(tex.Pix, ix) {
			t.Fatalf("%dx%d: indices differ", w, h)
		}
		hd, err := StatPIF(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		enc := EncodePNG(tex)
		if int64(len(enc)) != hd.PNGSize() || PNGSize(hd.Shape()) != hd.PNGSize() {
			t.Fatalf("%dx%d: PNG %d bytes, PNGSize %d", w, h, len(enc), hd.PNGSize())
		}
		checkPNG(t, enc, w, h, func(x, y int) color.RGBA { return pal[ix[y*w+x]] })
		img, _ := png.Decode(bytes.NewReader(enc))
		if _, ok := img.(*image.Paletted); !ok {
			t.Errorf("%dx%d: decoded as %T, want a paletted PNG", w, h, img)
		}
	}
}

func TestPIF4RoundTrip(t *testing.T) {
	for _, d := range [][2]int{{1, 1}, {2, 2}, {3, 5}, {16, 16}, {127, 9}, {512, 300}} {
		w, h := d[0], d[1]
		pal := testPalette(16, uint64(w)+7)
		ix := testIndices(w, h, 16, uint64(h)+3)
		b := WritePIF(w, h, 4, pal, ix)
		if want := 0x20 + 64 + (w*h+1)/2; len(b) != want {
			t.Fatalf("%dx%d: %d bytes, want %d", w, h, len(b), want)
		}
		// low nibble first, independent of the reader
		if b[0x20+64]&0x0f != ix[0] || (len(ix) > 1 && b[0x20+64]>>4 != ix[1]) {
			t.Fatalf("%dx%d: nibble order", w, h)
		}
		tex, err := DecodePIF(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(tex.Pix, ix) {
			t.Fatalf("%dx%d: indices differ", w, h)
		}
		// the 4-bit palette is not swizzled
		for i, c := range pal {
			if tex.Palette[i] != (color.NRGBA{c.R, c.G, c.B, wantAlpha(c.A)}) {
				t.Fatalf("palette %d = %v, want %v", i, tex.Palette[i], c)
			}
		}
		enc := EncodePNG(tex)
		if int64(len(enc)) != PNGSize(tex.Shape) {
			t.Fatalf("%dx%d: PNG %d bytes, PNGSize %d", w, h, len(enc), PNGSize(tex.Shape))
		}
		checkPNG(t, enc, w, h, func(x, y int) color.RGBA { return pal[ix[y*w+x]] })
	}
}

func TestRGBABlobRoundTrip(t *testing.T) {
	for _, d := range [][2]int{{1, 1}, {5, 3}, {200, 120}, {640, 100}} {
		w, h := d[0], d[1]
		r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
		pix := make([]color.RGBA, w*h)
		for i := range pix {
			pix[i] = color.RGBA{uint8(r.UintN(256)), uint8(r.UintN(256)), uint8(r.UintN(256)), uint8(r.UintN(0x81))}
		}
		pix[0].A = 0x80
		b := WriteRGBABlob(w, h, pix)
		hd, err := StatRGBABlob(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		tex, err := ReadRGBABlob(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		tex2, err := DecodeRGBABlob(b)
		if err != nil || !bytes.Equal(tex.Pix, tex2.Pix) {
			t.Fatalf("DecodeRGBABlob differs from ReadRGBABlob: %v", err)
		}
		enc := EncodePNG(tex)
		if int64(len(enc)) != hd.PNGSize() {
			t.Fatalf("%dx%d: PNG %d bytes, PNGSize %d", w, h, len(enc), hd.PNGSize())
		}
		checkPNG(t, enc, w, h, func(x, y int) color.RGBA { return pix[y*w+x] })
	}
}

// TestPNGSizeFormula checks PNGSize against the layout written out by hand
// for a few shapes, and against the encoder for many.
func TestPNGSizeFormula(t *testing.T) {
	// 16x16 8-bit: raw 16*17 = 272, one stored block: zlib 2+5+272+4 = 283;
	// 8 + 25 + PLTE 12+768 + tRNS 12+256 + IDAT 12+283 + IEND 12.
	if got, want := PNGSize(Shape{16, 16, 8}), int64(8+25+780+268+295+12); got != want {
		t.Errorf("16x16x8: %d, want %d", got, want)
	}
	// 256x256 RGBA: raw 256*1025 = 262400 = 4 full blocks + 256; 5 blocks:
	// zlib 2+25+262400+4 = 262431 → 5 IDAT chunks (4 of 65536).
	if got, want := PNGSize(Shape{256, 256, 32}), int64(8+25+5*12+262431+12); got != want {
		t.Errorf("256x256x32: %d, want %d", got, want)
	}
	for _, s := range []Shape{{0, 1, 8}, {1, 0, 8}, {4097, 1, 8}, {16384, 16384, 8}, {1, 1, 16}} {
		if PNGSize(s) != 0 {
			t.Errorf("PNGSize(%v) = %d, want 0", s, PNGSize(s))
		}
	}
	r := rand.New(rand.NewPCG(9, 9))
	for i := 0; i < 40; i++ {
		s := Shape{1 + r.IntN(400), 1 + r.IntN(200), []int{4, 8, 32}[i%3]}
		tex := &Texture{Shape: s, Pix: make([]byte, s.Width*s.Height)}
		if s.Depth == 32 {
			tex.Pix = make([]byte, 4*s.Width*s.Height)
		} else {
			tex.Palette = make([]color.NRGBA, s.Colors())
		}
		if got := int64(len(EncodePNG(tex))); got != PNGSize(s) {
			t.Fatalf("%v: encoded %d, PNGSize %d", s, got, PNGSize(s))
		}
	}
}

// TestPNGViewRanges reads random ranges of the PNG through PNGView and
// compares them with the whole encoding (which image/png accepts).
func TestPNGViewRanges(t *testing.T) {
	w, h := 300, 500 // RGBA: 600 KB of scanlines, ten IDAT chunks
	r := rand.New(rand.NewPCG(3, 4))
	pix := make([]color.RGBA, w*h)
	for i := range pix {
		pix[i] = color.RGBA{uint8(i), uint8(i >> 8), uint8(r.UintN(256)), 0x80}
	}
	tex, err := DecodeRGBABlob(WriteRGBABlob(w, h, pix))
	if err != nil {
		t.Fatal(err)
	}
	full := EncodePNG(tex)
	checkPNG(t, full, w, h, func(x, y int) color.RGBA { return pix[y*w+x] })
	v, err := NewPNGView(tex)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 300; i++ {
		off := r.Int64N(int64(len(full)))
		n := 1 + r.IntN(70000)
		if i%3 == 0 {
			n = 1 + r.IntN(16)
		}
		buf := make([]byte, n)
		got, err := v.ReadAt(buf, off)
		want := full[off:min(int(off)+n, len(full))]
		if got != len(want) || !bytes.Equal(buf[:got], want) {
			t.Fatalf("ReadAt(%d, %d): %d bytes, mismatch (err %v)", n, off, got, err)
		}
		if (int(off)+n > len(full)) != (err != nil) {
			t.Fatalf("ReadAt(%d, %d): err %v", n, off, err)
		}
	}
	if n, err := v.ReadAt(make([]byte, 4), int64(len(full))); n != 0 || err == nil {
		t.Fatalf("ReadAt at the end: %d, %v", n, err)
	}
}

func pifHeader(w, h, format int32) []byte {
	b := make([]byte, 0x20)
	copy(b, "2FIP")
	binary.LittleEndian.PutUint32(b[8:], uint32(w))
	binary.LittleEndian.PutUint32(b[12:], uint32(h))
	binary.LittleEndian.PutUint32(b[16:], uint32(format))
	return b
}

func TestPIFRefused(t *testing.T) {
	good := WritePIF(8, 8, 8, testPalette(256, 1), testIndices(8, 8, 256, 1))
	cases := []struct {
		name string
		b    []byte
		want error
	}{
		{"huge", append(pifHeader(16384, 16384, 0x13), make([]byte, 2000)...), ErrTooLarge},
		{"zero width", pifHeader(0, 16, 0x13), ErrTooLarge},
		{"negative height", pifHeader(16, -1, 0x13), ErrTooLarge},
		{"4097", pifHeader(4097, 1, 0x94), ErrTooLarge},
		{"format", append(pifHeader(8, 8, 0x14), make([]byte, 2000)...), ErrValue},
		{"magic", append([]byte("PIF2"), good[4:]...), ErrMagic},
		{"truncated pixels", good[:len(good)-1], ErrTruncated},
		{"palette only", good[:0x20+1024], ErrTruncated},
		{"short header", good[:0x1f], ErrTruncated},
		{"4-bit palette cut", append(pifHeader(4, 4, 0x94), make([]byte, 60)...), ErrTruncated},
	}
	for _, c := range cases {
		_, err := ReadPIF(bytes.NewReader(c.b), int64(len(c.b)))
		if !errors.Is(err, ErrFormat) || !errors.Is(err, c.want) {
			t.Errorf("%s: ReadPIF err %v, want %v", c.name, err, c.want)
		}
		_, err2 := DecodePIF(c.b)
		if !errors.Is(err2, c.want) {
			t.Errorf("%s: DecodePIF err %v, want %v", c.name, err2, c.want)
		}
		var fe *FormatError
		if errors.As(err, &fe) && fe.Kind != "pif" {
			t.Errorf("%s: kind %q", c.name, fe.Kind)
		}
	}
	// The named error carries the file name and the offset of the field.
	_, err := DecodePIF(pifHeader(16384, 16384, 0x13))
	err = Named(err, "ARMOR.WAD/armor0_textures.d/00")
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 8 || fe.Name == "" || !bytes.Contains([]byte(err.Error()), []byte("armor0_textures.d/00")) {
		t.Errorf("named error %v", err)
	}
}

// hugeReader claims a 16384x16384 texture and answers reads past the header
// with zeros: ReadPIF must refuse it without allocating for the pixels.
type hugeReader struct{ hdr []byte }

func (r hugeReader) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	if off < int64(len(r.hdr)) {
		copy(p, r.hdr[off:])
	}
	return len(p), nil
}

func TestHugeNotAllocated(t *testing.T) {
	r := hugeReader{pifHeader(16384, 16384, 0x13)}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := ReadPIF(r, 1<<40)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("refusing allocated %d bytes", d)
	}
	// The same for an RGBA blob.
	blob := make([]byte, 16)
	binary.LittleEndian.PutUint32(blob, 16384)
	binary.LittleEndian.PutUint32(blob[4:], 16384)
	if _, err := ReadRGBABlob(hugeReader{blob}, 1<<40); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("blob err %v, want ErrTooLarge", err)
	}
}

func TestRGBABlobRefused(t *testing.T) {
	good := WriteRGBABlob(4, 4, make([]color.RGBA, 16))
	if _, err := DecodeRGBABlob(good[:len(good)-1]); !errors.Is(err, ErrTruncated) {
		t.Errorf("truncated: %v", err)
	}
	if _, err := DecodeRGBABlob(good[:15]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short header: %v", err)
	}
	bad := bytes.Clone(good)
	binary.LittleEndian.PutUint32(bad, 0)
	if _, err := DecodeRGBABlob(bad); !errors.Is(err, ErrTooLarge) {
		t.Errorf("zero width: %v", err)
	}
}

func TestNewPNGViewRejectsInconsistent(t *testing.T) {
	for _, tex := range []*Texture{
		nil,
		{Shape: Shape{2, 2, 8}, Palette: make([]color.NRGBA, 256), Pix: make([]byte, 3)},
		{Shape: Shape{2, 2, 4}, Palette: make([]color.NRGBA, 16), Pix: []byte{0, 1, 2, 16}},
		{Shape: Shape{2, 2, 32}, Pix: make([]byte, 15)},
	} {
		if _, err := NewPNGView(tex); !errors.Is(err, ErrShape) {
			t.Errorf("%v: err %v", tex, err)
		}
		if EncodePNG(tex) != nil {
			t.Errorf("EncodePNG of an inconsistent texture gave bytes")
		}
	}
}

// TestPNGChunkEdges covers the layouts where the Adler-32 or a stored
// block's header straddles an IDAT chunk boundary: EncodePNG (one pass) and
// PNGView (ranges) must agree, and image/png (which checks the Adler-32 and
// every CRC) must read the pixels back.
func TestPNGChunkEdges(t *testing.T) {
	found := map[int64]bool{}
	for h := 2; h < 300 && len(found) < 10; h++ {
		for w := 1; w < 1200; w++ {
			s := Shape{w, h, 8}
			l := layoutOf(s)
			rem := l.zLen % pngChunkData
			if l.chunks < 2 || rem > 8 && rem < pngChunkData-8 || found[rem] {
				continue
			}
			found[rem] = true
			r := rand.New(rand.NewPCG(uint64(w), uint64(h)))
			pal := testPalette(256, uint64(w))
			ix := make([]byte, w*h)
			for i := range ix {
				ix[i] = byte(r.UintN(256))
			}
			tex, err := DecodePIF(WritePIF(w, h, 8, pal, ix))
			if err != nil {
				t.Fatal(err)
			}
			enc := EncodePNG(tex)
			v, _ := NewPNGView(tex)
			whole := make([]byte, v.Size())
			if n, _ := v.ReadAt(whole, 0); n != len(whole) || !bytes.Equal(whole, enc) {
				t.Fatalf("%v (zlib %d, %d past a chunk): PNGView and EncodePNG differ", s, l.zLen, rem)
			}
			// a fresh view, read from the end first
			v2, _ := NewPNGView(tex)
			tail := make([]byte, 40)
			v2.ReadAt(tail, v2.Size()-40)
			if !bytes.Equal(tail, enc[len(enc)-40:]) {
				t.Fatalf("%v: tail differs", s)
			}
			checkPNG(t, enc, w, h, func(x, y int) color.RGBA { return pal[ix[y*w+x]] })
		}
	}
	if len(found) < 8 {
		t.Fatalf("only %d edge layouts found", len(found))
	}
}

func TestTextureImage(t *testing.T) {
	pal := testPalette(16, 5)
	ix := testIndices(7, 3, 16, 5)
	p4, _ := DecodePIF(WritePIF(7, 3, 4, pal, ix))
	rgba, _ := DecodeRGBABlob(WriteRGBABlob(2, 2, []color.RGBA{{1, 2, 3, 0x80}, {4, 5, 6, 0}, {7, 8, 9, 0x40}, {10, 11, 12, 0x10}}))
	for _, tex := range []*Texture{p4, rgba} {
		img := tex.Image()
		for y := 0; y < tex.Height; y++ {
			for x := 0; x < tex.Width; x++ {
				if got := color.NRGBAModel.Convert(img.At(x, y)); got != tex.NRGBAAt(x, y) {
					t.Fatalf("depth %d (%d,%d): Image %v, NRGBAAt %v", tex.Depth, x, y, got, tex.NRGBAAt(x, y))
				}
			}
		}
	}
	if rgba.NRGBAAt(0, 1) != (color.NRGBA{7, 8, 9, 128}) {
		t.Errorf("NRGBAAt(0,1) = %v", rgba.NRGBAAt(0, 1))
	}
}

// shortReader holds fewer bytes than the size it is read with: the reader's
// short read is an I/O error, not a format error.
func TestReadErrorsAreNotFormatErrors(t *testing.T) {
	pif := WritePIF(8, 8, 8, nil, make([]byte, 64))
	_, err := ReadPIF(bytes.NewReader(pif[:100]), int64(len(pif)))
	if err == nil || errors.Is(err, ErrFormat) {
		t.Fatalf("short reader: %v", err)
	}
	blob := WriteRGBABlob(4, 4, make([]color.RGBA, 16))
	if _, err := ReadRGBABlob(bytes.NewReader(blob[:20]), int64(len(blob))); err == nil || errors.Is(err, ErrFormat) {
		t.Fatalf("short blob reader: %v", err)
	}
	if _, err := StatRGBABlob(bytes.NewReader(nil), 16); err == nil || errors.Is(err, ErrFormat) {
		t.Fatalf("empty reader: %v", err)
	}
	if Named(err, "x") != err || Named(nil, "x") != nil {
		t.Fatal("Named changed an error that is not a FormatError")
	}
}
