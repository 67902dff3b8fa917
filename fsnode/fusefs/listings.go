package fusefs

import (
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// keptListings is the node bridge of a read-only mount with OPENDIR
// answered ENOSYS. Told so once, the kernel stops sending OPENDIR and
// RELEASEDIR (two of the three requests a listing costs) and opens every
// directory with its no-open defaults, FOPEN_KEEP_CACHE|FOPEN_CACHE_DIR:
// it keeps each listing in its page cache, so a directory is read from us
// once per mount and a warm find asks us nothing. Its READDIR(PLUS) then
// carry no handle: each is served by a handle opened through the bridge for
// that one read and released after it, positioned by the read's offset
// (dirHandle's Seekdir), so no state outlives a request (a handle the
// bridge keeps costs its last batch of entries: 33 MB for the retail
// tree's 9,607 directories had they been kept). Only where the tree cannot
// change: an overlay's mounts keep OPENDIR, whose handles the kernel drops
// when an edit changes a listing.
type keptListings struct {
	fuse.RawFileSystem
	asked atomic.Int64 // OPENDIRs the kernel sent (one, then none)
	open  atomic.Int64 // handles open now
	reads atomic.Int64 // handle-less reads served
}

func newKeptListings(raw fuse.RawFileSystem) *keptListings {
	return &keptListings{RawFileSystem: raw}
}

func (k *keptListings) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	k.asked.Add(1)
	return fuse.ENOSYS
}

// ReleaseDir passes on only a handle the kernel was given (none: the first
// OPENDIR gets ENOSYS).
func (k *keptListings) ReleaseDir(in *fuse.ReleaseIn) {
	if in.Fh != 0 {
		k.RawFileSystem.ReleaseDir(in)
	}
}

func (k *keptListings) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return k.read(cancel, in, out, k.RawFileSystem.ReadDir)
}

func (k *keptListings) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return k.read(cancel, in, out, k.RawFileSystem.ReadDirPlus)
}

// read serves a handle-less read through a handle of its own.
func (k *keptListings) read(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	readdir func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	if in.Fh != 0 {
		return readdir(cancel, in, out)
	}
	var oo fuse.OpenOut
	if st := k.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader}, &oo); st != fuse.OK {
		return st
	}
	k.open.Add(1)
	k.reads.Add(1)
	defer func() {
		k.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: oo.Fh})
		k.open.Add(-1)
	}()
	in.Fh = oo.Fh
	return readdir(cancel, in, out)
}
