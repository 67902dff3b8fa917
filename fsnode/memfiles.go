package fsnode

import (
	"fmt"

	"gcfs/memfile"
)

// Decoded files the kernel reads itself. A mount whose kernel takes FUSE
// passthrough hands it, at each open of a decoded file, an anonymous file
// holding the decoded bytes whole (package memfile), so that no read of
// the file reaches the server: the reads of a file walked whole (cp -r,
// tar, find | xargs cat) then cost the server an open, where each cost a
// round trip and a copy out of the cache. The file-ahead worker makes the
// files after the one opened (fileahead.go), so the open finds its file
// made. The store is the tree's (SetMemFiles), bounded in bytes; a file it
// does not take (a stream with an error, one larger than its MaxFile) is
// served as before.
//
// On the retail layout's 1,212 decoded files read in tree order through a
// fresh mount (5 interleaved runs), this took the read from 815-1,055 ms
// (median 912) to 817-860 ms (median 833), and the server's CPU from
// 800-1,130 ms to 680-850 ms; the kernel's squashfs of the same files took
// 615-659 ms. The worker's decode, on the core the reader does not use, is
// most of what is left.

// memFileMax bounds the files made whole: an open makes its file before
// it returns, and a reader that wants a few bytes of a large file (a hex
// viewer, file(1)) should not wait for all of it.
const memFileMax = 16 << 20

// fillChunk bounds the bytes one write of a fill takes from the cache.
const fillChunk = 8 << 20

// SetMemFiles gives the tree its store of files made whole for the kernel
// (nil: none, every read is served).
func (t *Tree) SetMemFiles(s *memfile.Store) { t.memFiles.Store(s) }

// MemFiles is the tree's store, or nil.
func (t *Tree) MemFiles() *memfile.Store { return t.memFiles.Load() }

// MemFile returns a new descriptor (the caller closes it) of an anonymous
// file holding n's decoded bytes, made now unless the store holds it, and
// asks for the files after n to be made ahead. ok is false where n is not
// a decoded file the store takes (no store, a stream with an error, a file
// larger than memFileMax or its MaxFile) or its making failed: the caller
// then serves n's reads itself, and that path reports any error.
func (n *Node) MemFile() (fd int, ok bool) {
	t := n.tree
	s := t.memFiles.Load()
	if s == nil || !t.ready.Load() || n.Kind != Decoded || n.staticErr != nil {
		return -1, false
	}
	n.Size() // the size step: a stream that does not decode fails it
	if !n.fitsMemFile(s) {
		return -1, false
	}
	fd, err := s.Get(n.Ino, n.decSize, n.fillMem)
	if err != nil {
		return -1, false
	}
	if t.opt.ReadAhead > 0 && !t.nextHeld(s, n) {
		t.filesAheadOf(n)
	}
	return fd, true
}

// fitsMemFile reports whether s takes n's file, once n is sized: a
// stream that decodes whole, within the store's and memFileMax's bound.
func (n *Node) fitsMemFile(s *memfile.Store) bool {
	return n.decErr == nil && n.decSize >= 0 && n.decSize <= min(s.MaxFile(), memFileMax)
}

// nextHeld reports whether the store holds the decoded file after n in
// tree order: the worker was there, and a reader walking files it made
// (a second cat) need not wake it at every open.
func (t *Tree) nextHeld(s *memfile.Store, n *Node) bool {
	k := int(n.seq) + 1
	if n.seq < 0 || k >= len(t.ahead.order) {
		return true
	}
	next := t.ahead.order[k]
	return s.Holds(next.Ino)
}

// memFileAhead makes n's file for the file-ahead worker (which sized n),
// unless the store holds it; it reports whether n is the store's, and
// takes its size from budget.
func (t *Tree) memFileAhead(n *Node, budget *int64) bool {
	s := t.memFiles.Load()
	if s == nil || !n.fitsMemFile(s) {
		return false
	}
	*budget -= n.decSize
	made, err := s.Make(n.Ino, n.decSize, n.fillMem)
	if err != nil {
		return false
	}
	if made {
		t.memAhead.Add(1)
	}
	return true
}

// fillMem writes n's decoded bytes into w: the cache's blocks as they are
// (one pwritev a chunk), decoded now where not cached. The blocks handed
// out whole leave the cache (ServeSlices): the file holds them now.
func (n *Node) fillMem(w *memfile.Writer) error {
	ix, err := n.index()
	if err != nil {
		return err
	}
	dr, err := n.decodedReaderOf(ix)
	if err != nil {
		return err
	}
	dr.noFilesAhead = true // MemFile asks for them, once
	size := w.Size()
	if dr.Size() != size {
		return fmt.Errorf("%s: %d decoded bytes, %d expected", n.path, dr.Size(), size)
	}
	for off := int64(0); off < size; {
		k := int(min(fillChunk, size-off))
		vecs, done, err := dr.ServeSlices(off, k)
		if err == nil {
			_, err = w.WriteVecAt(vecs, off)
		}
		done()
		if err != nil {
			return err
		}
		off += int64(k)
	}
	return nil
}

// MemAhead counts the files the file-ahead worker made for the store.
func (t *Tree) MemAhead() int64 { return t.memAhead.Load() }
