package fsnode

import (
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
// many blocks of the file, and four times the read-ahead depth (a small
// cache would evict what it reads ahead).
const raMinCacheBlocks = 16

// readAhead follows a read of blocks first..last: it starts decoding the
// blocks after last, when there are any not yet cached and the file has no
// chain running, and asks for the files after this one (fileahead.go) when
// the read is at the file's start (a reader that reads it whole, likely)
// or the chain reaches its end, unless the model reads (openForModel).
func (dr *decodedReader) readAhead(first, last int) {
	ahead := last + dr.n.tree.opt.ReadAhead
	dr.chain(last+1, ahead)
	if (first == 0 || ahead >= dr.ix.NumBlocks()-1) && !dr.forModel && !dr.noFilesAhead {
		dr.readAheadFiles()
	}
}

// Prefetch starts decoding the file's first blocks in the background (the
// mount calls it on open): the decode runs while the open's reply and the
// first read request cross between kernel and server, and the read then
// waits for it instead of starting it. Where a first read decodes the
// stream whole (firstread.go: from parallelWholeMin cores), so does this.
func (dr *decodedReader) Prefetch() { dr.chain(0, dr.n.tree.opt.ReadAhead-1) }

// Prefetch starts decoding the decoded blocks the range begins in.
func (sr *sliceReader) Prefetch() {
	if dr, ok := sr.r.(*decodedReader); ok && sr.size > 0 {
		i := dr.ix.BlockAt(sr.off)
		dr.chain(i, i+dr.n.tree.opt.ReadAhead-1)
	}
}

// readsAhead reports whether the file's reads start read-ahead chains: in
// a tree with read-ahead on (a mount), through the tree's own cache.
func (dr *decodedReader) readsAhead() bool {
	t := dr.n.tree
	return t.opt.ReadAhead > 0 && dr.cache != nil && dr.cache == t.Cache && t.raSem != nil
}

// chain decodes blocks first..last (clipped to the file) in the background,
// in order, unless they are all cached, the file has a chain running, the
// tree's chains are all busy or the cache is too small for read-ahead.
func (dr *decodedReader) chain(first, last int) {
	t := dr.n.tree
	if !dr.readsAhead() {
		return
	}
	last = min(last, dr.ix.NumBlocks()-1)
	from := -1
	for j := max(first, 0); j <= last; j++ {
		if !dr.cache.Cached(cache.Key{File: dr.key, Block: j}) {
			from = j
			break
		}
	}
	if from < 0 {
		return // all cached (or nothing to read)
	}
	if _, bn := dr.ix.Block(from); t.opt.CacheSize < int64(max(raMinCacheBlocks, 4*t.opt.ReadAhead))*int64(max(bn, 1)) {
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
		for j := from; j <= last; j++ {
			if dr.cache.Cached(cache.Key{File: dr.key, Block: j}) {
				continue
			}
			b, err := dr.block(j)
			if err != nil {
				return // the read that needs it reports the error
			}
			dr.release(b)
		}
	}()
}

// raWorkers bounds the read-ahead chains of a tree running at once.
var raWorkers = max(2, cores)

// inOrderMax is how far behind a missing block a streamed file's decode
// may be for the block's read to follow it in order (inOrder) rather than
// start a decode of its own.
const inOrderMax = 32

// inOrder returns block i-1 (ok) when block i of a streamed file (streams)
// is best decoded after it: block i-1 or one of the inOrderMax blocks before
// it is cached or being decoded. The blocks between are got in order
// first, each merged with a decode already running (a read-ahead chain's,
// another read's) or decoded from its predecessor. Without this, the
// kernel's readahead request for the next MiB, arriving while the chain
// decodes the first, would decode the stream again from its start (a whole
// decode or a group's) beside the chain.
func (dr *decodedReader) inOrder(i int) ([]byte, bool) {
	if i == 0 || !dr.streams() {
		return nil, false
	}
	from := -1
	for j := i - 1; j >= max(0, i-inOrderMax); j-- {
		if dr.cache.Has(cache.Key{File: dr.key, Block: j}) {
			from = j
			break
		}
	}
	if from < 0 {
		return nil, false
	}
	var prev []byte
	for j := from; j < i; j++ {
		b, err := dr.block(j)
		dr.release(prev)
		prev = nil
		if err != nil {
			return nil, false // the block path decodes i and reports it
		}
		prev = b
	}
	return prev, true // (the caller's to release)
}
