package codec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
	"sync/atomic"
)

// blockTarget is the output a decoded block holds at least (all but the
// last block; for NewIndexParallel, all but the last block of each parallel
// chunk); blocks end at the first packet boundary past it. A variable so
// tests can make many small blocks.
var blockTarget int64 = 64 << 10

const (
	// groupBlocks is how many blocks share one window snapshot, at least;
	// a group grows (to maxGroupBlocks at most) until its snapshot is at most
	// 1/8 of its output. Decoding a block with no cached predecessor decodes
	// from its group's start.
	groupBlocks    = 3
	maxGroupBlocks = 6 // 6 × 64 KiB ≥ 8 × the largest snapshot (48 KiB)
)

// checkpoint is a packet boundary: where a block starts in the stream and in
// the output, and the decoder state there (for the literal-pair rules).
type checkpoint struct {
	in    int64
	out   int64
	state uint8
}

// Index gives random access to one stream's output. A decoded block is the
// output between two checkpoints (at least 64 KiB for all but the last block;
// from NewIndexParallel, all but the last block of each parallel chunk); it
// is the cache's unit.
//
// The first checkpoint of each group of blocks has a snapshot of the output
// before it, trimmed to what the group's matches actually reach back to (at
// most 48 KiB), so any block decodes from its group's start without the
// stream's beginning. Snapshots total at most 1/8 of the output (groups of 3
// to 6 blocks), but for the last group of each parallel chunk, which may be
// smaller. NewIndex learns only their lengths (a scan, no output); the
// bytes are filled lazily, by any decode that passes a group's start with
// the window at hand, or by a forward decode from the nearest group that has
// its snapshot when a block is asked for cold (see DecodeBlock), or all at
// once by FillSnapshots. An Index is safe for concurrent use.
type Index struct {
	hdr        Header
	opt        Options
	cps        []checkpoint // len = NumBlocks()+1; the last is the stream's end
	groupFirst []int32      // first block of each group
	snapLen    []int32      // snapLen[g]: bytes before group g's start its matches reach (group 0: none)
	// snaps[g]: output [cps[groupFirst[g]].out-snapLen[g], cps[groupFirst[g]].out)
	// once filled; nil until then. Stores are idempotent (the output is
	// what it is), the first one wins.
	snaps    []atomic.Pointer[[]byte]
	maxSnaps int64         // sum of snapLen
	filled   atomic.Int64  // bytes of snapshots filled
	layout   atomic.Uint64 // Layout, once computed (0: not yet)
}

// Layout is a fingerprint of how the index cuts the output into blocks.
// Indexes of one stream built different ways (NewIndex, NewIndexParallel,
// NewIndexDecode) may place their block boundaries differently, so a cache
// of decoded blocks keys them by block number and Layout: a block decoded
// through one index is never served as a block of another.
func (ix *Index) Layout() uint64 {
	if v := ix.layout.Load(); v != 0 {
		return v
	}
	h := uint64(14695981039346656037)
	for _, cp := range ix.cps {
		for _, v := range [2]int64{cp.in, cp.out} {
			for k := 0; k < 64; k += 8 {
				h = (h ^ uint64(v>>k)&0xff) * 1099511628211
			}
		}
	}
	if h == 0 {
		h = 1
	}
	ix.layout.Store(h)
	return h
}

// NewIndex builds the random-access index of the stream in r (see Scan for r
// and size). It fails with the first CorruptError, the same as Scan's. It is
// a size scan that also records the checkpoints, the groups and how far each
// group's matches reach back; it produces no output (snapshots are filled
// later, see Index), so it costs about what Scan costs, and its memory is the
// index itself whatever the stream's size.
func NewIndex(r io.ReaderAt, size int64, opt Options) (*Index, error) {
	return newIndex(r, size, opt, false) // (nil on any error)
}

// NewCleanIndex is NewIndex that keeps what a broken stream still gives: on
// a stream that breaks a rule it returns, with the CorruptError, the index
// of the clean prefix (the DecodedSize bytes Scan reports; its last block
// ends at the broken packet), so that ranges wholly before the break still
// read. The index is nil when nothing decodes before the break, and on any
// other error (the header, I/O).
func NewCleanIndex(r io.ReaderAt, size int64, opt Options) (*Index, error) {
	return newIndex(r, size, opt, true)
}

