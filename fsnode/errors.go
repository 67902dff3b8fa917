package fsnode

import (
	"errors"
	"fmt"
)

// ErrShortImage is wrapped by every ShortImageError: the image ends before
// bytes a file needs.
var ErrShortImage = errors.New("image ends before the file's bytes")

// ShortImageError reports a read of bytes the image does not have.
type ShortImageError struct {
	Path      string // the file read ("" when not known)
	Offset    int64  // image offset of the first missing byte
	End       int64  // image offset one past the last byte wanted
	ImageSize int64  // the image's size when the read failed; -1 if not known
}

func (e *ShortImageError) Error() string {
	p := ""
	if e.Path != "" {
		p = e.Path + ": "
	}
	has := "the image's size is not known"
	if e.ImageSize >= 0 {
		has = fmt.Sprintf("image has %d", e.ImageSize)
	}
	return fmt.Sprintf("%sbytes past the image's end: needs image bytes up to %d, %s (first missing byte at image offset %#x)",
		p, e.End, has, e.Offset)
}

func (e *ShortImageError) Unwrap() error { return ErrShortImage }

// StreamError says why a decoded file cannot be read: the path, the image
// offset of its WAD stream, and the codec's error (a *codec.CorruptError
// carrying the stream offset and rule, or an I/O error such as a
// *ShortImageError).
type StreamError struct {
	Path        string
	ImageOffset int64 // the stream's image offset, or its offset in Within
	// Within names the decoded file whose content holds the stream ("" when
	// the image holds it).
	Within string
	Err    error
}

func (e *StreamError) Error() string {
	if e.Within != "" {
		return fmt.Sprintf("%s: WAD stream at offset %#x of decoded %s: %v", e.Path, e.ImageOffset, e.Within, e.Err)
	}
	return fmt.Sprintf("%s: WAD stream at image offset %#x: %v", e.Path, e.ImageOffset, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }
