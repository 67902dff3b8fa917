package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gcfs/fsnode/fusefs"
)

func TestParseFuseOpts(t *testing.T) {
	var o fusefs.Options
	if err := parseFuseOpts([]string{"allow_other,uid=1000", "gid=100,umask=027,ro,noatime"}, &o); err != nil {
		t.Fatal(err)
	}
	if !o.AllowOther || o.UID != 1000 || o.GID != 100 || o.Umask == nil || *o.Umask != 0o027 {
		t.Fatalf("parsed %+v", o)
	}
	if strings.Join(o.FuseOptions, ",") != "noatime" {
		t.Fatalf("passed to FUSE: %q", o.FuseOptions)
	}
	for _, bad := range []string{"uid=x", "gid=", "umask=999", "umask=8", "rw", "uid"} {
		if err := parseFuseOpts([]string{bad}, &fusefs.Options{}); err == nil {
			t.Errorf("-o %s accepted", bad)
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
