package integration

import (
	"os"
	"sort"
	"strings"
	"testing"
)

// TestSkyTexturesMounted: through the mount, a level core's sky.d/textures/
// (a lazy directory: its listing reads the sky header from core_data) lists
// the PNGs mkdisc's manifest names, each with the manifest's bytes; a
// lookup of a texture in another level's sky.d/textures/, before any
// listing of it, finds it too.
func TestSkyTexturesMounted(t *testing.T) {
	requireFUSE(t)
	d := getDisc(t, "small")
	m := testMount(t, d.path)
	defer m.unmount(t)
	const dir = "G/LEVEL1.WAD/data.d/core/sky.d/textures/"
	var want []string
	for _, p := range d.paths {
		if strings.HasPrefix(p, dir) {
			want = append(want, strings.TrimPrefix(p, dir))
		}
	}
	if len(want) == 0 {
		t.Fatal("the manifest has no sky texture of LEVEL1")
	}
	ents, err := os.ReadDir(m.path(dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	sort.Strings(want)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("listed %v, manifest %v", got, want)
	}
	for _, name := range got {
		sum, size, err := sha1File(m.path(dir + name))
		if e := d.manifest[dir+name]; err != nil || size != e.size || sum != e.sha1 {
			t.Errorf("%s: %d bytes %s (%v), manifest %d %s", name, size, sum, err, e.size, e.sha1)
		}
	}
	other := "G/LEVEL2.WAD/data.d/core/sky.d/textures/00.png"
	if e, ok := d.manifest[other]; !ok {
		t.Errorf("manifest lacks %s", other)
	} else if st, err := os.Stat(m.path(other)); err != nil || st.Size() != e.size {
		t.Errorf("stat %s before its directory was listed: %v %v", other, st, err)
	}
}
