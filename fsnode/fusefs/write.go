package fusefs

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"gcfs/fsnode"
	"gcfs/overlay"
)

// The write side of a mount with an overlay (Options.Overlay): every change
// goes to the overlay model (package overlay), which keeps it in DIR; these
// nodes only map operations and errors. Without an overlay every change is
// EROFS, as before.

var (
	_ = (fs.NodeGetattrer)((*newFile)(nil))
	_ = (fs.NodeOpener)((*newFile)(nil))
	_ = (fs.NodeReader)((*newFile)(nil))
	_ = (fs.NodeWriter)((*newFile)(nil))
	_ = (fs.NodeSetattrer)((*newFile)(nil))
	_ = (fs.NodeGetxattrer)((*newFile)(nil))
	_ = (fs.NodeListxattrer)((*newFile)(nil))
	_ = (fs.NodeSetxattrer)((*newFile)(nil))
	_ = (fs.NodeFsyncer)((*newFile)(nil))
	_ = (fs.NodeFsyncer)((*fileNode)(nil))
	_ = (fs.FileReleaser)((*editHandle)(nil))
)

// editHandle is an open file of DIR: an edit of a disc file, or a new file.
type editHandle struct {
	f     *os.File
	path  string
	write bool
	ov    *overlay.Overlay
	sys   *fsys // for the kernel's caches of what is computed from the edit
}

// Release closes DIR's file; an edit written through it is checked now,
// and what is computed from it (its views, a .wad's decoded file) is
// dropped from the kernel's caches so that it is read again.
func (h *editHandle) Release(ctx context.Context) syscall.Errno {
	err := h.f.Close()
	if h.write {
		h.ov.Check(h.path)
		if h.sys != nil {
			h.sys.invalidateDependents(h.path)
		}
	}
	return toErrno(err)
}

// invalidateDependents drops the kernel's attributes and pages of every
// node computed from the node at tree path p (only inodes the kernel has
// looked up can hold any).
func (s *fsys) invalidateDependents(p string) {
	if s.ov == nil || s.root == nil {
		return
	}
	n, err := s.ov.Tree().Lookup(p)
	if err != nil || n == nil {
		return
	}
	for _, d := range n.Dependents() {
		if in := s.inodeAt(d.Path()); in != nil {
			_ = in.NotifyContent(0, 0)
		}
	}
}

// inodeAt is the inode at tree path p, or nil.
func (s *fsys) inodeAt(p string) *fs.Inode {
	in := s.root.EmbeddedInode()
	for _, name := range strings.Split(p, "/") {
		if in = in.GetChild(name); in == nil {
			return nil
		}
	}
	return in
}

// derivedHandle is an open file computed from an edit (a view of an edited
// PIF): its bytes, computed at open.
type derivedHandle struct{ b []byte }

func (h *derivedHandle) read(dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(h.b)) {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultData(h.b[off:min(int64(len(h.b)), off+int64(len(dest)))]), 0
}

// derived is the file's bytes computed from an edit, when it is computed
// from one (ok); errno EIO when the edit cannot give it (logged once).
func (f *fileNode) derived() ([]byte, syscall.Errno, bool) {
	if f.sys.ov == nil {
		return nil, 0, false
	}
	n, isNode := f.m.e.(*fsnode.Node)
	if !isNode {
		return nil, 0, false
	}
	b, ok, err := f.sys.ov.Derived(f.m.e.Path(), n)
	if !ok {
		return nil, 0, false
	}
	if err != nil {
		f.logOnce("gcfs: %s: %v", safePath(f.m), err)
		return nil, syscall.EIO, true
	}
	return b, 0, true
}

func (h *editHandle) read(dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := h.f.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, toErrno(err)
	}
	return fuse.ReadResultData(dest[:n]), 0
}

func (h *editHandle) writeAt(data []byte, off int64) (uint32, syscall.Errno) {
	if !h.write {
		return 0, syscall.EBADF
	}
	n, err := h.f.WriteAt(data, off)
	return uint32(n), toErrno(err)
}

