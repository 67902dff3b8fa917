package codec

import (
	"bytes"
	"math"
)

// NewIndexParallel is NewIndex of the stream held in src (as ScanParallel
// takes it: src may run past the declared size) built on up to workers
// goroutines: the same error (rule and offset) on a corrupt stream, and on a
// valid one an index of the same Size whose blocks decode to the same bytes.
// With workers < 2, or a stream of one parallel chunk (512 KiB) or less, it
// is NewIndex.
//
// Otherwise the chunks of ScanParallel are indexed concurrently, each from
// its first byte as if a window's length of output came before it: a block
// and a group start at the chunk's first byte, and its last block ends at
// the first packet boundary at or past its end (so it may be short, and its
// last group small). An in-order pass takes a chunk's blocks and groups
// under ScanParallel's conditions, and indexes the chunk sequentially from
// the true position otherwise, continuing the blocks and groups as NewIndex
// would. Memory beyond the index: at most 2 × workers chunks' blocks
// indexed ahead.
func NewIndexParallel(src []byte, workers int, opt Options) (*Index, error) {
	return newIndexParallel(src, workers, opt, nil)
}

// indexJob is one chunk's speculative index. Its output offsets count from
// from (a window's length, or 0 for the first chunk) and its blocks from the
// chunk's first.
type indexJob struct {
	done  chan struct{}
	ok    bool  // indexed cleanly to a packet boundary at or past the chunk's end
	end   int64 // that boundary
	state uint8 // the scanner's state there
	olen  int64 // the chunk's output length
	reach int64 // how far before the chunk's start its matches read
	// cps[0] is the chunk's first byte, cps[len-1] its end; every group
	// is closed.
	cps        []checkpoint
	groupFirst []int32
	snapLen    []int32
}

func newIndexParallel(src []byte, workers int, opt Options, ps *parStats) (*Index, error) {
	h, err := parseHeaderIn(src, int64(len(src)))
	chunk, nChunks := parallelChunks(h)
	if err != nil || workers < 2 || nChunks <= 1 {
		return NewIndex(bytes.NewReader(src), int64(len(src)), opt)
	}
	if ps == nil {
		ps = new(parStats)
	}
	src = src[:h.Size]
	maxOut := opt.outputLimit()
	ps.chunks = nChunks
	jobs := make([]indexJob, nChunks)
	for i := range jobs {
		jobs[i].done = make(chan struct{})
	}
	// A worker holds a token from taking a chunk until the in-order pass is
	// done with it: at most 2 × workers chunks' results exist at once.
	run := startChunks(nChunks, workers, 2*workers, func(c int) {
		indexSpec(&jobs[c], src, c, chunk, opt)
		close(jobs[c].done)
	})
	defer run.stop()

	b := indexBuilder{sc: newScanner(opt)}
	b.start(checkpoint{in: HeaderSize})
	pos := int64(HeaderSize)
	for c := range jobs {
		j := &jobs[c]
		<-j.done
		start := HeaderSize + int64(c)*chunk
		end := min(start+chunk, h.Size)
		state := b.sc.state
		if pos == start && j.ok && !(src[start] < 0x10 && (state == stLiteral || state == stLittle && opt.Strict)) &&
			j.reach <= b.sc.olen && b.sc.olen+j.olen <= maxOut {
			b.take(j)
			pos = j.end
			ps.taken++
		} else if pos < end { // (else a marker skipped past this chunk)
			// The sequential index from the true position, state and open
			// block and group, to the first packet boundary at or past the
			// chunk's end.
			ps.redone++
			se := scanEnd(end, h.Size)
			b.sc.inBase, b.sc.in, b.sc.full, b.sc.pos = pos, src[pos:se], se == h.Size, 0
			if err := b.scan(); err != nil && err != errNeedInput {
				return nil, err
			}
			pos = b.sc.inBase + int64(b.sc.pos)
		}
		j.cps, j.groupFirst, j.snapLen = nil, nil, nil
		run.release()
	}
	b.sc.in = nil
	b.finish(h.Size)
	return b.index(h, opt), nil
}

