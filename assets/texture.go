package assets

import (
	"encoding/binary"
	"image"
	"image/color"
	"io"
)

// MaxDimension is the largest width or height a texture or RGBA blob may
// declare; anything larger (or zero, or negative) is refused with ErrTooLarge
// before any allocation.
const MaxDimension = 4096

// Shape is what the PNG's size depends on: the dimensions and the depth,
// 4 or 8 for paletted images (16 or 256 colours), 32 for RGBA.
type Shape struct {
	Width, Height int
	Depth         int
}

// Colors is the palette length of a paletted shape, 0 for RGBA.
func (s Shape) Colors() int {
	switch s.Depth {
	case 4:
		return 16
	case 8:
		return 256
	}
	return 0
}

func (s Shape) valid() bool {
	return s.Width >= 1 && s.Width <= MaxDimension && s.Height >= 1 && s.Height <= MaxDimension &&
		(s.Depth == 4 || s.Depth == 8 || s.Depth == 32)
}

// Texture is a decoded image. For Depth 4 and 8, Pix holds one palette index
// a pixel (row-major, Width*Height bytes) and Palette its 16 or 256 colours,
// unswizzled and with alpha already scaled to 0..255. For Depth 32, Pix holds
// non-premultiplied RGBA, 4 bytes a pixel, alpha scaled, and Palette is nil.
type Texture struct {
	Shape
	Palette []color.NRGBA
	Pix     []byte
}

// Image returns the texture as an *image.Paletted or *image.NRGBA sharing
// Pix.
func (t *Texture) Image() image.Image {
	r := image.Rect(0, 0, t.Width, t.Height)
	if t.Depth == 32 {
		return &image.NRGBA{Pix: t.Pix, Stride: 4 * t.Width, Rect: r}
	}
	pal := make(color.Palette, len(t.Palette))
	for i, c := range t.Palette {
		pal[i] = c
	}
	return &image.Paletted{Pix: t.Pix, Stride: t.Width, Rect: r, Palette: pal}
}

// NRGBAAt is the colour of pixel (x, y), whatever the depth.
func (t *Texture) NRGBAAt(x, y int) color.NRGBA {
	i := y*t.Width + x
	if t.Depth == 32 {
		p := t.Pix[4*i : 4*i+4]
		return color.NRGBA{p[0], p[1], p[2], p[3]}
	}
	return t.Palette[t.Pix[i]]
}

// PS2Alpha maps a stored PS2 alpha (0..0x80, 0x80 opaque) to 0..255 as
// Wrench maps it (DISC-FACTS), so that every PNG view equals the reference
// tool's: a < 0x80 → 2a, anything from 0x80 up → 255. Every texture view
// (PIF palettes of both depths, raw RGBA blobs) goes through it;
// PS2AlphaStored is its inverse.
func PS2Alpha(a uint8) uint8 {
	if a >= 0x80 {
		return 255
	}
	return 2 * a
}

// PS2AlphaStored is PS2Alpha's inverse, the alpha a writer stores for an
// 8-bit one: 255 → 0x80, anything else a/2. PS2AlphaStored(PS2Alpha(a)) == a
// for every a in 0..0x80, and PS2Alpha(PS2AlphaStored(v)) == v for every v
// PS2Alpha yields (the even values up to 254, and 255).
func PS2AlphaStored(a uint8) uint8 {
	if a == 255 {
		return 0x80
	}
	return a / 2
}

// PixelOrder4 says how a 4-bit texture's pixels are ordered in its PNG view:
// what fsnode shows beside one (user.gcfs.pixel_order). gcfs follows the
// GS's PSMT4, whose left pixel of a pair is the low nibble; Wrench copies
// the stored bytes into its PNGs unchanged, so its 4-bit PNGs have each pair
// swapped (DISC-FACTS).
const PixelOrder4 = "GS PSMT4: the left pixel of each pair is the stored byte's low nibble; Wrench's PNGs swap each pixel pair"

// SwizzlePaletteIndex maps a palette entry to its stored position in an 8-bit
// PS2 palette and back (it is its own inverse): bits 3 and 4 swapped.
func SwizzlePaletteIndex(i int) int {
	return i&^0x18 | (i&0x08)<<1 | (i&0x10)>>1
}

// PIF formats.
const (
	PIFFormat8 = 0x13 // 8-bit indices, 256-colour swizzled palette
	PIFFormat4 = 0x94 // 4-bit indices (low nibble first), 16-colour palette
)

// PIFHeaderSize is the size of a PIF texture's header.
const PIFHeaderSize = 0x20

// PIFHeader is a PIF texture's header, fields as stored (s32 little-endian).
type PIFHeader struct {
	FileSize   int32 // as stored; not checked (the bytes given are what bounds the read)
	Width      int32
	Height     int32
	Format     int32
	ClutFormat int32
	ClutOrder  int32
	MipLevels  int32
}

