package rebuild

import (
	"fmt"
	"io"
)

// A rope is content assembled from pieces without copying the unchanged
// ones: runs of the original image, new bytes, zeros. Every rebuilt file (a
// container, a lump, the image itself) is a rope, so that a 4 GB image with
// one texture edited holds only the rebuilt bytes in memory.
type rope struct {
	ps []piece
	n  int64
}

// piece is n bytes: data when it is not nil, zeros when zero, else the
// original image's bytes at src.
type piece struct {
	src  int64
	data []byte
	zero bool
	n    int64
}

func (r *rope) Len() int64 { return r.n }

func (r *rope) push(p piece) {
	if p.n <= 0 {
		return
	}
	if k := len(r.ps); k > 0 {
		last := &r.ps[k-1]
		switch {
		case p.zero && last.zero:
			last.n += p.n
			r.n += p.n
			return
		case p.data == nil && !p.zero && last.data == nil && !last.zero && last.src+last.n == p.src:
			last.n += p.n
			r.n += p.n
			return
		}
	}
	r.ps = append(r.ps, p)
	r.n += p.n
}

func (r *rope) image(off, n int64) { r.push(piece{src: off, n: n}) }
func (r *rope) bytes(b []byte)     { r.push(piece{data: b, n: int64(len(b))}) }
func (r *rope) zeros(n int64)      { r.push(piece{zero: true, n: n}) }

// append adds every piece of o.
func (r *rope) append(o *rope) {
	for _, p := range o.ps {
		r.push(p)
	}
}

// sub appends bytes [off, off+n) of o to r.
func (r *rope) sub(o *rope, off, n int64) {
	if off < 0 || n < 0 || off+n > o.n {
		panic(fmt.Sprintf("rebuild: rope sub [%d,+%d) of %d bytes", off, n, o.n))
	}
	pos := int64(0)
	for _, p := range o.ps {
		if n == 0 {
			return
		}
		if pos+p.n <= off {
			pos += p.n
			continue
		}
		skip := off - pos
		take := min(p.n-skip, n)
		q := piece{zero: p.zero, n: take}
		switch {
		case p.data != nil:
			q.data = p.data[skip : skip+take]
		case !p.zero:
			q.src = p.src + skip
		}
		r.push(q)
		off += take
		n -= take
		pos += p.n
	}
}

// ropeOf is a rope of one run of the image.
func imageRope(off, n int64) *rope {
	r := &rope{}
	r.image(off, n)
	return r
}

func bytesRope(b []byte) *rope {
	r := &rope{}
	r.bytes(b)
	return r
}

// ropeReader reads a rope, the original image's runs from img.
type ropeReader struct {
	spans []Span // the rope's pieces at their offsets
	size  int64
	img   io.ReaderAt
}

func newRopeReader(r *rope, img io.ReaderAt) *ropeReader {
	rr := &ropeReader{spans: make([]Span, len(r.ps)), size: r.n, img: img}
	var pos int64
	for i, p := range r.ps {
		rr.spans[i] = Span{Off: pos, Len: p.n, Src: p.src, Data: p.data, Zero: p.zero}
		pos += p.n
	}
	return rr
}

func (rr *ropeReader) Size() int64 { return rr.size }

func (rr *ropeReader) ReadAt(p []byte, off int64) (int, error) {
	return readSpans(rr.spans, rr.size, rr.img, p, off)
}

// materialize reads a whole rope into memory (for content small enough to
// hold: a lump's table, decoded content to encode again).
func (r *rope) materialize(img io.ReaderAt) ([]byte, error) {
	if len(r.ps) == 1 && r.ps[0].data != nil {
		return r.ps[0].data, nil
	}
	b := make([]byte, r.n)
	if _, err := newRopeReader(r, img).ReadAt(b, 0); err != nil && r.n > 0 {
		return nil, err
	}
	return b, nil
}

func readFull(r io.ReaderAt, b []byte, off int64) error {
	n, err := r.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("reading %d bytes at image offset %#x: %w", len(b), off, err)
}
