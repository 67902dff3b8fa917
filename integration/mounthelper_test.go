package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMountHelper installs gcfs with make install into a temporary DESTDIR
// with a PREFIX outside mount(8)'s PATH and mounts through mount(8): -t gcfs
// (the mount.gcfs helper), -t fuse.gcfs (the mount.fuse.gcfs helper, which
// mount(8) runs before fuse3's mount.fuse3), and an fstab line (mount -T).
func TestMountHelper(t *testing.T) {
	requireFUSE(t)
	if os.Geteuid() != 0 {
		t.Skip("mount(8) with a helper needs root")
	}
	if _, err := exec.LookPath("mount"); err != nil {
		t.Skip("no mount(8)")
	}
	d := getDisc(t, "small")
	img := d.path
	if _, err := exec.LookPath("chdman"); err == nil {
		img = chdOf(t, "cd", "createcd")
	}
	dest := filepath.Join(workDir, "dest")
	const prefix = "/opt/gcfs-test-prefix" // on no PATH mount(8) gives a helper
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(file))
	// -o build: install the binary TestMain built rather than building again.
	mk := exec.Command("make", "-C", repo, "-o", "build", "install", "BIN="+gcfsBin, "DESTDIR="+dest, "PREFIX="+prefix)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	// Issue 18 item 16: the helpers go to /sbin whatever PREFIX is, since
	// mount(8) looks nowhere else.
	for _, p := range []string{prefix + "/bin/gcfs", "/sbin/mount.gcfs", "/sbin/mount.fuse.gcfs"} {
		if st, err := os.Stat(filepath.Join(dest, p)); err != nil || st.Mode()&0o111 == 0 {
			t.Fatalf("make install did not install %s: %v", p, err)
		}
	}
	// No gcfs on the helpers' PATH: what runs is the /sbin helper.
	env := append(os.Environ(), "PATH=/usr/sbin:/usr/bin:/sbin:/bin")

	// Put the installed helpers in the real /sbin for the test, unless
	// they are installed already.
	ownHelper := map[string]bool{}
	for _, h := range []string{"mount.gcfs", "mount.fuse.gcfs"} {
		helper := "/sbin/" + h
		if _, err := os.Stat(helper); !os.IsNotExist(err) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dest, "sbin", h))
		if err == nil {
			err = os.WriteFile(helper, b, 0o755)
		}
		if err != nil {
			t.Skipf("cannot place %s: %v", helper, err)
		}
		ownHelper[h] = true
		t.Cleanup(func() { os.Remove(helper) })
	}

	mountWith := func(t *testing.T, args ...string) string {
		dir, err := os.MkdirTemp(workDir, "mnt-helper-")
		if err != nil {
			t.Fatal(err)
		}
		full := make([]string, 0, len(args))
		for _, a := range args {
			full = append(full, strings.ReplaceAll(a, "DIR", dir))
		}
		cmd := exec.Command("mount", full...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		t.Cleanup(func() {
			if isMounted(dir) {
				if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
					t.Logf("umount: %v %s", err, out)
					exec.Command("umount", "-l", dir).Run()
				}
			}
		})
		if err != nil {
			t.Fatalf("mount %v: %v\n%s", full, err, out)
		}
		// mount returns once the mount is ready: no waiting here.
		if !isMounted(dir) {
			t.Fatalf("mount %v returned but %s is not mounted", full, dir)
		}
		return dir
	}
	check := func(t *testing.T, dir string) {
		for _, p := range []string{"SYSTEM.CNF", d.paths[len(d.paths)/2]} {
			want := d.manifest[p]
			sum, n, err := sha1File(filepath.Join(dir, p))
			if err != nil || n != want.size || sum != want.sha1 {
				t.Fatalf("%s: %d bytes %s (%v), manifest %d %s", p, n, sum, err, want.size, want.sha1)
			}
		}
		line := procMount(dir)
		if !strings.Contains(line, "fuse.gcfs") || !strings.Contains(line, "allow_other") {
			t.Fatalf("/proc/mounts: %q", line)
		}
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Fatalf("umount %s: %v %s", dir, err, out)
		}
		deadline := time.Now().Add(5 * time.Second)
		for isMounted(dir) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if isMounted(dir) {
			t.Fatalf("%s still mounted after umount", dir)
		}
	}

	t.Run("type-gcfs", func(t *testing.T) {
		if !ownHelper["mount.gcfs"] {
			t.Logf("using the installed /sbin/mount.gcfs")
		}
		check(t, mountWith(t, "-t", "gcfs", img, "DIR", "-o", "ro,allow_other,cache_size=32MiB"))
	})
	t.Run("type-fuse.gcfs", func(t *testing.T) {
		if !ownHelper["mount.fuse.gcfs"] {
			t.Logf("using the installed /sbin/mount.fuse.gcfs")
		}
		// Issue 18 item 16: gcfs's PREFIX is on no PATH here; mount(8)
		// runs /sbin/mount.fuse.gcfs (mount.fuse3 would look for gcfs on
		// PATH and fail with "gcfs: not found").
		check(t, mountWith(t, "-t", "fuse.gcfs", img, "DIR", "-o", "ro,allow_other"))
		if _, err := os.Stat("/sbin/mount.fuse3"); err == nil {
			// fuse3's own path still works with the program named:
			// mount.fuse3's PROGRAM#SOURCE form for type fuse.
			src := filepath.Join(dest, prefix, "bin/gcfs") + "#" + img
			check(t, mountWith(t, "-t", "fuse", src, "DIR", "-o", "ro,allow_other"))
		}
	})
	t.Run("fstab", func(t *testing.T) {
		dir, err := os.MkdirTemp(workDir, "mnt-fstab-")
		if err != nil {
			t.Fatal(err)
		}
		fstab := filepath.Join(workDir, "fstab")
		line := fmt.Sprintf("%s %s gcfs ro,noauto,user,allow_other,umask=022 0 0\n", img, dir)
		if err := os.WriteFile(fstab, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("mount", "-T", fstab, dir)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("mount -T %s %s: %v\n%s", fstab, dir, err, out)
		}
		t.Cleanup(func() {
			if isMounted(dir) {
				exec.Command("umount", "-l", dir).Run()
			}
		})
		check(t, dir)
	})
	// Issue 18 item 11: with no -o, mount(8) adds rw itself; gcfs mounts
	// read-only and says so in one line, as the kernel does for an ISO.
	t.Run("no-options", func(t *testing.T) {
		dir, _ := os.MkdirTemp(workDir, "mnt-rw-")
		for _, args := range [][]string{{"-t", "gcfs", img, dir}, {"-t", "gcfs", img, dir, "-o", "rw"}, {"-w", "-t", "fuse.gcfs", img, dir}} {
			cmd := exec.Command("mount", args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if err != nil || !isMounted(dir) {
				t.Fatalf("mount %q: %v\n%s", args, err, out)
			}
			line := procMount(dir)
			if msg := strings.TrimSpace(string(out)); msg != "gcfs: "+img+" is read-only: mounting read-only" {
				t.Errorf("mount %q said %q", args, msg)
			}
			if f := strings.Fields(line); len(f) < 4 || !strings.HasPrefix(f[3], "ro,") {
				t.Errorf("mount %q: not read-only: %q", args, line)
			}
			if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
				exec.Command("umount", "-l", dir).Run()
				t.Fatalf("umount: %v %s", err, out)
			}
		}
	})
	// Issue 18 item 9: a quoted value keeps its comma through mount(8)
	// (libmount leaves the quotes in the string it hands the helper).
	t.Run("quoted-option", func(t *testing.T) {
		logFile := filepath.Join(workDir, "q,uoted.log")
		dir := mountWith(t, "-t", "gcfs", img, "DIR", "-o", `ro,allow_other,log_file="`+logFile+`"`)
		if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), "mounted at") {
			t.Errorf("log file %s: %v %q", logFile, err, b)
		}
		if _, err := os.Stat(filepath.Join(workDir, "q")); err == nil {
			t.Errorf("the value was split at its comma: %s/q exists", workDir)
		}
		check(t, dir)
	})
	// Issue 18 item 9: run as mount.gcfs, the first argument is the image
	// even when it is named like a gcfs command; with none, the usage.
	t.Run("helper-arguments", func(t *testing.T) {
		helper := filepath.Join(dest, "sbin/mount.gcfs")
		cmd := exec.Command(helper)
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 || !strings.Contains(string(out), "usage: mount.gcfs IMAGE MOUNTPOINT") {
			t.Errorf("mount.gcfs with no arguments: %v %q", err, out)
		}
		cwd := t.TempDir()
		if err := os.Symlink(d.path, filepath.Join(cwd, "extract")); err != nil {
			t.Fatal(err)
		}
		dir, _ := os.MkdirTemp(workDir, "mnt-extract-")
		cmd = exec.Command(helper, "extract", dir, "-o", "ro")
		cmd.Dir = cwd
		out, err = cmd.CombinedOutput()
		t.Cleanup(func() {
			if isMounted(dir) {
				exec.Command("umount", "-l", dir).Run()
			}
		})
		if err != nil || !isMounted(dir) {
			t.Fatalf("mount.gcfs extract %s -o ro: %v %s", dir, err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "SYSTEM.CNF")); err != nil {
			t.Errorf("the image named extract is not what is mounted: %v", err)
		}
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount: %v %s", err, out)
		}
	})
}
