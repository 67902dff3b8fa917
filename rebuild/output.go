package rebuild

import (
	"fmt"
	"io"
	"sort"
)

// Reader is the rebuilt image read from its spans: the original image's
// bytes from img, the rebuilt bytes from memory. pack writes what it reads;
// a served image is the same reader.
type Reader struct {
	l   *Layout
	img io.ReaderAt
}

// NewReader reads l over the original image img.
func (l *Layout) NewReader(img io.ReaderAt) *Reader { return &Reader{l: l, img: img} }

// Size is the rebuilt image's size in bytes.
func (r *Reader) Size() int64 { return r.l.Size }

// ReadAt reads the rebuilt image.
func (r *Reader) ReadAt(p []byte, off int64) (int, error) {
	return readSpans(r.l.Spans, r.l.Size, r.img, p, off)
}

// readSpans reads [off, off+len(p)) of the size bytes that spans (sorted,
// tiling [0, size)) describe: bytes held, zeros, or img's bytes at Src. The
// layout's reader and a rope's reader are both this.
func readSpans(spans []Span, size int64, img io.ReaderAt, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("rebuild: negative offset %d", off)
	}
	if off >= size {
		return 0, io.EOF
	}
	want := len(p)
	if int64(want) > size-off {
		p = p[:size-off]
	}
	i := sort.Search(len(spans), func(i int) bool { return spans[i].Off+spans[i].Len > off })
	done := 0
	for done < len(p) && i < len(spans) {
		s := spans[i]
		skip := off + int64(done) - s.Off
		take := int(min(s.Len-skip, int64(len(p)-done)))
		dst := p[done : done+take]
		switch {
		case s.Data != nil:
			copy(dst, s.Data[skip:])
		case s.Zero:
			clear(dst)
		default:
			if err := readFull(img, dst, s.Src+skip); err != nil {
				return done, err
			}
		}
		done += take
		i++
	}
	if done < want {
		return done, io.EOF
	}
	return done, nil
}

// NewBytes is how many bytes of the layout are held in memory (the rebuilt
// bytes: tables, re-encoded streams, edits).
func (l *Layout) NewBytes() int64 {
	var n int64
	for _, s := range l.Spans {
		if s.Data != nil {
			n += s.Len
		}
	}
	return n
}

// Write writes the rebuilt image to w: the spans in order, the original
// bytes copied through a buffer, zeros skipped (w is expected to be a fresh
// file, truncated to Size at the end so that they read as zeros; the caller
// truncates). progress, when set, is told the bytes done after each piece.
func (l *Layout) Write(w io.WriterAt, img io.ReaderAt, progress func(done int64)) error {
	buf := make([]byte, 1<<20)
	var done int64
	for _, s := range l.Spans {
		switch {
		case s.Data != nil:
			if _, err := w.WriteAt(s.Data, s.Off); err != nil {
				return err
			}
		case s.Zero:
		default:
			for k := int64(0); k < s.Len; {
				n := min(int64(len(buf)), s.Len-k)
				if err := readFull(img, buf[:n], s.Src+k); err != nil {
					return err
				}
				// A sparse input stays sparse: runs of zero pages are
				// skipped (holes read as zeros once the file is truncated
				// to its size), the rest written in runs.
				// Pages are the output file's: a run's edges fall on its
				// 4 KiB boundaries, or a zero page half-written would be
				// allocated.
				base := s.Off + k
				next := func(p int64) int64 { return min((base+p)/zeroPage*zeroPage+zeroPage-base, n) }
				for p := int64(0); p < n; {
					q := next(p)
					if isZero(buf[p:q]) {
						p = q
						continue
					}
					for q < n && !isZero(buf[q:next(q)]) {
						q = next(q)
					}
					if _, err := w.WriteAt(buf[p:q], s.Off+k+p); err != nil {
						return err
					}
					p = q
				}
				k += n
			}
		}
		done += s.Len
		if progress != nil {
			progress(done)
		}
	}
	return nil
}

// zeroPage is the granularity of the holes Write leaves.
const zeroPage = 4096

func isZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
