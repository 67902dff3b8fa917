package codec

import (
	"encoding/binary"
	"math"
	"math/bits"
	"sync"
	"time"
)

// Parallel first decode.
//
// No packet crosses a 0x2000 block of the packet data (note 000 §3: the game
// decodes one DMA block at a time), so on a stream written that way every
// block boundary starts a packet. DecodeParallel cuts the packet data into
// chunks of whole blocks and decodes them concurrently, each from its first
// byte, before the output in front of it (its window) is known: the window is
// a placeholder, and bytes copied from it are wrong. They are found and fixed
// the way rapidgzip fixes gzip chunks, with markers instead of bytes: the
// chunk is decoded once behind placeholder W1 and its beginning (as far as a
// placeholder byte can still be reached) a second time behind W2. W1 and W2
// differ at every position and the pair (W1[p], W2[p]) names p, so a byte
// that differs between the two decodes is a copy of window position p, and
// one that does not is right; the worker lists them as runs of consecutive
// window bytes. A single in-order pass then checks and stitches the chunks:
// a chunk is taken only if the true decode reaches its first byte exactly
// (the previous chunk ended there: a packet crossing the boundary means no
// sync point there), its marker runs are copied from the output before it,
// and the rest of it is copied by a goroutine of its own. A chunk that cannot be taken (no sync point, a broken
// rule, a reach before the output's start, the output limit, a literal-pair
// rule that depends on the previous packet) is decoded again by the
// sequential decoder from the true position, with the true window and state,
// so a corrupt stream reports exactly the error, offset and clean output
// Decode reports.

// syncBlock is the block no packet crosses (a variable so tests can place
// sync points densely in small streams).
var syncBlock int64 = 0x2000

// chunkBlocks is how many sync blocks one parallel task decodes (512 KiB of
// input, about 1.3 MiB of output on asset data). Each chunk's start is
// decoded twice, up to a window's length past its last marker: 17% of the
// output of the benchmark corpus at this size (markers up to 13%), so chunks
// are much larger than the window.
var chunkBlocks int64 = 64

// DecodeParallel is Decode with up to workers goroutines decoding (the
// caller's stitching, and short-lived ones copying stitched chunks): the
// same bytes and the same error (rule and offset) with the same clean prefix
// on every input. A stream of one chunk (512 KiB) or less is decoded by
// Decode. Memory beyond the output: at most 2 × workers chunks decoded ahead
// (each its output, two windows and its marker runs) and at most 16 stitched
// ones whose copies still run or whose bytes the next chunk may read. On
// asset data it does about 1.6 times Decode's work (instructions counted
// under cachegrind), so it gains from about 3 idle cores on.
func DecodeParallel(src []byte, workers int, opt Options) ([]byte, error) {
	return AppendDecodeParallel(nil, src, workers, opt)
}

// chunkJob is one chunk's speculative decode.
type chunkJob struct {
	done  chan struct{}
	ok    bool  // decoded cleanly to a packet boundary at or past the chunk's end
	end   int64 // stream offset of that boundary
	state uint8 // decoder state there
	// out1 is W1 then the chunk's output; out2 is W2 then the output's first
	// bytes. Bytes [0, taint) of the output (counted from len(W)) may differ.
	out1, out2 []byte
	taint      int
	// The markers in out1[len(W):][:taint], as runs of bytes that copy
	// consecutive window bytes; minP is the farthest back one reaches.
	runs    []markerRun
	minP    int
	markers int
	second  int   // output bytes the second decode produced
	spec    bool  // decoded behind a placeholder (every chunk but the first)
	ns      int64 // decode time (parStats.timed)
}

// markerRun: output bytes [i, i+n) of a chunk are window bytes [p, p+n),
// window byte p being output byte p-maxWindow counted from the chunk's start.
type markerRun struct{ i, p, n int32 }

// chunkBufs are a finished chunk's buffers, for the next chunk.
type chunkBufs struct {
	out1, out2 []byte
	runs       []markerRun
}

func le64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

// window positions: W1[p] = byte(p), W2[p] = byte(p) + 1 + p>>8 (mod 256):
// never equal (p>>8 < 192), and p = (W2-W1-1)<<8 | W1.
var placeholder1, placeholder2 = func() ([]byte, []byte) {
	w1, w2 := make([]byte, maxWindow), make([]byte, maxWindow)
	for p := range w1 {
		w1[p] = byte(p)
		w2[p] = byte(p) + 1 + byte(p>>8)
	}
	return w1, w2
}()

// AppendDecodeParallel is DecodeParallel appending to dst, like AppendDecode.
func AppendDecodeParallel(dst, src []byte, workers int, opt Options) ([]byte, error) {
	return appendDecodeParallel(dst, src, workers, opt, nil)
}

