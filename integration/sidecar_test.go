package integration

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// serverRead is the bytes the server has read through read syscalls (rchar
// of /proc/PID/io: image preads and FUSE requests alike).
func serverRead(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		t.Fatalf("server %d: %v", pid, err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("no rchar in /proc/%d/io", pid)
	return 0
}

// findStatOut stats every file below dir (a level core's sky.d/textures/
// listed too), returning `stat`'s output.
func findStatOut(t testing.TB, dir string) []byte {
	t.Helper()
	out, err := exec.Command("sh", "-c", "cd \"$1\" && find . -type f -print0 | sort -z | xargs -0 stat -c '%n %s %i'", "sh", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("find|stat: %v %s", err, out)
	}
	return out
}

// TestMountIndexSidecar: the first mount's find|stat scans the streams and
// the server saves what it learned as it ends; a second mount of the same
// image answers the same find|stat without reading streams (the server
// reads almost nothing more than the FUSE requests); --no-index-cache
// mounts neither read nor write one. The find lists every level core's
// sky.d/textures/ too, whose first listing reads the sky table from
// core_data: the index cache keeps the table, so the second mount lists it
// reading nothing of core_data.
func TestMountIndexSidecar(t *testing.T) {
	d := getDisc(t, "small")
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // the servers inherit it
	idx := func() []string {
		m, _ := filepath.Glob(filepath.Join(cache, "gcfs", "*.idx"))
		return m
	}

	off := testMount(t, d.path, "--no-index-cache")
	want := findStatOut(t, off.dir)
	off.unmount(t)
	if s := idx(); len(s) != 0 {
		t.Fatalf("--no-index-cache mount wrote %v", s)
	}

	m1 := testMount(t, d.path)
	r0 := serverRead(t, m1.pid)
	if got := findStatOut(t, m1.dir); !bytes.Equal(got, want) {
		t.Fatal("find|stat differs with the index cache on")
	}
	first := serverRead(t, m1.pid) - r0
	m1.unmount(t)
	s := idx()
	if len(s) != 1 {
		t.Fatalf("sidecars after the first mount: %v, want one", s)
	}

	m2 := testMount(t, d.path)
	r0 = serverRead(t, m2.pid)
	if got := findStatOut(t, m2.dir); !bytes.Equal(got, want) {
		t.Fatal("find|stat differs on the second mount")
	}
	second := serverRead(t, m2.pid) - r0
	t.Logf("server bytes read by find|stat of %d files: first mount %d, second %d", bytes.Count(want, []byte("\n")), first, second)
	// The FUSE requests of a find|stat are small; a stream scan reads the
	// stream. The first mount scans every decoded file and reads each sky
	// table from core_data. Measured on the small layout: 7.2 MB first,
	// 0.37 MB second (3.0 MB when the sky tables were not kept: 2.6 MB of
	// core_data decoded to list sky.d/textures/).
	if second*8 > first {
		t.Errorf("second mount's find|stat read %d bytes, the first %d: streams scanned or core_data read again", second, first)
	}
	// Reads still work (an index is built on open).
	for _, e := range d.decodedFiles()[:min(5, len(d.decodedFiles()))] {
		sum, n, err := sha1File(m2.path(e.Path))
		if err != nil || n != e.Size {
			t.Errorf("%s: %d bytes, %v; want %d", e.Path, n, err, e.Size)
		}
		if me, ok := d.manifest[e.Path]; ok && me.sha1 != sum {
			t.Errorf("%s: content differs from the manifest", e.Path)
		}
	}
	m2.unmount(t)
}
