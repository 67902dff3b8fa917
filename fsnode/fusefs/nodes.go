package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gcfs/fsnode"
)

// The operations each node type serves, in one place. Everything on the
// write side is declared so that it answers EROFS rather than ENOSYS.
var (
	_ = (fs.NodeOnAdder)((*dirNode)(nil))
	_ = (fs.NodeGetattrer)((*dirNode)(nil))
	_ = (fs.NodeReaddirer)((*dirNode)(nil))
	_ = (fs.NodeLookuper)((*dirNode)(nil))
	_ = (fs.NodeOpendirHandler)((*dirNode)(nil))
	_ = (fs.FileReaddirenter)((*dirHandle)(nil))
	_ = (fs.FileSeekdirer)((*dirHandle)(nil))
	_ = (fs.FileReleasedirer)((*dirHandle)(nil))
	_ = (fs.NodeGetxattrer)((*dirNode)(nil))
	_ = (fs.NodeListxattrer)((*dirNode)(nil))
	_ = (fs.NodeStatfser)((*dirNode)(nil))
	_ = (fs.NodeSetattrer)((*dirNode)(nil))
	_ = (fs.NodeSetxattrer)((*dirNode)(nil))
	_ = (fs.NodeRemovexattrer)((*dirNode)(nil))
	_ = (fs.NodeMkdirer)((*dirNode)(nil))
	_ = (fs.NodeMknoder)((*dirNode)(nil))
	_ = (fs.NodeCreater)((*dirNode)(nil))
	_ = (fs.NodeUnlinker)((*dirNode)(nil))
	_ = (fs.NodeRmdirer)((*dirNode)(nil))
	_ = (fs.NodeRenamer)((*dirNode)(nil))
	_ = (fs.NodeLinker)((*dirNode)(nil))
	_ = (fs.NodeSymlinker)((*dirNode)(nil))

	_ = (fs.NodeGetattrer)((*fileNode)(nil))
	_ = (fs.NodeOpener)((*fileNode)(nil))
	_ = (fs.NodeReader)((*fileNode)(nil))
	_ = (fs.NodeGetxattrer)((*fileNode)(nil))
	_ = (fs.NodeListxattrer)((*fileNode)(nil))
	_ = (fs.NodeStatfser)((*fileNode)(nil))
	_ = (fs.NodeSetattrer)((*fileNode)(nil))
	_ = (fs.NodeSetxattrer)((*fileNode)(nil))
	_ = (fs.NodeRemovexattrer)((*fileNode)(nil))
	_ = (fs.NodeWriter)((*fileNode)(nil))
	_ = (fs.NodeFlusher)((*fileNode)(nil))
)

var errNotFile = errors.New("not a file")

// dirNode is a directory of the model: an ISO directory, a container, a group.
// node is what directory and file nodes share: the inode and the model node
// it stands for.
type node struct {
	fs.Inode
	sys *fsys
	m   *mnode
}

type dirNode struct {
	node
	root     bool
	lazyOnce sync.Once // a lazy directory's children made (lazydir.go)
}

// fileNode is a raw or decoded file of the model.
type fileNode struct {
	node

	mu     sync.Mutex
	logged bool // the one log line for this node was written
	// held: one handle answered every byte; the kernel's page cache
	// holds them (held.go)
	held atomic.Bool
}

// fileHandle is one open file: the model's reader for it. Readers are not
// kept past their handles, so a decoded file's index stays under fsnode's
// own bound (its index LRU) rather than pinned for the mount's lifetime.
//
// A handle opened lazily (lazy set: the kernel already holds the file's
// bytes, held.go) gets its reader on its first read, if one comes. cov is
// what the handle's reads answered, for marking the file held.
type fileHandle struct {
	r    fsnode.Reader
	lazy *fileNode
	once sync.Once
	err  error
	cov  coverage
}

// reader is the handle's reader, opened now for a lazy handle.
func (h *fileHandle) reader() (fsnode.Reader, error) {
	if h.lazy == nil {
		return h.r, nil
	}
	h.once.Do(func() {
		h.lazy.held.Store(false) // a read came: the kernel let go of some bytes
		h.r, h.err = h.lazy.reader()
	})
	return h.r, h.err
}