// indexSpec indexes chunk c into j: the first chunk exactly (from the
// stream's start), the others behind a window's length of unknown output,
// with no limit (the in-order pass checks the reach and the limit).
func indexSpec(j *indexJob, src []byte, c int, chunk int64, opt Options) {
	size := int64(len(src))
	start := HeaderSize + int64(c)*chunk
	end := min(start+chunk, size)
	b := indexBuilder{sc: newScanner(opt)}
	from := int64(0)
	if c > 0 {
		// No distance fails behind a window's length; the checked path,
		// which alone runs while a match can reach before the chunk's start
		// (the first group's trackEnd), keeps every group's farthest reach.
		from = maxWindow
		b.sc.first, b.sc.olen, b.sc.maxOut = false, from, math.MaxInt64
	}
	b.start(checkpoint{in: start, out: from})
	se := scanEnd(end, size)
	b.sc.inBase, b.sc.in, b.sc.full = start, src[start:se], se == size
	err := b.scan()
	j.ok = err == nil || err == errNeedInput && !b.sc.full
	if !j.ok {
		return
	}
	j.end, j.state, j.olen = b.sc.inBase+int64(b.sc.pos), b.sc.state, b.sc.olen-from
	b.finish(j.end)
	// The chunk reaches back as far as its farthest-reaching group.
	low := from
	for g, f := range b.groupFirst {
		low = min(low, b.cps[f].out-int64(b.snapLen[g]))
	}
	j.reach = from - low
	j.cps, j.groupFirst, j.snapLen = b.cps, b.groupFirst, b.snapLen
}

// take appends chunk j, which the true scan reached at its first byte with
// b's state and which can be taken (see newIndexParallel): its blocks and
// groups moved to b's output offsets and block numbers, the true state at
// its first checkpoint. The next block and group start at its end.
func (b *indexBuilder) take(j *indexJob) {
	b.sc.first = false
	if j.olen == 0 {
		// No output (markers, dummies): the open block takes the chunk's
		// packets, rather than an empty block.
		b.sc.state = j.state
		return
	}
	start := j.cps[0].in
	k := len(b.cps) - 1 // the open block, to become the chunk's first
	g := len(b.groupFirst) - 1
	switch empty := b.cps[k].out == b.sc.olen; {
	case b.cps[k].in == start || k == 0 && empty:
		// The open block starts here, or is the stream's first and has no
		// output: the chunk's first block starts where it does (the same
		// output offset, the true state there).
	case empty:
		// The open block has no output: the block before takes its
		// packets, so that it and its group end at the chunk's start.
		b.cps[k] = checkpoint{in: start, out: b.sc.olen, state: b.sc.state}
	default:
		b.cps = append(b.cps, checkpoint{in: start, out: b.sc.olen, state: b.sc.state})
		k++
	}
	// The open group ends before the chunk's first block, or is replaced
	// by the chunk's first group (it has no output).
	if int(b.groupFirst[g]) == k {
		b.groupFirst = b.groupFirst[:g]
	} else {
		b.closeGroup()
	}
	delta := b.sc.olen - j.cps[0].out
	for _, cp := range j.cps[1 : len(j.cps)-1] {
		b.cps = append(b.cps, checkpoint{in: cp.in, out: cp.out + delta, state: cp.state})
	}
	for _, f := range j.groupFirst {
		b.groupFirst = append(b.groupFirst, int32(k)+f)
	}
	b.snapLen = append(b.snapLen, j.snapLen...)
	b.sc.olen += j.olen
	b.sc.state = j.state
	b.cps = append(b.cps, checkpoint{in: j.end, out: b.sc.olen, state: j.state})
	b.openGroup()
	b.sc.stopOut = b.sc.olen + blockTarget
}
