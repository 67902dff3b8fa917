package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gcfs/fsnode"
	"gcfs/fsnode/fusefs"
)

func TestParseFuseOpts(t *testing.T) {
	var o fusefs.Options
	rw, err := parseFuseOpts([]string{"allow_other,uid=1000", "gid=100,umask=027,ro,noatime"}, &o)
	if err != nil || rw {
		t.Fatal(rw, err)
	}
	if !o.AllowOther || o.UID != 1000 || o.GID != 100 || o.Umask == nil || *o.Umask != 0o027 {
		t.Fatalf("parsed %+v", o)
	}
	if strings.Join(o.FuseOptions, ",") != "noatime" {
		t.Fatalf("passed to FUSE: %q", o.FuseOptions)
	}
	for _, bad := range []string{"uid=x", "gid=", "umask=999", "umask=8", "uid", `fsname="a,b"`, `uid="1`, `a\,b`} {
		if _, err := parseFuseOpts([]string{bad}, &fusefs.Options{}); err == nil {
			t.Errorf("-o %s accepted", bad)
		}
	}
}

// Issue 18 item 11: rw (typed, or added by mount(8) to a mount with no -o)
// is no refusal; the last of ro and rw wins, and mountMode turns a write
// request into a read-only mount with one line saying so.
func TestParseFuseOptsReadWrite(t *testing.T) {
	for opts, want := range map[string]bool{"rw": true, "ro": false, "ro,rw": true, "rw,ro": false, "allow_other,rw,uid=1": true, "": false} {
		rw, err := parseFuseOpts([]string{opts}, &fusefs.Options{})
		if err != nil || rw != want {
			t.Errorf("-o %s: rw %v, %v; want rw %v", opts, rw, err, want)
		}
	}
	if note := mountMode(&mountConfig{image: "d.iso", writeRequested: true}); note != "gcfs: d.iso is read-only: mounting read-only" {
		t.Errorf("mountMode of a write request: %q", note)
	}
	if note := mountMode(&mountConfig{image: "d.iso"}); note != "" {
		t.Errorf("mountMode of a read-only request: %q", note)
	}
}

// Issue 18 item 8: a --log-file under the mount point is refused before
// anything is created, whether the file exists, does not yet, or is named
// through a symlink or "..".
func TestCheckLogFile(t *testing.T) {
	dir := t.TempDir()
	mnt := filepath.Join(dir, "mnt")
	os.Mkdir(mnt, 0o755)
	os.Symlink(mnt, filepath.Join(dir, "link"))
	for _, lf := range []string{
		filepath.Join(mnt, "gcfs.log"),
		filepath.Join(mnt, "sub", "dir", "gcfs.log"),
		filepath.Join(dir, "link", "gcfs.log"),
		filepath.Join(dir, "other", "..", "mnt", "gcfs.log"),
		mnt,
	} {
		err := checkLogFile(lf, mnt)
		if err == nil || !strings.Contains(err.Error(), "under the mount point") {
			t.Errorf("--log-file %s: %v, want a refusal", lf, err)
		}
	}
	for _, lf := range []string{filepath.Join(dir, "gcfs.log"), filepath.Join(dir, "mnt2", "gcfs.log"), filepath.Join(dir, "mntlog")} {
		if err := checkLogFile(lf, mnt); err != nil {
			t.Errorf("--log-file %s refused: %v", lf, err)
		}
	}
	if names, _ := os.ReadDir(mnt); len(names) != 0 {
		t.Errorf("the check created %v in the mount point", names)
	}
}

// Issue 18 item 12: go-fuse reports fusermount's wait status ("code 256");
// the message says the exit code.
func TestMountError(t *testing.T) {
	for in, want := range map[string]string{
		"fusermount exited with code 256\n": "fusermount exited with code 1",
		"fusermount exited with code 9\n":   "fusermount was killed by killed",
		"no such file":                      "no such file",
	} {
		if got := mountError(errors.New(in)); got != want {
			t.Errorf("mountError(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"64MiB": 64 << 20, "1GiB": 1 << 30, "256MiB": 256 << 20, "1000": 1000, "0": 0} {
		got, err := parseSize("--cache-size", in, 0)
		if err != nil || got != want {
			t.Errorf("%s = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"lots", "-1MiB", "2PiB"} {
		if _, err := parseSize("--cache-size", bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if _, err := parseSize("--max-decoded", "0", 1); err == nil {
		t.Error("--max-decoded 0 accepted")
	}
}

func TestCheckMountpoint(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "f"), nil, 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	if err := checkMountpoint(empty); err != nil {
		t.Fatalf("empty dir refused: %v", err)
	}
	for p, want := range map[string]string{
		filepath.Join(dir, "missing"): "does not exist",
		file:                          "not a directory",
		full:                          "not empty",
		"/proc":                       "already a mount",
	} {
		err := checkMountpoint(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", p, err, want)
		}
	}
}

func TestUnescapeMountPath(t *testing.T) {
	if got := unescapeMountPath(`/mnt/a\040b\134c`); got != `/mnt/a b\c` {
		t.Fatalf("got %q", got)
	}
	if got := unescapeMountPath(`/plain`); got != "/plain" {
		t.Fatalf("got %q", got)
	}
}

func TestMountProcs(t *testing.T) {
	// the cores, and a P for each lowered background thread
	if got, want := mountProcs("", 2), 2+fsnode.BackgroundThreads; got != want {
		t.Errorf("mountProcs(\"\", 2) = %d, want %d", got, want)
	}
	if got, want := mountProcs("", 1), 1+fsnode.BackgroundThreads; got != want {
		t.Errorf("mountProcs(\"\", 1) = %d, want %d", got, want)
	}
	// a GOMAXPROCS the user set is kept
	if got := mountProcs("3", 3); got != 3 {
		t.Errorf("mountProcs(\"3\", 3) = %d, want 3", got)
	}
}
