package integration

import (
	"os"
	"strings"
	"testing"
)

// TestPassthroughFlag: gcfs mount hands decoded files to the kernel (FUSE
// passthrough: the trace shows a backing file registered for each one
// read, after the mount's own probe), and --no-passthrough serves them.
// Both read every decoded file of one directory as the manifest says.
func TestPassthroughFlag(t *testing.T) {
	d := getDisc(t, "small")
	var files []string
	for p := range d.manifest {
		if strings.HasPrefix(p, "G/MISC.WAD/") && !strings.Contains(p[len("G/MISC.WAD/"):], "/") && !isViewPath(p) && !strings.HasSuffix(p, ".wad") {
			files = append(files, p)
		}
	}
	if len(files) < 3 {
		t.Fatalf("test setup: %d files in G/MISC.WAD", len(files))
	}
	for _, tc := range []struct {
		name  string
		flags []string
		pass  bool
	}{{"default", nil, true}, {"no-passthrough", []string{"--no-passthrough"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := testMount(t, d.path, append(tc.flags, "--debug")...)
			for _, p := range files {
				sum, n, err := sha1File(m.path(p))
				if want := d.manifest[p]; err != nil || n != want.size || sum != want.sha1 {
					t.Errorf("%s: %d bytes sha1 %s (%v), manifest %d %s", p, n, sum, err, want.size, want.sha1)
				}
			}
			m.unmount(t)
			log, err := os.ReadFile(m.logFile)
			if err != nil {
				t.Fatal(err)
			}
			said := "decoded files served"
			if tc.pass {
				said = "decoded files passed through"
			}
			if !strings.Contains(string(log), said) && (os.Geteuid() == 0 || !tc.pass) {
				t.Errorf("the server's log does not say %q", said)
			}
			opens := strings.Count(string(log), "BACKING_OPEN")
			if tc.pass && opens < 2 {
				requireRootPassthrough(t)
				t.Errorf("%d backing files registered: decoded files not passed through", opens)
			}
			if !tc.pass && opens != 0 {
				t.Errorf("--no-passthrough: %d backing files registered", opens)
			}
		})
	}
}

// requireRootPassthrough skips where FUSE passthrough cannot be had (not
// root); under CI (root, a kernel that has it) it is a failure.
func requireRootPassthrough(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 && os.Getenv("CI") == "" {
		t.Skip("FUSE passthrough needs root")
	}
}
