package assets

import "image/color"

// Level textures (LEVEL-CORE §1.5): 8-bit palette indices, one byte a pixel,
// rows top to bottom, with a 256-colour RGBA32 palette stored apart from the
// pixels (in gs_ram or core_data), swizzled and in PS2 alpha like a PIF's.

// IndexedPaletteBytes is the size of a stored 256-colour palette.
const IndexedPaletteBytes = 256 * 4

// DecodeIndexed8 decodes width × height 8-bit pixels and a stored 256-colour
// palette (the PS2's swizzled order, PS2 alpha) as a PIF's 8-bit texture is
// decoded: the palette unswizzled and its alpha scaled. pix must hold
// exactly width × height bytes and palette IndexedPaletteBytes.
func DecodeIndexed8(width, height int, pix, palette []byte) (*Texture, error) {
	s := Shape{Width: width, Height: height, Depth: 8}
	if !s.valid() {
		return nil, ferr("indexed", 0, ErrTooLarge, "%dx%d outside 1..%d", width, height, MaxDimension)
	}
	if len(pix) != width*height {
		return nil, ferr("indexed", int64(len(pix)), ErrTruncated, "%dx%d needs %d pixel bytes, have %d", width, height, width*height, len(pix))
	}
	if len(palette) != IndexedPaletteBytes {
		return nil, ferr("indexed", int64(len(palette)), ErrTruncated, "a palette is %d bytes, have %d", IndexedPaletteBytes, len(palette))
	}
	t := &Texture{Shape: s, Palette: make([]color.NRGBA, 256), Pix: append([]byte(nil), pix...)}
	for i := range t.Palette {
		p := palette[4*SwizzlePaletteIndex(i):]
		t.Palette[i] = color.NRGBA{p[0], p[1], p[2], PS2Alpha(p[3])}
	}
	return t, nil
}
