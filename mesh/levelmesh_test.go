package mesh_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"testing"

	"gcfs/discimg/mkdisc"
	"gcfs/mesh"
)

// sameMesh compares two meshes vertex by vertex, triangle by triangle.
func sameMesh(t *testing.T, what string, got, want *mesh.Mesh) {
	t.Helper()
	if len(got.Positions) != len(want.Positions) || len(got.Triangles) != len(want.Triangles) {
		t.Fatalf("%s: %d vertices %d triangles, want %d and %d", what, len(got.Positions), len(got.Triangles), len(want.Positions), len(want.Triangles))
	}
	for i := range want.Positions {
		if got.Positions[i] != want.Positions[i] {
			t.Fatalf("%s: vertex %d at %v, want %v", what, i, got.Positions[i], want.Positions[i])
		}
		if got.UVs[i] != want.UVs[i] {
			t.Fatalf("%s: vertex %d UV %v, want %v", what, i, got.UVs[i], want.UVs[i])
		}
		if got.Normals[i] != want.Normals[i] {
			t.Fatalf("%s: vertex %d normal %v, want %v", what, i, got.Normals[i], want.Normals[i])
		}
	}
	for i := range want.Triangles {
		if got.Triangles[i] != want.Triangles[i] {
			t.Fatalf("%s: triangle %d %+v, want %+v", what, i, got.Triangles[i], want.Triangles[i])
		}
	}
}

// triangleSet is a mesh's triangles as world positions (each rotated to
// start at its least vertex, keeping its winding) and texture, sorted.
func triangleSet(m *mesh.Mesh) []string {
	var out []string
	for _, tr := range m.Triangles {
		p := [3][3]float32{m.Positions[tr.V[0]], m.Positions[tr.V[1]], m.Positions[tr.V[2]]}
		least := 0
		for k := 1; k < 3; k++ {
			if fmt.Sprint(p[k]) < fmt.Sprint(p[least]) {
				least = k
			}
		}
		out = append(out, fmt.Sprintf("%v %v %v tex %d", p[least], p[(least+1)%3], p[(least+2)%3], tr.Tex))
	}
	sort.Strings(out)
	return out
}

func TestReadTfragsMkdisc(t *testing.T) {
	for _, c := range []struct{ frags, tex int }{{1, 1}, {3, 3}, {7, 60}, {40, 120}} {
		b, want := mkdisc.TfragsBlock(uint32(c.frags*31+c.tex), c.frags, c.tex, 0x1000)
		got, st, err := mesh.ReadTfrags(b)
		if err != nil {
			t.Fatalf("%d fragments: %v", c.frags, err)
		}
		if st.Fragments != c.frags {
			t.Errorf("%d fragments read, want %d", st.Fragments, c.frags)
		}
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
		sameMesh(t, fmt.Sprintf("%d fragments", c.frags), got, want)
		texs := map[int32]bool{}
		for _, tr := range got.Triangles {
			if tr.Tex < 0 || int(tr.Tex) >= c.tex {
				t.Fatalf("texture %d of %d", tr.Tex, c.tex)
			}
			texs[tr.Tex] = true
		}
		if c.tex >= 3 && c.frags >= 3 && len(texs) < 2 {
			t.Errorf("%d fragments use %d textures: want several", c.frags, len(texs))
		}
		if again, ok := mkdisc.TfragsOf(b); !ok || len(again.Triangles) != len(want.Triangles) {
			t.Error("TfragsOf does not make the block again")
		}
	}
}

