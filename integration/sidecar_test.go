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

// findStatOut stats every file below dir but those in a level core's
// sky.d/ (see TestMountIndexSidecar), returning `stat`'s output.
func findStatOut(t testing.TB, dir string) []byte {
	t.Helper()
	out, err := exec.Command("sh", "-c", "cd \"$1\" && find . -path '*/sky.d' -prune -o -type f -print0 | sort -z | xargs -0 stat -c '%n %s %i'", "sh", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("find|stat: %v %s", err, out)
	}
	return out
}

// TestMountIndexSidecar: the first mount's find|stat scans the streams and
// the server saves what it learned as it ends; a second mount of the same
// image answers the same find|stat without reading streams (the server
// reads almost nothing more than the FUSE requests); --no-index-cache
// mounts neither read nor write one. A level core's sky.d/ is left out of
// the find: listing sky.d/textures/ reads the sky block's header from
// core_data on every mount (docs/tree.md: the one listing of the core that
// reads core_data; the index cache does not keep it), which on the small
// layout is most of what a second mount would read.
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
	// stream. The first mount scans every decoded file.
	if second*4 > first {
		t.Errorf("second mount's find|stat read %d bytes, the first %d: streams scanned again", second, first)
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
