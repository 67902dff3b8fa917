package main

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

const deadMountEnv = "GCFS_TEST_DEAD_MOUNT"

// TestDeadMountServerHelper is the FUSE server TestCheckMountpointDeadMount
// kills: run only as its child process.
func TestDeadMountServerHelper(t *testing.T) {
	dir := os.Getenv(deadMountEnv)
	if dir == "" {
		t.Skip("the server process of TestCheckMountpointDeadMount")
	}
	hour := time.Hour
	srv, err := fs.Mount(dir, &fs.Inode{}, &fs.Options{EntryTimeout: &hour, AttrTimeout: &hour,
		MountOptions: fuse.MountOptions{FsName: "gcfs-dead-mount-test", Name: "gcfstest"}})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("ready\n")
	srv.Wait()
}

// Issue 10 case 8: a mount point whose server was killed with -9 is named a
// dead mount, with the command that clears it.
func TestCheckMountpointDeadMount(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	if _, err := exec.LookPath("fusermount3"); err != nil {
		t.Skip("no fusermount3")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeadMountServerHelper$")
	cmd.Env = append(os.Environ(), deadMountEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if isMount(dir) {
			if err := unmount(dir, true); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		t.Fatalf("server: %q", line)
	}
	if _, err := os.Stat(dir); err != nil { // the kernel now caches the root's attributes
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	err = checkMountpoint(dir)
	if err == nil || !strings.Contains(err.Error(), "dead FUSE mount") || !strings.Contains(err.Error(), "gcfs umount "+dir) {
		t.Fatalf("checkMountpoint on a dead mount: %v", err)
	}
	if err := unmount(dir, false); err != nil {
		t.Fatalf("gcfs umount of the dead mount: %v", err)
	}
	if isMount(dir) {
		t.Fatal("still a mount after gcfs umount")
	}
}
