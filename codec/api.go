// Package codec owns Insomniac's WAD LZ stream: the decoder, the size scan, the
// random-access index the FUSE cache reads through, the encoder and a validator
// of the writer limits. It knows nothing of discs or FUSE.
//
// API CONTRACT (written before the implementation; other packages code against
// these signatures — change them only together with their callers).
package codec

import (
	"errors"
	"fmt"
	"io"
)

// HeaderSize is the length of a stream's header: "WAD", u32 LE compressed size
// (header included), 9-byte tag.
const HeaderSize = 16

// ErrFormat is wrapped by every CorruptError, so errors.Is(err, ErrFormat) tells a
// broken stream from an I/O error.
var ErrFormat = errors.New("wad: corrupt stream")

// Rule names the format rule a stream broke.
type Rule string

const (
	RuleMagic         Rule = "bad magic"
	RuleDeclaredSize  Rule = "declared size outside the buffer"
	RuleTruncated     Rule = "truncated packet"
	RuleLiteralPair   Rule = "two literal packets in a row"
	RuleDistance      Rule = "distance reaches before the output's start"
	RuleOutputLimit   Rule = "output past the limit"
	RuleStrictLiteral Rule = "literal packet after a match with little literals (strict)"
)

// CorruptError reports where (offset in the stream, header included) and which
// rule a stream broke.
type CorruptError struct {
	Offset int64
	Rule   Rule
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("wad: %s at stream offset %#x", e.Rule, e.Offset)
}
func (e *CorruptError) Unwrap() error { return ErrFormat }

// Options tune decoding. The zero value is the default reading.
type Options struct {
	// Align is the block-marker alignment measured from stream offset 0x10:
	// 0 means 0x1000; 0x2000 is the other accepted value.
	Align int64
	// Strict also rejects a literal packet right after a match that carried
	// little literals (the PAL game traps there).
	Strict bool
	// MaxOutput bounds the decoded size; 0 means no limit. Past it: RuleOutputLimit.
	MaxOutput int64
}

// Header is a stream's parsed header.
type Header struct {
	Size int64  // declared compressed size, header included
	Tag  string // the 9-byte tag, NULs trimmed
}

// ParseHeader reads a header from the first 16 bytes of b.
func ParseHeader(b []byte) (Header, error) { return Header{}, errors.New("TODO") }

// IsStream reports whether an extent whose first bytes are prefix (at least 16
// of them, fewer means no) and whose length is extentLen holds a WAD stream: magic
// "WAD" and a declared size from 16 up to extentLen (SPEC: compressed extents).
func IsStream(prefix []byte, extentLen int64) bool { return false }

// Stats is what a size scan learns without producing output.
type Stats struct {
	Header       Header
	DecodedSize  int64 // bytes that decode cleanly (on error: up to the bad packet)
	Literals     int   // literal packets (both kinds)
	ShortMatches int
	Matches      int
	FarMatches   int
	Dummies      int
	BlockMarkers int
}

// Scan walks the stream in r (offset 0 is the 'W' of the header; size is the
// extent's length) without producing output. It validates everything but the
// bytes themselves; on error the Stats returned still hold DecodedSize so far.
func Scan(r io.ReaderAt, size int64, opt Options) (Stats, error) {
	return Stats{}, errors.New("TODO")
}

// Decode decodes a whole stream held in src (src may run past the declared size;
// decoding stops at the declared size). On error the bytes decoded so far are
// returned with it.
func Decode(src []byte, opt Options) ([]byte, error) { return nil, errors.New("TODO") }

// Index gives random access to one stream's output. A decoded block is the
// output between two checkpoints (about 64 KiB); it is the cache's unit.
type Index struct {
	// implementation-defined
}

// NewIndex builds the random-access index of the stream in r (see Scan for r
// and size). It fails with the first CorruptError, like Scan.
func NewIndex(r io.ReaderAt, size int64, opt Options) (*Index, error) {
	return nil, errors.New("TODO")
}

// Size is the decoded length.
func (ix *Index) Size() int64 { return 0 }

// NumBlocks is the number of decoded blocks.
func (ix *Index) NumBlocks() int { return 0 }

// Block returns the output range [off, off+n) of block i.
func (ix *Index) Block(i int) (off int64, n int) { return 0, 0 }

// BlockAt returns the block holding output offset off (0 <= off < Size).
func (ix *Index) BlockAt(off int64) int { return 0 }

// MemSize is the index's own footprint in bytes (for budgeting).
func (ix *Index) MemSize() int64 { return 0 }

// DecodeBlock returns block i's decoded bytes, reading the stream from r. prev,
// when not nil, is block i-1's decoded bytes (from a cache) and may serve as the
// window; with nil the index finds the window itself.
func (ix *Index) DecodeBlock(r io.ReaderAt, i int, prev []byte) ([]byte, error) {
	return nil, errors.New("TODO")
}

// ReadAt reads decoded bytes [off, off+len(p)) with no cache (convenience and
// tests): it decodes the blocks the range touches.
func (ix *Index) ReadAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	return 0, errors.New("TODO")
}

// EncodeOptions tune the encoder.
type EncodeOptions struct {
	Tag  string // up to 9 bytes, written into the header
	Best bool   // slower, smaller (longer chains)
}

// Encode compresses src into one stream that keeps every writer limit of note 000 §4.
func Encode(src []byte, opt EncodeOptions) []byte { return nil }

// Validate walks a stream's packets and reports the first writer limit it breaks
// (literal lengths, match kinds' ranges, bit 3, block crossings), or nil.
func Validate(stream []byte) error { return errors.New("TODO") }
