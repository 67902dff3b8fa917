package fusefs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
)

// fakeEntry is a model node with chosen behaviour.
type fakeEntry struct {
	path    string
	data    []byte
	size    int64 // reported size; len(data) when negative
	attrs   []fsnode.Attr
	openErr error
	readErr error // ReadAt fails with this
	panicIn string
	known   error // what Err reports: a problem the model logged itself
}

func (e *fakeEntry) Err() error { return e.known }

func (e *fakeEntry) Path() string { return e.path }
func (e *fakeEntry) Size() int64 {
	if e.panicIn == "size" {
		panic("size exploded")
	}
	if e.size >= 0 {
		return e.size
	}
	return int64(len(e.data))
}
func (e *fakeEntry) Xattrs() []fsnode.Attr { return e.attrs }

// ImageRange takes the fake's place in the image from its offset attribute.
func (e *fakeEntry) ImageRange() (int64, int64, bool) {
	for _, a := range e.attrs {
		if a.Name == "user.gcfs.offset" {
			off, err := strconv.ParseInt(a.Value, 0, 64)
			return off, e.Size(), err == nil && off >= 0
		}
	}
	return 0, 0, false
}
func (e *fakeEntry) Open() (fsnode.Reader, error) {
	if e.panicIn == "open" {
		panic("open exploded")
	}
	if e.openErr != nil {
		return nil, e.openErr
	}
	return fakeReader{e}, nil
}

type fakeReader struct{ e *fakeEntry }

func (r fakeReader) Size() int64 { return r.e.Size() }
func (r fakeReader) ReadAt(p []byte, off int64) (int, error) {
	if r.e.readErr != nil {
		return 0, r.e.readErr
	}
	if off >= int64(len(r.e.data)) {
		return 0, io.EOF
	}
	n := copy(p, r.e.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func file(name, path string, kind fsnode.Kind, e *fakeEntry) *mnode {
	e.path = path
	if e.size == 0 && e.data != nil {
		e.size = -1
	}
	return &mnode{name: name, kind: kind, ino: inoOf(path), e: e}
}

func dir(name, path string, attrs []fsnode.Attr, kids ...*mnode) *mnode {
	return &mnode{name: name, kind: fsnode.Dir, ino: inoOf(path), e: &fakeEntry{path: path, attrs: attrs}, children: kids}
}

func inoOf(path string) uint64 {
	var h uint64 = 1469598103934665603
	for i := 0; i < len(path); i++ {
		h = (h ^ uint64(path[i])) * 1099511628211
	}
	return h | 1<<40
}

func requireFUSE(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("/dev/fuse missing under CI: %v", err)
		}
		t.Skip("no /dev/fuse")
	}
}

// traceOnVerbose turns the FUSE request trace on under -v and sends it, with
// go-fuse's other lines, to the test's log rather than to the Logf the test
// counts. Lines after the test's cleanup are dropped: t.Logf would panic.
func traceOnVerbose(t *testing.T) (bool, func(string, ...any)) {
	var mu sync.Mutex
	done := false
	t.Cleanup(func() { mu.Lock(); done = true; mu.Unlock() })
	return testing.Verbose(), func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !done {
			t.Logf(format, args...)
		}
	}
}

// mountFake mounts a fake model and unmounts it when the test ends.
func mountFake(t *testing.T, root *mnode, opt Options, img *os.File, imgSize int64) (string, *testdisc.Log) {
	t.Helper()
	mnt, lr, _ := mountFakeRoot(t, root, opt, img, imgSize)
	return mnt, lr
}

// mountFakeRoot is mountFake that also returns the root node.
func mountFakeRoot(t *testing.T, root *mnode, opt Options, img *os.File, imgSize int64) (string, *testdisc.Log, *dirNode) {
	t.Helper()
	requireFUSE(t)
	lr := &testdisc.Log{}
	opt.Logf = lr.Logf
	opt.Debug, opt.FuseLogf = traceOnVerbose(t)
	r := newRoot(root, opt, img, imgSize, 0)
	mo := MountOptions(opt)
	mo.RootStableAttr = &fs.StableAttr{Mode: fuse.S_IFDIR, Ino: root.ino}
	mnt := t.TempDir()
	srv, err := serve(mnt, r, mo, opt)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	unmountAtEnd(t, srv, mnt)
	return mnt, lr, r
}

