package codec

import (
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"sync"
)

// blockTarget is the output a decoded block holds at least (all but the
// last block); blocks end at the first packet boundary past it. A variable
// so tests can make many small blocks.
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
// output between two checkpoints (about 64 KiB); it is the cache's unit.
//
// The first checkpoint of each group of blocks has a snapshot of the output before it,
// trimmed to what the group's matches actually reach back to (at most
// 48 KiB), so any block decodes from its group's start without the stream's
// beginning. Snapshots total at most 1/8 of the output (groups of 3 to 6
// blocks). An Index is immutable once built: safe for concurrent use.
type Index struct {
	hdr        Header
	opt        Options
	cps        []checkpoint // len = NumBlocks()+1; the last is the stream's end
	groupFirst []int32      // first block of each group
	snaps      [][]byte     // snaps[g]: output [cps[groupFirst[g]].out-len, cps[groupFirst[g]].out)
}

// NewIndex builds the random-access index of the stream in r (see Scan for r
// and size). It fails with the first CorruptError, like Scan. It decodes the
// whole stream once, keeping only a window of output, so its memory is the
// index plus ~0.4 MiB whatever the stream's size.
func NewIndex(r io.ReaderAt, size int64, opt Options) (*Index, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	ix := &Index{hdr: h, opt: opt}
	d := decoder{inBase: HeaderSize, end: h.Size, first: true, trackRef: true}
	d.setOptions(opt)
	cr := chunkReader{r: r, end: h.Size}
	d.out = make([]byte, 0, maxWindow+maxGroupBlocks*(int(blockTarget)+outSlack)+writeSlack)
	ix.cps = append(ix.cps, checkpoint{in: HeaderSize})
	groupStart := int64(0) // output offset where the current group starts
	ix.groupFirst = append(ix.groupFirst, 0)
	d.minRef = 0
	var in []byte

	closeGroup := func() {
		// Snapshot [minRef, groupStart) of the output before the group.
		lo := min(d.minRef, groupStart)
		snap := make([]byte, groupStart-lo)
		copy(snap, d.out[lo-d.outBase:groupStart-d.outBase])
		ix.snaps = append(ix.snaps, snap)
	}
	for {
		if in == nil {
			off := d.inBase + int64(d.pos)
			in, d.full, err = cr.fill(off)
			if err != nil {
				return nil, err
			}
			d.in, d.inBase, d.pos = in, off, 0
		}
		last := ix.cps[len(ix.cps)-1]
		err = d.run(math.MaxInt64, last.out+blockTarget)
		if err == errNeedInput {
			in = nil
			continue
		}
		if err != nil {
			return nil, err
		}
		inOff := d.inBase + int64(d.pos)
		outOff := d.outBase + int64(len(d.out))
		if inOff >= h.Size {
			break
		}
		k := len(ix.cps) // the block starting here
		ix.cps = append(ix.cps, checkpoint{in: inOff, out: outOff, state: d.state})
		// Close the group once it has groupBlocks blocks and its snapshot is
		// at most 1/8 of its output; maxGroupBlocks always satisfies that.
		nb := k - int(ix.groupFirst[len(ix.groupFirst)-1])
		snapLen := groupStart - min(d.minRef, groupStart)
		if nb >= groupBlocks && snapLen*8 <= outOff-groupStart || nb >= maxGroupBlocks {
			closeGroup()
			// Slide: keep the window the next group may reach into.
			keep := min(int64(len(d.out)), maxWindow)
			n := copy(d.out, d.out[int64(len(d.out))-keep:])
			d.out = d.out[:n]
			d.outBase = outOff - keep
			groupStart = outOff
			d.minRef = outOff
			ix.groupFirst = append(ix.groupFirst, int32(k))
		}
	}
	total := d.outBase + int64(len(d.out))
	if last := ix.cps[len(ix.cps)-1]; last.out == total && len(ix.cps) > 1 {
		// The stream's tail produced no output: the last block ends at the
		// stream's end instead of being empty.
		ix.cps = ix.cps[:len(ix.cps)-1]
	}
	ix.cps = append(ix.cps, checkpoint{in: h.Size, out: total})
	// The open group still needs its snapshot, unless it lost its only
	// block to the trimming above.
	if g := len(ix.groupFirst) - 1; g > 0 && int(ix.groupFirst[g]) >= len(ix.cps)-1 {
		ix.groupFirst = ix.groupFirst[:g]
	} else {
		closeGroup()
	}
	return ix, nil
}