// parStats counts what a parallel decode did (for tests and benchmarks;
// NewIndexParallel fills chunks, taken and redone).
type parStats struct {
	chunks   int // chunks of the stream
	taken    int // stitched from the speculative decode
	redone   int // decoded again by the sequential decoder
	markers  int // bytes replaced from the window
	runs     int // in runs of consecutive window bytes
	resolved int // output bytes up to each chunk's last marker
	second   int // output bytes decoded a second time (behind W2)

	// With timed set: the time spent decoding chunks (all workers) and in
	// the in-order pass (stitching and sequential re-decodes), for the
	// benchmarks' estimate of the speedup on more cores.
	timed         bool
	chunkNs, stNs int64
}

func appendDecodeParallel(dst, src []byte, workers int, opt Options, ps *parStats) ([]byte, error) {
	if ps == nil {
		ps = new(parStats)
	}
	if dst == nil {
		dst = []byte{}
	}
	h, err := parseHeaderIn(src, int64(len(src)))
	if err != nil {
		return dst, err
	}
	chunk, nChunks := parallelChunks(h)
	if nChunks <= 1 || workers < 1 {
		return AppendDecode(dst, src, opt)
	}
	src = src[:h.Size]
	maxOut := opt.outputLimit()

	ps.chunks = nChunks
	jobs := make([]chunkJob, nChunks)
	for i := range jobs {
		jobs[i].done = make(chan struct{})
	}
	// At most inflight chunks are decoded and not yet stitched: the tokens
	// bound the memory to inflight × (chunk output + 2 windows + the
	// second decode's prefix), plus the stitched chunks whose tails are
	// still copying or within reach of the output's end (see trim).
	run := startChunks(nChunks, workers, 2*workers, func(c int) {
		j := &jobs[c]
		if b, ok := chunkPool.Get().(*chunkBufs); ok {
			j.out1, j.out2, j.runs = b.out1[:0], b.out2[:0], b.runs[:0]
		}
		var t0 time.Time
		if ps.timed {
			t0 = time.Now()
		}
		decodeChunk(j, src, h.Size, c, chunk, opt)
		if ps.timed {
			j.ns = int64(time.Since(t0))
		}
		close(j.done)
	})
	defer run.stop()

	// Stitch, in order.
	base := len(dst)
	if cap(dst)-base < writeSlack {
		// The guess AppendDecode makes; grown by doubling past it.
		guess := min((h.Size-HeaderSize)*3+64, maxOut)
		nb := make([]byte, base, int64(base)+guess+writeSlack)
		copy(nb, dst)
		dst = nb
	}
	st := stitcher{res: dst[base:base], async: workers > 1, ps: ps}
	defer st.settle() // (before the workers stop: no copy outlives the call)
	pos, state, first := int64(HeaderSize), stMatch, true
	for c := range jobs {
		j := &jobs[c]
		<-j.done
		var t0 time.Time
		if ps.timed {
			t0 = time.Now()
		}
		start := HeaderSize + int64(c)*chunk
		end := min(start+chunk, h.Size)
		ok := pos == start && j.ok && st.take(j, src[start], state, opt.Strict, maxOut)
		if ok {
			pos, state, first = j.end, j.state, false
			ps.taken++
		} else {
			st.recycle(chunkBufs{j.out1, j.out2, j.runs})
		}
		j.out1, j.out2, j.runs = nil, nil, nil
		if !ok && pos < end {
			ps.redone++
			// The sequential decoder from the true position and state, on
			// the whole output so far.
			st.settle()
			d := decoder{in: src[HeaderSize:], inBase: HeaderSize, pos: int(pos - HeaderSize), end: h.Size,
				full: true, first: first, state: state, out: st.res}
			d.setOptions(opt)
			err := d.run(end, math.MaxInt64)
			st.res = d.out
			if err != nil {
				return appendResult(dst, base, st.res), err
			}
			pos, state, first = d.inBase+int64(d.pos), d.state, d.first
		}
		st.trim()
		if ps.timed {
			ps.stNs += int64(time.Since(t0))
			ps.chunkNs += j.ns
		}
		run.release()
	}
	st.settle()
	return appendResult(dst, base, st.res), nil
}

// appendResult is dst[:base] followed by res, which is dst's tail unless a
// grow moved it.
func appendResult(dst []byte, base int, res []byte) []byte {
	if cap(res) > 0 && cap(dst) > base && &res[:1][0] == &dst[base : base+1][0] {
		return dst[:base+len(res)]
	}
	return append(dst[:base], res...)
}

