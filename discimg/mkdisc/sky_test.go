package mkdisc

import (
	"math"
	"testing"

	"gcfs/mesh"
)

// TestLevelSkies: every level's sky, on both layouts, reads with
// mesh.ReadSky as generated: one mesh a shell, its vertices the
// description's (within s16 range: no position wrapped), its triangles'
// textures shell textures (not the fx ones) or none for the untextured
// shell.
func TestLevelSkies(t *testing.T) {
	for _, l := range contentLayouts() {
		g := &gen{layout: l, seed: 1}
		rows, err := parseLevels()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			blk, d, err := g.coreSky(row, l == Small)
			if err != nil {
				t.Fatal(err)
			}
			ms, err := mesh.ReadSky(blk)
			if err != nil || len(ms) != len(d.Shells) || len(ms) < 2 {
				t.Fatalf("%s: %d shells, %v", row.File, len(ms), err)
			}
			for s, m := range ms {
				sh := d.Shells[s]
				nv := 0
				for _, c := range sh.Clusters {
					for _, v := range c.Vertices {
						p := m.Positions[nv]
						r := math.Sqrt(float64(p[0]*p[0] + p[1]*p[1] + p[2]*p[2]))
						if want := 8 + 4*s; math.Abs(r-float64(want)) > 0.01 || p[0] != float32(v[0])/1024 {
							t.Fatalf("%s shell %d vertex %d at radius %.3f, want %d", row.File, s, nv, r, want)
						}
						nv++
					}
				}
				for _, tr := range m.Triangles {
					if sh.Untextured != (tr.Tex == mesh.NoTexture) || (tr.Tex != mesh.NoTexture && int(tr.Tex) < d.Fx) {
						t.Fatalf("%s shell %d: triangle texture %d", row.File, s, tr.Tex)
					}
				}
			}
		}
	}
}
