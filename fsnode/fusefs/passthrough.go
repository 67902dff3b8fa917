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
// the kernel refuse it, the reads come and are answered from fd.
type passHandle struct{ fd int }

var (
	_ = (fs.FilePassthroughFder)((*passHandle)(nil))
	_ = (fs.FileReleaser)((*passHandle)(nil))
)

func (h *passHandle) PassthroughFd() (int, bool) { return h.fd, true }

func (h *passHandle) Release(ctx context.Context) syscall.Errno {
	_ = unix.Close(h.fd)
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

// openPassthrough opens f's bytes as an anonymous file, when the model
// makes one.
func (f *fileNode) openPassthrough() (*passHandle, bool) {
	if f.m.kind != fsnode.Decoded || f.sys.ov != nil {
		return nil, false
	}
	mf, ok := f.m.e.(memFiler)
	if !ok {
		return nil, false
	}
	fd, ok := mf.MemFile()
	if !ok {
		return nil, false
	}
	return &passHandle{fd: fd}, true
}

// minMemFiles: a store that cannot hold this many files is not worth it.
const minMemFiles = 64

// startMemFiles gives t a store of memBytes for passthrough when the
// kernel, asked once with an anonymous file, registers one for srv: go-fuse
// would otherwise find out at the first open, after the store had made a
// file for nothing. The store closes when the server ends.
func startMemFiles(srv *fuse.Server, t *fsnode.Tree, memBytes int64) error {
	var lim unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	// A quarter of the descriptors the process may open (Go raises the
	// soft limit to the hard one): the rest are the server's own (the
	// image, /dev/fuse, splice pipes) and the open files' copies.
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
	go func() {
		srv.Wait()
		t.SetMemFiles(nil)
		store.Close()
	}()
	return nil
}
