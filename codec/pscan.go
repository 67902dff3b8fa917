package codec

import (
	"bytes"
	"math"
)

// ScanParallel is Scan of the stream held in src (as Decode takes it: src
// may run past the declared size) on up to workers goroutines: the same
// Stats and the same error. The chunks of DecodeParallel are scanned
// concurrently, each from its first byte as if the output before it were a
// full window long; an in-order pass takes a chunk's counts when the true
// scan reaches its first byte exactly, no match of it reaches before the
// output's start (its farthest reach is kept) and it stays within the limit,
// and scans it again sequentially otherwise. There is no window to resolve,
// so the only extra work is the in-order pass.
func ScanParallel(src []byte, workers int, opt Options) (Stats, error) {
	r := bytes.NewReader(src)
	h, err := readHeader(r, int64(len(src)))
	chunk, nChunks := parallelChunks(h)
	if err != nil || workers < 2 || nChunks <= 1 {
		return Scan(r, int64(len(src)), opt)
	}
	src = src[:h.Size]
	maxOut := opt.outputLimit()
	jobs := make([]scanJob, nChunks)
	for i := range jobs {
		jobs[i].done = make(chan struct{})
	}
	// A chunk's result is a few counters: no bound on how many wait.
	run := startChunks(nChunks, workers, nChunks, func(c int) {
		scanSpec(&jobs[c], src, c, chunk, opt)
		close(jobs[c].done)
	})
	defer run.stop()

	st := Stats{Header: h}
	var olen int64
	pos, state, first := int64(HeaderSize), stMatch, true
	for c := range jobs {
		j := &jobs[c]
		<-j.done
		start := HeaderSize + int64(c)*chunk
		end := min(start+chunk, h.Size)
		reach := int64(0) // how far before the chunk's start its matches read
		if j.minRef < j.from {
			reach = j.from - j.minRef
		}
		if pos == start && j.ok && !(src[start] < 0x10 && (state == stLiteral || state == stLittle && opt.Strict)) &&
			reach <= olen && olen+j.olen <= maxOut {
			olen += j.olen
			st.Literals += j.st.Literals
			st.LongLiterals += j.st.LongLiterals
			st.ShortMatches += j.st.ShortMatches
			st.Matches += j.st.Matches
			st.FarMatches += j.st.FarMatches
			st.Dummies += j.st.Dummies
			st.BlockMarkers += j.st.BlockMarkers
			pos, state, first = j.end, j.state, false
			continue
		}
		if pos >= end {
			continue // (a marker skipped past this chunk)
		}
		// The sequential scan from the true position and state.
		sc := newScanner(opt)
		sc.first, sc.state, sc.olen = first, state, olen
		sc.inBase, sc.in, sc.full = pos, src[pos:scanEnd(end, h.Size)], scanEnd(end, h.Size) == h.Size
		err := sc.run(&st)
		if err != nil && err != errNeedInput {
			st.DecodedSize = sc.olen
			return st, err
		}
		pos, state, first, olen = sc.inBase+int64(sc.pos), sc.state, sc.first, sc.olen
	}
	st.DecodedSize = olen
	return st, nil
}

// scanJob is one chunk's speculative scan.
type scanJob struct {
	done   chan struct{}
	ok     bool  // scanned cleanly to a packet boundary at or past the chunk's end
	end    int64 // that boundary
	state  uint8
	olen   int64 // the chunk's output length
	from   int64 // output offset the scan started at (a window's length, or 0)
	minRef int64 // lowest output offset a match read from (MaxInt64: none)
	st     Stats // its packet counts
}

// scanEnd is where the buffer of a scan that must stop at the first packet
// boundary at or past end ends: a packet starting before end is inside it
// (the scanner stops past len(in)-maxPacket), or the stream's end.
func scanEnd(end, size int64) int64 { return min(end+maxPacket-1, size) }

func scanSpec(j *scanJob, src []byte, c int, chunk int64, opt Options) {
	size := int64(len(src))
	start := HeaderSize + int64(c)*chunk
	end := min(start+chunk, size)
	sc := newScanner(opt)
	if c > 0 {
		// As if a window's length of output came first: no distance fails
		// here, the in-order pass checks the farthest reach (kept by the
		// checked path, which alone runs while a match can reach before the
		// chunk) and the limit.
		sc.first, sc.olen, sc.maxOut = false, maxWindow, math.MaxInt64
		sc.trackEnd = 2 * maxWindow
	}
	j.from = sc.olen
	sc.inBase, sc.in, sc.full = start, src[start:scanEnd(end, size)], scanEnd(end, size) == size
	err := sc.run(&j.st)
	j.ok = err == nil || err == errNeedInput && !sc.full
	j.end, j.state, j.olen, j.minRef = sc.inBase+int64(sc.pos), sc.state, sc.olen-j.from, sc.minRef
}