func TestReadCollisionMkdisc(t *testing.T) {
	for _, cells := range []int{4, 12, 60} {
		b, want := mkdisc.CollisionBlock(uint32(cells), cells, 0x1000)
		got, st, err := mesh.ReadCollision(b)
		if err != nil {
			t.Fatalf("%d cells: %v", cells, err)
		}
		if err := got.Check(); err != nil {
			t.Fatal(err)
		}
		if st.Duplicates != 1 {
			t.Errorf("%d duplicates merged, want the 1 stored twice", st.Duplicates)
		}
		g, w := triangleSet(got), triangleSet(want)
		if len(g) != len(w) {
			t.Fatalf("%d cells: %d triangles, want %d", cells, len(g), len(w))
		}
		for i := range w {
			if g[i] != w[i] {
				t.Fatalf("%d cells: triangle %s, want %s", cells, g[i], w[i])
			}
		}
		// merged vertices: no two positions alike
		seen := map[[3]float32]bool{}
		for _, p := range got.Positions {
			if seen[p] {
				t.Fatalf("vertex %v twice", p)
			}
			seen[p] = true
		}
		if _, ok := mkdisc.CollisionOf(b); !ok {
			t.Error("CollisionOf does not make the block again")
		}
	}
}

func wantMeshError(t *testing.T, what string, err error, reason string) {
	t.Helper()
	var me *mesh.Error
	if !errors.As(err, &me) {
		t.Fatalf("%s: %v, want a *mesh.Error", what, err)
	}
	if reason != "" && !contains(me.Error(), reason) {
		t.Errorf("%s: %v, want it to say %q", what, me, reason)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestTfragsBadInput: LEVEL-CORE's bad inputs each give a *mesh.Error.
func TestTfragsBadInput(t *testing.T) {
	good, _ := mkdisc.TfragsBlock(7, 3, 4, 0)
	le := binary.LittleEndian
	hdr := int(le.Uint32(good[0:])) // fragment 0's header
	data := hdr + int(le.Uint32(good[hdr+0x10:]))
	shared := int(le.Uint16(good[hdr+0x16:]))
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name, reason string
		b            []byte
	}{
		{"short", "shorter", good[:8]},
		{"count past block", "runs past", mod(func(b []byte) { le.PutUint32(b[4:], 1<<20) })},
		{"data outside block", "outside", mod(func(b []byte) { le.PutUint32(b[hdr+0x10:], 1<<30) })},
		{"list outside fragment", "outside", mod(func(b []byte) { le.PutUint16(b[hdr+0x18:], 0xfff0) })},
		{"UNPACK past list", "needs", mod(func(b []byte) { b[data+shared+2] = 0xff })}, // VU header num → 255 elements
		{"strip past indices", "runs to index", mod(func(b []byte) {
			// the LOD 0 strips: find the third V4_8 UNPACK with addr = strips; simplest: grow every strip count
			for i := data; i+4 <= len(b); i++ {
				if b[i+3] == 0x6e && b[i+2] != 0 && le.Uint16(b[i:])&0x3ff == le.Uint16(b[data+shared+4+0x24:]) {
					b[i+4] = 0xf8 // flagged, 120 indices
				}
			}
		})},
		{"vertex id past positions", "names position", mod(func(b []byte) {
			// common vertex info: the first record's vertex field
			cmds := data + shared
			off := cmds + 4 + 0x28 // after the VU header UNPACK
			off += 4 + int(b[off+2])*16
			off += 20 + 4 // STROW, STMOD
			le.PutUint16(b[off+4+6:], 0x7ffe)
		})},
		{"texture record past list", "selects texture record", mod(func(b []byte) {
			for i := data; i+4 <= len(b); i++ {
				if b[i+3] == 0x6e && le.Uint16(b[i:])&0x3ff == le.Uint16(b[data+shared+4+0x24:]) {
					b[i+4+2] = 125 // record 25
				}
			}
		})},
		{"too many vertices", "more than", func() []byte {
			// 1000 fragments sharing fragment 2's data (a box: 24
			// vertices for its 64-byte header)
			b := append([]byte(nil), good...)
			h2 := hdr + 0x80
			d2 := hdr + int(le.Uint32(b[h2+0x10:]))
			n := 1000
			big := make([]byte, 0x40+0x40*n)
			copy(big, b[:0x40])
			le.PutUint32(big[4:], uint32(n))
			for i := 0; i < n; i++ {
				copy(big[0x40+0x40*i:], b[h2:h2+0x40])
				le.PutUint32(big[0x40+0x40*i+0x10:], uint32(len(big)-0x40))
			}
			return append(big, b[d2:]...)
		}()},
	}
	for _, c := range cases {
		_, _, err := mesh.ReadTfrags(c.b)
		wantMeshError(t, c.name, err, c.reason)
	}
}

// TestCollisionBadInput: cells outside the grid's block, vertex indices
// past a cell's, counts more than the bytes hold.
func TestCollisionBadInput(t *testing.T) {
	good, _ := mkdisc.CollisionBlock(3, 8, 0)
	le := binary.LittleEndian
	m0 := int(le.Uint32(good))
	nz := int(le.Uint16(good[m0+2:]))
	z0 := m0 + 4*int(le.Uint16(good[m0+4:]))
	y0 := m0 + int(le.Uint32(good[z0+4:]))
	var cell int
	var cellAt int
	for k := 0; k < int(le.Uint16(good[y0+2:])); k++ {
		if v := le.Uint32(good[y0+4+4*k:]); v != 0 {
			cell, cellAt = y0+4+4*k, m0+int(v>>8)
			break
		}
	}
	mod := func(f func(b []byte)) []byte {
		b := append([]byte(nil), good...)
		f(b)
		return b
	}
	cases := []struct {
		name, reason string
		b            []byte
	}{
		{"short", "run past", good[:4]},
		{"mesh outside", "run past", mod(func(b []byte) { le.PutUint32(b, 1<<24) })},
		{"z count past block", "run past", mod(func(b []byte) { le.PutUint16(b[m0+2:], 0xffff) })},
		{"y node outside", "run past", mod(func(b []byte) { le.PutUint16(b[m0+4:], 0xffff) })},
		{"cell outside", "run past", mod(func(b []byte) { le.PutUint32(b[cell:], 0xffffff00) })},
		{"face count past cell", "run past", mod(func(b []byte) { le.PutUint16(b[cellAt:], 0xffff) })},
		{"quads past faces", "quads of", mod(func(b []byte) { b[cellAt+3] = 0xff })},
		{"vertex past cell's", "of the cell's", mod(func(b []byte) {
			vc := int(b[cellAt+2])
			b[cellAt+4+4*vc] = 200
		})},
		{"cells sharing bytes", "more vertices and faces", func() []byte {
			// every x entry of a big x node naming the same cell
			b := append([]byte(nil), good...)
			xAt := len(b) - m0
			n := 4000
			b = le.AppendUint16(b, 0)
			b = le.AppendUint16(b, uint16(n))
			for k := 0; k < n; k++ {
				b = le.AppendUint32(b, le.Uint32(good[cell:]))
			}
			le.PutUint32(b[z0+4:], uint32(xAt))
			return b
		}()},
	}
	_ = nz
	for _, c := range cases {
		_, _, err := mesh.ReadCollision(c.b)
		wantMeshError(t, c.name, err, c.reason)
	}
}

func FuzzReadTfrags(f *testing.F) {
	b, _ := mkdisc.TfragsBlock(1, 3, 4, 0)
	f.Add(b)
	f.Add(b[:0x80])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, err := mesh.ReadTfrags(b)
		if err != nil {
			var me *mesh.Error
			if !errors.As(err, &me) {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		if len(m.Positions) > len(b)/8 || len(m.Triangles) > len(b) {
			t.Fatalf("%d vertices %d triangles from %d bytes", len(m.Positions), len(m.Triangles), len(b))
		}
	})
}

func FuzzReadCollision(f *testing.F) {
	b, _ := mkdisc.CollisionBlock(1, 6, 0)
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		m, _, err := mesh.ReadCollision(b)
		if err != nil {
			var me *mesh.Error
			if !errors.As(err, &me) {
				t.Fatalf("%T %v", err, err)
			}
			return
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
		if len(m.Positions) > len(b)/4 || len(m.Triangles) > len(b)/2 {
			t.Fatalf("%d vertices %d triangles from %d bytes", len(m.Positions), len(m.Triangles), len(b))
		}
	})
}