func newIndex(r io.ReaderAt, size int64, opt Options, keepClean bool) (*Index, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	b := indexBuilder{sc: newScanner(opt)}
	b.start(checkpoint{in: HeaderSize})
	cr := chunkReader{r: r, end: h.Size}
	for off := int64(HeaderSize); off < h.Size; off = b.sc.inBase + int64(b.sc.pos) {
		in, full, err := cr.fill(off)
		if err != nil {
			return nil, err
		}
		b.sc.inBase, b.sc.in, b.sc.full, b.sc.pos = off, in, full, 0
		if err := b.scan(); err != errNeedInput {
			if err != nil {
				return b.cleanPrefix(h, opt, err, keepClean)
			}
			break
		}
	}
	b.finish(h.Size)
	return b.index(h, opt), nil
}

// cleanPrefix is the index of the output before the packet err (a
// CorruptError) names, when keep is set and there is any, with err.
func (b *indexBuilder) cleanPrefix(h Header, opt Options, err error, keep bool) (*Index, error) {
	var ce *CorruptError
	if !keep || !errors.As(err, &ce) || b.sc.olen == 0 {
		return nil, err
	}
	// The break is a packet the scanner did not pass, so it lies at or
	// past the open block's start; the block ends there.
	if last := b.cps[len(b.cps)-1]; ce.Offset < last.in || ce.Offset > h.Size {
		return nil, err
	}
	b.finish(ce.Offset)
	return b.index(h, opt), err
}

// indexBuilder is NewIndex's loop, shared with NewIndexParallel: the
// scanner, the checkpoints so far (the last one starts the open block) and
// the groups (the last one open, its snapshot length not known yet).
type indexBuilder struct {
	sc         scanner
	st         Stats
	cps        []checkpoint
	groupFirst []int32
	snapLen    []int32 // of the closed groups
	groupStart int64   // output offset where the open group starts
}

// start opens the first block and group at cp (the scanner's position and
// output length).
func (b *indexBuilder) start(cp checkpoint) {
	b.cps = append(b.cps, cp)
	b.openGroup()
	b.sc.stopOut = cp.out + blockTarget
}

// The index's rules below take the decoder's or the scanner's position
// explicitly (newGroup, mark, finishAt: NewIndexDecode builds with them
// too); the methods after them feed them the scanner's.

// newGroup starts a group at the last checkpoint.
func (b *indexBuilder) newGroup() {
	k := len(b.cps) - 1
	b.groupFirst = append(b.groupFirst, int32(k))
	b.groupStart = b.cps[k].out
}

// closeGroupAt records the open group's snapshot length: its matches reach
// back to min(minRef, groupStart).
func (b *indexBuilder) closeGroupAt(minRef int64) {
	b.snapLen = append(b.snapLen, int32(b.groupStart-min(minRef, b.groupStart)))
}

// mark starts a block at cp, a packet boundary where the open block has
// reached blockTarget, and a group there when the open one is done (minRef:
// the lowest output offset the open group's matches read); it reports
// whether it started a group. A group closes once it has groupBlocks
// blocks and its snapshot is at most 1/8 of its output; maxGroupBlocks
// always satisfies that.
func (b *indexBuilder) mark(cp checkpoint, minRef int64) bool {
	b.cps = append(b.cps, cp)
	nb := len(b.cps) - 1 - int(b.groupFirst[len(b.groupFirst)-1])
	snapLen := b.groupStart - min(minRef, b.groupStart)
	if nb >= groupBlocks && snapLen*8 <= cp.out-b.groupStart || nb >= maxGroupBlocks {
		b.closeGroupAt(minRef)
		b.newGroup()
		return true
	}
	return false
}

