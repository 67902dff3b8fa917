package fsnode

import (
	"io"
	"runtime"
	"unsafe"

	"gcfs/cache"
	"gcfs/codec"
)

// The first read of a decoded file (issue 11, "parallel first decode"):
// when a block of a file with several blocks misses the cache and the file
// has not been decoded into that cache before, the whole stream is decoded
// in one pass (codec's Index.DecodeAll: DecodeParallel on every core when
// the stream is long enough to cut into chunks, the sequential decoder
// otherwise) and every block goes into the cache. Block by block, a cold
// read decodes each block separately, one core at a time, and a read that
// lands far into the file first decodes everything before it anyway.
// A file's output is decoded whole only on a read that would decode from
// an earlier point anyway (the block's group has no window snapshot yet),
// or on a read of its first block when the stream was never decoded and no
// read-ahead chain streams it (see parallelWholeMin); only
// when it is at most a quarter of the cache (so that it does not evict
// itself or flush everything else) and at most wholeMax; and once per
// cache. Other reads go block by block: a whole decode fills the index's
// window snapshots, so a cold block then costs at most its group's decode.
// Where the first decode streams, a block just past what is decoded or
// decoding (within inOrderMax blocks) is decoded in order after it instead
// (inOrder, readahead.go): the stream's decode is under way already.

// parallelWholeMin is the fewest cores from which a mount decodes a file
// whole on its first read rather than streaming it block by block ahead of
// the reads. On 2 cores the stream wins: one core decodes while the other
// copies the blocks already decoded to the kernel (retail layout, every
// decoded file of 1 MiB or more through a fresh mount: 505 ms streaming
// 32 blocks ahead, 636 ms decoding each file whole on both cores first);
// the parallel decode does 1.6 times the work, so it gains once the cores
// outnumber what the copy and the decode each keep busy.
const parallelWholeMin = 4

// streams reports whether the read-ahead chain streams this file's first
// decode: in a mount (the tree's cache, read-ahead on) with fewer than
// parallelWholeMin cores.
func (dr *decodedReader) streams() bool {
	return dr.readsAhead() && wholeWorkers < parallelWholeMin
}

// wholeMax bounds the output (and the stream) a whole decode holds at once.
var wholeMax int64 = 64 << 20

// cores is the CPUs the process may use, as the runtime found them at
// start (GOMAXPROCS: affinity, cgroup quota, the environment's setting).
// The tree sizes its parallel work by it, not by runtime.GOMAXPROCS(0): a
// mount raises that past the cores for its background threads
// (BackgroundThreads), and more decoding goroutines than cores would only
// take turns.
var cores = runtime.GOMAXPROCS(0)

// wholeWorkers is how many goroutines a whole decode uses.
var wholeWorkers = cores

// decodeWhole is block i's load when the file qualifies for a whole decode
// into dr.cache and has not had one: it decodes the stream whole, puts the
// other blocks in the cache and returns block i (ok). A file that does not
// qualify, or whose whole decode failed, gets ok false: the block path
// decodes it (and reports any error, with the offset the sequential decoder
// gives: DecodeAll's errors are the same, but the block path's are the ones
// a file reports everywhere else).
func (dr *decodedReader) decodeWhole(i int) (b []byte, ok bool) {
	n, c := dr.n, dr.cache
	if c == nil || c != n.tree.Cache || dr.ix.NumBlocks() < 2 || n.wholeIn.Load() == c {
		// (Not during the build: it reads part tables and prefixes, a
		// block or two of each file.)
		return nil, false
	}
	size, inLen := dr.ix.Size(), n.streamLen()
	if size > wholeMax || inLen > wholeMax || size > c.MaxBytes()/4 || dr.forModel && size > c.ColdMax() {
		// (The model's blocks go to the cold segment: a stream past its
		// bound would evict its own first blocks as its last went in.)
		return nil, false
	}
	groupUnknown, never := dr.ix.Cold(i)
	if !groupUnknown && !(i == 0 && never && !dr.streams()) {
		// The stream was decoded before (its snapshots are filled): one
		// block costs at most its group's decode, far less than the whole
		// stream for a read that wants a few bytes. Or its first block,
		// where the read-ahead chain streams the file.
		return nil, false
	}
	n.wholeMu.Lock()
	defer n.wholeMu.Unlock()
	if n.wholeIn.Load() == c {
		// Decoded whole while this load waited: the block is cached, unless
		// it was evicted at once.
		// A copy: a load returns a buffer of its own (cache.Get).
		b, ok := c.Peek(cache.Key{File: dr.key, Block: i})
		if !ok {
			return nil, false
		}
		out := append(c.NewBuffer(len(b))[:0], b...)
		c.Release(b)
		return out, true
	}
	if !n.tree.takeBig() {
		return nil, false // as many streams in memory as cores already
	}
	defer n.tree.releaseBig()
	n.wholeIn.Store(c) // once per cache, whatever happens next
	outBuf, blocks := n.decodeAllPooled(dr.ix, dr.src)
	if outBuf == nil {
		return nil, false // (the block path reads it again and reports it)
	}
	defer wholeBufs.Put(outBuf)
	n.tree.wholeDecodes.Add(1)
	cacheBlocks(c, dr.key, blocks, i, dr.forModel)
	return append(c.NewBuffer(len(blocks[i]))[:0], blocks[i]...), true
}