// Shape is the header's image shape (valid only after ParsePIFHeader
// succeeded).
func (h PIFHeader) Shape() Shape {
	d := 8
	if h.Format == PIFFormat4 {
		d = 4
	}
	return Shape{Width: int(h.Width), Height: int(h.Height), Depth: d}
}

// PaletteBytes is the stored palette's size (RGBA32 entries).
func (h PIFHeader) PaletteBytes() int64 { return 4 * int64(h.Shape().Colors()) }

// PixelBytes is the size of the first (full-size) mip level's pixels; 4-bit
// pixels are packed two a byte across rows (pixel n in byte n/2).
func (h PIFHeader) PixelBytes() int64 {
	n := int64(h.Width) * int64(h.Height)
	if h.Format == PIFFormat4 {
		return (n + 1) / 2
	}
	return n
}

// DataSize is what the texture's first level needs: header, palette, pixels.
// Further mip levels, if any, follow and are ignored.
func (h PIFHeader) DataSize() int64 { return PIFHeaderSize + h.PaletteBytes() + h.PixelBytes() }

// PNGSize is the exact size of the PNG EncodePNG writes for this texture.
func (h PIFHeader) PNGSize() int64 { return PNGSize(h.Shape()) }

// IsPIF reports whether b begins with the PIF magic.
func IsPIF(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "2FIP" }

// ParsePIFHeader reads and checks a PIF header: magic, dimensions (1 to
// MaxDimension) and format (PIFFormat8 or PIFFormat4). It does not know how
// many bytes follow; CheckSize does.
func ParsePIFHeader(b []byte) (PIFHeader, error) {
	if len(b) < PIFHeaderSize {
		return PIFHeader{}, ferr("pif", int64(len(b)), ErrTruncated, "header needs %#x bytes, have %#x", PIFHeaderSize, len(b))
	}
	if !IsPIF(b) {
		return PIFHeader{}, ferr("pif", 0, ErrMagic, "magic %q is not \"2FIP\"", b[:4])
	}
	s := func(o int) int32 { return int32(binary.LittleEndian.Uint32(b[o:])) }
	h := PIFHeader{FileSize: s(4), Width: s(8), Height: s(0xc), Format: s(0x10), ClutFormat: s(0x14), ClutOrder: s(0x18), MipLevels: s(0x1c)}
	if h.Width < 1 || h.Width > MaxDimension {
		return h, ferr("pif", 8, ErrTooLarge, "width %d outside 1..%d", h.Width, MaxDimension)
	}
	if h.Height < 1 || h.Height > MaxDimension {
		return h, ferr("pif", 0xc, ErrTooLarge, "height %d outside 1..%d", h.Height, MaxDimension)
	}
	if h.Format != PIFFormat8 && h.Format != PIFFormat4 {
		return h, ferr("pif", 0x10, ErrValue, "format %#x is neither 0x13 (8-bit) nor 0x94 (4-bit)", uint32(h.Format))
	}
	return h, nil
}

// CheckSize reports whether the header's palette and pixels fit in size bytes.
func (h PIFHeader) CheckSize(size int64) error {
	if need := h.DataSize(); need > size {
		return ferr("pif", PIFHeaderSize, ErrTruncated, "%dx%d format %#x needs %#x bytes (palette and pixels), the texture has %#x",
			h.Width, h.Height, h.Format, need, size)
	}
	return nil
}

// StatPIF reads and checks only the header of the texture in r (size bytes):
// what a listing needs for PNGSize without decoding anything.
func StatPIF(r io.ReaderAt, size int64) (PIFHeader, error) {
	var b [PIFHeaderSize]byte
	if size < PIFHeaderSize {
		return PIFHeader{}, ferr("pif", size, ErrTruncated, "header needs %#x bytes, have %#x", PIFHeaderSize, size)
	}
	if err := readAt(r, b[:], 0); err != nil {
		return PIFHeader{}, err
	}
	h, err := ParsePIFHeader(b[:])
	if err != nil {
		return h, err
	}
	return h, h.CheckSize(size)
}

// ReadPIF decodes the texture in r (size bytes): its first mip level, with the
// palette unswizzled and alpha scaled.
func ReadPIF(r io.ReaderAt, size int64) (*Texture, error) {
	h, err := StatPIF(r, size)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, h.DataSize()-PIFHeaderSize) // bounded: at most 1 KiB + 16 MiB
	if err := readAt(r, buf, PIFHeaderSize); err != nil {
		return nil, err
	}
	return decodePIF(h, buf), nil
}

// DecodePIF decodes a texture held in memory.
func DecodePIF(b []byte) (*Texture, error) {
	h, err := ParsePIFHeader(b)
	if err != nil {
		return nil, err
	}
	if err := h.CheckSize(int64(len(b))); err != nil {
		return nil, err
	}
	return decodePIF(h, b[PIFHeaderSize:h.DataSize()]), nil
}