// finishAt ends the open block at stream offset end with total bytes of
// output and closes the open group (minRef as for mark).
func (b *indexBuilder) finishAt(end, total, minRef int64) {
	if last := b.cps[len(b.cps)-1]; last.out == total && len(b.cps) > 1 {
		// The tail produced no output: the last block ends at the end
		// instead of being empty.
		b.cps = b.cps[:len(b.cps)-1]
	}
	b.cps = append(b.cps, checkpoint{in: end, out: total})
	// The open group still needs its snapshot, unless it lost its only
	// block to the trimming above.
	if g := len(b.groupFirst) - 1; g > 0 && int(b.groupFirst[g]) >= len(b.cps)-1 {
		b.groupFirst = b.groupFirst[:g]
	} else {
		b.closeGroupAt(minRef)
	}
}

// openGroup starts a group at the last checkpoint for the scanner.
func (b *indexBuilder) openGroup() {
	b.newGroup()
	b.trackGroup()
}

// trackGroup points the scanner's tracking at the open group: from
// maxWindow past the group's start no match reaches before it, so the
// scanner's fast loop, which does not track, may run from there.
func (b *indexBuilder) trackGroup() {
	b.sc.minRef = b.groupStart
	b.sc.trackEnd = b.groupStart + maxWindow
}

// closeGroup closes the open group with the scanner's reach.
func (b *indexBuilder) closeGroup() { b.closeGroupAt(b.sc.minRef) }

// scan runs the scanner over its buffer, starting a block at every stop,
// until it needs more input (errNeedInput), the stream ends (nil) or a
// rule breaks.
func (b *indexBuilder) scan() error {
	for {
		err := b.sc.run(&b.st)
		if err != errStop {
			return err
		}
		// (errStop comes with a packet in the buffer: off is inside the stream.)
		b.boundary(b.sc.inBase + int64(b.sc.pos))
	}
}

// boundary starts a block at the packet boundary off, where the scanner
// stopped (mark, with the scanner's output, state and reach).
func (b *indexBuilder) boundary(off int64) {
	if b.mark(checkpoint{in: off, out: b.sc.olen, state: b.sc.state}, b.sc.minRef) {
		b.trackGroup()
	}
	b.sc.stopOut = b.sc.olen + blockTarget
}

// finish ends the open block at stream offset end with the scanner's
// output so far and closes the open group.
func (b *indexBuilder) finish(end int64) { b.finishAt(end, b.sc.olen, b.sc.minRef) }

// index is the finished Index.
func (b *indexBuilder) index(h Header, opt Options) *Index {
	ix := &Index{hdr: h, opt: opt, cps: b.cps, groupFirst: b.groupFirst, snapLen: b.snapLen}
	ix.snaps = make([]atomic.Pointer[[]byte], len(ix.groupFirst))
	for _, n := range ix.snapLen {
		ix.maxSnaps += int64(n)
	}
	return ix
}

// groupOf is the group holding block i.
func (ix *Index) groupOf(i int) int {
	return sort.Search(len(ix.groupFirst), func(g int) bool { return int(ix.groupFirst[g]) > i }) - 1
}

// snapshot returns group g's snapshot and whether it is known (a group whose
// matches reach nothing before it needs none).
func (ix *Index) snapshot(g int) ([]byte, bool) {
	if ix.snapLen[g] == 0 {
		return nil, true
	}
	if p := ix.snaps[g].Load(); p != nil {
		return *p, true
	}
	return nil, false
}

// reach is the lowest output offset group g's decode reads.
func (ix *Index) reach(g int) int64 {
	return ix.cps[ix.groupFirst[g]].out - int64(ix.snapLen[g])
}

// startFor picks where a forward decode that fills the snapshots of groups
// lo..hi starts: the nearest group before lo whose snapshot is known and
// whose window reaches back at least as far as every group it will pass
// needs (so the sliding window always holds what a match or a snapshot
// needs). Group 0, the stream's start, always qualifies.
func (ix *Index) startFor(lo, hi int) int {
	need := int64(math.MaxInt64)
	for g := hi; g >= lo; g-- {
		need = min(need, ix.reach(g))
	}
	for g := lo - 1; g > 0; g-- {
		if _, ok := ix.snapshot(g); ok && ix.reach(g) <= need {
			return g
		}
		need = min(need, ix.reach(g))
	}
	return 0
}

