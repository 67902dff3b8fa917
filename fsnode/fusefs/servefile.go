package fusefs

import (
	"context"
	"io"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// One file served read-only, assembled on read (`gcfs pack --serve`: the
// rebuilt image, read from its layout's spans).

type oneFileRoot struct {
	fs.Inode
	name  string
	r     io.ReaderAt
	size  int64
	mtime time.Time
	opt   Options
}

type oneFile struct {
	fs.Inode
	root *oneFileRoot
}

var (
	_ = (fs.NodeOnAdder)((*oneFileRoot)(nil))
	_ = (fs.NodeGetattrer)((*oneFileRoot)(nil))
	_ = (fs.NodeGetattrer)((*oneFile)(nil))
	_ = (fs.NodeOpener)((*oneFile)(nil))
	_ = (fs.NodeReader)((*oneFile)(nil))
)

func (d *oneFileRoot) OnAdd(ctx context.Context) {
	ch := d.NewPersistentInode(ctx, &oneFile{root: d}, fs.StableAttr{Mode: fuse.S_IFREG, Ino: 2})
	d.AddChild(d.name, ch, false)
}

func (d *oneFileRoot) attr(out *fuse.Attr, mode uint32, size int64) {
	out.Mode = mode
	out.Size = uint64(size)
	out.Blocks = uint64((size + 511) / 512)
	out.Blksize = blksize
	out.Owner = fuse.Owner{Uid: d.opt.UID, Gid: d.opt.GID}
	if !d.mtime.IsZero() {
		t := d.mtime
		out.SetTimes(&t, &t, &t)
	}
}

func (d *oneFileRoot) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	d.attr(&out.Attr, fuse.S_IFDIR|0555, 0)
	out.Nlink = 2
	return 0
}

func (f *oneFile) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	f.root.attr(&out.Attr, fuse.S_IFREG|0444, f.root.size)
	out.Nlink = 1
	return 0
}

func (f *oneFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if accessWrites(flags) {
		return nil, 0, syscall.EROFS
	}
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *oneFile) Read(ctx context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off < 0 {
		return nil, syscall.EINVAL
	}
	if off >= f.root.size {
		return fuse.ReadResultData(nil), 0
	}
	n := min(int64(len(dest)), f.root.size-off)
	got, err := f.root.r.ReadAt(dest[:n], off)
	if int64(got) != n {
		logf := f.root.opt.Logf
		if logf != nil {
			logf("gcfs: read %s at offset %d: %v", f.root.name, off, err)
		}
		return nil, syscall.EIO
	}
	return fuse.ReadResultVector([][]byte{dest[:n]}), 0
}

// MountFile mounts a read-only directory holding one file, name, whose size
// bytes r reads, at mountpoint.
func MountFile(mountpoint, name string, r io.ReaderAt, size int64, opt Options) (*fuse.Server, error) {
	opt.Overlay = nil
	root := &oneFileRoot{name: name, r: r, size: size, mtime: opt.Mtime, opt: opt}
	fo := MountOptions(opt)
	fo.RootStableAttr = &fs.StableAttr{Mode: fuse.S_IFDIR, Ino: 1}
	return fs.Mount(mountpoint, root, fo)
}