// toErrno maps an overlay or os error to the errno the caller sees.
func toErrno(err error) syscall.Errno {
	var en syscall.Errno
	switch {
	case err == nil:
		return 0
	case errors.Is(err, overlay.ErrNotPermitted):
		return syscall.EPERM
	case errors.Is(err, overlay.ErrConflict):
		return syscall.EBUSY
	case errors.As(err, &en):
		return en
	}
	return syscall.EIO
}

func accessWrites(flags uint32) bool {
	return flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0
}

// openEdit opens a disc file through the overlay: for writing (copied up
// into DIR), or for reading when DIR has its edit. ok is false for a
// read-only open of an unedited file (the disc serves it).
func (f *fileNode) openEdit(flags uint32) (fs.FileHandle, syscall.Errno, bool) {
	ov, p := f.sys.ov, f.m.e.Path()
	if accessWrites(flags) {
		n, _ := f.m.e.(*fsnode.Node)
		file, err := ov.OpenWrite(p, n, flags&syscall.O_TRUNC != 0)
		if errors.Is(err, overlay.ErrConflict) {
			return nil, syscall.EBUSY, true // logged by the overlay
		}
		if err != nil {
			f.sys.logf("gcfs: open %s for writing: %v", p, err)
			return nil, toErrno(err), true
		}
		return &editHandle{f: file, path: p, write: true, ov: ov, sys: f.sys}, 0, true
	}
	if _, ok := ov.Edited(p); !ok {
		if b, errno, ok := f.derived(); ok {
			if errno != 0 {
				return nil, errno, true
			}
			return &derivedHandle{b: b}, 0, true
		}
		return nil, 0, false
	}
	file, err := ov.OpenRead(p)
	if err != nil {
		return nil, toErrno(err), true
	}
	return &editHandle{f: file, path: p, ov: ov}, 0, true
}

// editedRead serves a read of an edited file without a handle of ours.
func (f *fileNode) editedRead(dest []byte, off int64) (fuse.ReadResult, syscall.Errno, bool) {
	if f.sys.ov == nil {
		return nil, 0, false
	}
	p := f.m.e.Path()
	if _, ok := f.sys.ov.Edited(p); !ok {
		if b, errno, ok := f.derived(); ok {
			if errno != 0 {
				return nil, errno, true
			}
			res, errno := (&derivedHandle{b: b}).read(dest, off)
			return res, errno, true
		}
		return nil, 0, false
	}
	file, err := f.sys.ov.OpenRead(p)
	if err != nil {
		return nil, toErrno(err), true
	}
	defer file.Close()
	h := &editHandle{f: file}
	res, errno := h.read(dest, off)
	return res, errno, true
}

func (f *fileNode) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := fh.(*editHandle); ok {
		return toErrno(h.f.Sync())
	}
	return 0
}

// setattrEdit answers a change of attributes with an overlay: a new size
// (truncate, copying up), times ignored; mode and owner: EPERM.
func setattrEdit(ov *overlay.Overlay, p string, n *fsnode.Node, fh fs.FileHandle, in *fuse.SetAttrIn) syscall.Errno {
	if in.Valid&(fuse.FATTR_MODE|fuse.FATTR_UID|fuse.FATTR_GID) != 0 {
		return syscall.EPERM
	}
	sz, ok := in.GetSize()
	if !ok {
		return 0
	}
	if h, isEdit := fh.(*editHandle); isEdit && h.write {
		return toErrno(h.f.Truncate(int64(sz)))
	}
	return toErrno(ov.Truncate(p, n, int64(sz)))
}

// attrs is a node's extended attributes with, for an edit that cannot be
// rebuilt, why.
func (s *fsys) attrs(p string, base []fsnode.Attr) []fsnode.Attr {
	if s.ov == nil {
		return base
	}
	if why, ok := s.ov.EditError(p); ok {
		return append(append([]fsnode.Attr(nil), base...), fsnode.Attr{Name: overlay.EditErrorAttr, Value: why})
	}
	return base
}

// Directories with an overlay: new files may be created, removed and
// renamed (over a disc file too: an editor's save); the disc's own files
// and directories may not.

func (d *dirNode) childPath(name string) string {
	if p := d.m.e.Path(); p != "" {
		return p + "/" + name
	}
	return name
}