// OnAdd checks the model below the root once, at mount: every name a file
// name, one entry per name, one inode number per entry. It makes no inode:
// a child's inode is made when the kernel first looks it up (Lookup), so
// the server holds inodes for what was looked at, not for the whole tree
// (an inode and its place in go-fuse's tables cost ~500 bytes a node).
func (d *dirNode) OnAdd(ctx context.Context) {
	if !d.root {
		return
	}
	if d.m.ino == 0 {
		d.m.ino = 1
	}
	seen := map[uint64]bool{d.m.ino: true}
	d.sys.nodes = 1
	d.sys.prepare(d.m, seen)
}

// prepare marks the children of m that are shown (added) and gives each a
// unique inode number, recursively; the directory's children are then kept
// sorted by name for Lookup (the model's are already).
func (s *fsys) prepare(m *mnode, seen map[uint64]bool) {
	names := make(map[string]bool, len(m.children))
	for _, c := range m.children {
		if !validName(c.name) {
			s.logf("gcfs: %s: entry %q cannot be a file name; left out", pathOr(m, "/"), c.name)
			continue
		}
		if names[c.name] {
			s.logf("gcfs: %s: duplicate entry %q left out", pathOr(m, "/"), c.name)
			continue
		}
		names[c.name] = true
		if c.ino == 0 || seen[c.ino] {
			c.ino = s.nextIno.Add(1)
		}
		seen[c.ino] = true
		c.added = true
		s.nodes++
		if c.kind == fsnode.Dir {
			s.prepare(c, seen)
		}
	}
	if !sort.SliceIsSorted(m.children, func(i, j int) bool { return m.children[i].name < m.children[j].name }) {
		// A stable sort keeps the first of equal names first: the one shown.
		// (The model's are sorted; a test's fake tree may not be.)
		byName := append([]*mnode(nil), m.children...)
		sort.SliceStable(byName, func(i, j int) bool { return byName[i].name < byName[j].name })
		if s.byName == nil {
			s.byName = map[*mnode][]*mnode{}
		}
		s.byName[m] = byName
	}
}

// child is the shown child of m named name, or nil.
func (s *fsys) child(m *mnode, name string) *mnode {
	c, ok := s.byName[m] // (written only before the mount serves)
	if !ok {
		c = m.children
	}
	i := sort.Search(len(c), func(i int) bool { return c[i].name >= name })
	for ; i < len(c) && c[i].name == name; i++ {
		if c[i].added {
			return c[i]
		}
	}
	return nil
}

// newChild makes the inode of a shown child (on its first lookup). It is
// persistent: the tree does not change while mounted, and go-fuse picks one
// inode when two lookups of the same child race.
func (d *dirNode) newChild(ctx context.Context, c *mnode) *fs.Inode {
	if c.kind == fsnode.Dir {
		return d.NewPersistentInode(ctx, &dirNode{node: node{sys: d.sys, m: c}}, fs.StableAttr{Mode: fuse.S_IFDIR, Ino: c.ino})
	}
	return d.NewPersistentInode(ctx, &fileNode{node: node{sys: d.sys, m: c}}, fs.StableAttr{Mode: fuse.S_IFREG, Ino: c.ino})
}

func validName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 &&
		!strings.ContainsAny(name, "/\x00")
}

func pathOr(m *mnode, root string) string {
	if p := m.e.Path(); p != "" {
		return p
	}
	return root
}

// recoverErrno turns a panic in the model into EIO and one log line, so no
// panic reaches the FUSE server loop (and from there the kernel).
func (s *fsys) recoverErrno(what string, m *mnode, errno *syscall.Errno) {
	if r := recover(); r != nil {
		s.logf("gcfs: %s %s: internal error: %v\n%s", what, safePath(m), r, debug.Stack())
		*errno = syscall.EIO
	}
}

