package codec

import (
	"io"
	"math"
)

// decodeToFlush is how much output DecodeTo decodes between writes: large
// writes, from a buffer small enough to stay in the cache while decoded (a
// variable: the tests slide the window at every kind of packet).
var decodeToFlush = 512 << 10

// DecodeTo decodes the whole stream held in src (as Decode) and writes its
// output to w as it goes, in writes of about 512 KiB. It holds
// only the last maxWindow bytes of output (all a match can reach) and the
// chunk being decoded, in one buffer reused throughout: a whole-stream
// output buffer costs a page fault for each of its pages, more system time
// than the write of the same bytes. It returns the bytes written; on a
// stream error they are the clean prefix (as Decode's), on a write error
// what w took.
func DecodeTo(w io.Writer, src []byte, opt Options) (int64, error) {
	h, err := parseHeaderIn(src, int64(len(src)))
	if err != nil {
		return 0, err
	}
	d := decoder{in: src[HeaderSize:h.Size], inBase: HeaderSize, end: h.Size, full: true, first: true}
	d.setOptions(opt)
	// Room for the window, a chunk, the packet that crosses the chunk's
	// end and the copy loops' over-writes: run never grows it.
	d.out = make([]byte, 0, maxWindow+decodeToFlush+outSlack+writeSlack)
	var written int64 // output offset of the first byte not written yet
	for {
		stop := d.outBase + int64(cap(d.out)-outSlack-writeSlack)
		err := d.run(math.MaxInt64, stop)
		if n := d.outBase + int64(len(d.out)) - written; n > 0 {
			m, werr := w.Write(d.out[written-d.outBase:])
			written += int64(m)
			if werr == nil && int64(m) < n {
				werr = io.ErrShortWrite
			}
			if werr != nil {
				return written, werr
			}
		}
		if err != nil || d.pos >= len(d.in) {
			return written, err
		}
		// Slide: keep the last maxWindow bytes, at the buffer's start.
		if drop := len(d.out) - maxWindow; drop > 0 {
			n := copy(d.out, d.out[drop:])
			d.out = d.out[:n]
			d.outBase += int64(drop)
		}
	}
}