// Size is the decoded length.
func (ix *Index) Size() int64 { return ix.cps[len(ix.cps)-1].out }

// NumBlocks is the number of decoded blocks.
func (ix *Index) NumBlocks() int {
	if ix.Size() == 0 {
		return 0
	}
	return len(ix.cps) - 1
}

// Block returns the output range [off, off+n) of block i.
func (ix *Index) Block(i int) (off int64, n int) {
	if i < 0 || i >= ix.NumBlocks() {
		return 0, 0
	}
	return ix.cps[i].out, int(ix.cps[i+1].out - ix.cps[i].out)
}

// BlockAt returns the block holding output offset off (0 <= off < Size).
func (ix *Index) BlockAt(off int64) int {
	nb := ix.NumBlocks()
	if nb == 0 || off < 0 {
		return 0
	}
	if off >= ix.Size() {
		return nb - 1
	}
	// First checkpoint with out > off, minus one.
	return sort.Search(nb, func(i int) bool { return ix.cps[i+1].out > off })
}

func (ix *Index) baseMem() int64 {
	return 128 + int64(cap(ix.cps))*24 + int64(cap(ix.groupFirst))*4 + int64(cap(ix.snapLen))*4 + int64(len(ix.snaps))*8
}

// MemSize is the index's footprint in bytes now, snapshots filled so far
// included. It grows as snapshots are filled, up to MaxMemSize.
func (ix *Index) MemSize() int64 { return ix.baseMem() + ix.filled.Load() }

// MaxMemSize is the footprint once every snapshot is filled (known when the
// index is built): what a budget should reserve for it.
func (ix *Index) MaxMemSize() int64 { return ix.baseMem() + ix.maxSnaps }

// ErrBlockRange is returned by DecodeBlock for a block number out of range.
var ErrBlockRange = errors.New("wad: block number out of range")

// blockScratch is DecodeBlock's reusable memory: output with its window, and
// a compressed chunk.
type blockScratch struct{ out, in []byte }

var scratchPool = sync.Pool{New: func() any { return &blockScratch{} }}

// slideAt is how much output a forward decode holds past its window before
// it slides (keeping the last maxWindow bytes): enough that a decode from a
// group's start never slides.
func slideAt() int {
	return max(maxGroupBlocks*(int(blockTarget)+outSlack), 256<<10)
}

// DecodeBlock returns block i's decoded bytes, reading the stream from r. prev,
// when not nil, is block i-1's decoded bytes (from a cache) and may serve as the
// window. Otherwise the block decodes from its group's start with the group's
// snapshot (at most groupBlocks-1 blocks decoded and dropped) when that is
// known; when it is not, from the nearest earlier group whose snapshot is
// known (or the stream's start), filling the snapshots of the groups it
// passes, in bounded memory. The result is a new slice of exactly the block's
// length.
func (ix *Index) DecodeBlock(r io.ReaderAt, i int, prev []byte) ([]byte, error) {
	return ix.DecodeBlockTo(r, i, prev, nil)
}

// DecodeBlockTo is DecodeBlock writing the block into dst when it has room
// for it (cap(dst) >= the block's length; the result is then dst[:length]),
// else into a new slice: a caller that recycles its block buffers (the
// mount's cache) saves the allocation, and the page faults and clearing
// of fresh memory it costs, per block.
func (ix *Index) DecodeBlockTo(r io.ReaderAt, i int, prev, dst []byte) ([]byte, error) {
	if i < 0 || i >= ix.NumBlocks() {
		return nil, ErrBlockRange
	}
	from, window := ix.startOf(i, prev)
	return ix.decodeRange(r, from, i, window, dst, true)
}

// FillSnapshots fills every snapshot not yet known in one forward decode
// (from the nearest known one), so that later cold reads of any block cost
// at most a group's decode. Memory is bounded whatever the stream's size.
func (ix *Index) FillSnapshots(r io.ReaderAt) error {
	ng := len(ix.groupFirst)
	lo := 1
	for ; lo < ng; lo++ {
		if _, ok := ix.snapshot(lo); !ok {
			break
		}
	}
	if lo >= ng {
		return nil
	}
	gk := ix.startFor(lo, ng-1)
	w, _ := ix.snapshot(gk)
	_, err := ix.decodeRange(r, int(ix.groupFirst[gk]), int(ix.groupFirst[ng-1])-1, w, nil, false)
	return err
}