func safePath(m *mnode) (p string) {
	defer func() {
		if recover() != nil {
			p = m.name
		}
	}()
	if p = m.e.Path(); p == "" {
		p = "/"
	}
	return p
}

func (s *fsys) fillAttr(out *fuse.Attr, mode uint32, size int64, nlink uint32) {
	out.Mode = mode
	out.Size = uint64(size)
	out.Blocks = uint64((size + 511) / 512)
	out.Blksize = blksize
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		out.Blksize = dirBlksize
	}
	out.Nlink = nlink
	out.Owner = fuse.Owner{Uid: s.uid, Gid: s.gid}
	if !s.mtime.IsZero() {
		t := s.mtime
		out.SetTimes(&t, &t, &t)
	}
}

func (d *dirNode) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	nlink := uint32(2)
	// A lazy directory is not listed by a stat of it (ls -l of its
	// parent): its children are files, so its nlink is 2 either way.
	for _, c := range d.lazyChildren() {
		if c.kind == fsnode.Dir && c.added {
			nlink++
		}
	}
	d.sys.fillAttr(&out.Attr, fuse.S_IFDIR|d.sys.dirMode, 0, nlink)
	out.Ino = d.m.ino
	return 0
}

// Lookup finds a child, making its inode on the first lookup; unlike
// go-fuse's default it fails the lookup when the child's attributes cannot
// be had (a model error), rather than handing the kernel an entry of zeros.
func (d *dirNode) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	d.listLazy(ctx)
	ch := d.GetChild(name) // made already, or a file created in the overlay
	if ch == nil {
		c := d.sys.child(d.m, name)
		if c == nil {
			return nil, syscall.ENOENT
		}
		ch = d.newChild(ctx, c)
	}
	ga, ok := ch.Operations().(fs.NodeGetattrer)
	if !ok {
		return ch, 0
	}
	var a fuse.AttrOut
	if errno := ga.Getattr(ctx, nil, &a); errno != 0 {
		return nil, errno
	}
	out.Attr = a.Attr
	return ch, 0
}

func (d *dirNode) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	d.listLazy(ctx)
	return fs.NewListDirStream(d.entries()), 0
}

// OpendirHandle serves a listing the kernel may keep (FOPEN_CACHE_DIR): the
// tree never changes while mounted. A read-only mount never sees an OPENDIR
// (listings.go answers it ENOSYS); this serves the overlay's mounts.
func (d *dirNode) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	d.listLazy(ctx)
	return &dirHandle{d: d}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// dirHandle is one open directory: a position in its listing. Offsets are
// positions + 1, as go-fuse numbers entries without one. The listing is
// made on the first read after an open or a seek and dropped once read to
// its end. A read-only mount opens one for each read (listings.go), so
// each read makes the listing it serves; the kernel keeps the listing.
type dirHandle struct {
	d    *dirNode
	mu   sync.Mutex
	ents []fuse.DirEntry // nil: not made (or dropped at the end)
	pos  int
	done bool // read to the end since the last seek
}

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return nil, 0
	}
	if h.ents == nil {
		h.d.listLazy(ctx)
		if s, ok := h.d.m.e.(childSizer); ok {
			s.SizeChildren() // the lookups of a READDIRPLUS then find them sized
		}
		h.ents = h.d.entries()
	}
	if h.pos >= len(h.ents) {
		h.ents, h.done = nil, true
		return nil, 0
	}
	e := h.ents[h.pos]
	h.pos++
	e.Off = uint64(h.pos)
	return &e, 0
}

func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Positions past the end read as the end; the listing is remade
	// when the next read needs it.
	h.pos = int(min(off, uint64(1<<31)))
	h.done = false
	return 0
}

func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) {}