// decodeAllPooled decodes n's whole stream (src) through ix into a buffer
// of wholeBufs (the caller gives it back) and returns it with the output
// cut into ix's blocks; nil when the stream cannot be read whole or does
// not decode to ix's bytes (the block path then reads it, and reports
// why). The input is read into another of the pool's buffers.
func (n *Node) decodeAllPooled(ix *codec.Index, src io.ReaderAt) (*[]byte, [][]byte) {
	inLen, size := n.streamLen(), ix.Size()
	if inLen > wholeMax || size > wholeMax || ix.NumBlocks() == 0 {
		return nil, nil
	}
	inBuf := wholeBufs.Get(int(inLen)) // bounded just above
	defer wholeBufs.Put(inBuf)
	if got, _ := src.ReadAt(*inBuf, 0); int64(got) != inLen {
		return nil, nil
	}
	outBuf := wholeBufs.Get(int(size + wholeOutSlack)) // bounded just above
	blocks, err := ix.DecodeAllTo(*outBuf, *inBuf, wholeWorkers)
	if err != nil || unsafe.SliceData(blocks[0]) != unsafe.SliceData(*outBuf) {
		wholeBufs.Put(outBuf) // (a decode into a buffer of its own: it did not fit)
		return nil, nil
	}
	*outBuf = (*outBuf)[:size]
	return outBuf, blocks
}

// cacheBlocks puts a copy of each of a stream's blocks but block skip (-1:
// none) in c under key: in the cold segment if cold (and only when they all
// fit it: a stream past its bound would evict its own first blocks as its
// last went in), else in the main LRU. Each block gets its own copy, in a
// buffer the cache recycles: a cached block must not keep the whole output
// alive after the others are evicted (the cache's bound counts blocks'
// bytes), and the output is the pool's, given back for the next stream.
func cacheBlocks(c *cache.Cache, key uint64, blocks [][]byte, skip int, cold bool) {
	if cold {
		var total int64
		for _, b := range blocks {
			total += int64(len(b))
		}
		if total > c.ColdMax() {
			return
		}
	}
	for j, blk := range blocks {
		if j == skip {
			continue
		}
		b := c.NewBuffer(len(blk))
		copy(b, blk)
		if cold {
			c.PutCold(cache.Key{File: key, Block: j}, b)
		} else {
			c.PutRecyclable(cache.Key{File: key, Block: j}, b)
		}
	}
}

// takeBig reserves one of the tree's slots for a stream held in memory
// whole (a whole decode, a parallel scan): as many as the cores, so that
// readers at once cannot make the server hold more than cores × 2 ×
// wholeMax. False when none is free: the caller takes its streaming path.
func (t *Tree) takeBig() bool {
	select {
	case t.bigSem <- struct{}{}:
		return true
	default:
		return false
	}
}

func (t *Tree) releaseBig() { <-t.bigSem }
