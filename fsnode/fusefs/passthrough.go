package fusefs

import (
	"context"
	"fmt"
	"syscall"

	"gcfs/fsnode"
	"gcfs/memfile"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"
)

// FUSE passthrough of decoded files (fsnode/memfiles.go): where the kernel
// takes it (Linux 6.9 on, a server with CAP_SYS_ADMIN) and the mount has no
// overlay, a decoded file's open hands the kernel a descriptor of an
// anonymous file holding its decoded bytes, and the kernel reads that file
// itself: no read of it reaches the server. Elsewhere, and for a file the
// store does not take, reads are served as before.

// memFiler is a model node that can hand out its bytes as a file
// (*fsnode.Node's decoded files).
type memFiler interface {
	MemFile() (fd int, ok bool)
}

// passHandle is an open decoded file whose bytes are in an anonymous file.
// go-fuse registers fd with the kernel at the open (PassthroughFd); should
// the kernel refuse it, the reads come and are answered from fd. With no
// fd (the store did not make the file: a stream with an error, a file too
// large, a failed fill, the mount holding as many such opens as it may),
// the handle rides on the backing file the inode's other opens registered,
// if any (the kernel refuses, EIO, an open in its caching mode while the
// inode is open in passthrough); otherwise the kernel sends the reads,
// served through serve.
type passHandle struct {
	fd    int // -1: none
	sys   *fsys
	serve *fileHandle // fd < 0: the reads' handle
}

var (
	_ = (fs.FilePassthroughFder)((*passHandle)(nil))
	_ = (fs.FileReleaser)((*passHandle)(nil))
)

func (h *passHandle) PassthroughFd() (int, bool) { return h.fd, h.fd >= 0 }

func (h *passHandle) Release(ctx context.Context) syscall.Errno {
	if h.fd >= 0 {
		_ = unix.Close(h.fd)
		h.sys.passOpen.Add(-1)
	}
	return 0
}

// read answers a read the kernel sent after all (no passthrough).
func (h *passHandle) read(dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n, err := unix.Pread(h.fd, dest, off)
	if err != nil {
		return nil, fs.ToErrno(err)
	}
	return fuse.ReadResultVector([][]byte{dest[:n]}), 0
}

// passesThrough reports whether f's opens may pass through: a decoded
// file of a read-only mount whose kernel took FUSE passthrough. Every open
// of such a file gets a passHandle, so that one the store cannot serve
// still rides on a backing file another open of the inode registered.
func (f *fileNode) passesThrough() bool {
	if f.sys.passMax.Load() == 0 || f.m.kind != fsnode.Decoded || f.sys.ov != nil {
		return false
	}
	_, ok := f.m.e.(memFiler)
	return ok
}

// openPassthrough opens f's bytes as an anonymous file, when the model
// makes one and the mount holds fewer such opens than it may (each holds
// a descriptor until its release; past the bound the server keeps its
// own).
func (f *fileNode) openPassthrough() (*passHandle, bool) {
	if f.sys.passOpen.Load() >= f.sys.passMax.Load() {
		return nil, false
	}
	fd, ok := f.m.e.(memFiler).MemFile()
	if !ok {
		return nil, false
	}
	f.sys.passOpen.Add(1)
	return &passHandle{fd: fd, sys: f.sys}, true
}

// minMemFiles: a store that cannot hold this many files is not worth it.
const minMemFiles = 64

// startMemFiles gives t a store of memBytes for passthrough when the
// kernel, asked once with an anonymous file, registers one for srv: go-fuse
// would otherwise find out at the first open, after the store had made a
// file for nothing. The store closes when the server ends.
func startMemFiles(srv *fuse.Server, root *dirNode, t *fsnode.Tree, memBytes int64) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	// A quarter of the descriptors the process may open (Go raises the
	// soft limit to the hard one) for the files held, as many for the
	// open files' copies (passMax): the rest are the server's own (the
	// image, /dev/fuse, splice pipes).
	files := int(min(lim.Cur/4, 1<<20))
	if files < minMemFiles {
		return fmt.Errorf("%d descriptors are too few to keep files open", lim.Cur)
	}
	store, err := memfile.New(memBytes, files)
	if err != nil {
		return err
	}
	fd, err := memfile.Anonymous()
	if err != nil {
		store.Close()
		return err
	}
	defer unix.Close(fd)
	id, errno := srv.RegisterBackingFd(&fuse.BackingMap{Fd: int32(fd)})
	if errno != 0 {
		store.Close()
		return errno
	}
	_ = srv.UnregisterBackingFd(id)
	t.SetMemFiles(store)
	root.sys.passMax.Store(int64(files))
	go func() {
		srv.Wait()
		t.SetMemFiles(nil)
		store.Close()
	}()
	return nil
}
