package levelcore

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The sky block (LEVEL-CORE §2.6): a 0x40-byte header, then texture defs,
// the textures' palettes and pixels, and the shells, every offset relative
// to the block. Unlike the rest of the core, the sky's texture table lives
// in decoded core_data, not core_index: reading it reads the block's first
// SkyHeaderSize bytes and then its texture defs (SkyHeader.DefsRange), and
// nothing else of core_data.

// SkyHeaderSize is the sky header's size.
const SkyHeaderSize = 0x40

// SkyTextureDefSize is one texture def's size (DefsRange is a multiple).
const SkyTextureDefSize = skyTextureDefSize

const (
	skyTextureDefSize = 0x10
	// MaxSkyShells is the most shells a sky holds (Wrench asserts it).
	MaxSkyShells = 8
)

// SkyHeader is the sky block's header, fields as stored.
type SkyHeader struct {
	Colour                      [4]byte
	ClearScreen, ShellCount     int16
	SpriteCount, MaxSpriteCount int16
	TextureCount, FxCount       int16
	TextureDefs, TextureData    int32
	FxList, Sprites             int32
	Shells                      [MaxSkyShells]int32
	BlockSize                   int64 // the sky block's size, what every offset is checked against
}

// ParseSkyHeader reads the sky header from the block's first bytes b, for
// a block of blockSize bytes. It fails only when the header does not fit.
func ParseSkyHeader(b []byte, blockSize int64) (SkyHeader, error) {
	var h SkyHeader
	if len(b) < SkyHeaderSize || blockSize < SkyHeaderSize {
		return h, &SkyError{Offset: 0, Reason: fmt.Sprintf("the sky block has %d bytes, its header needs %#x", min(int64(len(b)), blockSize), SkyHeaderSize)}
	}
	le := binary.LittleEndian
	copy(h.Colour[:], b[0:4])
	h.ClearScreen, h.ShellCount = int16(le.Uint16(b[4:])), int16(le.Uint16(b[6:]))
	h.SpriteCount, h.MaxSpriteCount = int16(le.Uint16(b[8:])), int16(le.Uint16(b[0xa:]))
	h.TextureCount, h.FxCount = int16(le.Uint16(b[0xc:])), int16(le.Uint16(b[0xe:]))
	h.TextureDefs, h.TextureData = int32(le.Uint32(b[0x10:])), int32(le.Uint32(b[0x14:]))
	h.FxList, h.Sprites = int32(le.Uint32(b[0x18:])), int32(le.Uint32(b[0x1c:]))
	for i := range h.Shells {
		h.Shells[i] = int32(le.Uint32(b[0x20+4*i:]))
	}
	h.BlockSize = blockSize
	return h, nil
}

// SkyError is a sky block that cannot be read at all; Offset is in the
// sky block.
type SkyError struct {
	Offset int64
	Reason string
}

func (e *SkyError) Error() string {
	return fmt.Sprintf("sky block offset %#x: %s", e.Offset, e.Reason)
}

// DefsRange is where the texture defs lie in the sky block: the bytes
// SkyTextures needs. It is an error when they fall outside the block (or
// the count is negative); a count of 0 gives an empty range.
func (h *SkyHeader) DefsRange() (off, size int64, err error) {
	n := int64(h.TextureCount)
	switch {
	case n < 0:
		return 0, 0, &SkyError{Offset: 0xc, Reason: fmt.Sprintf("texture count %d is negative", n)}
	case n == 0:
		return 0, 0, nil
	}
	off, size = int64(h.TextureDefs), n*skyTextureDefSize
	if !inPart(off, size, h.BlockSize) {
		return 0, 0, &SkyError{Offset: 0x10, Reason: fmt.Sprintf("%d texture defs at %#x run past the sky block's %#x bytes", n, off, h.BlockSize)}
	}
	return off, size, nil
}