// groupOf is the group holding block i.
func (ix *Index) groupOf(i int) int {
	return sort.Search(len(ix.groupFirst), func(g int) bool { return int(ix.groupFirst[g]) > i }) - 1
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

// MemSize is the index's own footprint in bytes (for budgeting).
func (ix *Index) MemSize() int64 {
	n := int64(128) + int64(cap(ix.cps))*24 + int64(cap(ix.groupFirst))*4 + int64(cap(ix.snaps))*24
	for _, s := range ix.snaps {
		n += int64(cap(s))
	}
	return n
}

// ErrBlockRange is returned by DecodeBlock for a block number out of range.
var ErrBlockRange = errors.New("wad: block number out of range")

// blockScratch is DecodeBlock's reusable memory: output with its window, and
// a compressed chunk.
type blockScratch struct{ out, in []byte }

var scratchPool = sync.Pool{New: func() any {
	return &blockScratch{out: make([]byte, 0, maxWindow+maxGroupBlocks*(int(blockTarget)+outSlack)+writeSlack)}
}}

// DecodeBlock returns block i's decoded bytes, reading the stream from r. prev,
// when not nil, is block i-1's decoded bytes (from a cache) and may serve as the
// window; with nil the index finds the window itself (its group's snapshot,
// then at most groupBlocks-1 blocks decoded and dropped). The result is a new
// slice of exactly the block's length.
func (ix *Index) DecodeBlock(r io.ReaderAt, i int, prev []byte) ([]byte, error) {
	if i < 0 || i >= ix.NumBlocks() {
		return nil, ErrBlockRange
	}
	from := i
	var window []byte
	// prev serves as the window when it is block i-1 and holds all a match
	// can reach (blocks are larger than that, but for tests' small blocks).
	if i > 0 && prev != nil && int64(len(prev)) == ix.cps[i].out-ix.cps[i-1].out &&
		(len(prev) >= maxWindow || i == 1) {
		window = prev[len(prev)-min(len(prev), maxWindow):]
	} else {
		g := ix.groupOf(i)
		from = int(ix.groupFirst[g])
		window = ix.snaps[g]
	}
	start, stop := ix.cps[from], ix.cps[i+1]
	sc := scratchPool.Get().(*blockScratch)
	defer scratchPool.Put(sc)
	buf := sc.out[:0]
	need := len(window) + int(stop.out-start.out) + outSlack
	if cap(buf) < need {
		buf = make([]byte, 0, need)
	}
	buf = append(buf, window...)

	// The block ends at a packet boundary, so the decode reads only
	// [start.in, stop.in) and treats stop.in as its end.
	d := decoder{inBase: start.in, end: stop.in, out: buf, outBase: start.out - int64(len(window)),
		state: start.state, first: from == 0, minRef: math.MaxInt64}
	d.setOptions(ix.opt)
	cr := chunkReader{r: r, end: stop.in, buf: sc.in}
	for {
		off := d.inBase + int64(d.pos)
		in, full, err := cr.fill(off)
		if err != nil {
			return nil, err
		}
		d.in, d.inBase, d.pos, d.full = in, off, 0, full
		err = d.run(math.MaxInt64, math.MaxInt64)
		if err == errNeedInput {
			continue
		}
		if err == errWindow {
			return nil, err
		}
		if err != nil {
			return nil, fmt.Errorf("wad: block %d: %w", i, err)
		}
		break
	}
	sc.in = cr.buf
	if cap(d.out) <= 8<<20 {
		sc.out = d.out[:0]
	}
	got := d.outBase + int64(len(d.out))
	if d.inBase+int64(d.pos) != stop.in || got != stop.out {
		return nil, fmt.Errorf("wad: block %d decoded to output %d at input %#x, index says %d at %#x (stream changed since it was indexed?)",
			i, got, d.inBase+int64(d.pos), stop.out, stop.in)
	}
	lo := ix.cps[i].out - d.outBase
	res := make([]byte, stop.out-ix.cps[i].out)
	copy(res, d.out[lo:])
	return res, nil
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
