package gltf

import (
	"bytes"
	"testing"

	"gcfs/mesh"
)

// largeMoby is a class block of many packets: ribbons of a retail-sized
// large class (a few thousand triangles), and three slots' PNG-sized blobs.
func largeMoby(tb testing.TB) ([]byte, [][]byte) {
	c := &mesh.MobyClass{Scale: 1, Low: mesh.Box([3]int16{0, 0, 0}, 900, []int32{0})}
	c.High = mesh.Box([3]int16{0, 0, 0}, 1000, []int32{0, 1, 2})
	for i := 0; i < 150; i++ {
		c.High = append(c.High, mesh.Ribbon([3]int16{int16(-3000 + 40*i), int16(20 * i), 0}, 40, 200, 60, int32(i%3)))
	}
	b, err := mesh.WriteMoby(c)
	if err != nil {
		tb.Fatal(err)
	}
	pngs := [][]byte{bytes.Repeat([]byte{1}, 9000), bytes.Repeat([]byte{2}, 5000), bytes.Repeat([]byte{3}, 17000)}
	return b, pngs
}

// TestClassGLB: ClassGLB's output is Size's length, names its materials by
// slot, and fails for a block that does not decode.
func TestClassGLB(t *testing.T) {
	b, pngs := largeMoby(t)
	glb, m, err := ClassGLB("moby", mesh.High, ClassMeshName("moby", 7, mesh.High), b, pngs)
	if err != nil {
		t.Fatal(err)
	}
	n, err := Size(ClassScene("moby_0007", m, PNGTextures(pngs)))
	if err != nil || n != int64(len(glb)) || !IsGLB(glb) {
		t.Fatalf("Size %d (%v), encoded %d", n, err, len(glb))
	}
	if !bytes.Contains(glb, []byte(`"name":"02"`)) || !bytes.Contains(glb, []byte("moby_0007")) {
		t.Error("no material 02 or mesh name in the glb")
	}
	if ClassMeshName("moby", 12, mesh.Low) != "moby_0012_low" || ClassMeshName("tie", 12, mesh.Low) != "tie_0012" {
		t.Error("ClassMeshName")
	}
	if _, _, err := ClassGLB("moby", mesh.High, "x", b[:0x60], pngs); err == nil {
		t.Error("a cut block made a glb")
	}
}

// TestClassGLBSize: a class scene given its PNGs' lengths alone
// (Material.PNGSize, what a listing's sizing gives it) has Size ClassGLB's
// length, for every LOD and with slots left untextured; a negative PNG size
// does not size; Encode refuses a PNG size without bytes.
func TestClassGLBSize(t *testing.T) {
	b, pngs := largeMoby(t)
	sizedScene := func(lod mesh.LOD, name string, ps [][]byte) (*Scene, *mesh.Mesh, error) {
		m, err := mesh.ReadClass("moby", lod, b, len(ps))
		if err != nil {
			return nil, nil, err
		}
		tex := make([]Material, len(ps))
		for k, p := range ps {
			tex[k].PNGSize = int64(len(p))
		}
		return ClassScene(name, m, tex), m, nil
	}
	for _, lod := range []mesh.LOD{mesh.High, mesh.Low} {
		for _, hole := range []int{-1, 0, 2} {
			ps := append([][]byte(nil), pngs...)
			if hole >= 0 {
				ps[hole] = nil
			}
			name := ClassMeshName("moby", 7, lod)
			glb, m, err := ClassGLB("moby", lod, name, b, ps)
			if err != nil {
				t.Fatal(err)
			}
			s, m2, err := sizedScene(lod, name, ps)
			if err != nil {
				t.Fatal(err)
			}
			n, err := Size(s)
			if err != nil || n != int64(len(glb)) || len(m2.Triangles) != len(m.Triangles) {
				t.Errorf("lod %v, slot %d untextured: sized %d (%v), ClassGLB %d bytes", lod, hole, n, err, len(glb))
			}
		}
	}
	if _, err := mesh.ReadClass("moby", mesh.High, b[:0x60], 3); err == nil {
		t.Error("a cut block was read")
	}
	s, _, err := sizedScene(mesh.High, "x", pngs)
	if err != nil {
		t.Fatal(err)
	}
	s.Materials[1].PNGSize = -2
	if _, err := Size(s); err == nil {
		t.Error("a negative PNG size was sized")
	}
	s.Materials[1].PNG, s.Materials[1].PNGSize = nil, 5000
	if _, err := Encode(s); err == nil {
		t.Error("Encode wrote a PNG it was given only the size of")
	}
}

// BenchmarkClassGLB: a large class's mesh.glb made from its block (decode
// and encode), in MB/s of glb.
func BenchmarkClassGLB(b *testing.B) {
	block, pngs := largeMoby(b)
	glb, m, err := ClassGLB("moby", mesh.High, "moby_large", block, pngs)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(glb)))
	b.ReportMetric(float64(len(m.Triangles)), "triangles")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := ClassGLB("moby", mesh.High, "moby_large", block, pngs); err != nil {
			b.Fatal(err)
		}
	}
}
