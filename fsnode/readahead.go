package fsnode

import (
	"runtime"

	"gcfs/cache"
)

// Decoded read-ahead (issue 11, "through the mount"): when a read of a
// decoded file ends in block i, the blocks after it (up to
// Options.ReadAhead of them) are decoded in the background into the tree's
// cache, so that the next read finds them there while this one's bytes are
// being copied to the kernel. One chain per file at a time, each block
// decoded with its predecessor as the window (the chain runs in order), at
// most raWorkers chains per tree, nothing when the cache is too small to
// hold what it would read ahead. A read that asks for a block the chain is
// decoding waits for that decode (the cache merges concurrent misses), so no
// block is decoded twice for a read and its read-ahead, nor for the
// kernel's own readahead requests arriving together.

// raMinCacheBlocks: read-ahead runs only when the cache holds at least this
// many blocks of the file (a small cache would evict what it reads ahead).
const raMinCacheBlocks = 16

// readAhead starts decoding the blocks after block i, when there are any
// not yet cached and the file has no chain running.
func (dr *decodedReader) readAhead(i int) {
	t := dr.n.tree
	depth := t.opt.ReadAhead
	if depth <= 0 || dr.cache == nil || dr.cache != t.Cache || t.raSem == nil {
		return
	}
	nb := dr.ix.NumBlocks()
	last := min(i+depth, nb-1)
	if last <= i {
		return
	}
	first := -1
	for j := i + 1; j <= last; j++ {
		if _, ok := dr.cache.Peek(cache.Key{File: dr.key, Block: j}); !ok {
			first = j
			break
		}
	}
	if first < 0 {
		return // all cached
	}
	if _, bn := dr.ix.Block(i); t.opt.CacheSize < int64(raMinCacheBlocks)*int64(max(bn, 1)) {
		return
	}
	if !dr.n.raRunning.CompareAndSwap(false, true) {
		return // a chain of this file's is running; it will be asked again
	}
	select {
	case t.raSem <- struct{}{}:
	default:
		dr.n.raRunning.Store(false) // the tree's chains are all busy
		return
	}
	go func() {
		defer func() {
			<-t.raSem
			dr.n.raRunning.Store(false)
		}()
		for j := first; j <= last; j++ {
			if _, ok := dr.cache.Peek(cache.Key{File: dr.key, Block: j}); ok {
				continue
			}
			if _, err := dr.block(j); err != nil {
				return // the read that needs it reports the error
			}
		}
	}()
}

// raWorkers bounds the read-ahead chains of a tree running at once.
var raWorkers = max(2, runtime.GOMAXPROCS(0))
