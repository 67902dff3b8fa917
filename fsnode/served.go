package fsnode

import (
	"io"
	"sync"

	"gcfs/cache"
)

// servedBlocks is what a reader of the mount (the FUSE layer, whose
// replies the kernel keeps in its page cache: FOPEN_KEEP_CACHE) has been
// handed of each block of a decoded file. A block handed out whole is held
// by the page cache from then on, so the tree's cache lets go of it rather
// than hold it twice: the cache then holds what is decoded ahead of the
// reader, and a cat of the whole tree does not grow the server's heap by
// every byte it reads (fresh memory costs a page fault and a clear per
// page, the largest part of that cat's time on a small VM). A block goes
// once its successor is cached too (or it is the file's last), since the
// next block's in-order decode starts from it.
type servedBlocks struct {
	mu   sync.Mutex
	got  map[int]int  // bytes handed out of a block not yet whole
	done map[int]bool // blocks handed out whole, kept while the next is not cached
}

// ServeSlices is Slices for a reader that passes the bytes to the kernel's
// page cache (the mount's reads): blocks it hands out whole leave the
// tree's cache (servedBlocks). Done, called once the kernel has the bytes
// (and never before), ends the reader's hold on the blocks, whose buffers
// the cache then recycles (cache.Release); until then the pieces stay
// valid. The model's own readers, and a tree with no cache of its own,
// keep everything.
func (dr *decodedReader) ServeSlices(off int64, n int) (vecs [][]byte, done func(), err error) {
	vecs = make([][]byte, 0, n/(64<<10)+2)
	var blocks [][]byte
	err = dr.walk(off, n, func(b, block []byte) {
		vecs = append(vecs, b)
		blocks = append(blocks, block)
	})
	done = func() {
		for _, b := range blocks {
			dr.release(b)
		}
	}
	if dr.forModel || dr.cache == nil || dr.cache != dr.n.tree.Cache || len(vecs) == 0 {
		return vecs, done, err
	}
	got := 0
	for _, v := range vecs {
		got += len(v)
	}
	dr.served(off, got)
	return vecs, done, err
}

// served records that [off, off+n) went to the kernel and drops the blocks
// that are now served whole.
func (dr *decodedReader) served(off int64, n int) {
	s := &dr.serve
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.got == nil {
		s.got, s.done = make(map[int]int), make(map[int]bool)
	}
	end := off + int64(n)
	last := dr.ix.NumBlocks() - 1
	for i := dr.ix.BlockAt(off); i <= last && off < end; i++ {
		boff, bn := dr.ix.Block(i)
		part := int(min(end, boff+int64(bn)) - max(off, boff))
		off = boff + int64(bn)
		if s.done[i] {
			continue // (a read again: the block went, or waits on its successor)
		}
		if s.got[i] += part; s.got[i] < bn {
			continue
		}
		delete(s.got, i)
		s.done[i] = true
		for _, j := range [2]int{i - 1, i} {
			if j >= 0 && s.done[j] && (j == last || dr.cache.Has(cache.Key{File: dr.key, Block: j + 1})) {
				dr.cache.Drop(cache.Key{File: dr.key, Block: j})
				delete(s.done, j)
			}
		}
	}
}

// ServeSlices is decodedReader.ServeSlices for the range.
func (sr *sliceReader) ServeSlices(off int64, n int) ([][]byte, func(), error) {
	s, ok := sr.r.(interface {
		ServeSlices(off int64, n int) ([][]byte, func(), error)
	})
	if !ok || off < 0 || off >= sr.size {
		vecs, err := sr.slices(off, n)
		return vecs, func() {}, err
	}
	atEnd := false
	if rem := sr.size - off; int64(n) > rem {
		n, atEnd = int(rem), true
	}
	vecs, done, err := s.ServeSlices(sr.off+off, n)
	if err == nil && atEnd {
		err = io.EOF
	}
	return vecs, done, err
}