// entries lists ".", ".." and the children, in the model's (name) order.
func (d *dirNode) entries() []fuse.DirEntry {
	parentIno := d.m.ino
	if _, p := d.Parent(); p != nil {
		parentIno = p.StableAttr().Ino
	}
	ents := make([]fuse.DirEntry, 0, len(d.m.children)+2)
	ents = append(ents,
		fuse.DirEntry{Name: ".", Mode: fuse.S_IFDIR, Ino: d.m.ino},
		fuse.DirEntry{Name: "..", Mode: fuse.S_IFDIR, Ino: parentIno})
	// List what is shown, in the model's (name) order.
	for _, c := range d.m.children {
		if !c.added {
			continue // left out at mount (a bad or duplicate name)
		}
		if viewFailed(c.e) {
			continue // a lazily sized view that did not encode: no file
		}
		mode := uint32(fuse.S_IFREG)
		if c.kind == fsnode.Dir {
			mode = fuse.S_IFDIR
		}
		ents = append(ents, fuse.DirEntry{Name: c.name, Mode: mode, Ino: c.ino})
	}
	return ents
}

// What directories and files answer alike: extended attributes, statfs, and
// EROFS to every change of attributes.

func (b *node) Getxattr(ctx context.Context, attr string, dest []byte) (n uint32, errno syscall.Errno) {
	defer b.sys.recoverErrno("getxattr", b.m, &errno)
	return getxattr(b.sys.attrs(b.m.e.Path(), b.m.e.Xattrs()), attr, dest)
}

func (b *node) Listxattr(ctx context.Context, dest []byte) (n uint32, errno syscall.Errno) {
	defer b.sys.recoverErrno("listxattr", b.m, &errno)
	return listxattr(b.sys.attrs(b.m.e.Path(), b.m.e.Xattrs()), dest)
}

func (b *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	b.sys.statfs(out)
	return 0
}

// roErr is what a refused change answers: EROFS on a read-only mount,
// EPERM on one with an overlay (the change is not one it keeps).
func (s *fsys) roErr() syscall.Errno {
	if s.ov != nil {
		return syscall.EPERM
	}
	return syscall.EROFS
}

func (d *dirNode) Setattr(context.Context, fs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return d.sys.roErr()
}

func (f *fileNode) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if f.sys.ov == nil {
		return syscall.EROFS
	}
	n, _ := f.m.e.(*fsnode.Node)
	if errno := setattrEdit(f.sys.ov, f.m.e.Path(), n, fh, in); errno != 0 {
		return errno
	}
	return f.Getattr(ctx, fh, out)
}
func (b *node) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return b.sys.roErr()
}
func (b *node) Removexattr(context.Context, string) syscall.Errno { return b.sys.roErr() }

func (s *fsys) statfs(out *fuse.StatfsOut) {
	const bsize = 2048 // the disc's sector
	blocks := s.volBlocks
	if blocks <= 0 {
		blocks = (s.imgSize + bsize - 1) / bsize
	}
	out.Blocks = uint64(blocks)
	out.Bfree, out.Bavail = 0, 0
	out.Files = uint64(s.nodes)
	out.Ffree = 0
	out.Bsize = bsize
	out.Frsize = bsize
	out.NameLen = 255
}

// Write side of a directory: EROFS; with an overlay, new files (write.go)
// and EPERM for the rest.

func (d *dirNode) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.sys.roErr()
}
func (d *dirNode) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.sys.roErr()
}
func (d *dirNode) Create(ctx context.Context, name string, flags, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if d.sys.ov == nil {
		return nil, nil, 0, syscall.EROFS
	}
	return d.createEdit(ctx, name, out)
}
func (d *dirNode) Unlink(ctx context.Context, name string) syscall.Errno {
	if d.sys.ov == nil {
		return syscall.EROFS
	}
	return d.unlinkEdit(name)
}
func (d *dirNode) Rmdir(context.Context, string) syscall.Errno { return d.sys.roErr() }
func (d *dirNode) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if d.sys.ov == nil {
		return syscall.EROFS
	}
	return d.renameEdit(name, newParent, newName, flags)
}
func (d *dirNode) Link(context.Context, fs.InodeEmbedder, string, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.sys.roErr()
}
func (d *dirNode) Symlink(context.Context, string, string, *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, d.sys.roErr()
}

// Files.