var (
	corrupt        = errors.New("stream offset 0x40: two literal packets in a row")
	errModelLogged = errors.New("the model logged this one")
)

func fakeTree(imgData []byte) *mnode {
	decoded := bytes.Repeat([]byte("decoded!"), 40000) // 320000 bytes
	return dir("", "", nil,
		dir("G", "G", nil,
			dir("LEVEL0.WAD", "G/LEVEL0.WAD", []fsnode.Attr{{Name: "user.gcfs.level_id", Value: "0"}},
				file("gameplay", "G/LEVEL0.WAD/gameplay", fsnode.Decoded, &fakeEntry{data: decoded,
					attrs: []fsnode.Attr{{Name: "user.gcfs.offset", Value: "4096"}, {Name: "user.gcfs.wad_tag", Value: "TAGTAG"}}}),
				file("gameplay.wad", "G/LEVEL0.WAD/gameplay.wad", fsnode.Raw, &fakeEntry{data: []byte("WAD....")}),
				file("broken", "G/LEVEL0.WAD/broken", fsnode.Decoded, &fakeEntry{data: []byte("partial"), openErr: corrupt}),
				file("short", "G/LEVEL0.WAD/short", fsnode.Raw, &fakeEntry{data: []byte("abc"), size: 10}),
				file("ioerr", "G/LEVEL0.WAD/ioerr", fsnode.Raw, &fakeEntry{data: []byte("abcdef"), readErr: errors.New("past the image's end")}),
				file("panics", "G/LEVEL0.WAD/panics", fsnode.Decoded, &fakeEntry{data: []byte("x"), panicIn: "open"}),
				file("modellogged", "G/LEVEL0.WAD/modellogged", fsnode.Decoded, &fakeEntry{data: []byte("x"), openErr: errModelLogged, known: errModelLogged}),
				file("shortimage", "G/LEVEL0.WAD/shortimage", fsnode.Raw, &fakeEntry{data: []byte("abcdef"),
					readErr: &fsnode.ShortImageError{Path: "G/LEVEL0.WAD/shortimage", Offset: 10, End: 16, ImageSize: 10}}),
			),
		),
		// Raw file inside the image file: read by splicing. Its ReadAt
		// fails, so correct bytes prove the splice path served them.
		file("SYSTEM.CNF", "SYSTEM.CNF", fsnode.Raw, &fakeEntry{data: imgData[100:300],
			readErr: errors.New("reader must not be used"),
			attrs:   []fsnode.Attr{{Name: "user.gcfs.offset", Value: "100"}, {Name: "user.gcfs.lba", Value: "0"}}}),
		file("bad..name/", "x", fsnode.Raw, &fakeEntry{data: []byte("x")}),
	)
}

func imageFile(t *testing.T) (*os.File, []byte) {
	data := make([]byte, 8192)
	for i := range data {
		data[i] = byte(i * 7)
	}
	p := filepath.Join(t.TempDir(), "img.iso")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f, data
}