// decodeChunk decodes chunk c (stream offsets start..end) into j: the first
// one exactly (from the stream's start), the others behind the placeholders.
func decodeChunk(j *chunkJob, src []byte, size int64, c int, chunk int64, opt Options) {
	start := HeaderSize + int64(c)*chunk
	end := min(start+chunk, size)
	newDec := func(w, buf []byte, hint int64) decoder {
		d := decoder{in: src[HeaderSize:], inBase: HeaderSize, pos: int(start - HeaderSize), end: size, full: true}
		d.setOptions(opt)
		if c == 0 {
			d.first = true
			d.out = buf[:0]
			return d
		}
		if d.maxOut != math.MaxInt64 {
			d.maxOut += int64(len(w)) // the chunk alone within the limit
		}
		if cap(buf) < len(w)+writeSlack {
			buf = make([]byte, 0, int64(len(w))+hint+writeSlack)
		}
		d.out = append(buf[:0], w...)
		return d
	}
	j.spec = c > 0
	j.taint, j.runs, j.minP, j.markers, j.second = 0, j.runs[:0], maxWindow, 0, 0
	d1 := newDec(placeholder1, j.out1, min((end-start)*4, 1<<24))
	err := d1.run(end, math.MaxInt64)
	j.out1 = d1.out
	j.ok, j.end, j.state = err == nil, d1.inBase+int64(d1.pos), d1.state
	if !j.ok || !j.spec {
		return
	}
	// The second decode, until no byte that differs can be reached: the
	// output is maxWindow past the last difference (and past the window).
	const step = 16 << 10
	w := len(placeholder2)
	d2 := newDec(placeholder2, j.out2, 2*maxWindow)
	last := -1 // last differing output byte
	checked := 0
	for checked < last+1+maxWindow {
		err := d2.run(end, int64(w+min(last+1+maxWindow, checked+step)))
		n := len(d2.out) - w
		if err != nil || n > len(d1.out)-w {
			j.ok = false // (cannot happen: the same parse as d1's)
			break
		}
		if i := lastDiff(d1.out[w+checked:w+n], d2.out[w+checked:w+n]); i >= 0 {
			last = checked + i
		}
		checked = n
		if d2.pos == d1.pos {
			break
		}
	}
	j.out2 = d2.out
	j.taint = last + 1
	j.second = checked
	j.runs, j.minP, j.markers = findMarkers(j.runs[:0], d1.out[w:w+j.taint], d2.out[w:w+j.taint])
	if j.minP < 0 {
		j.ok = false // (cannot happen: every difference names a window byte)
	}
}

// findMarkers lists the bytes where a (decoded behind W1) and b (behind W2)
// differ, as runs copying consecutive window bytes; minP is the least window
// position (maxWindow when there are none, -1 for a difference that names
// none).
func findMarkers(runs []markerRun, a, b []byte) ([]markerRun, int, int) {
	minP, count := maxWindow, 0
	b = b[:len(a)]
	ri, rp, rn := 0, 0, 0 // the run being extended
	for k := 0; k < len(a); k += 8 {
		// The differing bytes of these 8 (the tail padded with equal ones).
		var x uint64
		if k+8 <= len(a) {
			x = ld64(a, k) ^ ld64(b, k) // (k+8 <= len(a) == len(b))
		} else {
			for i := k; i < len(a); i++ {
				x |= uint64(a[i]^b[i]) << (8 * uint(i-k))
			}
		}
		for x != 0 {
			i := k + bits.TrailingZeros64(x)>>3
			x &^= 0xFF << (uint(i-k) * 8)
			ai := a[i]
			p := int(byte(b[i]-ai-1))<<8 | int(ai) // the window byte it copies
			if i == ri+rn && p == rp+rn && rn > 0 {
				rn++
				continue
			}
			if p >= maxWindow {
				return runs, -1, count
			}
			if rn > 0 {
				runs = append(runs, markerRun{int32(ri), int32(rp), int32(rn)})
				count += rn
				minP = min(minP, rp)
			}
			ri, rp, rn = i, p, 1
		}
	}
	if rn > 0 {
		runs = append(runs, markerRun{int32(ri), int32(rp), int32(rn)})
		count += rn
		minP = min(minP, rp)
	}
	return runs, minP, count
}