func (f *fileNode) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) (errno syscall.Errno) {
	defer f.sys.recoverErrno("getattr", f.m, &errno)
	size := f.m.e.Size()
	if viewFailed(f.m.e) {
		return syscall.ENOENT // a lazily sized view that does not encode has no file
	}
	if f.sys.ov != nil {
		if n, ok := f.sys.ov.Edited(f.m.e.Path()); ok {
			size = n
		} else if b, errno, ok := f.derived(); ok {
			size = int64(len(b))
			if errno != 0 {
				size = 0
			}
		}
	}
	if size < 0 {
		size = 0
	}
	f.sys.fillAttr(&out.Attr, fuse.S_IFREG|f.sys.fileMode, size, 1)
	out.Ino = f.m.ino
	return 0
}

// logErr logs a failed open or read once per node, unless the model has
// logged it already (its own known error, or bytes missing from the image,
// which fsnode reports itself) so that each problem is one line.
func (f *fileNode) logErr(op string, off int64, err error) {
	if errors.Is(err, fsnode.ErrShortImage) || fsnode.AlreadyLogged(err) {
		return
	}
	var se *fsnode.StreamError
	if op == "read" && f.m.kind == fsnode.Decoded && errors.As(err, &se) {
		return // fsnode logs a decoded file's first read error itself
	}
	if known := f.modelErr(); known != nil && errors.Is(err, known) {
		return
	}
	if op == "open" {
		f.logOnce("gcfs: open %s: %v", safePath(f.m), err)
	} else {
		f.logOnce("gcfs: %s %s at offset %d: %v", op, safePath(f.m), off, err)
	}
}

func (f *fileNode) modelErr() (err error) {
	defer func() {
		if recover() != nil {
			err = nil
		}
	}()
	return f.m.e.Err()
}

// logOnce writes the node's one problem line.
func (f *fileNode) logOnce(format string, args ...any) {
	f.mu.Lock()
	first := !f.logged
	f.logged = true
	f.mu.Unlock()
	if first {
		f.sys.logf(format, args...)
	}
}

func (f *fileNode) Open(ctx context.Context, flags uint32) (fh fs.FileHandle, fuseFlags uint32, errno syscall.Errno) {
	defer f.sys.recoverErrno("open", f.m, &errno)
	if f.sys.ov != nil {
		if h, errno, ok := f.openEdit(flags); ok {
			return h, 0, errno // no FOPEN_KEEP_CACHE: an edit's bytes change
		}
	} else if accessWrites(flags) {
		return nil, 0, syscall.EROFS
	}
	pass := f.passesThrough()
	if pass {
		if h, ok := f.openPassthrough(); ok {
			return h, 0, 0 // (go-fuse adds FOPEN_PASSTHROUGH)
		}
	}
	h, errno := f.openServed()
	if errno != 0 {
		return nil, 0, errno
	}
	if pass {
		// Served, on a handle that rides on the inode's backing file
		// when another open registered one (passthrough.go).
		return &passHandle{fd: -1, serve: h}, fuse.FOPEN_KEEP_CACHE, 0
	}
	return h, fuse.FOPEN_KEEP_CACHE, 0
}

// openServed opens a handle whose reads the server answers (with
// FOPEN_KEEP_CACHE: the kernel keeps what they return).
func (f *fileNode) openServed() (*fileHandle, syscall.Errno) {
	if f.tracksHeld() && f.held.Load() {
		return &fileHandle{lazy: f}, 0
	}
	r, err := f.reader()
	if err != nil {
		f.logErr("open", 0, err)
		return nil, syscall.EIO
	}
	if p, ok := r.(prefetcher); ok {
		p.Prefetch() // decoded bytes: start on them before the first read arrives
	}
	return &fileHandle{r: r}, 0
}

// Flush answers ENOSYS: nothing is ever written, so there is nothing to
// flush, and the kernel, told so once, stops sending a FLUSH (a round trip
// to the server) with every close.
func (f *fileNode) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

// reader opens the model's reader (the model remembers what it learnt, so
// a second open is cheap).
func (f *fileNode) reader() (fsnode.Reader, error) {
	r, err := f.m.e.Open()
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, fmt.Errorf("model returned no reader")
	}
	return r, nil
}

