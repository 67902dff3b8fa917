package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Issue 18 item 10: gcfs umount unmounts only gcfs's own FUSE mounts; a
// tmpfs, a bind mount and a plain directory are each named and left alone.
func TestUmountOnlyGcfs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs and a bind mount needs root")
	}
	dir := t.TempDir()
	tmpfs := filepath.Join(dir, "tmpfs")
	bind := filepath.Join(dir, "bind")
	plain := filepath.Join(dir, "plain")
	for _, d := range []string{tmpfs, bind, plain} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	mountOrSkip := func(src, target, fstype string, flags uintptr) {
		if err := syscall.Mount(src, target, fstype, flags, ""); err != nil {
			t.Skipf("mount %s: %v", target, err)
		}
		t.Cleanup(func() {
			if m, _ := findMount(target); m != nil {
				if err := syscall.Unmount(target, syscall.MNT_DETACH); err != nil {
					t.Errorf("cleanup: unmount %s: %v", target, err)
				}
			}
		})
	}
	mountOrSkip("gcfs-test-tmpfs", tmpfs, "tmpfs", 0)
	mountOrSkip(plain, bind, "", syscall.MS_BIND)

	for path, want := range map[string]string{
		tmpfs:                         "a tmpfs mount, not a gcfs mount: not unmounted",
		bind:                          "not a gcfs mount: not unmounted",
		plain:                         "not a mount point",
		filepath.Join(dir, "missing"): "no such file or directory",
	} {
		r := treeRun(t, "umount", path)
		if r.err == nil || exitCode(r.err) == 0 || !strings.Contains(r.err.Error(), want) {
			t.Errorf("gcfs umount %s: %v, want a refusal with %q", path, r.err, want)
		}
	}
	for _, p := range []string{tmpfs, bind} {
		if m, err := findMount(p); err != nil || m == nil {
			t.Errorf("%s is no longer a mount after gcfs umount refused it: %v", p, err)
		}
	}
	// Through a symlink the mount is found too (and still refused).
	link := filepath.Join(dir, "link")
	os.Symlink(tmpfs, link)
	if r := treeRun(t, "umount", link); r.err == nil || !strings.Contains(r.err.Error(), "a tmpfs mount") {
		t.Errorf("gcfs umount %s (a symlink to the tmpfs): %v", link, r.err)
	}
}

func TestParseMountinfoLine(t *testing.T) {
	e, ok := parseMountinfoLine(`36 35 98:0 / /mnt/a\040b rw,noatime master:1 shared:2 - fuse.gcfs /srv/x\040y.iso ro,user_id=0`)
	if !ok || e.point != "/mnt/a b" || e.fstype != "fuse.gcfs" || e.source != "/srv/x y.iso" {
		t.Fatalf("parsed %+v %v", e, ok)
	}
	if _, ok := parseMountinfoLine("short line"); ok {
		t.Fatal("a short line parsed")
	}
}

// Issue 18 item 12: an unknown command is named as one, with the list of
// commands (cli's own answer was "No help topic for 'frobnicate'").
func TestUnknownCommand(t *testing.T) {
	for args, want := range map[string]string{
		"frobnicate":     `gcfs: "frobnicate" is not a command; the commands are mount, umount, identify, ls`,
		"wad frobnicate": `gcfs wad: "frobnicate" is not a command; the commands are decompress, compress, info`,
	} {
		r := treeRun(t, strings.Fields(args)...)
		if r.err == nil || exitCode(r.err) != 2 || !strings.Contains(r.err.Error(), want) {
			t.Errorf("gcfs %s: %v (exit %d), want exit 2 and %q", args, r.err, exitCode(r.err), want)
		}
	}
	if r := treeRun(t); r.err != nil || !strings.Contains(r.out, "COMMANDS") {
		t.Errorf("gcfs with no arguments: %v, %q", r.err, r.out)
	}
}
