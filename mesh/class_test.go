package mesh

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// testStrips are a class's geometry: a box over three slots, a fan and a
// long ribbon (longer than a packet, for mobies, when several).
func testStrips(list bool, ribbons int) []Strip {
	s := Box([3]int16{100, -200, 300}, 400, []int32{0, 1, 2})
	s = append(s, Fan([3]int16{-500, 50, 20}, 300, 7, 1, list)...)
	for i := 0; i < ribbons; i++ {
		s = append(s, Ribbon([3]int16{int16(-900 + 40*i), int16(30 * i), 5}, 20, 120, 90, int32(i%3)))
	}
	return s
}

func testMoby() *MobyClass {
	high := testStrips(false, 4)
	// the fan again, after the ribbons: its vertices are duplicates of the
	// cache's, and one with other STs a duplicate within its packet
	again := Fan([3]int16{-500, 50, 20}, 300, 7, 2, false)
	again[0].Verts[1].ST[0] += 100
	high = append(high, again...)
	return &MobyClass{Scale: 0.25, High: high, Low: Box([3]int16{0, 0, 0}, 800, []int32{2, -1})}
}

// checkMesh compares m with the strips' triangles, corner by corner:
// position (× f), UV, texture slot, and when normal is given, the normal.
// With odd, a strip's triangles have the other parity (moby strips as
// Wrench's strip rule reads them begin with a repeated index).
func checkMesh(t *testing.T, m *Mesh, strips []Strip, f float32, odd bool, normal func(v StripVertex) [3]float32) {
	t.Helper()
	if err := m.Check(); err != nil {
		t.Fatal(err)
	}
	var want [][3]StripVertex
	var tex []int32
	for _, s := range strips {
		for _, tr := range s.Triangles() {
			if odd && !s.List {
				tr[0], tr[1] = tr[1], tr[0]
			}
			want = append(want, tr)
			tex = append(tex, s.Tex)
		}
	}
	if len(m.Triangles) != len(want) {
		t.Fatalf("%d triangles, want %d", len(m.Triangles), len(want))
	}
	for i, tr := range m.Triangles {
		if tr.Tex != tex[i] {
			t.Fatalf("triangle %d: texture %d, want %d", i, tr.Tex, tex[i])
		}
		for c := 0; c < 3; c++ {
			v, w := tr.V[c], want[i][c]
			for k := 0; k < 3; k++ {
				if got, exp := m.Positions[v][k], float32(w.Pos[k])*f; got != exp {
					t.Fatalf("triangle %d corner %d: position %v, want %v (× %v)", i, c, m.Positions[v], w.Pos, f)
				}
			}
			if m.UVs[v] != [2]float32{float32(w.ST[0]) / 4096, float32(w.ST[1]) / 4096} {
				t.Fatalf("triangle %d corner %d: UV %v, want ST %v", i, c, m.UVs[v], w.ST)
			}
			if normal != nil {
				n := normal(w)
				for k := 0; k < 3; k++ {
					if math.Abs(float64(m.Normals[v][k]-n[k])) > 1e-5 {
						t.Fatalf("triangle %d corner %d: normal %v, want %v", i, c, m.Normals[v], n)
					}
				}
			}
		}
	}
}

func mobyNormal(v StripVertex) [3]float32 {
	a, e := float64(v.Azimuth)*math.Pi/128, float64(v.Elevation)*math.Pi/128
	return [3]float32{float32(math.Sin(a) * math.Cos(e)), float32(math.Cos(a) * math.Cos(e)), float32(math.Sin(e))}
}

func TestMobyRoundTrip(t *testing.T) {
	c := testMoby()
	b, err := WriteMoby(c)
	if err != nil {
		t.Fatal(err)
	}
	if b[4] < 2 {
		t.Fatalf("%d high-LOD packets: the test wants several (duplicates across packets)", b[4])
	}
	hi, err := ReadMoby(b, High, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkMesh(t, hi, c.High, c.Scale/1024, true, mobyNormal)
	lo, err := ReadMoby(b, Low, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkMesh(t, lo, c.Low, c.Scale/1024, true, mobyNormal)
}

func TestTieRoundTrip(t *testing.T) {
	c := &TieClass{Scale: 0.5, Slots: 3, Strips: testStrips(false, 6)}
	b, err := WriteTie(c)
	if err != nil {
		t.Fatal(err)
	}
	if b[0xc] < 2 {
		t.Fatalf("%d packets: the test wants several", b[0xc])
	}
	m, err := ReadTie(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkMesh(t, m, c.Strips, c.Scale/1024, false, nil)
}

func TestShrubRoundTrip(t *testing.T) {
	c := &ShrubClass{Scale: 2, Slots: 3, Strips: ForShrub(testStrips(true, 4))}
	c.Strips = append(c.Strips, ForShrub(Fan([3]int16{0, 0, 0}, 100, 1, 2, false))...) // a packet-padding case
	b, err := WriteShrub(c)
	if err != nil {
		t.Fatal(err)
	}
	m, err := ReadShrub(b, 3)
	if err != nil {
		t.Fatal(err)
	}
	checkMesh(t, m, c.Strips, c.Scale/1024, false, func(v StripVertex) [3]float32 {
		n := ShrubNormal(int(v.Azimuth))
		return [3]float32{float32(n[0]) / 32767, float32(n[1]) / 32767, float32(n[2]) / 32767}
	})
}

// wantErr asserts err is a *Error whose reason mentions what.
func wantErr(t *testing.T, err error, what string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("want a *mesh.Error about %q, got %v", what, err)
	}
	if !strings.Contains(e.Error(), what) {
		t.Fatalf("error %q does not mention %q", e, what)
	}
}
