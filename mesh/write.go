package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
)

// The writers lay out class blocks in the formats the readers read
// (LEVEL-CORE §2.1–§2.3), from triangle strips: what mkdisc writes so that
// the synthetic disc's meshes decode to known geometry, in Wrench's layouts
// so that Wrench reads them too.

// StripVertex is a vertex as the class formats store it: a position in s16
// units (decoded × scale / 1024), an ST in s16 units (decoded / 4096), and a
// normal: a moby's azimuth and elevation bytes, a shrub's index into its 24
// normals (Azimuth); ties have none.
type StripVertex struct {
	Pos       [3]int16
	ST        [2]int16
	Azimuth   uint8
	Elevation uint8
	shrubN    uint8 // the shapes' shrub normal index, for ForShrub
}

// Strip is a triangle strip (or, for shrubs when List, a triangle list)
// drawn with one texture slot of the class (mobies: -1 is untextured).
type Strip struct {
	Tex   int32
	List  bool
	Verts []StripVertex
}

// Triangles are the strip's triangles as vertex triples of s, in the
// order and winding the readers give them (strips: the odd ones with their
// first two corners swapped).
func (s Strip) Triangles() [][3]StripVertex {
	var out [][3]StripVertex
	if s.List {
		for i := 0; i+2 < len(s.Verts); i += 3 {
			out = append(out, [3]StripVertex{s.Verts[i], s.Verts[i+1], s.Verts[i+2]})
		}
		return out
	}
	for i := 2; i < len(s.Verts); i++ {
		a, b, c := s.Verts[i-2], s.Verts[i-1], s.Verts[i]
		if (i-2)%2 == 1 {
			a, b = b, a
		}
		out = append(out, [3]StripVertex{a, b, c})
	}
	return out
}

type wbuf struct{ b []byte }

func (w *wbuf) pad(a int) {
	for len(w.b)%a != 0 {
		w.b = append(w.b, 0)
	}
}
func (w *wbuf) at() int                { return len(w.b) }
func (w *wbuf) u8(v uint8)             { w.b = append(w.b, v) }
func (w *wbuf) u16(v uint16)           { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *wbuf) u32(v uint32)           { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wbuf) s16(v int16)            { w.u16(uint16(v)) }
func (w *wbuf) f32(v float32)          { w.u32(math.Float32bits(v)) }
func (w *wbuf) put32(at int, v uint32) { binary.LittleEndian.PutUint32(w.b[at:], v) }
func (w *wbuf) put16(at int, v uint16) { binary.LittleEndian.PutUint16(w.b[at:], v) }
func (w *wbuf) zeros(n int)            { w.b = append(w.b, make([]byte, n)...) }

// GS register addresses of the texture records.
const (
	gsTEX0_1    = 0x06
	gsCLAMP_1   = 0x08
	gsTEX1_1    = 0x14
	gsMIPTBP1_1 = 0x34
	gsMIPTBP2_1 = 0x36
)

// adData appends a GifAdData16 {data_lo, data_hi, register, …} to w.
func (w *wbuf) adData(lo int32, reg uint8) {
	w.u32(uint32(lo))
	w.u32(0)
	w.u8(reg)
	w.zeros(7)
}

// MatchStrips reports the first difference between m and the triangles of
// strips, corner by corner: position (the stored s16 × f), UV (ST / 4096)
// and texture slot. With mobyParity a strip's triangles have the other
// parity: moby strips, as Wrench's strip rule reads them, begin with a
// repeated index. Tests of the writers' users compare decoded classes
// with the geometry they wrote through it.
func (m *Mesh) MatchStrips(strips []Strip, f float32, mobyParity bool) error {
	if err := m.Check(); err != nil {
		return err
	}
	i := 0
	for si, s := range strips {
		for _, tr := range s.Triangles() {
			if mobyParity && !s.List {
				tr[0], tr[1] = tr[1], tr[0]
			}
			if i >= len(m.Triangles) {
				return fmt.Errorf("mesh: %d triangles, strip %d wants more", len(m.Triangles), si)
			}
			got := m.Triangles[i]
			tex := s.Tex
			if tex < 0 {
				tex = NoTexture
			}
			if got.Tex != tex {
				return fmt.Errorf("mesh: triangle %d: texture %d, want %d", i, got.Tex, tex)
			}
			for c := 0; c < 3; c++ {
				v, w := got.V[c], tr[c]
				p := [3]float32{float32(w.Pos[0]) * f, float32(w.Pos[1]) * f, float32(w.Pos[2]) * f}
				if m.Positions[v] != p {
					return fmt.Errorf("mesh: triangle %d corner %d: position %v, want %v", i, c, m.Positions[v], p)
				}
				if m.UVs != nil && m.UVs[v] != [2]float32{float32(w.ST[0]) / 4096, float32(w.ST[1]) / 4096} {
					return fmt.Errorf("mesh: triangle %d corner %d: UV %v, want ST %v", i, c, m.UVs[v], w.ST)
				}
			}
			i++
		}
	}
	if i != len(m.Triangles) {
		return fmt.Errorf("mesh: %d triangles, the strips make %d", len(m.Triangles), i)
	}
	return nil
}