// decodeRange decodes blocks from..i, window being the output right before
// block from (from is 0, a group's first block, or i with prev's tail), and
// returns block i's bytes when result is set. It stores the snapshot of
// every group whose start it passes (blocks from+1..i+1) that is not known
// yet and lies in its window. The window slides (keeping maxWindow bytes)
// every slideAt() bytes of output, so memory does not grow with i-from.
func (ix *Index) decodeRange(r io.ReaderAt, from, i int, window, dst []byte, result bool) ([]byte, error) {
	rs := ix.newRange(r, from, i, window)
	defer rs.release()
	return rs.through(i, dst, result)
}

// rangeDecode is a forward decode from a block's start: the decoder (its
// output holding the window before the next block), the input it has
// buffered and the next group whose snapshot it may store.
type rangeDecode struct {
	ix        *Index
	sc        *blockScratch
	d         decoder
	cr        chunkReader
	from      int // the first block it decoded
	next      int // the block it decodes next
	nextGroup int
	refill    bool
}

// newRange starts a decode at block from with window (the output right
// before it), reading the stream through block i's end.
func (ix *Index) newRange(r io.ReaderAt, from, i int, window []byte) *rangeDecode {
	start, stop := ix.cps[from], ix.cps[i+1]
	slide := slideAt()
	sc := scratchPool.Get().(*blockScratch)
	buf := sc.out[:0]
	need := len(window) + int(min(stop.out-start.out, int64(slide+int(blockTarget)+outSlack))) + writeSlack
	if cap(buf) < need {
		buf = make([]byte, 0, max(need, maxWindow+slide+int(blockTarget)+outSlack+writeSlack))
	}
	buf = append(buf, window...)
	// The last block ends at a packet boundary, so the decode reads only
	// [start.in, stop.in) and treats stop.in as its end.
	rs := &rangeDecode{ix: ix, sc: sc, from: from, next: from, nextGroup: ix.groupOf(from) + 1, refill: true}
	rs.d = decoder{inBase: start.in, end: stop.in, out: buf, outBase: start.out - int64(len(window)),
		state: start.state, first: from == 0, minRef: math.MaxInt64}
	rs.d.setOptions(ix.opt)
	rs.cr = chunkReader{r: r, end: stop.in, buf: sc.in}
	return rs
}

// release gives the decode's buffers back to the pool (once).
func (rs *rangeDecode) release() {
	if rs.sc == nil {
		return
	}
	rs.sc.in = rs.cr.buf
	if cap(rs.d.out) <= 8<<20 {
		rs.sc.out = rs.d.out[:0]
	}
	scratchPool.Put(rs.sc)
	rs.sc = nil
}

// through decodes blocks rs.next..i and returns block i's bytes (into dst
// when it has room) when result is set.
func (rs *rangeDecode) through(i int, dst []byte, result bool) ([]byte, error) {
	ix, d := rs.ix, &rs.d
	slide := slideAt()
	for j := rs.next; ; j++ {
		if j > rs.from {
			cp := ix.cps[j]
			if d.inBase+int64(d.pos) != cp.in || d.outBase+int64(len(d.out)) != cp.out {
				return nil, fmt.Errorf("wad: block %d decoded to output %d at input %#x, index says %d at %#x (stream changed since it was indexed?)",
					j-1, d.outBase+int64(len(d.out)), d.inBase+int64(d.pos), cp.out, cp.in)
			}
			if rs.nextGroup < len(ix.groupFirst) && int(ix.groupFirst[rs.nextGroup]) == j {
				ix.store(rs.nextGroup, d.out, d.outBase)
				rs.nextGroup++
			}
			if j > i {
				rs.next = j
				break
			}
			if len(d.out) > maxWindow+slide {
				drop := len(d.out) - maxWindow
				n := copy(d.out, d.out[drop:])
				d.out = d.out[:n]
				d.outBase += int64(drop)
			}
		}
		stopIn := ix.cps[j+1].in
		for {
			if rs.refill {
				off := d.inBase + int64(d.pos)
				in, full, err := rs.cr.fill(off)
				if err != nil {
					return nil, err
				}
				d.in, d.inBase, d.pos, d.full = in, off, 0, full
				rs.refill = false
			}
			err := d.run(stopIn, math.MaxInt64)
			if err == errNeedInput {
				rs.refill = true
				continue
			}
			if err == errWindow {
				return nil, err
			}
			if err != nil {
				return nil, fmt.Errorf("wad: block %d: %w", j, err)
			}
			break
		}
	}
	if !result {
		return nil, nil
	}
	lo := ix.cps[i].out - d.outBase
	n := ix.cps[i+1].out - ix.cps[i].out
	var res []byte
	if int64(cap(dst)) >= n {
		res = dst[:n]
	} else {
		res = make([]byte, n)
	}
	copy(res, d.out[lo:])
	return res, nil
}