// SkyTextures locates the textures of defs (the bytes at DefsRange), one per
// def in def order (several defs may share an image). A def that does not
// fit in the block is left out and named in the skips (Offset: in the sky
// block). The textures' Locs are sky-block offsets plus base (the block's
// offset in core_data).
func SkyTextures(h SkyHeader, defs []byte, base int64) ([]Texture, []Skip) {
	var out []Texture
	var skips []Skip
	off, size, err := h.DefsRange()
	if err != nil {
		e := err.(*SkyError)
		return nil, []Skip{{What: "sky texture table", Offset: e.Offset, Reason: e.Reason}}
	}
	if int64(len(defs)) < size {
		return nil, []Skip{{What: "sky texture table", Offset: off, Reason: fmt.Sprintf("%d bytes of texture defs, %d needed", len(defs), size)}}
	}
	td := int64(h.TextureData)
	le := binary.LittleEndian
	for i := int64(0); i < size/skyTextureDefSize; i++ {
		d := defs[i*skyTextureDefSize:]
		at := off + i*skyTextureDefSize
		pal, tex := int64(int32(le.Uint32(d))), int64(int32(le.Uint32(d[4:])))
		w, hh := int64(int32(le.Uint32(d[8:]))), int64(int32(le.Uint32(d[0xc:])))
		what := fmt.Sprintf("sky texture %d", i)
		po, to := td+pal, td+tex
		switch {
		case !dimsOK(w, hh):
			skips = append(skips, Skip{what, at + 8, fmt.Sprintf("%dx%d is outside 1..%d", w, hh, MaxDimension)})
		case !inPart(to, w*hh, h.BlockSize):
			skips = append(skips, Skip{what, at + 4, fmt.Sprintf("pixels at sky %#x (texture data %#x + %#x), %dx%d, outside the sky block's %#x bytes", to, td, tex, w, hh, h.BlockSize)})
		case !inPart(po, PaletteSize, h.BlockSize):
			skips = append(skips, Skip{what, at, fmt.Sprintf("palette at sky %#x (texture data %#x + %#x) outside the sky block's %#x bytes", po, td, pal, h.BlockSize)})
		default:
			out = append(out, Texture{Table: "sky", Index: int(i), Width: int(w), Height: int(hh),
				Pixels: Loc{InData, base + to, w * hh}, Palette: Loc{InData, base + po, PaletteSize}, PaletteUnit: -1})
		}
	}
	return out, skips
}

// SkySkipString is a sky skip as info and the log show it (offsets in the
// sky block, not core_index).
func SkySkipString(s Skip) string {
	return fmt.Sprintf("%s (sky block %#x): %s", s.What, s.Offset, s.Reason)
}

// SkyDesc describes a sky block for BuildSky.
type SkyDesc struct {
	Colour   [4]byte
	Textures []SkyTextureDesc
	// Fx is how many of the first textures are the sky's fx textures
	// (fx_list is 0, 1, … Fx-1).
	Fx     int
	Shells []SkyShellDesc
}

// SkyTextureDesc is one sky texture: width × height pixels and a stored
// palette (swizzled, PS2 alpha). SharePalette ≥ 0 reuses that earlier
// texture's palette bytes (a def pointing at them).
type SkyTextureDesc struct {
	Width, Height int
	Pixels        []byte
	Palette       []byte
	SharePalette  int
}

// SkyShellDesc is one GC shell: its clusters and whether it is untextured.
type SkyShellDesc struct {
	Untextured bool
	Clusters   []SkyClusterDesc
}

// SkyClusterDesc is one cluster: vertices {x, y, z, alpha} (s16, position
// × 1024), STs {s, t} (s16, × 4096), triangles {i0, i1, i2, texture}.
type SkyClusterDesc struct {
	Vertices [][4]int16
	STs      [][2]int16
	Tris     [][4]uint8
}

