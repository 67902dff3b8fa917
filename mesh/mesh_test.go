package mesh

import "testing"

func TestCheck(t *testing.T) {
	m := &Mesh{Positions: make([][3]float32, 3), Triangles: []Triangle{{V: [3]uint32{0, 1, 2}, Tex: NoTexture}}}
	if err := m.Check(); err != nil {
		t.Fatalf("good mesh: %v", err)
	}
	m.Triangles[0].V[2] = 3
	if m.Check() == nil {
		t.Fatal("index past the vertices passed")
	}
	m.Triangles[0].V[2] = 2
	m.UVs = make([][2]float32, 2)
	if m.Check() == nil {
		t.Fatal("2 UVs for 3 positions passed")
	}
}
