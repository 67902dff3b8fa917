package fusefs

import (
	"sort"
	"sync"

	"gcfs/fsnode"
)

// What the kernel holds. A file opened with FOPEN_KEEP_CACHE keeps in the
// kernel's page cache what its reads were answered with, for as long as
// the kernel keeps its inode. Once one handle of a file has answered every
// byte of it, the file is held: opening it again need not open the model's
// reader, which for a decoded file starts a decode (and may rebuild an
// evicted index) and for a view encodes it (a PNG, a glb, a WAV), for
// reads that will most likely not come. The handle then opens the reader
// on its first read, if one comes (the kernel let go of some pages), and
// the file is no longer held. A file is tracked on its FUSE node, whose
// life is the kernel inode's (a forgotten inode's pages go with it), and
// only on a mount without an overlay, whose bytes never change.
//
// Re-reading every decoded file of the retail layout on one mount cost
// the server 760-1050 ms of CPU before this, 100-520 ms with it. A view's
// open is cheap while the model keeps its encoded bytes; once they are
// evicted, this saves an encode.

// coverage is the ranges of a file one handle has answered, merged, until
// they cover the whole file. Reads arrive mostly in order, but a few at a
// time (async reads), so a contiguous prefix alone would miss one that
// completes early.
type coverage struct {
	mu    sync.Mutex
	spans []span64 // sorted, disjoint, not touching
	done  bool     // covered [0, size) once; nothing more to track
}

type span64 struct{ lo, hi int64 }

// maxCoverageSpans bounds what a handle keeps: a reader that jumps about
// (a random-access tool) gives up on marking the file held rather than
// grow a list per read.
const maxCoverageSpans = 64

// add records [off, off+n) as answered and reports whether [0, size) is
// covered now (once: later calls report false).
func (c *coverage) add(off, n, size int64) bool {
	if n <= 0 || off < 0 || size <= 0 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.done {
		return false
	}
	lo, hi := off, off+n
	// The first span whose end reaches lo, and every span after it that
	// starts at or before hi, merge with [lo, hi).
	i := sort.Search(len(c.spans), func(k int) bool { return c.spans[k].hi >= lo })
	j := i
	for j < len(c.spans) && c.spans[j].lo <= hi {
		lo, hi = min(lo, c.spans[j].lo), max(hi, c.spans[j].hi)
		j++
	}
	if i == j && len(c.spans) >= maxCoverageSpans {
		c.done = true // too scattered to follow
		c.spans = nil
		return false
	}
	c.spans = append(c.spans[:i], append([]span64{{lo, hi}}, c.spans[j:]...)...)
	if len(c.spans) == 1 && c.spans[0].lo <= 0 && c.spans[0].hi >= size {
		c.done = true
		c.spans = nil
		return true
	}
	return false
}

// tracksHeld reports whether f's opens may go lazy once it is held: a
// decoded file or a view (a raw file's open costs nothing to skip), on a
// mount whose bytes cannot change (no overlay).
func (f *fileNode) tracksHeld() bool {
	return f.sys.ov == nil && (f.m.kind == fsnode.Decoded || f.m.kind == fsnode.View)
}

// answered records that a read of handle h was answered with [off, off+n)
// of a file of size bytes: once h has answered all of it, f is held.
func (f *fileNode) answered(h *fileHandle, off, n, size int64) {
	if f.tracksHeld() && h.cov.add(off, n, size) {
		f.held.Store(true)
	}
}
