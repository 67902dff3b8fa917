package mkdisc

import (
	"testing"

	"gcfs/discimg/levelcore"
	"gcfs/mesh"
)

// TestClassMeshes: every moby, tie and shrub class block of every level's
// core, both layouts, decodes with package mesh to the geometry mkdisc
// wrote (MobyGeometry, TieGeometry, ShrubGeometry), triangle by triangle
// and corner by corner, every LOD a view shows.
func TestClassMeshes(t *testing.T) {
	rows, err := parseLevels()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range contentLayouts() {
		g := &gen{layout: l, seed: 1}
		small := l == Small
		classes := 0
		for _, row := range rows {
			b, _, err := g.levelCore(row, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			c, err := levelcore.Read(b.Index, int64(len(b.GS)))
			if err != nil {
				t.Fatal(err)
			}
			block := func(cl levelcore.Class) []byte {
				return b.Data[cl.Block.Offset : cl.Block.Offset+cl.Block.Size]
			}
			check := func(what string, cl levelcore.Class, m *mesh.Mesh, err error, strips []mesh.Strip, f float32, moby bool) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s %s %d: %v", row.File, what, cl.OClass, err)
				}
				if err := m.MatchStrips(strips, f, moby); err != nil {
					t.Fatalf("%s %s %d: %v", row.File, what, cl.OClass, err)
				}
				classes++
			}
			for _, cl := range c.Mobies {
				if cl.Block == nil {
					continue
				}
				want := MobyGeometry(cl.OClass, len(cl.Slots), small)
				m, err := mesh.ReadMoby(block(cl), mesh.High, len(cl.Slots))
				check("moby high", cl, m, err, want.High, want.Scale/1024, true)
				m, err = mesh.ReadMoby(block(cl), mesh.Low, len(cl.Slots))
				check("moby low", cl, m, err, want.Low, want.Scale/1024, true)
			}
			for _, cl := range c.Ties {
				want := TieGeometry(cl.OClass, len(cl.Slots), small)
				m, err := mesh.ReadTie(block(cl), len(cl.Slots))
				check("tie", cl, m, err, want.Strips, want.Scale/1024, false)
			}
			for _, cl := range c.Shrubs {
				want := ShrubGeometry(cl.OClass, len(cl.Slots), small)
				m, err := mesh.ReadShrub(block(cl), len(cl.Slots))
				check("shrub", cl, m, err, want.Strips, want.Scale/1024, false)
			}
		}
		t.Logf("%v: %d class meshes match", l, classes)
	}
}