// extend lets the decode run on through block i's end: the stream's end
// it reads to moves there, and the input buffered so far (which stopped at
// the old end) is read on from where the decoder is.
func (rs *rangeDecode) extend(i int) {
	end := rs.ix.cps[i+1].in
	if end <= rs.d.end {
		return
	}
	rs.d.end, rs.cr.end = end, end
	rs.refill = true
}

// Cursor is an in-order decode kept from one block to the next
// (DecodeNextTo): the decoder's output holding the window before the block
// it is at, its position and state. Continuing it spares the next block
// the copy of its window (up to 48 KiB) from the previous block's bytes,
// beside the 64 KiB it decodes and copies out. A Cursor is for one
// goroutine at a time;
// Release returns its buffers.
type Cursor struct{ rs *rangeDecode }

// Next is the block the cursor decodes next.
func (c *Cursor) Next() int { return c.rs.next }

// Release lets the cursor's buffers go back to the decoders' pool. The
// cursor is not used after.
func (c *Cursor) Release() {
	if c != nil && c.rs != nil {
		c.rs.release()
		c.rs = nil
	}
}

// DecodeNextTo is DecodeBlockTo with a cursor: when cur (which may be nil)
// is this index's and at block i, block i decodes on from it; otherwise
// as DecodeBlockTo, and cur is released. It returns the cursor at block
// i+1 (nil on error or past the last block: then nothing is held).
func (ix *Index) DecodeNextTo(r io.ReaderAt, cur *Cursor, i int, prev, dst []byte) ([]byte, *Cursor, error) {
	if i < 0 || i >= ix.NumBlocks() {
		cur.Release()
		return nil, nil, ErrBlockRange
	}
	var rs *rangeDecode
	if cur != nil && cur.rs != nil && cur.rs.ix == ix && cur.rs.next == i {
		rs, cur.rs = cur.rs, nil
		rs.cr.r = r
		rs.extend(i)
	} else {
		cur.Release()
		from, window := ix.startOf(i, prev)
		rs = ix.newRange(r, from, i, window)
	}
	b, err := rs.through(i, dst, true)
	if err != nil || i+1 >= ix.NumBlocks() {
		rs.release()
		return b, nil, err
	}
	return b, &Cursor{rs: rs}, nil
}

// startOf is where DecodeBlockTo's decode of block i starts and the window
// before it: block i itself with prev's tail, its group's start with the
// group's snapshot, or the nearest earlier group whose snapshot is known.
func (ix *Index) startOf(i int, prev []byte) (int, []byte) {
	// prev serves as the window when it is block i-1 and holds all a match
	// can reach (blocks are larger than that, but for tests' small blocks).
	if i > 0 && prev != nil && int64(len(prev)) == ix.cps[i].out-ix.cps[i-1].out &&
		(len(prev) >= maxWindow || i == 1) {
		return i, prev[len(prev)-min(len(prev), maxWindow):]
	}
	g := ix.groupOf(i)
	if w, ok := ix.snapshot(g); ok {
		return int(ix.groupFirst[g]), w
	}
	gk := ix.startFor(g, g)
	w, _ := ix.snapshot(gk)
	return int(ix.groupFirst[gk]), w
}

