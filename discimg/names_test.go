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
	for _, c := range []struct {
		l     *tableLayout
		n     int
		i     int
		names string
	}{
		{miscLayout, 7, 1, "irx"}, {armorLayout, 30, 19, "wrench0_textures"}, {mpegLayout, 100, 99, "video49"},
		{bonusLayout, 328, 183, "credits_text"}, {bonusLayout, 328, 327, "paintings/05"},
		{hudLayout, 781, 5, "hud_bank4"}, {hudLayout, 781, 780, "screen_items/19"}, {hudLayout, 781, 54, "vendor"},
		{audioNLayout, 514, 513, "thermanator_thaw"}, {audioNLayout, 514, 7, "bin_data/007"},
		{audioLayout, 1534, 1533, "help_italian/255"}, {audioLayout, 1534, 253, "vendor/253"},
	} {
		names, _ := c.l.table()
		if len(names) != c.n || names[c.i] != c.names {
			t.Errorf("layout of %d names: %d, name %d %q, want %q", c.n, len(names), c.i, names[c.i], c.names)
		}
		for i, n := range names {
			if n == "" {
				t.Errorf("%s layout: slot %d has no name", c.l.reading, i)
			}
		}
	}
	if string(appendSceneRecordName(nil, 83+13-1)) != "scene01/moby_load" || string(appendSceneRecordName(nil, 14)) != "scene00/chunks/00" ||
		string(appendSceneRecordName(nil, 1244)) != "scene14/chunks/68" {
		t.Fatal("scene record names")
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

// layoutNames is the names of a layout's table.
func layoutNames(tl *tableLayout) []string {
	names, _ := tl.table()
	return names
}