// BuildSky lays out a sky block in LEVEL-CORE §2.6's format, as Wrench's
// writer orders it: header, fx list, texture defs, texture data (palette
// then pixels, 0x40-aligned), shells (header, cluster headers, cluster
// data).
func BuildSky(d *SkyDesc) ([]byte, error) {
	if len(d.Shells) > MaxSkyShells {
		return nil, fmt.Errorf("levelcore: sky with %d shells, at most %d", len(d.Shells), MaxSkyShells)
	}
	if d.Fx < 0 || d.Fx > len(d.Textures) {
		return nil, fmt.Errorf("levelcore: sky with %d fx textures of %d", d.Fx, len(d.Textures))
	}
	var o out
	o.put(make([]byte, SkyHeaderSize))
	o.pad(0x10)
	fxList := o.at()
	for i := 0; i < d.Fx; i++ {
		o.put([]byte{byte(i)})
	}
	o.pad(0x10)
	defs := o.at()
	o.put(make([]byte, skyTextureDefSize*len(d.Textures)))
	o.pad(0x40)
	data := o.at()
	palAt := make([]int32, len(d.Textures))
	for i, t := range d.Textures {
		if len(t.Pixels) != t.Width*t.Height || !dimsOK(int64(t.Width), int64(t.Height)) {
			return nil, fmt.Errorf("levelcore: sky texture %d is %dx%d with %d pixel bytes", i, t.Width, t.Height, len(t.Pixels))
		}
		if t.SharePalette >= 0 && t.SharePalette < i {
			palAt[i] = palAt[t.SharePalette]
		} else {
			if len(t.Palette) != PaletteSize {
				return nil, fmt.Errorf("levelcore: sky texture %d has a %d-byte palette", i, len(t.Palette))
			}
			o.pad(0x40)
			palAt[i] = o.place(t.Palette) - data
		}
		o.pad(0x40)
		texAt := o.place(t.Pixels) - data
		def := o.b[defs+int32(i)*skyTextureDefSize:]
		binary.LittleEndian.PutUint32(def, uint32(palAt[i]))
		binary.LittleEndian.PutUint32(def[4:], uint32(texAt))
		binary.LittleEndian.PutUint32(def[8:], uint32(t.Width))
		binary.LittleEndian.PutUint32(def[0xc:], uint32(t.Height))
	}
	var shells [MaxSkyShells]int32
	for i, s := range d.Shells {
		o.pad(0x10)
		shells[i] = o.at()
		o.u32(int32(len(s.Clusters)))
		flags := int32(0)
		if s.Untextured {
			flags = 1
		}
		o.u32(flags)
		o.pad(0x10)
		heads := o.at()
		o.put(make([]byte, 0x20*len(s.Clusters)))
		for k, c := range s.Clusters {
			if len(c.STs) != len(c.Vertices) || len(c.Vertices) > 0xff+1 {
				return nil, fmt.Errorf("levelcore: sky shell %d cluster %d: %d vertices, %d STs", i, k, len(c.Vertices), len(c.STs))
			}
			o.pad(0x10)
			start := o.at()
			for _, v := range c.Vertices {
				for _, x := range v {
					o.u16(x)
				}
			}
			st := o.at() - start
			for _, v := range c.STs {
				o.u16(v[0])
				o.u16(v[1])
			}
			tri := o.at() - start
			for _, t := range c.Tris {
				if int(t[0]) >= len(c.Vertices) || int(t[1]) >= len(c.Vertices) || int(t[2]) >= len(c.Vertices) ||
					(t[3] != 0xff && int(t[3]) >= len(d.Textures)) {
					return nil, fmt.Errorf("levelcore: sky shell %d cluster %d: triangle %v", i, k, t)
				}
				o.put(t[:])
			}
			o.pad(0x10)
			size := o.at() - start
			h := o.b[heads+int32(k)*0x20:]
			le := binary.LittleEndian
			// bounding sphere: the origin, radius of the farthest vertex (x only: a bound, not tight)
			var r float32
			for _, v := range c.Vertices {
				r = max(r, float32(abs16(v[0])+abs16(v[1])+abs16(v[2]))/1024)
			}
			le.PutUint32(h[0xc:], math.Float32bits(r))
			le.PutUint32(h[0x10:], uint32(start))
			le.PutUint16(h[0x14:], uint16(len(c.Vertices)))
			le.PutUint16(h[0x16:], uint16(len(c.Tris)))
			le.PutUint16(h[0x18:], 0)
			le.PutUint16(h[0x1a:], uint16(st))
			le.PutUint16(h[0x1c:], uint16(tri))
			le.PutUint16(h[0x1e:], uint16(size))
		}
	}
	o.pad(0x40)
	h := o.b
	le := binary.LittleEndian
	copy(h[0:4], d.Colour[:])
	le.PutUint16(h[6:], uint16(len(d.Shells)))
	le.PutUint16(h[0xc:], uint16(len(d.Textures)))
	le.PutUint16(h[0xe:], uint16(d.Fx))
	le.PutUint32(h[0x10:], uint32(defs))
	le.PutUint32(h[0x14:], uint32(data))
	le.PutUint32(h[0x18:], uint32(fxList))
	for i, s := range shells {
		le.PutUint32(h[0x20+4*i:], uint32(s))
	}
	return o.b, nil
}

func abs16(v int16) int {
	if v < 0 {
		return -int(v)
	}
	return int(v)
}