func (f *fileNode) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (res fuse.ReadResult, errno syscall.Errno) {
	defer f.sys.recoverErrno("read", f.m, &errno)
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if h, ok := fh.(*editHandle); ok {
		return h.read(dest, off)
	}
	if h, ok := fh.(*derivedHandle); ok {
		return h.read(dest, off)
	}
	if f.m.kind == fsnode.Decoded {
		f.sys.decodedReads.Add(1)
	}
	if h, ok := fh.(*passHandle); ok {
		if h.fd >= 0 {
			return h.read(dest, off)
		}
		fh = h.serve
	}
	if res, errno, ok := f.editedRead(dest, off); ok {
		return res, errno
	}
	size := f.m.e.Size()
	if off >= size || len(dest) == 0 {
		return fuse.ReadResultData(nil), 0
	}
	n := int64(len(dest))
	if n > size-off {
		n = size - off
	}
	if res, ok := f.splice(off, n, size); ok {
		return res, 0
	}
	var r fsnode.Reader
	h, _ := fh.(*fileHandle)
	if h != nil {
		var err error
		if r, err = h.reader(); err != nil {
			f.logErr("open", 0, err)
			return nil, syscall.EIO
		}
	} else {
		// A read without our handle (e.g. after a reconnect): open now.
		var err error
		if r, err = f.reader(); err != nil {
			f.logErr("open", 0, err)
			return nil, syscall.EIO
		}
	}
	var got int
	var err error
	if sr, ok := r.(slicer); ok {
		// A decoded file: its cached blocks go to the kernel as they are
		// (writev), without a copy into dest first; the kernel's page
		// cache keeps them (FOPEN_KEEP_CACHE), so the tree's cache lets go
		// of the blocks it has handed out whole.
		vecs, done, serr := sr.ServeSlices(off, int(n))
		for _, v := range vecs {
			got += len(v)
		}
		if got == int(n) {
			if h != nil {
				f.answered(h, off, n, size)
			}
			return &servedResult{vecs: vecs, done: done}, 0
		}
		done()
		err = serr
	} else {
		got, err = r.ReadAt(dest[:n], off)
		if got == int(n) {
			if h != nil {
				f.answered(h, off, n, size)
			}
			// As a vector, not ReadResultData: go-fuse writes a vector
			// with writev, where it would try to splice plain data
			// through a pipe too small for a 1 MiB reply (and log it).
			return fuse.ReadResultVector([][]byte{dest[:n]}), 0
		}
	}
	if err == nil || err == io.EOF {
		// The model promised size bytes: a short read would show the
		// kernel a silently truncated file.
		err = fmt.Errorf("short read: %d of %d bytes at offset %d", got, n, off)
	}
	f.sys.readErrors.Add(1)
	f.logErr("read", off, err)
	return nil, syscall.EIO
}

// childSizer is a directory that can size its lazily sized views at once,
// in parallel (fsnode's SizeChildren).
type childSizer interface{ SizeChildren() }

// prefetcher is a reader that can start decoding its first bytes in the
// background (fsnode's decoded and nested files).
type prefetcher interface{ Prefetch() }

// slicer is a reader that hands out its bytes without copying them
// (fsnode's decoded files: pieces of cached blocks, never modified), to a
// caller that keeps them (the kernel's page cache).
type slicer interface {
	// ServeSlices' done ends the hold on the pieces' blocks: called once
	// the kernel has them (servedResult.Done).
	ServeSlices(off int64, n int) (vecs [][]byte, done func(), err error)
}

// servedResult is a read's reply of pieces of cached blocks
// (fuse.ReadResultVector's writev and copies), whose hold it ends when
// go-fuse is done with it: after the reply's write to the kernel, or its
// failure. A reply go-fuse drops unwritten keeps its hold, and the
// blocks' buffers are then not recycled (never reused while held).
type servedResult struct {
	vecs [][]byte
	done func()
}

func (r *servedResult) Size() int {
	n := 0
	for _, v := range r.vecs {
		n += len(v)
	}
	return n
}

