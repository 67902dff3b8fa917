// Package fusefs owns the FUSE front end of gcfs: thin go-fuse nodes over the
// fsnode tree model (a directory node and a file node, each embedding fs.Inode
// and pointing at a model node), the mount options for an immutable image, and
// the mapping of model errors to errno values. It parses nothing itself.
package fusefs

import (
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gcfs/fsnode"
	"gcfs/overlay"
)

// Options say how the tree is presented and mounted.
type Options struct {
	UID, GID uint32 // owner of every entry
	// Umask clears permission bits from the read-only modes, 0555 for
	// directories and 0444 for files: it can only take access away, never
	// show write bits on a filesystem that refuses every write.
	Umask *uint32
	// Mtime is shown as every entry's modification, change and access time.
	Mtime time.Time

	AllowOther  bool
	FuseOptions []string // extra -o options handed to the kernel
	Debug       bool     // FUSE request trace on the log
	FsName      string   // first field of /proc/mounts (the image path); "gcfs" if empty

	// Image, when set, is the image file raw reads splice from. When nil and
	// the tree's image reader is an *os.File, that file is used.
	Image *os.File

	// Logf receives one line per problem (corrupt stream on open, read
	// error, panic caught); log.Printf when nil.
	Logf func(format string, args ...any)
	// Overlay, when set, makes the mount writable (SPEC "Editing"): every
	// change goes to the overlay directory; nil keeps every change EROFS.
	Overlay *overlay.Overlay

	// MemFiles > 0: decoded files are handed to the kernel whole, up to
	// this many bytes of them kept (passthrough.go), where the kernel takes
	// FUSE passthrough and there is no overlay; 0: every read is served.
	MemFiles int64

	// FuseLogf, when set, receives go-fuse's own lines (the Debug trace
	// among them) instead of Logf: tests count Logf's lines.
	FuseLogf func(format string, args ...any)
}

// Kernel cache lifetimes: the image is immutable while mounted.
const (
	entryTimeout = 24 * time.Hour
	attrTimeout  = 24 * time.Hour
	negTimeout   = 24 * time.Hour
	// maxIO is the largest READ the kernel is asked to send.
	maxIO = 1 << 20
	// blksize is a file's st_blksize: the preferred I/O size tools like cat
	// and cp size their buffer by (coreutils 9.1: the larger of it and 128
	// KiB; Python's buffered files: it). At 1 MiB, cat mapped a fresh
	// 1 MiB buffer for every file and faulted in a page of it for every
	// 4 KiB read into it, and on a virtual machine a page fault is dear:
	// a warm cat of the retail tree's 1,212 decoded files (every byte in
	// the kernel's page cache) cost the machine 1.4 times the CPU it did
	// at 128 KiB (medians of 5), where the buffer is reused within a file.
	// The server's reads are the kernel's readahead, sized by maxIO,
	// either way.
	blksize = 128 << 10
	// dirBlksize is a directory's: glibc's opendir sizes its getdents
	// buffer by it (32 KiB at the least, st_blksize up to 1 MiB), and the
	// kernel allocates and frees a READDIRPLUS buffer of the getdents size,
	// page by page, for every request. At 1 MiB that was 256 pages twice a
	// directory: the retail tree's first find spent 1.25 s in the kernel
	// against 0.78 s at 32 KiB, where 20 of its 9,607 directories need a
	// second request for their entries.
	dirBlksize = 4096
)

// fsys is what every node of one mount shares.
type fsys struct {
	uid, gid   uint32
	dirMode    uint32
	fileMode   uint32
	mtime      time.Time
	imgFd      uintptr  // the image's descriptor, for splicing
	img        *os.File // holds imgFd open: a dropped *os.File closes on GC
	hasImgFd   bool
	imgSize    int64
	logf       func(format string, args ...any)
	nodes      int64 // nodes in the tree, for Statfs
	volBlocks  int64
	nextIno    atomic.Uint64 // for model nodes whose Ino collides or is zero
	readErrors atomic.Int64
	// decodedReads counts the reads of decoded files the server answered
	// (none for a file the kernel reads itself: passthrough.go), for tests.
	decodedReads atomic.Int64
	// passOpen counts the opens passed through (each holds a descriptor
	// until its release), passMax bounds them; 0: no passthrough.
	passOpen, passMax atomic.Int64
	ov                *overlay.Overlay // nil: read-only
	root              *dirNode
	kept              *keptListings // read-only mounts: the listing handles
	// byName: the children of a directory sorted by name, for the few
	// directories whose own are not (only a test's fake trees)
	byName map[*mnode][]*mnode
}