// lastDiff is the index of the last byte where a and b (of one length) differ, or -1.
func lastDiff(a, b []byte) int {
	i := len(a)
	for i >= 8 {
		if le64(a[i-8:]) != le64(b[i-8:]) {
			break
		}
		i -= 8
	}
	for i > 0 {
		i--
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// stitcher appends the chunks to the output in order. A taken chunk's
// first bytes (up to its last marker) are copied and resolved at once; the
// rest, already right, is copied by a goroutine of its own while the next
// chunks are stitched, so the in-order pass does little but the markers.
// Until a copy is done, the bytes it writes are read from the chunk's
// buffer.
type stitcher struct {
	res   []byte
	segs  []segment // taken chunks still copying or within reach of the output's end
	async bool      // copy in the background (more than one worker)
	ps    *parStats
}

type segment struct {
	base, taint int    // the chunk's offset in res; its prefix written at once
	out         []byte // the chunk's output
	bufs        chunkBufs
	done        chan struct{} // closed when out[taint:] is in res
}

// asyncMin is the least a background copy moves.
const asyncMin = 128 << 10

// chunkPool keeps chunk buffers for the next chunks and the next calls.
var chunkPool sync.Pool

func (s *stitcher) recycle(b chunkBufs) {
	if cap(b.out1) > 0 {
		chunkPool.Put(&b)
	}
}

// settle waits for every copy: res is then whole, and may be grown or
// written by the sequential decoder.
func (s *stitcher) settle() {
	for _, g := range s.segs {
		<-g.done
		s.recycle(g.bufs)
	}
	clear(s.segs)
	s.segs = s.segs[:0]
}

// trim drops the segments that are done copying and out of reach.
func (s *stitcher) trim() {
	n := 0
	for _, g := range s.segs {
		if g.base+len(g.out) > len(s.res)-maxWindow {
			break
		}
		select {
		case <-g.done:
			s.recycle(g.bufs)
			n++
			continue
		default:
		}
		break
	}
	s.segs = append(s.segs[:0], s.segs[n:]...)
	if len(s.segs) > 16 { // (many tiny chunks)
		s.settle()
	}
}

// window copies output bytes [from, from+len(dst)) (before the chunk being
// stitched) to dst: from the chunks' buffers where a copy into res may still
// be running, from res elsewhere.
func (s *stitcher) window(dst []byte, from int) {
	for len(dst) > 0 {
		lim := len(s.res) // res is right below lim
		i := len(s.segs) - 1
		for i >= 0 && s.segs[i].base > from {
			i--
		}
		if i >= 0 {
			g := &s.segs[i]
			if from-g.base >= g.taint {
				n := copy(dst, g.out[from-g.base:])
				dst, from = dst[n:], from+n
				continue
			}
			lim = g.base + g.taint
		} else if len(s.segs) > 0 {
			lim = s.segs[0].base + s.segs[0].taint
		}
		n := copy(dst, s.res[from:lim])
		dst, from = dst[n:], from+n
	}
}

// take appends chunk j's output and replaces its markers from the output
// before it, if the chunk can be taken as it is: its first packet keeps the
// literal rules after the true previous state, it stays within the limit and
// no marker reaches before the output's start. false leaves the output as it
// was.
func (s *stitcher) take(j *chunkJob, firstFlag byte, state uint8, strict bool, maxOut int64) bool {
	if firstFlag < 0x10 && (state == stLiteral || state == stLittle && strict) {
		return false
	}
	w := 0
	if j.spec {
		w = len(placeholder1)
	}
	out := j.out1[w:]
	base := len(s.res)
	if int64(base)+int64(len(out)) > maxOut {
		return false
	}
	if cap(s.res)-base < len(out)+writeSlack {
		s.settle()
		n := int64(2 * cap(s.res))
		if maxOut != math.MaxInt64 {
			n = min(n, maxOut+writeSlack)
		}
		nb := make([]byte, base, max(n, int64(base+len(out)+writeSlack)))
		copy(nb, s.res)
		s.res = nb
	}
	if j.markers > 0 && base-maxWindow+j.minP < 0 {
		return false // a marker reaches before the output: the sequential decoder reports it
	}
	res := s.res[:base+len(out)]
	t := j.taint
	copy(res[base:base+t], out[:t])
	for _, r := range j.runs {
		s.window(res[base+int(r.i):base+int(r.i+r.n)], base-maxWindow+int(r.p))
	}
	s.ps.resolved += t
	s.ps.second += j.second
	s.ps.markers += j.markers
	s.ps.runs += len(j.runs)
	s.res = res
	g := segment{base: base, taint: t, out: out, bufs: chunkBufs{j.out1, j.out2, j.runs}, done: make(chan struct{})}
	if s.async && len(out)-t >= asyncMin {
		go func() {
			copy(res[base+t:], out[t:])
			close(g.done)
		}()
	} else {
		copy(res[base+t:], out[t:])
		close(g.done)
	}
	s.segs = append(s.segs, g)
	return true
}
