package mesh

import (
	"encoding/binary"
	"errors"
	"testing"

	"gcfs/discimg/levelcore"
)

func skyDesc() *levelcore.SkyDesc {
	pal := make([]byte, levelcore.PaletteSize)
	return &levelcore.SkyDesc{
		Textures: []levelcore.SkyTextureDesc{
			{Width: 4, Height: 4, Pixels: make([]byte, 16), Palette: pal, SharePalette: -1},
			{Width: 8, Height: 4, Pixels: make([]byte, 32), SharePalette: 0},
		},
		Shells: []levelcore.SkyShellDesc{
			{Clusters: []levelcore.SkyClusterDesc{
				{Vertices: [][4]int16{{0, 0, 1024, 0x80}, {2048, 0, 0, 0x80}, {0, -512, 0, 0x40}},
					STs: [][2]int16{{0, 0}, {4096, 0}, {0, 2048}}, Tris: [][4]uint8{{0, 1, 2, 1}, {2, 1, 0, 0xff}}},
				{Vertices: [][4]int16{{1, 2, 3, 0x80}, {4, 5, 6, 0x80}, {7, 8, 9, 0x80}, {10, 11, 12, 0x80}},
					STs: [][2]int16{{1, 1}, {2, 2}, {3, 3}, {4, 4}}, Tris: [][4]uint8{{0, 1, 3, 0}}},
			}},
			{Untextured: true, Clusters: []levelcore.SkyClusterDesc{
				{Vertices: [][4]int16{{0, 0, 0, 0x80}, {1024, 0, 0, 0x80}, {0, 1024, 0, 0x80}},
					STs: [][2]int16{{0, 0}, {0, 0}, {0, 0}}, Tris: [][4]uint8{{0, 1, 2, 1}}}}},
		},
	}
}

// TestReadSky: every shell of a block levelcore.BuildSky wrote reads back
// as the description's geometry: positions /1024, UVs /4096, clusters'
// indices offset by the vertices before them, texture indices (0xff and
// an untextured shell's: NoTexture).
func TestReadSky(t *testing.T) {
	d := skyDesc()
	blk, err := levelcore.BuildSky(d)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := ReadSky(blk)
	if err != nil || len(ms) != 2 {
		t.Fatalf("%d meshes, %v", len(ms), err)
	}
	for s, sh := range d.Shells {
		m := ms[s]
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		base := 0
		tri := 0
		for _, c := range sh.Clusters {
			for i, v := range c.Vertices {
				p, uv := m.Positions[base+i], m.UVs[base+i]
				if p != [3]float32{float32(v[0]) / 1024, float32(v[1]) / 1024, float32(v[2]) / 1024} ||
					uv != [2]float32{float32(c.STs[i][0]) / 4096, float32(c.STs[i][1]) / 4096} {
					t.Errorf("shell %d vertex %d: %v %v", s, base+i, p, uv)
				}
			}
			for _, f := range c.Tris {
				want := Triangle{V: [3]uint32{uint32(base) + uint32(f[0]), uint32(base) + uint32(f[1]), uint32(base) + uint32(f[2])}, Tex: int32(f[3])}
				if f[3] == 0xff || sh.Untextured {
					want.Tex = NoTexture
				}
				if m.Triangles[tri] != want {
					t.Errorf("shell %d triangle %d: %+v, want %+v", s, tri, m.Triangles[tri], want)
				}
				tri++
			}
			base += len(c.Vertices)
		}
		if len(m.Positions) != base || len(m.Triangles) != tri {
			t.Errorf("shell %d: %d positions, %d triangles", s, len(m.Positions), len(m.Triangles))
		}
	}
}

// TestReadSkyBadInput: a short block, too many shells, a shell or cluster
// table outside the block, a negative count, a vertex index past the
// cluster's, a texture past the table: each an *Error.
func TestReadSkyBadInput(t *testing.T) {
	good, err := levelcore.BuildSky(skyDesc())
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	shell0 := int(le.Uint32(good[0x20:]))
	c0 := shell0 + 0x10
	data := int(le.Uint32(good[c0+0x10:]))
	tri := data + int(le.Uint16(good[c0+0x1c:]))
	cases := map[string]func(b []byte) []byte{
		"short":             func(b []byte) []byte { return b[:0x30] },
		"nine shells":       func(b []byte) []byte { le.PutUint16(b[6:], 9); return b },
		"shell outside":     func(b []byte) []byte { le.PutUint32(b[0x20:], uint32(len(b))); return b },
		"clusters outside":  func(b []byte) []byte { le.PutUint32(b[shell0:], 0x7fffffff); return b },
		"negative clusters": func(b []byte) []byte { le.PutUint32(b[shell0:], 0xffffffff); return b },
		"vertices outside":  func(b []byte) []byte { le.PutUint16(b[c0+0x14:], 0x7fff); return b },
		"negative tris":     func(b []byte) []byte { le.PutUint16(b[c0+0x16:], 0x8000); return b },
		"data outside":      func(b []byte) []byte { le.PutUint32(b[c0+0x10:], uint32(len(b))); return b },
		"index past":        func(b []byte) []byte { b[tri] = 3; return b },
		"texture past":      func(b []byte) []byte { b[tri+3] = 2; return b },
	}
	for name, mutate := range cases {
		b := mutate(append([]byte(nil), good...))
		_, err := ReadSky(b)
		var me *Error
		if !errors.As(err, &me) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzReadSky: no panic, and every mesh read passes Check.
func FuzzReadSky(f *testing.F) {
	good, err := levelcore.BuildSky(skyDesc())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:0x40])
	f.Fuzz(func(t *testing.T, b []byte) {
		ms, err := ReadSky(b)
		if err != nil {
			return
		}
		for _, m := range ms {
			if err := m.Check(); err != nil {
				t.Fatal(err)
			}
			if len(m.Positions) > len(b) {
				t.Fatalf("%d positions from %d bytes", len(m.Positions), len(b))
			}
		}
	})
}
