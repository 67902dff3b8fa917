package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestMountHelper installs gcfs with make install into a temporary PREFIX
// and mounts through mount(8): -t gcfs (the mount.gcfs helper), -t fuse.gcfs
// (fuse3's mount.fuse3 running gcfs), and an fstab line (mount -T FILE).
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
	prefix := filepath.Join(workDir, "prefix")
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Dir(filepath.Dir(file))
	// -o build: install the binary TestMain built rather than building again.
	mk := exec.Command("make", "-C", repo, "-o", "build", "install", "BIN="+gcfsBin, "PREFIX="+prefix)
	if out, err := mk.CombinedOutput(); err != nil {
		t.Fatalf("make install: %v\n%s", err, out)
	}
	for _, p := range []string{"bin/gcfs", "sbin/mount.gcfs"} {
		if st, err := os.Stat(filepath.Join(prefix, p)); err != nil || st.Mode()&0o111 == 0 {
			t.Fatalf("make install did not install %s: %v", p, err)
		}
	}
	env := append(os.Environ(), "PATH="+filepath.Join(prefix, "bin")+":"+os.Getenv("PATH"))

	// mount(8) looks for helpers only in /sbin (and /sbin/fs.d, /sbin/fs):
	// put a copy there for the test unless one is installed already.
	helper := "/sbin/mount.gcfs"
	ownHelper := false
	if _, err := os.Stat(helper); os.IsNotExist(err) {
		b, err := os.ReadFile(filepath.Join(prefix, "sbin/mount.gcfs"))
		if err == nil {
			err = os.WriteFile(helper, b, 0o755)
		}
		if err != nil {
			t.Skipf("cannot place %s: %v", helper, err)
		}
		ownHelper = true
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
		if !ownHelper {
			t.Logf("using the installed %s", helper)
		}
		check(t, mountWith(t, "-t", "gcfs", img, "DIR", "-o", "ro,allow_other,cache_size=32MiB"))
	})
	t.Run("type-fuse.gcfs", func(t *testing.T) {
		if _, err := os.Stat("/sbin/mount.fuse3"); err != nil {
			t.Skip("no mount.fuse3")
		}
		// For type fuse.gcfs mount.fuse3 runs "gcfs IMAGE DIR -o
		// OPTS,dev,suid" through sh, and mount(8) gives its helpers the PATH
		// /usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin: an
		// installed /usr/local/bin/gcfs is found, this test's PREFIX is not.
		// Type fuse with mount.fuse3's PROGRAM#SOURCE form takes the same
		// path with the program named.
		src := filepath.Join(prefix, "bin/gcfs") + "#" + img
		check(t, mountWith(t, "-t", "fuse", src, "DIR", "-o", "ro,allow_other"))
		for _, p := range []string{"/usr/local/bin/gcfs", "/usr/bin/gcfs"} {
			if _, err := os.Stat(p); err == nil {
				t.Logf("an installed %s exists: also mounting -t fuse.gcfs with it", p)
				check(t, mountWith(t, "-t", "fuse.gcfs", img, "DIR", "-o", "ro,allow_other"))
				break
			}
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
	t.Run("rw-refused", func(t *testing.T) {
		dir, _ := os.MkdirTemp(workDir, "mnt-rw-")
		cmd := exec.Command("mount", "-t", "gcfs", img, dir, "-o", "rw")
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err == nil || isMounted(dir) {
			exec.Command("umount", "-l", dir).Run()
			t.Fatalf("mount -o rw succeeded: %s", out)
		}
		if !strings.Contains(string(out), "read-only") {
			t.Fatalf("refusal does not say why: %s", out)
		}
	})
}
