package fusefs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
)

// mountImage builds the tree of the image file at path and really mounts it
// (unmounted when the test ends); the log gets the model's and the mount's
// lines, as gcfs mount's log does.
func mountImage(t *testing.T, path string) (string, *fsnode.Tree, *testdisc.Log) {
	t.Helper()
	mnt, tree, _, lr := mountTreeOf(t, path, fsnode.Options{}, Options{})
	return mnt, tree, lr
}

// Issue 10 case 1: an image that shrinks while mounted: a read that reaches
// the missing bytes fails with EIO and is logged, whatever path serves it;
// the file keeps its size.
func TestImageShrinksWhileMounted(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mnt, tree, lr := mountImage(t, d.Path)
	n, err := tree.Lookup("ZTAIL.DUP")
	if err != nil {
		t.Fatal(err)
	}
	off, _, _ := n.ImageRange()
	cut := off + 100
	if err := os.Truncate(d.Path, cut); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(mnt, "ZTAIL.DUP"))
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("ZTAIL.DUP after the image shrank: %d bytes, %v; want EIO", len(got), err)
	}
	// A small read wholly past the new end (the splice path's size).
	f, err := os.Open(filepath.Join(mnt, "ZTAIL.DUP"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p := make([]byte, 10)
	if k, err := f.ReadAt(p, 5000); !errors.Is(err, syscall.EIO) {
		t.Errorf("read at 5000: %d bytes, %v; want EIO", k, err)
	}
	st, err := os.Stat(filepath.Join(mnt, "ZTAIL.DUP"))
	if err != nil || st.Size() != int64(len(d.Files["ZTAIL.DUP"])) {
		t.Errorf("ZTAIL.DUP's size after failed reads: %v, %v; want %d", st.Size(), err, len(d.Files["ZTAIL.DUP"]))
	}
	if lr.Count("ZTAIL.DUP") != 1 || lr.Count("image has "+strconv.FormatInt(cut, 10)) != 1 {
		t.Errorf("want one log line for ZTAIL.DUP giving the image's size %d: %q", cut, lr.Lines())
	}
	// A file wholly inside what is left still reads.
	if got, err := os.ReadFile(filepath.Join(mnt, "SYSTEM.CNF")); err != nil || !bytes.Equal(got, d.Files["SYSTEM.CNF"]) {
		t.Errorf("SYSTEM.CNF: %v", err)
	}
}

// Issue 10 case 3 in the mount: a file with a recorded error fails with EIO
// at open, logged once.
func TestRecordedErrorIsEIO(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := testdisc.PatchRecord(d.Path, "SYSTEM.CNF", func(rec []byte) { rec[26], rec[27] = 1, 1 }); err != nil {
		t.Fatal(err)
	}
	mnt, _, lr := mountImage(t, d.Path)
	for i := 0; i < 3; i++ {
		if got, err := os.ReadFile(filepath.Join(mnt, "SYSTEM.CNF")); !errors.Is(err, syscall.EIO) {
			t.Fatalf("SYSTEM.CNF with an interleaved extent: %d bytes, %v; want EIO", len(got), err)
		}
	}
	if n := lr.Count("SYSTEM.CNF"); n != 1 {
		t.Errorf("%d log lines name SYSTEM.CNF, want 1: %q", n, lr.Lines())
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "ZTAIL.DUP")); err != nil || !bytes.Equal(got, d.Files["ZTAIL.DUP"]) {
		t.Errorf("ZTAIL.DUP: %v", err)
	}
}

// Issue 10 case 2 in the mount: a damaged directory is logged as the mount
// starts, naming it.
func TestDamagedDirectoryLoggedAtMount(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := testdisc.PatchRecord(d.Path, "G", func(rec []byte) { testdisc.Both32(rec[2:], 1<<22) }); err != nil {
		t.Fatal(err)
	}
	mnt, _, lr := mountImage(t, d.Path)
	if n := lr.Count("directory /G "); n != 1 {
		t.Errorf("%d log lines name /G, want 1: %q", n, lr.Lines())
	}
	ents, err := os.ReadDir(filepath.Join(mnt, "G"))
	if err != nil || len(ents) != 0 {
		t.Errorf("G: %d entries, %v", len(ents), err)
	}
	if v, err := getxattrString(filepath.Join(mnt, "G"), "user.gcfs.error"); err != nil || !strings.Contains(v, "past the image's end") {
		t.Errorf("G's user.gcfs.error: %q, %v", v, err)
	}
}

func getxattrString(path, name string) (string, error) {
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// Issue 10 case 7: a 1 MiB read served from the model's reader (O_DIRECT, so
// the kernel asks for all of it at once) is right and logs nothing: it never
// goes through go-fuse's splice pipe, which cannot hold it.
func TestLargeReadNotSpliced(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<17) // 2 MiB
	m := dir("", "", nil, file("big", "big", fsnode.Raw, &fakeEntry{data: big}))
	mnt, lr := mountFake(t, m, Options{}, nil, 0)
	fd, err := unix.Open(filepath.Join(mnt, "big"), unix.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	// O_DIRECT wants an aligned buffer.
	raw := make([]byte, 1<<20+4096)
	a := 4096 - int(uintptr(unsafe.Pointer(&raw[0]))%4096)
	buf := raw[a : a+1<<20]
	for off := 0; off < len(big); off += len(buf) {
		n, err := unix.Pread(fd, buf, int64(off))
		if err != nil || n != len(buf) || !bytes.Equal(buf, big[off:off+n]) {
			t.Fatalf("O_DIRECT read at %d: %d bytes, %v", off, n, err)
		}
	}
	if n := lr.Count("trySplice"); n != 0 {
		t.Errorf("%d trySplice log lines: %q", n, lr.Lines())
	}
}