func TestTreeAttrsAndReaddir(t *testing.T) {
	img, data := imageFile(t)
	m := fakeTree(data)
	mnt, lr := mountFake(t, m, Options{UID: 123, GID: 456}, img, int64(len(data)))

	ents, err := os.ReadDir(filepath.Join(mnt, "G/LEVEL0.WAD"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	want := []string{"broken", "gameplay", "gameplay.wad", "ioerr", "modellogged", "panics", "short", "shortimage"}
	sort.Strings(names)
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("names = %v, want %v", names, want)
	}
	// The invalid name was left out, with a log line.
	if _, err := os.ReadDir(mnt); err != nil {
		t.Fatal(err)
	}
	if lr.Count("cannot be a file name") != 1 || len(lr.Lines()) != 1 {
		t.Fatalf("log = %q, want one line about the bad name", lr.Lines())
	}

	// . and .. appear in the raw listing.
	fd, err := unix.Open(filepath.Join(mnt, "G"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := unix.ReadDirent(fd, buf)
	unix.Close(fd)
	if err != nil {
		t.Fatal(err)
	}
	raw := direntNames(buf[:n])
	if strings.Join(raw, ",") != ".,..,LEVEL0.WAD" {
		t.Fatalf("raw dirents = %v", raw)
	}

	var st unix.Stat_t
	if err := unix.Stat(filepath.Join(mnt, "G/LEVEL0.WAD/gameplay"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Size != 320000 || st.Mode != unix.S_IFREG|0o444 || st.Uid != 123 || st.Gid != 456 ||
		st.Blocks != (320000+511)/512 || st.Ino != inoOf("G/LEVEL0.WAD/gameplay") || st.Blksize != blksize {
		t.Fatalf("stat gameplay = size %d mode %o uid %d gid %d blocks %d ino %d blksize %d",
			st.Size, st.Mode, st.Uid, st.Gid, st.Blocks, st.Ino, st.Blksize)
	}
	if err := unix.Stat(filepath.Join(mnt, "G"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode != unix.S_IFDIR|0o555 || st.Ino != inoOf("G") || st.Nlink != 3 || st.Blksize != dirBlksize {
		t.Fatalf("stat G = mode %o ino %d nlink %d blksize %d", st.Mode, st.Ino, st.Nlink, st.Blksize)
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(mnt, &sf); err != nil {
		t.Fatal(err)
	}
	if sf.Bsize != 2048 || sf.Blocks != 4 || sf.Bfree != 0 || sf.Files == 0 {
		t.Fatalf("statfs = %+v", sf)
	}
}

func TestUmask(t *testing.T) {
	img, data := imageFile(t)
	// umask takes bits away from r-x / r--; it never adds write bits.
	for _, c := range []struct{ umask, file, dir uint32 }{
		{0o022, 0o444, 0o555},
		{0o027, 0o440, 0o550},
		{0o777, 0, 0},
		{0, 0o444, 0o555},
	} {
		um := c.umask
		mnt, _ := mountFake(t, fakeTree(data), Options{Umask: &um}, img, int64(len(data)))
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(mnt, "SYSTEM.CNF"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&0o777 != c.file {
			t.Errorf("file mode %o with umask %03o, want %o", st.Mode&0o777, c.umask, c.file)
		}
		if err := unix.Stat(filepath.Join(mnt, "G"), &st); err != nil {
			t.Fatal(err)
		}
		if st.Mode&0o777 != c.dir {
			t.Errorf("dir mode %o with umask %03o, want %o", st.Mode&0o777, c.umask, c.dir)
		}
	}
}

func TestReads(t *testing.T) {
	img, data := imageFile(t)
	m := fakeTree(data)
	mnt, lr := mountFake(t, m, Options{}, img, int64(len(data)))

	got, err := os.ReadFile(filepath.Join(mnt, "G/LEVEL0.WAD/gameplay"))
	if err != nil || !bytes.Equal(got, bytes.Repeat([]byte("decoded!"), 40000)) {
		t.Fatalf("gameplay: %d bytes, %v", len(got), err)
	}
	got, err = os.ReadFile(filepath.Join(mnt, "SYSTEM.CNF"))
	if err != nil || !bytes.Equal(got, data[100:300]) {
		t.Fatalf("spliced SYSTEM.CNF: %d bytes, %v", len(got), err)
	}
	f, err := os.Open(filepath.Join(mnt, "G/LEVEL0.WAD/gameplay"))
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 5)
	if n, err := f.ReadAt(p, 319998); n != 2 || err != io.EOF || string(p[:2]) != "d!" {
		t.Fatalf("read at end: %d %v %q", n, err, p[:n])
	}
	f.Close()

	// Corrupt stream: EIO on open, one log line however often it is opened.
	for i := 0; i < 3; i++ {
		_, err := os.Open(filepath.Join(mnt, "G/LEVEL0.WAD/broken"))
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("open broken: %v, want EIO", err)
		}
	}
	if n := lr.Count("two literal packets"); n != 1 {
		t.Fatalf("%d log lines for the corrupt stream, want 1: %q", n, lr.Lines())
	}
	// Size promised but bytes missing: EIO, not a short file.
	if _, err := os.ReadFile(filepath.Join(mnt, "G/LEVEL0.WAD/short")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("short: %v, want EIO", err)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "G/LEVEL0.WAD/ioerr")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("ioerr: %v, want EIO", err)
	}
	if lr.Count("past the image's end") != 1 {
		t.Fatalf("read error not logged once: %q", lr.Lines())
	}
	// Errors the model logs itself are not logged again.
	if _, err := os.Open(filepath.Join(mnt, "G/LEVEL0.WAD/modellogged")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("modellogged: %v, want EIO", err)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "G/LEVEL0.WAD/shortimage")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("shortimage: %v, want EIO", err)
	}
	if lr.Count("modellogged") != 0 || lr.Count("shortimage") != 0 {
		t.Fatalf("errors the model logs were logged again: %q", lr.Lines())
	}
	// A panic in the model is EIO, logged, and the server keeps serving.
	if _, err := os.Open(filepath.Join(mnt, "G/LEVEL0.WAD/panics")); !errors.Is(err, syscall.EIO) {
		t.Fatalf("panics: %v, want EIO", err)
	}
	if lr.Count("open exploded") != 1 {
		t.Fatalf("panic not logged: %q", lr.Lines())
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "G/LEVEL0.WAD/gameplay.wad")); err != nil {
		t.Fatalf("after panic: %v", err)
	}
}

func TestXattrs(t *testing.T) {
	img, data := imageFile(t)
	mnt, _ := mountFake(t, fakeTree(data), Options{}, img, int64(len(data)))
	p := filepath.Join(mnt, "G/LEVEL0.WAD/gameplay")
	buf := make([]byte, 256)
	n, err := unix.Listxattr(p, buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(buf[:n]); got != "user.gcfs.offset\x00user.gcfs.wad_tag\x00" {
		t.Fatalf("listxattr = %q", got)
	}
	n, err = unix.Getxattr(p, "user.gcfs.wad_tag", buf)
	if err != nil || string(buf[:n]) != "TAGTAG" {
		t.Fatalf("getxattr = %q, %v", buf[:n], err)
	}
	if n, err := unix.Getxattr(p, "user.gcfs.wad_tag", nil); err != nil || n != 6 {
		t.Fatalf("size query = %d, %v", n, err)
	}
	if _, err := unix.Getxattr(p, "user.gcfs.wad_tag", make([]byte, 2)); err != unix.ERANGE {
		t.Fatalf("small buffer: %v, want ERANGE", err)
	}
	if _, err := unix.Getxattr(p, "user.nope", buf); err != unix.ENODATA {
		t.Fatalf("missing attr: %v, want ENODATA", err)
	}
	n, err = unix.Getxattr(filepath.Join(mnt, "G/LEVEL0.WAD"), "user.gcfs.level_id", buf)
	if err != nil || string(buf[:n]) != "0" {
		t.Fatalf("dir getxattr = %q, %v", buf[:n], err)
	}
}

func TestWritesFailEROFS(t *testing.T) {
	img, data := imageFile(t)
	mnt, _ := mountFake(t, fakeTree(data), Options{}, img, int64(len(data)))
	lvl := filepath.Join(mnt, "G/LEVEL0.WAD")
	f := filepath.Join(lvl, "gameplay")
	checks := map[string]error{
		"create":      func() error { _, err := os.Create(filepath.Join(lvl, "new")); return err }(),
		"open rdwr":   func() error { _, err := os.OpenFile(f, os.O_RDWR, 0); return err }(),
		"open wronly": func() error { _, err := os.OpenFile(f, os.O_WRONLY, 0); return err }(),
		"truncate":    os.Truncate(f, 0),
		"mkdir":       os.Mkdir(filepath.Join(lvl, "d"), 0o755),
		"remove":      os.Remove(f),
		"rmdir":       os.Remove(filepath.Join(mnt, "G")),
		"rename":      os.Rename(f, filepath.Join(lvl, "moved")),
		"link":        os.Link(f, filepath.Join(lvl, "hard")),
		"symlink":     os.Symlink("gameplay", filepath.Join(lvl, "sym")),
		"chmod":       os.Chmod(f, 0o777),
		"setxattr":    unix.Setxattr(f, "user.x", []byte("1"), 0),
		"removexattr": unix.Removexattr(f, "user.gcfs.wad_tag"),
	}
	for op, err := range checks {
		if !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", op, err)
		}
	}
}

func TestDuplicateNamesListedOnce(t *testing.T) {
	img, data := imageFile(t)
	a1 := file("a", "a", fsnode.Raw, &fakeEntry{data: []byte("first")})
	a2 := file("a", "a#2", fsnode.Raw, &fakeEntry{data: []byte("second")})
	mnt, lr := mountFake(t, dir("", "", nil, a1, a2), Options{}, img, int64(len(data)))
	ents, err := os.ReadDir(mnt)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		t.Fatalf("%d entries listed for one name", len(ents))
	}
	if got, _ := os.ReadFile(filepath.Join(mnt, "a")); string(got) != "first" {
		t.Fatalf("a reads %q", got)
	}
	if lr.Count("duplicate") != 1 {
		t.Fatalf("log = %q", lr.Lines())
	}
}

func TestDuplicateInodesRenumbered(t *testing.T) {
	img, data := imageFile(t)
	a := file("a", "a", fsnode.Raw, &fakeEntry{data: []byte("A")})
	b := file("b", "b", fsnode.Raw, &fakeEntry{data: []byte("B")})
	b.ino = a.ino
	mnt, _ := mountFake(t, dir("", "", nil, a, b), Options{}, img, int64(len(data)))
	var sa, sb unix.Stat_t
	if err := unix.Stat(filepath.Join(mnt, "a"), &sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Stat(filepath.Join(mnt, "b"), &sb); err != nil {
		t.Fatal(err)
	}
	if sa.Ino == sb.Ino {
		t.Fatalf("two files share inode %d", sa.Ino)
	}
	if got, _ := os.ReadFile(filepath.Join(mnt, "b")); string(got) != "B" {
		t.Fatalf("b reads %q", got)
	}
}

func TestGetattrPanicIsEIO(t *testing.T) {
	img, data := imageFile(t)
	bad := file("bad", "bad", fsnode.Decoded, &fakeEntry{data: []byte("x"), panicIn: "size"})
	ok := file("ok", "ok", fsnode.Raw, &fakeEntry{data: []byte("fine")})
	mnt, lr := mountFake(t, dir("", "", nil, bad, ok), Options{}, img, int64(len(data)))
	if _, err := os.Stat(filepath.Join(mnt, "bad")); err == nil {
		t.Fatal("stat of a node whose Size panics succeeded")
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "ok")); err != nil || string(got) != "fine" {
		t.Fatalf("ok: %q %v", got, err)
	}
	if lr.Count("size exploded") == 0 {
		t.Fatalf("panic not logged: %q", lr.Lines())
	}
}

// direntNames parses linux_dirent64 records, keeping "." and ".." (which
// unix.ParseDirent drops).
func direntNames(b []byte) []string {
	var names []string
	for len(b) >= 19 {
		reclen := int(b[16]) | int(b[17])<<8
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		names = append(names, string(name))
		b = b[reclen:]
	}
	return names
}

// TestLargeDirectory lists a directory of many entries through small
// getdents buffers (many READDIR requests, continuing at offsets), twice.
func TestLargeDirectory(t *testing.T) {
	img, data := imageFile(t)
	var kids []*mnode
	for i := 0; i < 700; i++ {
		name := fmt.Sprintf("%03d", i)
		kids = append(kids, file(name, "D/"+name, fsnode.Raw, &fakeEntry{data: []byte(name)}))
	}
	mnt, _ := mountFake(t, dir("", "", nil, dir("D", "D", nil, kids...)), Options{}, img, int64(len(data)))
	for round := 0; round < 2; round++ {
		fd, err := unix.Open(filepath.Join(mnt, "D"), unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		buf := make([]byte, 512)
		for {
			n, err := unix.ReadDirent(fd, buf)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			names = append(names, direntNames(buf[:n])...)
		}
		unix.Close(fd)
		if len(names) != 702 || names[0] != "." || names[1] != ".." {
			t.Fatalf("round %d: %d names, first %q", round, len(names), names[:min(3, len(names))])
		}
		for i, n := range names[2:] {
			if n != fmt.Sprintf("%03d", i) {
				t.Fatalf("round %d: entry %d is %q", round, i, n)
			}
		}
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "D/699")); err != nil || string(got) != "699" {
		t.Fatalf("D/699: %q %v", got, err)
	}
}

// TestCloseWithoutFlush: Flush answers ENOSYS (nothing to flush on a
// read-only mount), which the kernel takes as "never send FLUSH again", so
// close still succeeds, every time, and the files read on.
func TestCloseWithoutFlush(t *testing.T) {
	if errno := (&fileNode{}).Flush(context.Background(), nil); errno != syscall.ENOSYS {
		t.Fatalf("Flush = %v, want ENOSYS", errno)
	}
	img, data := imageFile(t)
	mnt, _ := mountFake(t, fakeTree(data), Options{}, img, int64(len(data)))
	want := bytes.Repeat([]byte("decoded!"), 40000)
	for i := 0; i < 3; i++ {
		f, err := os.Open(filepath.Join(mnt, "G/LEVEL0.WAD/gameplay"))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %d: %d bytes, %v", i, len(got), err)
		}
		if err := f.Close(); err != nil {
			t.Fatalf("close %d: %v", i, err)
		}
	}
}

// TestInodesMadeOnLookup: a mount makes no inode for a child until the
// kernel looks it up, so that the server's memory follows what was looked
// at, not the tree's size (it made them all at mount before).
func TestInodesMadeOnLookup(t *testing.T) {
	img, data := imageFile(t)
	tree := dir("", "", nil,
		dir("d", "d", nil,
			file("a", "d/a", fsnode.Raw, &fakeEntry{data: []byte("A")}),
			file("b", "d/b", fsnode.Raw, &fakeEntry{data: []byte("B")}),
			file("c", "d/c", fsnode.Raw, &fakeEntry{data: []byte("C")})),
		file("x", "x", fsnode.Raw, &fakeEntry{data: []byte("X")}))
	mnt, _, root := mountFakeRoot(t, tree, Options{}, img, int64(len(data)))
	if n := len(root.Children()); n != 0 {
		t.Fatalf("%d inodes below the root before any lookup", n)
	}
	st, err := os.Stat(filepath.Join(mnt, "d", "b"))
	if err != nil || st.Size() != 1 {
		t.Fatalf("stat d/b: %v %v", st, err)
	}
	d := root.GetChild("d")
	if n := len(root.Children()); n != 1 || d == nil {
		t.Fatalf("after stat d/b: %d inodes below the root (want d alone)", n)
	}
	if kids := d.Children(); len(kids) != 1 || kids["b"] == nil {
		t.Fatalf("after stat d/b: d has %v", kids)
	}
	if got, err := os.ReadFile(filepath.Join(mnt, "d", "c")); err != nil || string(got) != "C" {
		t.Fatalf("d/c: %q %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "d", "nope")); !os.IsNotExist(err) {
		t.Fatalf("d/nope: %v", err)
	}
}

// countingEntry is a fake that counts its reader's opens.
type countingEntry struct {
	*fakeEntry
	opens atomic.Int32
}

func (e *countingEntry) Open() (fsnode.Reader, error) {
	e.opens.Add(1)
	return e.fakeEntry.Open()
}

// TestHeldFileOpensLazily: once one handle answered every byte of a
// decoded file or a view (the kernel's page cache holds them), opening it
// again does not open the model's reader (a decode, an encode); a re-read
// is served by the kernel alone. When the kernel lets go of the pages, the
// read that comes opens the reader once, and the next open opens it at
// once again. A file read only in part stays as it was.
func TestHeldFileOpensLazily(t *testing.T) {
	img, data := imageFile(t)
	dec := &countingEntry{fakeEntry: &fakeEntry{data: bytes.Repeat([]byte("decoded "), 300000)}}
	view := &countingEntry{fakeEntry: &fakeEntry{data: bytes.Repeat([]byte("png "), 600000)}}
	part := &countingEntry{fakeEntry: &fakeEntry{data: bytes.Repeat([]byte("part "), 500000)}}
	m := dir("", "", nil,
		file("dec", "dec", fsnode.Decoded, dec.fakeEntry),
		file("view.png", "view.png", fsnode.View, view.fakeEntry),
		file("part", "part", fsnode.Decoded, part.fakeEntry))
	m.children[0].e, m.children[1].e, m.children[2].e = dec, view, part
	mnt, _ := mountFake(t, m, Options{}, img, int64(len(data)))

	read := func(name string, want []byte) {
		t.Helper()
		got, err := os.ReadFile(filepath.Join(mnt, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %d bytes, %v", name, len(got), err)
		}
	}
	for _, c := range []struct {
		name string
		e    *countingEntry
	}{{"dec", dec}, {"view.png", view}} {
		read(c.name, c.e.data)
		read(c.name, c.e.data)
		if n := c.e.opens.Load(); n != 1 {
			t.Fatalf("%s: read twice, its reader opened %d times, want 1 (the kernel holds it)", c.name, n)
		}
		// The kernel lets go of the pages: the read that comes opens the
		// reader, and the file is no longer held until a handle answers
		// all of it again.
		dropAndRead := func(n int) {
			t.Helper()
			f, err := os.Open(filepath.Join(mnt, c.name))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
				t.Fatal(err)
			}
			got := make([]byte, n)
			if k, err := io.ReadFull(f, got); k != n || !bytes.Equal(got, c.e.data[:n]) {
				t.Fatalf("%s after the kernel dropped it: %d bytes, %v", c.name, k, err)
			}
		}
		dropAndRead(len(c.e.data))
		if n := c.e.opens.Load(); n != 2 {
			t.Fatalf("%s: the read after the kernel dropped the pages opened the reader %d times in all, want 2", c.name, n)
		}
		read(c.name, c.e.data) // held again: that handle answered every byte
		dropAndRead(4096)      // a read comes, and answers part of it
		if n := c.e.opens.Load(); n != 3 {
			t.Fatalf("%s: %d reader opens in all, want 3", c.name, n)
		}
		f, err := os.Open(filepath.Join(mnt, c.name))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if n := c.e.opens.Load(); n != 4 {
			t.Fatalf("%s: no longer held, its open opened the reader %d times in all, want 4", c.name, n)
		}
	}
	// Part of a file: not held, every open opens the reader. (The files
	// are larger than the kernel reads ahead, 1 MiB, so that a 4 KiB read
	// answers part of them.)
	f, err := os.Open(filepath.Join(mnt, "part"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.ReadAt(make([]byte, 4096), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	f, err = os.Open(filepath.Join(mnt, "part"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if n := part.opens.Load(); n != 2 {
		t.Fatalf("part: read in part, two opens opened the reader %d times, want 2", n)
	}
}

// TestCoverage: the ranges a handle answered merge in any order until they
// cover the file, which is reported once; too scattered a reader is given
// up on.
func TestCoverage(t *testing.T) {
	var c coverage
	const size = 100
	for _, r := range [][2]int64{{50, 20}, {0, 10}, {75, 25}, {10, 30}, {65, 10}} {
		if c.add(r[0], r[1], size) {
			t.Fatalf("covered after [%d, %d), with holes left", r[0], r[0]+r[1])
		}
	}
	if !c.add(40, 10, size) {
		t.Fatalf("not covered once every byte was answered: %v", c.spans)
	}
	if c.add(0, size, size) {
		t.Fatal("covered reported twice")
	}
	var s coverage
	for k := int64(0); k < maxCoverageSpans+5; k++ {
		s.add(k*10, 5, 10000)
	}
	if len(s.spans) > maxCoverageSpans || s.add(0, 10000, 10000) {
		t.Fatalf("a scattered reader kept %d spans and was still followed", len(s.spans))
	}
	var e coverage
	if e.add(0, 0, 10) || e.add(-1, 5, 10) || e.add(0, 5, 0) {
		t.Fatal("an empty or negative range counted")
	}
}

// unmountAtEnd unmounts srv's mount at mnt when the test ends, lazily
// when it is busy.
func unmountAtEnd(t *testing.T, srv *fuse.Server, mnt string) {
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Logf("unmount: %v; unmounting lazily", err)
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	})
}
