package discimg

import (
	"errors"
	"io"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// holeFinder answers "is this range a hole?" for a sparse *os.File through
// SEEK_DATA/SEEK_HOLE, so hashing a sparse image need not read its holes. Any
// error turns it off (every range is then read).
type holeFinder struct {
	fd                 int
	dataStart, dataEnd int64 // the data region at or after the last query
	ok                 bool
}

func newHoleFinder(r io.ReaderAt) *holeFinder {
	f, ok := r.(*os.File)
	if !ok {
		return &holeFinder{}
	}
	return &holeFinder{fd: int(f.Fd()), dataEnd: -1, ok: true}
}

// isHole reports whether [pos, pos+n) is wholly inside a hole. Queries must
// come in increasing pos order.
func (h *holeFinder) isHole(pos, n int64) bool {
	if !h.ok {
		return false
	}
	if pos >= h.dataEnd {
		d, err := unix.Seek(h.fd, pos, unix.SEEK_DATA)
		switch {
		case errors.Is(err, unix.ENXIO):
			h.dataStart, h.dataEnd = math.MaxInt64, math.MaxInt64 // holes to the end
		case err != nil:
			h.ok = false
			return false
		default:
			e, err := unix.Seek(h.fd, d, unix.SEEK_HOLE)
			if err != nil || e <= d {
				h.ok = false
				return false
			}
			h.dataStart, h.dataEnd = d, e
		}
	}
	return pos+n <= h.dataStart
}
