package mkdisc

import (
	"testing"

	"gcfs/discimg/levelcore"
)

// TestLevelCores: every level's core, as generated, reads with the level
// core model with nothing left out but the fx entries written as missing,
// and the files listed for data.d/core/ are the ones its reading names.
func TestLevelCores(t *testing.T) {
	for _, l := range contentLayouts() {
		g := &gen{layout: l, seed: 1}
		rows, err := parseLevels()
		if err != nil {
			t.Fatal(err)
		}
		for _, row := range rows {
			b, files, err := g.levelCore(row, 64<<10)
			if err != nil {
				t.Fatal(err)
			}
			c, err := levelcore.Read(b.Index, int64(len(b.GS)))
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.Skipped {
				t.Errorf("%s: %v", row.File, s)
			}
			if len(c.Notes) != 0 {
				t.Errorf("%s: notes %q", row.File, c.Notes)
			}
			if len(c.Mobies) == 0 || len(c.Ties) == 0 || len(c.Shrubs) == 0 || len(c.Particles) == 0 || len(c.Fx) == 0 ||
				len(c.RatchetSeqs) == 0 || c.SoundRemap == nil || len(c.StashList) == 0 || c.DataSize != int64(len(b.Data)) {
				t.Fatalf("%s: %d mobies %d ties %d shrubs, %d particles %d fx %d seqs, remap %v, stash %v", row.File,
					len(c.Mobies), len(c.Ties), len(c.Shrubs), len(c.Particles), len(c.Fx), len(c.RatchetSeqs), c.SoundRemap, c.StashList)
			}
			seen := map[string]bool{}
			for _, f := range files {
				if seen[f.Path] {
					t.Fatalf("%s: %s twice", row.File, f.Path)
				}
				seen[f.Path] = true
			}
			for _, want := range []string{"core/tfrags", "core/sky", "core/collision", "core/occlusion", "core/sound_remap", "core/fx/00_lame_shadow.png"} {
				if !seen[want] {
					t.Fatalf("%s: no %s", row.File, want)
				}
			}
		}
	}
}

// contentLayouts are the layouts a test of generated level content runs
// on: both, but only the small one under -short (make test's race pass);
// the full pass that follows checks the retail one too. These tests check
// content on one goroutine, level cores made by gen directly or the files
// of the shared build (built), so the race detector has nothing to find in
// the retail checks. The build's own concurrency stays under -race: the
// retail build is made there for TestContainersReadBack either way.
func contentLayouts() []Layout {
	if testing.Short() {
		return []Layout{Small}
	}
	return []Layout{Small, Retail}
}