// NewRoot returns the root node of a tree, ready to hand to fs.Mount. The
// root's OnAdd checks the model's names and inode numbers; each child's
// inode is made when it is first looked up (persistent: the kernel's view
// stays stable).
func NewRoot(t *fsnode.Tree, opt Options) fs.InodeEmbedder {
	img, size, blocks := treeImage(t, opt)
	return newRoot(fromTree(t), opt, img, size, blocks)
}

// treeImage finds the image file to splice from and the image's size.
func treeImage(t *fsnode.Tree, opt Options) (*os.File, int64, int64) {
	var f *os.File
	var size, blocks int64
	if t != nil && t.Image != nil {
		size = t.Image.Size
		blocks = t.Image.Vol.Blocks
		if opt.Image == nil {
			f, _ = t.Image.R.(*os.File)
		}
	}
	if opt.Image != nil {
		f = opt.Image
		if size == 0 {
			if st, err := f.Stat(); err == nil {
				size = st.Size()
			}
		}
	}
	return f, size, blocks
}

func newRoot(m *mnode, opt Options, img *os.File, imgSize, volBlocks int64) *dirNode {
	umask := uint32(0)
	if opt.Umask != nil {
		umask = *opt.Umask & 0777
	}
	logf := opt.Logf
	if logf == nil {
		logf = log.Printf
	}
	dirMode, fileMode := uint32(0555), uint32(0444)
	if opt.Overlay != nil {
		dirMode, fileMode = 0755, 0644 // writable, into the overlay
	}
	sys := &fsys{
		uid: opt.UID, gid: opt.GID,
		dirMode:   dirMode &^ umask,
		fileMode:  fileMode &^ umask,
		ov:        opt.Overlay,
		mtime:     opt.Mtime,
		imgSize:   imgSize,
		logf:      logf,
		volBlocks: volBlocks,
	}
	sys.nextIno.Store(1 << 62)
	if img != nil {
		sys.img, sys.imgFd, sys.hasImgFd = img, img.Fd(), true
	}
	root := &dirNode{node: node{sys: sys, m: m}, root: true}
	sys.root = root
	return root
}

// MountOptions returns the go-fuse options for mounting the tree at a
// mount point: read-only, long kernel cache lifetimes, 1 MiB reads.
func MountOptions(opt Options) *fs.Options {
	et, at, nt := entryTimeout, attrTimeout, negTimeout
	name := opt.FsName
	if name == "" {
		name = "gcfs"
	}
	mo := fuse.MountOptions{
		FsName:        name,
		Name:          "gcfs",
		AllowOther:    opt.AllowOther,
		Options:       append([]string{roOrRW(opt)}, opt.FuseOptions...),
		MaxWrite:      maxIO,
		MaxReadAhead:  maxIO,
		MaxBackground: 64,
		Debug:         opt.Debug,
		// An immutable tree with persistent inodes: nothing to forget.
		RememberInodes: true,
	}
	lf := opt.FuseLogf
	if lf == nil {
		lf = opt.Logf
	}
	if lf != nil {
		mo.Logger = log.New(logfWriter(lf), "", 0)
	}
	fo := &fs.Options{
		MountOptions:    mo,
		EntryTimeout:    &et,
		AttrTimeout:     &at,
		NegativeTimeout: &nt,
		UID:             opt.UID,
		GID:             opt.GID,
		// Every mode is set by the nodes; a umask of 0777 means mode 0,
		// which go-fuse would otherwise replace with 0644.
		NullPermissions: true,
	}
	if mo.Logger != nil {
		fo.Logger = mo.Logger
	}
	return fo
}

