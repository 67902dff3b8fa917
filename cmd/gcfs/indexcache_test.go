package main

import (
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gcfs/discimg/mkdisc"
)

// TestMain points $XDG_CACHE_HOME at a directory of its own, so that no test
// (nor a process one spawns) reads or writes the user's index sidecars. A
// helper process a test spawns from this binary (the dead mount's server,
// killed with -9) keeps its parent's: a directory of its own would be left
// behind in the temp directory.
func TestMain(m *testing.M) {
	if strings.HasPrefix(filepath.Base(os.Getenv("XDG_CACHE_HOME")), cacheDirPrefix) {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", cacheDirPrefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_CACHE_HOME", dir)
	code := m.Run()
	os.RemoveAll(dir)
	if layoutDir != "" {
		os.RemoveAll(layoutDir)
	}
	os.Exit(code)
}

const cacheDirPrefix = "gcfs-cmd-cache-"

// sidecars lists the index sidecars under $XDG_CACHE_HOME/gcfs.
func sidecars(t *testing.T, cache string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(cache, "gcfs", "*.idx"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestIndexCacheCLI: ls -l writes a sidecar in $XDG_CACHE_HOME/gcfs, a
// second ls -l lists the same, --no-index-cache neither writes nor reads
// one, and a damaged sidecar is ignored with one warning line and rewritten.
func TestIndexCacheCLI(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	img, _ := genLayout(t, mkdisc.Small)

	off := treeOK(t, "ls", "-l", "-R", "--no-index-cache", img)
	if s := sidecars(t, cache); len(s) != 0 {
		t.Fatalf("--no-index-cache wrote %v", s)
	}
	first := treeRun(t, "ls", "-l", "-R", img)
	if first.err != nil {
		t.Fatal(first.err)
	}
	s := sidecars(t, cache)
	if len(s) != 1 {
		t.Fatalf("sidecars after ls -l: %v, want one", s)
	}
	if first.out != off {
		t.Error("ls -lR differs with the index cache on")
	}
	second := treeRun(t, "ls", "-l", "-R", img)
	if second.err != nil || second.out != off {
		t.Errorf("second ls -lR (from the sidecar) differs: %v", second.err)
	}
	if second.errOut != first.errOut {
		t.Errorf("warnings differ: first\n%s\nsecond\n%s", first.errOut, second.errOut)
	}
	if err := os.WriteFile(s[0], []byte("not a sidecar"), 0o600); err != nil {
		t.Fatal(err)
	}
	third := treeRun(t, "ls", "-l", "-R", img)
	if third.err != nil || third.out != off {
		t.Errorf("ls -lR with a damaged sidecar differs: %v", third.err)
	}
	if n := strings.Count(third.errOut, "index sidecar"); n != 1 {
		t.Errorf("%d warning lines about the damaged sidecar, want 1:\n%s", n, third.errOut)
	}
	if b, _ := os.ReadFile(s[0]); string(b) == "not a sidecar" {
		t.Error("the damaged sidecar was not rewritten")
	}
}

// TestWarningsEscaped: what the CLI writes to stderr has its control
// characters escaped, whoever formatted it: a path with ESC and a newline
// in extract's warning is one line showing \x1b and \n.
func TestWarningsEscaped(t *testing.T) {
	img, _ := genLayout(t, mkdisc.Small)
	bad := "/G/\x1b[2J\nforged: warning: all good"
	r := treeRun(t, "extract", "--no-index-cache", img, t.TempDir(), "/SYSTEM.CNF", bad)
	if strings.ContainsAny(r.errOut, "\x1b") || strings.Contains(r.errOut, "\nforged") {
		t.Errorf("raw control characters on stderr: %q", r.errOut)
	}
	if !strings.Contains(r.errOut, `/G/\x1b[2J\nforged: warning: all good: no such file`) {
		t.Errorf("stderr %q does not show the path escaped", r.errOut)
	}
}

// TestMountLogEscaped: the mount log's sink escapes what it is given.
func TestMountLogEscaped(t *testing.T) {
	var b strings.Builder
	logSink(log.New(&b, "", 0))("%s: %v", "G/\x1b[31mX\ny", "rule \x1b\nforged")
	if got, want := b.String(), `G/\x1b[31mX\ny: rule \x1b\nforged`+"\n"; got != want {
		t.Errorf("log %q, want %q", got, want)
	}
}

// TestIndexCacheFIFO: a FIFO at the sidecar's path does not hang ls (it
// returns within a deadline with the same listing and one warning) and is
// replaced by the sidecar as ls ends.
func TestIndexCacheFIFO(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	img, _ := genLayout(t, mkdisc.Small)
	want := treeOK(t, "ls", "-l", "-R", img)
	s := sidecars(t, cache)
	if len(s) != 1 {
		t.Fatalf("sidecars %v, want one", s)
	}
	os.Remove(s[0])
	if err := syscall.Mkfifo(s[0], 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan treeResult, 1)
	go func() { done <- treeRun(t, "ls", "-l", "-R", img) }()
	var r treeResult
	select {
	case r = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("ls blocked on a FIFO at the sidecar's path")
	}
	if r.err != nil || r.out != want {
		t.Errorf("ls with a FIFO at the sidecar's path: %v, listing differs %v", r.err, r.out != want)
	}
	if n := strings.Count(r.errOut, "index sidecar"); n != 1 || !strings.Contains(r.errOut, "named pipe") {
		t.Errorf("warnings %q, want one about the named pipe", r.errOut)
	}
	if fi, err := os.Lstat(s[0]); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the FIFO was not replaced by the sidecar: %v", err)
	}
}
