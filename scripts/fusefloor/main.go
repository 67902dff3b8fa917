// Command fusefloor measures the floor under gcfs's FUSE figures: it serves
// a directory tree (gcfs extract's output) read-only through go-fuse with
// the least work a FUSE server can do. The whole tree's names and sizes are
// in memory before the mount is ready (no lookup, listing or attribute
// costs the server more than go-fuse's own handling), file reads go to the
// extracted files (through FUSE passthrough where the kernel allows it: the
// reads then never reach the server; FUSEFLOOR_NO_PASSTHROUGH=1 answers
// each from the server's memory instead, as gcfs answers a decoded file's),
// and the mount (options, kernel timeouts, kept listings, readahead) and
// FLUSH handling are gcfs's own. What bench-squashfs.sh times
// on it is what FUSE and go-fuse cost on this kernel, so gcfs's distance to
// it is what gcfs could still win; its distance to the kernel's squashfs is
// the FUSE round trip's. A benchmark tool: no test or user command needs
// it.
//
// Usage: fusefloor DIR MOUNTPOINT (stays attached until unmounted).
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"gcfs/fsnode/fusefs"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// dirNode is a directory whose children were all added before the mount.
type dirNode struct {
	fs.Inode
}

var _ = (fs.NodeGetattrer)((*dirNode)(nil))

func (d *dirNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFDIR | 0555
	return 0
}

// fileNode is a regular file: its size from the walk, its bytes read from
// the extracted file.
type fileNode struct {
	fs.Inode
	path string
	size int64
}

var (
	_ = (fs.NodeGetattrer)((*fileNode)(nil))
	_ = (fs.NodeOpener)((*fileNode)(nil))
	_ = (fs.NodeFlusher)((*fileNode)(nil))
)

func (f *fileNode) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFREG | 0444
	out.Size = uint64(f.size)
	return 0
}

func (f *fileNode) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	fd, err := syscall.Open(f.path, syscall.O_RDONLY, 0)
	if err != nil {
		return nil, 0, fs.ToErrno(err)
	}
	if noPassthrough {
		return servedFile{fd}, fuse.FOPEN_KEEP_CACHE, 0
	}
	return fs.NewLoopbackFile(fd), fuse.FOPEN_KEEP_CACHE, 0
}

// noPassthrough (FUSEFLOOR_NO_PASSTHROUGH=1) serves every read through the
// server: go-fuse's loopback file otherwise hands the kernel its fd
// (FUSE passthrough, where the kernel supports it), and reads then never
// reach the server at all, which no server that makes its bytes can do.
var noPassthrough = os.Getenv("FUSEFLOOR_NO_PASSTHROUGH") == "1"

// servedFile is an extracted file whose reads the server answers as gcfs
// answers a decoded file's: bytes in its memory, written to the kernel
// (writev), here read with pread(2) first. (A splice from the file would be
// cheaper than any server whose bytes are decoded can be.)
type servedFile struct{ fd int }

var (
	_ = (fs.FileReader)(servedFile{})
	_ = (fs.FileReleaser)(servedFile{})
)

func (s servedFile) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := syscall.Pread(s.fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultVector([][]byte{dest[:n]}), 0
}

func (s servedFile) Release(ctx context.Context) syscall.Errno {
	return fs.ToErrno(syscall.Close(s.fd))
}

// Flush answers ENOSYS as gcfs's files do: the kernel then stops sending
// one with every close.
func (f *fileNode) Flush(ctx context.Context, fh fs.FileHandle) syscall.Errno {
	return syscall.ENOSYS
}

// add mirrors the directory at path below parent.
func add(ctx context.Context, parent *fs.Inode, path string, ino *uint64) error {
	ents, err := os.ReadDir(path)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := filepath.Join(path, e.Name())
		*ino++
		if e.IsDir() {
			d := &dirNode{}
			ch := parent.NewPersistentInode(ctx, d, fs.StableAttr{Mode: fuse.S_IFDIR, Ino: *ino})
			parent.AddChild(e.Name(), ch, false)
			if err := add(ctx, ch, p, ino); err != nil {
				return err
			}
			continue
		}
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		f := &fileNode{path: p, size: info.Size()}
		ch := parent.NewPersistentInode(ctx, f, fs.StableAttr{Mode: fuse.S_IFREG, Ino: *ino})
		parent.AddChild(e.Name(), ch, false)
	}
	return nil
}

// rootNode builds the tree when go-fuse adds it, before the mount is ready.
type rootNode struct {
	dirNode
	dir string
	err error
}

var _ = (fs.NodeOnAdder)((*rootNode)(nil))

func (r *rootNode) OnAdd(ctx context.Context) {
	ino := uint64(1)
	r.err = add(ctx, &r.Inode, r.dir, &ino)
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: fusefloor DIR MOUNTPOINT")
		os.Exit(2)
	}
	dir, err := filepath.Abs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "fusefloor:", err)
		os.Exit(1)
	}
	root := &rootNode{dir: dir}
	// gcfs's mount: its options and kernel timeouts, kept listings, its
	// readahead.
	srv, err := fusefs.MountNodes(os.Args[2], root, fusefs.Options{FsName: "fusefloor"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "fusefloor: mount:", err)
		os.Exit(1)
	}
	if root.err != nil {
		fmt.Fprintln(os.Stderr, "fusefloor: reading the tree:", root.err)
		_ = srv.Unmount()
		os.Exit(1)
	}
	srv.Wait()
}