// Mount mounts t at mountpoint and returns the running server; the mount is
// ready when Mount returns. Call Unmount on the server to end it.
func Mount(mountpoint string, t *fsnode.Tree, opt Options) (*fuse.Server, error) {
	srv, _, err := mountTree(mountpoint, t, opt)
	return srv, err
}

// mountTree is Mount, with the mount's root node (for tests).
func mountTree(mountpoint string, t *fsnode.Tree, opt Options) (*fuse.Server, *dirNode, error) {
	if t == nil || t.Root == nil {
		return nil, nil, fmt.Errorf("fusefs: no tree to mount")
	}
	root := NewRoot(t, opt).(*dirNode)
	fo := MountOptions(opt)
	fo.RootStableAttr = &fs.StableAttr{Mode: fuse.S_IFDIR, Ino: rootIno(t.Root.Ino)}
	srv, err := serve(mountpoint, root, fo, opt)
	if err != nil {
		return nil, nil, err
	}
	if err := SetReadAhead(mountpoint, DefaultReadAhead); err != nil && opt.Debug && opt.Logf != nil {
		opt.Logf("gcfs: readahead stays at the kernel's default: %v", err)
	}
	if opt.MemFiles > 0 && opt.Overlay == nil {
		if err := startMemFiles(srv, root, t, opt.MemFiles); err != nil && opt.Debug && opt.Logf != nil {
			opt.Logf("gcfs: decoded files are served, not passed through: %v", err)
		}
	}
	return srv, root, nil
}

// serve mounts root's tree at mountpoint and serves it in the background:
// go-fuse's node bridge, behind keptListings on a read-only mount.
func serve(mountpoint string, root fs.InodeEmbedder, fo *fs.Options, opt Options) (*fuse.Server, error) {
	raw := fs.NewNodeFS(root, fo)
	mo := fo.MountOptions
	if opt.Overlay == nil {
		k := newKeptListings(raw)
		if d, ok := root.(*dirNode); ok {
			d.sys.kept = k
		}
		raw = k
		mo.ExtraCapabilities |= fuse.CAP_NO_OPENDIR_SUPPORT
	}
	srv, err := fuse.NewServer(raw, mountpoint, &mo)
	if err != nil {
		return nil, err
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, err // as fs.Mount: a mount that failed has no loop to end
	}
	return srv, nil
}

// MountNodes mounts any go-fuse node tree the way Mount mounts a gcfs
// tree: MountOptions(opt), kept listings where opt has no overlay, the
// same readahead. It is for scripts/fusefloor, the benchmark's floor under
// gcfs's FUSE figures, which must pay what gcfs pays and nothing more.
func MountNodes(mountpoint string, root fs.InodeEmbedder, opt Options) (*fuse.Server, error) {
	srv, err := serve(mountpoint, root, MountOptions(opt), opt)
	if err != nil {
		return nil, err
	}
	_ = SetReadAhead(mountpoint, DefaultReadAhead)
	return srv, nil
}

// DefaultReadAhead is the readahead window Mount sets: as large as splicing
// allows (go-fuse splices a reply through a pipe that must hold the header,
// the data and a page, and pipes are at most 1 MiB by default).
const DefaultReadAhead = 1<<20 - 8<<10

// SetReadAhead raises the kernel's readahead window for the mount at dir
// (its backing device's read_ahead_kb), so sequential reads arrive as
// requests of n bytes rather than the default 128 KiB. FUSE's INIT cannot
// raise it past that default; only root may write the sysfs knob, so
// failing is normal for other users and harmless.
func SetReadAhead(dir string, n int) error {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return err
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	return os.WriteFile(p, []byte(strconv.Itoa(n/1024)), 0)
}

// roOrRW: an overlay mount is writable, any other read-only.
func roOrRW(opt Options) string {
	if opt.Overlay != nil {
		return "rw"
	}
	return "ro"
}

func rootIno(ino uint64) uint64 {
	if ino == 0 {
		return 1
	}
	return ino
}

// logfWriter adapts a Logf function to an io.Writer for log.Logger.
type logfWriter func(format string, args ...any)

func (w logfWriter) Write(p []byte) (int, error) {
	w("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