// store keeps group g's snapshot from out (whose out[0] is output offset
// outBase, and which ends at the group's start) if it is not known yet and
// out holds all of it.
func (ix *Index) store(g int, out []byte, outBase int64) {
	n := int64(ix.snapLen[g])
	if n == 0 || ix.snaps[g].Load() != nil {
		return
	}
	end := ix.cps[ix.groupFirst[g]].out - outBase
	if end != int64(len(out)) || end-n < 0 {
		return
	}
	s := make([]byte, n)
	copy(s, out[end-n:end])
	if ix.snaps[g].CompareAndSwap(nil, &s) {
		ix.filled.Add(n)
	}
}

// ReadAt reads decoded bytes [off, off+len(p)) with no cache (convenience and
// tests): it decodes the blocks the range touches. Past Size it returns io.EOF
// with what it read.
func (ix *Index) ReadAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("wad: negative offset")
	}
	size := ix.Size()
	if off >= size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := len(p)
	if int64(want) > size-off {
		want = int(size - off)
	}
	n := 0
	var prev []byte
	for i := ix.BlockAt(off); n < want; i++ {
		blk, err := ix.DecodeBlock(r, i, prev)
		if err != nil {
			return n, err
		}
		bo, _ := ix.Block(i)
		n += copy(p[n:want], blk[off+int64(n)-bo:])
		prev = blk
	}
	if want < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// DecodeAll decodes the whole stream in src (as Decode takes it) with up to
// workers goroutines (DecodeParallel: the same bytes and errors as Decode)
// and returns the output cut into the index's blocks, filling every
// snapshot on the way, so that a later cold block costs at most its group's
// decode. It is the first read of a stream whose output the caller can hold
// whole: one pass, no per-block restarts, every core. The blocks share one
// buffer of exactly Size bytes (each capped at its own length). A stream that
// does not decode to the index's length (it changed since it was indexed)
// is an error.
func (ix *Index) DecodeAll(src []byte, workers int) ([][]byte, error) {
	return ix.DecodeAllTo(nil, src, workers)
}

// DecodeAllTo is DecodeAll into dst's room when it has Size bytes and the
// decoder's slack (a caller's reused buffer: the blocks then share dst's
// array, valid while the caller keeps it), else into a new buffer.
func (ix *Index) DecodeAllTo(dst, src []byte, workers int) ([][]byte, error) {
	size := ix.Size()
	if int64(cap(dst)) < size+writeSlack {
		dst = make([]byte, 0, size+writeSlack)
	}
	out, err := AppendDecodeParallel(dst[:0], src, workers, ix.opt)
	if err != nil {
		return nil, err
	}
	if int64(len(out)) != size {
		return nil, fmt.Errorf("wad: stream decoded to %d bytes, its index says %d (stream changed since it was indexed?)", len(out), size)
	}
	for g := 1; g < len(ix.groupFirst); g++ {
		end := ix.cps[ix.groupFirst[g]].out
		ix.store(g, out[:end], 0)
	}
	return ix.Cut(out), nil
}

// Cut cuts out, the stream's whole output (Size bytes), into the index's
// blocks, each capped at its own length.
func (ix *Index) Cut(out []byte) [][]byte {
	blocks := make([][]byte, ix.NumBlocks())
	for i := range blocks {
		lo, hi := ix.cps[i].out, ix.cps[i+1].out
		blocks[i] = out[lo:hi:hi]
	}
	return blocks
}

// Cold reports whether a decode of block i with no predecessor at hand must
// start before block i's group (its snapshot is not known yet), and
// whether the stream has been decoded past any group's start at all: what
// a caller weighs when choosing between decoding one block and decoding
// the stream whole.
func (ix *Index) Cold(i int) (groupUnknown, neverDecoded bool) {
	if i < 0 || i >= ix.NumBlocks() {
		return false, ix.filled.Load() == 0
	}
	_, known := ix.snapshot(ix.groupOf(i))
	return !known, ix.filled.Load() == 0 && ix.maxSnaps > 0
}
