package mkdisc

import (
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
)

// TestLevelGameplay: every level's gameplay, as generated, reads with
// package gameplay with no problem, holds every block of the layout, places
// only classes its level's core holds, and its parts (gameplay.d/) are its
// blocks.
func TestLevelGameplay(t *testing.T) {
	for _, l := range contentLayouts() {
		for _, f := range built(t, l) {
			if f.info == nil || f.info.Family != "LEVEL" {
				continue
			}
			var gp, data treeEntry
			for _, e := range f.entries {
				switch e.name {
				case "gameplay":
					gp = e
				case "data":
					data = e
				}
			}
			if gp.decoded == nil || gp.decoded.plain == nil {
				t.Fatalf("%s %s: no gameplay content kept", l, f.path)
			}
			g, err := gameplay.Read(gp.decoded.plain)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Problems) != 0 || len(g.Blocks) != gameplay.NumBlocks {
				t.Fatalf("%s %s: %d blocks, problems %v", l, f.path, len(g.Blocks), g.ProblemLines())
			}
			if len(gp.parts) != len(g.Blocks) {
				t.Fatalf("%s %s: %d parts for %d blocks", l, f.path, len(gp.parts), len(g.Blocks))
			}
			for i, p := range gp.parts {
				if b := g.Blocks[i]; p.name != b.Name || p.off != b.Offset || p.n != b.Size || p.sum == "" {
					t.Errorf("%s %s: part %+v, block %+v", l, f.path, p, b)
				}
			}
			var core *levelcore.Core
			for _, x := range data.parts {
				if x.name == "core_index" {
					c, err := levelcore.Read(fileBytes(f, data.off+x.off, x.n), 1<<30)
					if err != nil {
						t.Fatal(err)
					}
					core = c
				}
			}
			if core == nil {
				t.Fatalf("%s %s: no core_index", l, f.path)
			}
			has := map[levelcore.ClassKind]map[int32]bool{}
			for _, cs := range [][]levelcore.Class{core.Mobies, core.Ties, core.Shrubs} {
				for _, c := range cs {
					if has[c.Kind] == nil {
						has[c.Kind] = map[int32]bool{}
					}
					has[c.Kind][c.OClass] = true
				}
			}
			if len(g.Mobies) == 0 || len(g.Ties) == 0 || len(g.Shrubs) == 0 {
				t.Fatalf("%s %s: %d mobies %d ties %d shrubs", l, f.path, len(g.Mobies), len(g.Ties), len(g.Shrubs))
			}
			for _, m := range g.Mobies {
				if !has[levelcore.Moby][m.OClass] {
					t.Fatalf("%s %s: moby %d of class %d, not in the core", l, f.path, m.Index, m.OClass)
				}
			}
			for _, x := range g.Ties {
				if !has[levelcore.Tie][x.OClass] {
					t.Fatalf("%s %s: tie %d of class %d, not in the core", l, f.path, x.Index, x.OClass)
				}
			}
			for _, x := range g.Shrubs {
				if !has[levelcore.Shrub][x.OClass] {
					t.Fatalf("%s %s: shrub %d of class %d, not in the core", l, f.path, x.Index, x.OClass)
				}
			}
		}
	}
}

// TestRetailGameplayCounts: on the retail layout (no content cap), a level's
// gameplay holds retail-like instance counts and fits its lump.
func TestRetailGameplayCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a retail-sized gameplay stream")
	}
	g := &gen{layout: Retail, seed: 1}
	rows, err := parseLevels()
	if err != nil {
		t.Fatal(err)
	}
	row := rows[1]
	capacity := int64(row.Slots[slotGameplay].Size) * sectorSize
	l, err := g.gameplayLump(row, capacity, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l.f.size >= capacity {
		t.Fatalf("%d bytes of stream in a %d-byte lump", l.f.size, capacity)
	}
	gp, err := gameplay.Read(l.decoded.plain)
	if err != nil {
		t.Fatal(err)
	}
	if len(gp.Mobies) < 300 || len(gp.Ties) < 100 || len(gp.Shrubs) < 200 || len(gp.Problems) != 0 {
		t.Fatalf("%s: %d mobies %d ties %d shrubs, problems %v", row.File, len(gp.Mobies), len(gp.Ties), len(gp.Shrubs), gp.ProblemLines())
	}
	t.Logf("%s: %d mobies %d ties %d shrubs in %d decoded bytes, %d stored of %d", row.File, len(gp.Mobies), len(gp.Ties), len(gp.Shrubs), gp.Size, l.f.size, capacity)
}
