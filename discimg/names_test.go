package discimg

import "testing"

func TestNumericNames(t *testing.T) {
	cases := []struct {
		n, i int
		want string
	}{
		{7, 3, "003"}, {1, 0, "000"}, {0, 0, "000"}, {1000, 999, "999"}, {1001, 5, "0005"},
		{1534, 1533, "1533"}, {1534, 7, "0007"}, {767, 766, "766"}, {20000, 3, "00003"},
	}
	for _, c := range cases {
		if got := numericName(c.i, numericWidth(c.n)); got != c.want {
			t.Errorf("table of %d, index %d: %q, want %q", c.n, c.i, got, c.want)
		}
	}
}

func TestFamilyNames(t *testing.T) {
	if len(miscNames) != (0x40-8)/8 || len(armorNames) != (0xf8-8)/8 || len(mpegNames) != (0x328-8)/8 {
		t.Fatalf("name counts %d %d %d do not match the tables", len(miscNames), len(armorNames), len(mpegNames))
	}
	if armorNames[16] != "armor8_mesh" || armorNames[19] != "wrench0_textures" || mpegNames[98] != "subtitles49" || mpegNames[99] != "video49" {
		t.Fatalf("names %q %q %q %q", armorNames[16], armorNames[19], mpegNames[98], mpegNames[99])
	}
	if SceneStarts != (0x137c-8)/4 {
		t.Fatalf("SceneStarts %d", SceneStarts)
	}
	seen := map[string]bool{}
	for i := range SceneStarts {
		n, ok := sceneStartName(i)
		if !ok || seen[n] {
			t.Fatalf("scene name %d: %q %v", i, n, ok)
		}
		seen[n] = true
	}
	if n, _ := sceneStartName(0); n != "scene00/00" {
		t.Fatal(n)
	}
	if n, _ := sceneStartName(SceneStarts - 1); n != "scene14/82" {
		t.Fatal(n)
	}
	if _, ok := sceneStartName(SceneStarts); ok {
		t.Fatal("name past the list")
	}
}

// A pair-named family read as a start list gets numeric names: its entries
// are not the documented pairs.
func TestStartListOfNamedFamily(t *testing.T) {
	c := mustRead(t, "MISC.WAD", header(0x40, []uint32{1, 5, 9, 20, 22, 30, 31, 40, 41, 50, 60, 70, 80, 90}), 100*SectorSize)
	if c.Reading != ReadingStartList || len(c.Extents) != 14 || c.Extents[0].Name != "000" || c.Extents[13].Name != "013" {
		t.Fatalf("reading %s, extents %+v", c.Reading, c.Extents)
	}
}