// decodePIF decodes palette and pixels from body (palette then pixels, sized
// by h, already checked).
func decodePIF(h PIFHeader, body []byte) *Texture {
	s := h.Shape()
	t := &Texture{Shape: s, Palette: make([]color.NRGBA, s.Colors()), Pix: make([]byte, s.Width*s.Height)}
	for i := range t.Palette {
		j := i
		if s.Depth == 8 {
			j = SwizzlePaletteIndex(i)
		}
		p := body[4*j : 4*j+4]
		t.Palette[i] = color.NRGBA{p[0], p[1], p[2], PS2Alpha(p[3])}
	}
	px := body[h.PaletteBytes():]
	if s.Depth == 8 {
		copy(t.Pix, px)
	} else {
		for n := range t.Pix {
			b := px[n/2]
			if n&1 == 0 {
				t.Pix[n] = b & 0x0f
			} else {
				t.Pix[n] = b >> 4
			}
		}
	}
	return t
}

// RGBABlobHeaderSize is the size of the {s32 width, s32 height, 8 bytes}
// header in front of a raw RGBA blob.
const RGBABlobHeaderSize = 16

// RGBABlobHeader is a raw RGBA blob's header.
type RGBABlobHeader struct {
	Width, Height int32
	Extra         [8]byte // the 8 bytes after the dimensions, kept as stored
}

// Shape is the blob's image shape (Depth 32).
func (h RGBABlobHeader) Shape() Shape {
	return Shape{Width: int(h.Width), Height: int(h.Height), Depth: 32}
}

// DataSize is header plus pixels.
func (h RGBABlobHeader) DataSize() int64 {
	return RGBABlobHeaderSize + 4*int64(h.Width)*int64(h.Height)
}

// PNGSize is the exact size of the blob's PNG.
func (h RGBABlobHeader) PNGSize() int64 { return PNGSize(h.Shape()) }

// StatRGBABlob reads and checks a raw RGBA blob's header against size.
func StatRGBABlob(r io.ReaderAt, size int64) (RGBABlobHeader, error) {
	var b [RGBABlobHeaderSize]byte
	if size < RGBABlobHeaderSize {
		return RGBABlobHeader{}, ferr("rgba", size, ErrTruncated, "header needs %#x bytes, have %#x", RGBABlobHeaderSize, size)
	}
	if err := readAt(r, b[:], 0); err != nil {
		return RGBABlobHeader{}, err
	}
	return parseRGBABlobHeader(b[:], size)
}

func parseRGBABlobHeader(b []byte, size int64) (RGBABlobHeader, error) {
	h := RGBABlobHeader{Width: int32(binary.LittleEndian.Uint32(b)), Height: int32(binary.LittleEndian.Uint32(b[4:]))}
	copy(h.Extra[:], b[8:16])
	if h.Width < 1 || h.Width > MaxDimension {
		return h, ferr("rgba", 0, ErrTooLarge, "width %d outside 1..%d", h.Width, MaxDimension)
	}
	if h.Height < 1 || h.Height > MaxDimension {
		return h, ferr("rgba", 4, ErrTooLarge, "height %d outside 1..%d", h.Height, MaxDimension)
	}
	if need := h.DataSize(); need > size {
		return h, ferr("rgba", RGBABlobHeaderSize, ErrTruncated, "%dx%d RGBA needs %#x bytes, the blob has %#x", h.Width, h.Height, need, size)
	}
	return h, nil
}

// ReadRGBABlob decodes a raw RGBA blob: {s32 width, s32 height, 8 bytes}, then
// width*height RGBA32 pixels, row-major. DISC-FACTS does not say what range
// its alpha has; like every other PS2 colour on the disc it is read as PS2
// alpha (0..0x80, mapped with PS2Alpha, as the PIF palettes are).
func ReadRGBABlob(r io.ReaderAt, size int64) (*Texture, error) {
	h, err := StatRGBABlob(r, size)
	if err != nil {
		return nil, err
	}
	pix := make([]byte, h.DataSize()-RGBABlobHeaderSize) // bounded: at most 64 MiB
	if err := readAt(r, pix, RGBABlobHeaderSize); err != nil {
		return nil, err
	}
	for i := 3; i < len(pix); i += 4 {
		pix[i] = PS2Alpha(pix[i])
	}
	return &Texture{Shape: h.Shape(), Pix: pix}, nil
}

// DecodeRGBABlob decodes a raw RGBA blob held in memory.
func DecodeRGBABlob(b []byte) (*Texture, error) {
	if len(b) < RGBABlobHeaderSize {
		return nil, ferr("rgba", int64(len(b)), ErrTruncated, "header needs %#x bytes, have %#x", RGBABlobHeaderSize, len(b))
	}
	h, err := parseRGBABlobHeader(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	pix := make([]byte, h.DataSize()-RGBABlobHeaderSize)
	copy(pix, b[RGBABlobHeaderSize:])
	for i := 3; i < len(pix); i += 4 {
		pix[i] = PS2Alpha(pix[i])
	}
	return &Texture{Shape: h.Shape(), Pix: pix}, nil
}

// readAt fills b from r at off; an io.EOF with every byte read is success.
func readAt(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}
