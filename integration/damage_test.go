package integration

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"gcfs/fsnode/testdisc"
)

func countLines(b []byte, sub string) int {
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, sub) && !isTraceLine(l) {
			n++
		}
	}
	return n
}

// traceLine matches a line of go-fuse's FUSE trace (--debug, which the
// mounts of a verbose run have): "rx 18: LOOKUP ...", "tx 18:     OK, ...",
// after the log's date and time.
var traceLine = regexp.MustCompile(`^(\S+ \S+ )?[rt]x \d+: `)

func isTraceLine(l string) bool { return traceLine.MatchString(l) }

// Issue 10 case 1, as reported: a mounted copy truncated to 20,000,000
// bytes, caches dropped: a file past the cut fails with EIO (not an empty
// file), keeps its size, and the server logs it.
func TestImageShrinksWhileMounted(t *testing.T) {
	d := getDisc(t, "small")
	img := filepath.Join(t.TempDir(), "shrinks.iso")
	copyFile(t, d.path, img)
	m := testMount(t, img)
	const cut = 20000000
	if err := os.Truncate(img, cut); err != nil {
		t.Fatal(err)
	}
	dropCaches()
	const victim = "Z6TAIL.DUP"
	got, err := os.ReadFile(m.path(victim))
	if !isErrno(err, syscall.EIO) {
		t.Fatalf("%s after the image shrank: %d bytes, %v; want EIO", victim, len(got), err)
	}
	st, err := os.Stat(m.path(victim))
	if err != nil || st.Size() != d.manifest[victim].size {
		t.Errorf("%s's size after the failed read: %v %v, want %d", victim, st.Size(), err, d.manifest[victim].size)
	}
	m.unmount(t) // flushes the log
	log, _ := os.ReadFile(m.logFile)
	if countLines(log, victim) != 1 || countLines(log, "image has 20000000") < 1 {
		t.Errorf("want one log line for %s giving the image's size:\n%s", victim, tail(log, 20))
	}
}

// Issue 10 case 2 in gcfs mount: a damaged /G is said where the user sees it
// (the mount command's stderr, the server running in the background) and
// in the server's log, once each.
func TestDamagedDirectoryAtMount(t *testing.T) {
	requireFUSE(t)
	d := getDisc(t, "small")
	img := filepath.Join(t.TempDir(), "badg.iso")
	copyFile(t, d.path, img)
	if err := testdisc.PatchRecord(img, "G", func(rec []byte) { testdisc.Both32(rec[2:], 1<<22) }); err != nil {
		t.Fatal(err)
	}
	m, stderr := backgroundMount(t, img)
	if n := countLines([]byte(stderr), "directory /G "); n != 1 {
		t.Errorf("gcfs mount's stderr: %d lines name /G, want 1:\n%s", n, stderr)
	}
	if ents, err := os.ReadDir(m.path("G")); err != nil || len(ents) != 0 {
		t.Errorf("G: %d entries, %v", len(ents), err)
	}
	m.unmount(t)
	log, _ := os.ReadFile(m.logFile)
	if n := countLines(log, "directory /G "); n != 1 {
		t.Errorf("server log: %d lines name /G, want 1:\n%s", n, tail(log, 20))
	}
}