func (r *servedResult) Bytes(buf []byte) ([]byte, fuse.Status) {
	buf = buf[:0]
	for _, v := range r.vecs {
		buf = append(buf, v...)
	}
	return buf, fuse.OK
}

// Slices makes go-fuse write the pieces with writev, as it does a
// ReadResultVector's (its withSlice interface).
func (r *servedResult) Slices() ([][]byte, fuse.Status) { return r.vecs, fuse.OK }

// Readv copies the pieces into dst (go-fuse's withReadv, for its
// transports that read a reply into their own buffers).
func (r *servedResult) Readv(dst [][]byte) (int, fuse.Status) {
	n := 0
	src := r.vecs
	var cur []byte
	for _, d := range dst {
		for len(d) > 0 {
			if len(cur) == 0 {
				if len(src) == 0 {
					return n, fuse.OK
				}
				cur, src = src[0], src[1:]
				continue
			}
			k := copy(d, cur)
			d, cur, n = d[k:], cur[k:], n+k
		}
	}
	return n, fuse.OK
}

// Done ends the hold, once.
func (r *servedResult) Done() {
	if d := r.done; d != nil {
		r.done = nil
		d()
	}
}

// splice answers a raw read straight from the image's file descriptor, so the
// bytes can move kernel-side (splice) when the whole range is in the image.
// Only where the bytes exist: go-fuse turns a short splice into a short read
// (EOF to the kernel, which then takes the file to end there), so a read the
// image file no longer holds (it shrank while mounted: its size is checked
// with fstat) goes through the model's reader, which fails it with EIO and
// logs it.
func (f *fileNode) splice(off, n, size int64) (fuse.ReadResult, bool) {
	if f.m.kind != fsnode.Raw || !f.sys.hasImgFd {
		return nil, false
	}
	if f.m.e.Err() != nil {
		return nil, false // the model decides what a file with a known problem serves
	}
	start, _, ok := f.m.e.ImageRange()
	if !ok || start > f.sys.imgSize || size > f.sys.imgSize-start {
		return nil, false
	}
	if n > DefaultReadAhead {
		// Too large for go-fuse's splice pipe: it would fall back to a
		// copy anyway, logging each time. Read it ourselves instead.
		return nil, false
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.sys.imgFd), &st); err != nil ||
		(st.Mode&syscall.S_IFMT == syscall.S_IFREG && start+off+n > st.Size) {
		return nil, false
	}
	return fuse.ReadResultFd(f.sys.imgFd, start+off, int(n)), true
}

func (f *fileNode) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if h, ok := fh.(*editHandle); ok {
		return h.writeAt(data, off)
	}
	return 0, syscall.EROFS
}

// getxattr answers one attribute, with the size-query and ERANGE protocol of
// getxattr(2).
func getxattr(attrs []fsnode.Attr, name string, dest []byte) (uint32, syscall.Errno) {
	for _, a := range attrs {
		if a.Name != name {
			continue
		}
		n := uint32(len(a.Value))
		if len(dest) == 0 {
			return n, 0
		}
		if len(dest) < len(a.Value) {
			return n, syscall.ERANGE
		}
		copy(dest, a.Value)
		return n, 0
	}
	return 0, syscall.ENODATA
}

// listxattr answers the NUL-separated list of names.
func listxattr(attrs []fsnode.Attr, dest []byte) (uint32, syscall.Errno) {
	var b []byte
	for _, a := range attrs {
		b = append(b, a.Name...)
		b = append(b, 0)
	}
	n := uint32(len(b))
	if len(dest) == 0 {
		return n, 0
	}
	if len(dest) < len(b) {
		return n, syscall.ERANGE
	}
	copy(dest, b)
	return n, 0
}

// viewFailed says whether e is a view already found to have no file (a
// lazily sized view whose encode failed: fsnode's ViewFailed); it never
// computes one.
func viewFailed(e entry) bool {
	v, ok := e.(interface{ ViewFailed() bool })
	return ok && v.ViewFailed()
}
