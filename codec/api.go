// Package codec owns Insomniac's WAD LZ stream: the decoder, the size scan, the
// random-access index the FUSE cache reads through, the encoder and a validator
// of the writer limits. It knows nothing of discs or FUSE.
//
// The exported API below is the contract other packages code against; the
// implementations live in header.go, decode.go, scan.go, index.go, encode.go
// and validate.go.
package codec

import (
	"errors"
	"fmt"
	"math"
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
// rule a stream broke. For a packet, Offset is the packet's flag byte.
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

// maxExpansion is the most output one byte of a stream's packets yields:
// a match of the longest length (288 bytes: flag, length byte, two
// distance bytes) is 72 per byte; its little literals, a byte for a byte;
// a far match 264 for 4, a short match 8 for 2, literals less than one.
const maxExpansion = 72

// MaxDecodedSize is the most a stream of declared size bytes (header
// included) can decode to, whatever its packets: a bound to check a decoded
// size that comes from elsewhere (a cache) against the stream's own.
func MaxDecodedSize(size int64) int64 {
	if size <= HeaderSize {
		return 0
	}
	if size-HeaderSize > math.MaxInt64/maxExpansion {
		return math.MaxInt64
	}
	return (size - HeaderSize) * maxExpansion
}

// outputLimit is MaxOutput, with no limit as the largest offset.
func (o Options) outputLimit() int64 {
	if o.MaxOutput <= 0 {
		return math.MaxInt64
	}
	return o.MaxOutput
}

// Header is a stream's parsed header.
type Header struct {
	Size int64  // declared compressed size, header included
	Tag  string // the 9-byte tag up to its first NUL
}

// Stats is what a size scan learns without producing output.
type Stats struct {
	Header       Header
	DecodedSize  int64 // bytes that decode cleanly (on error: up to the bad packet)
	Literals     int   // literal packets (both kinds, and an LZO-style first run)
	LongLiterals int   // of those, long literals (flag 0x00, 18 to 273 bytes)
	ShortMatches int
	Matches      int
	FarMatches   int
	Dummies      int
	BlockMarkers int
}

// EncodeOptions tune the encoder.
type EncodeOptions struct {
	Tag  string // up to 9 bytes, written into the header
	Best bool   // slower, smaller (longer chains)
}
