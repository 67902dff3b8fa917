package integration

import (
	"os"
	"sort"
	"strings"
	"syscall"
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
	listed := func(d string) string {
		buf := make([]byte, 16)
		n, err := syscall.Getxattr(m.path(d), "user.gcfs.listed", buf)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		return string(buf[:n])
	}
	// a stat of it (ls -l of sky.d/) does not list it
	if st, err := os.Stat(m.path(dir)); err != nil || !st.IsDir() || listed(dir) != "false" {
		t.Fatalf("stat %s: %v, listed %q", dir, err, listed(dir))
	}
	ents, err := os.ReadDir(m.path(dir))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if listed(dir) != "true" {
		t.Errorf("listed %q after a listing", listed(dir))
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