func (d *dirNode) createEdit(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if !validName(name) {
		return nil, nil, 0, syscall.EINVAL
	}
	p := d.childPath(name)
	if d.sys.ov.IsDisc(p) {
		return nil, nil, 0, syscall.EEXIST
	}
	file, err := d.sys.ov.Create(p)
	if err != nil {
		return nil, nil, 0, toErrno(err)
	}
	nf := &newFile{sys: d.sys}
	ch := d.NewPersistentInode(ctx, nf, fs.StableAttr{Mode: fuse.S_IFREG, Ino: d.sys.nextIno.Add(1)})
	d.sys.fillAttr(&out.Attr, fuse.S_IFREG|d.sys.fileMode, 0, 1)
	return ch, &editHandle{f: file, path: p, write: true, ov: d.sys.ov}, 0, 0
}

func (d *dirNode) unlinkEdit(name string) syscall.Errno {
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	if _, ok := ch.Operations().(*newFile); !ok {
		return syscall.EPERM
	}
	return toErrno(d.sys.ov.Remove(ch.Path(nil)))
}

func (d *dirNode) renameEdit(name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if flags&^uint32(unixRenameNoReplace) != 0 || !validName(newName) {
		return syscall.EPERM
	}
	ch := d.GetChild(name)
	if ch == nil {
		return syscall.ENOENT
	}
	if _, ok := ch.Operations().(*newFile); !ok {
		return syscall.EPERM
	}
	np, ok := newParent.(*dirNode)
	if !ok {
		return syscall.EPERM
	}
	if t := np.GetChild(newName); t != nil {
		if flags&unixRenameNoReplace != 0 {
			return syscall.EEXIST
		}
		if t.IsDir() {
			return syscall.EPERM
		}
	}
	to := np.childPath(newName)
	if err := d.sys.ov.Rename(ch.Path(nil), to); err != nil {
		return toErrno(err)
	}
	d.sys.invalidateDependents(to)
	return 0
}

// unixRenameNoReplace is RENAME_NOREPLACE.
const unixRenameNoReplace = 1

// newFile is a file only DIR has (created through the mount), found by its
// place in the inode tree, which renames move.
type newFile struct {
	fs.Inode
	sys *fsys
}

func (n *newFile) path() string { return n.Path(nil) }

func (n *newFile) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	size, _ := n.sys.ov.Edited(n.path())
	n.sys.fillAttr(&out.Attr, fuse.S_IFREG|n.sys.fileMode, size, 1)
	out.Ino = n.StableAttr().Ino
	return 0
}

func (n *newFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	p := n.path()
	var file *os.File
	var err error
	if accessWrites(flags) {
		file, err = n.sys.ov.OpenWrite(p, nil, flags&syscall.O_TRUNC != 0)
	} else {
		file, err = n.sys.ov.OpenRead(p)
	}
	if err != nil {
		return nil, 0, toErrno(err)
	}
	return &editHandle{f: file, path: p, write: accessWrites(flags), ov: n.sys.ov}, 0, 0
}

func (n *newFile) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if h, ok := fh.(*editHandle); ok {
		return h.read(dest, off)
	}
	file, err := n.sys.ov.OpenRead(n.path())
	if err != nil {
		return nil, toErrno(err)
	}
	defer file.Close()
	return (&editHandle{f: file}).read(dest, off)
}

func (n *newFile) Write(ctx context.Context, fh fs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	if h, ok := fh.(*editHandle); ok {
		return h.writeAt(data, off)
	}
	return 0, syscall.EBADF
}

func (n *newFile) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if errno := setattrEdit(n.sys.ov, n.path(), nil, fh, in); errno != 0 {
		return errno
	}
	return n.Getattr(ctx, fh, out)
}

func (n *newFile) Fsync(ctx context.Context, fh fs.FileHandle, flags uint32) syscall.Errno {
	if h, ok := fh.(*editHandle); ok {
		return toErrno(h.f.Sync())
	}
	return 0
}

func (n *newFile) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	return getxattr(n.sys.attrs(n.path(), nil), attr, dest)
}

func (n *newFile) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	return listxattr(n.sys.attrs(n.path(), nil), dest)
}

func (n *newFile) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return syscall.EPERM
}
