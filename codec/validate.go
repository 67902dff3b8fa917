package codec

import (
	"errors"
	"fmt"
)

// ErrWriterLimit is wrapped by every LimitError.
var ErrWriterLimit = errors.New("wad: writer limit broken")

// LimitError reports the first writer limit of note 000 §3-4 a stream breaks;
// Offset is the packet's flag byte.
type LimitError struct {
	Offset int64
	Limit  string
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("wad: writer limit broken at stream offset %#x: %s", e.Offset, e.Limit)
}
func (e *LimitError) Unwrap() error { return ErrWriterLimit }

// Validate walks a stream's packets and reports the first writer limit it breaks
// (literal lengths, match kinds' ranges, bit 3, block crossings), or nil. A
// stream that does not decode at all (in strict reading) fails with its
// CorruptError. The writer limits checked:
//   - no LZO-style first byte; literal runs of 4-273 in literal packets (the
//     format cannot say otherwise) and never right after a literal packet or a
//     match with little literals;
//   - far matches within 16,385-32,704 and never with bit 3 (short and plain
//     matches cannot leave their ranges);
//   - before every packet but a marker, its offset in the 0x2000 block of the
//     packet data plus its size (little literals included) is at most
//     0x2000-3, so no packet crosses a block and a marker always fits;
//   - a block marker is 12 00 00 and its skip ends on a 0x2000 boundary (so
//     0x1000 and 0x2000 readers agree).
func Validate(stream []byte) error {
	h, err := parseHeaderIn(stream, int64(len(stream)))
	if err != nil {
		return err
	}
	in := stream[:h.Size]
	pos := HeaderSize
	var olen int64
	state := stMatch
	lim := func(off int, what string) error { return &LimitError{Offset: int64(off), Limit: what} }
	if pos < len(in) && in[pos] > 0x11 {
		return lim(pos, "LZO-style first byte")
	}
	for pos < len(in) {
		start := pos
		f := in[pos]
		need := func(n int) bool { return start+n <= len(in) }
		var size, length, dist, lit int
		if f < 0x10 {
			if state == stLiteral {
				return corrupt(int64(start), RuleLiteralPair)
			}
			if state == stLittle {
				return corrupt(int64(start), RuleStrictLiteral)
			}
			n, hdr := int(f)+3, 1
			if f == 0 {
				if !need(2) {
					return corrupt(int64(start), RuleTruncated)
				}
				n, hdr = int(in[pos+1])+18, 2
			}
			size = hdr + n
			if !need(size) {
				return corrupt(int64(start), RuleTruncated)
			}
			if err := blockFit(start, size); err != "" {
				return lim(start, err)
			}
			olen += int64(n)
			pos += size
			state = stLiteral
			continue
		}
		switch {
		case f >= 0x40:
			if !need(2) {
				return corrupt(int64(start), RuleTruncated)
			}
			length = int(f>>5) + 1
			dist = int(in[pos+1])<<3 + int(f>>2&7) + 1
			lit = int(f & 3)
			size = 2
		case f >= 0x20:
			length, size = int(f&0x1F), 3
			if length == 0 {
				if !need(2) {
					return corrupt(int64(start), RuleTruncated)
				}
				length, size = int(in[pos+1])+0x1F, 4
			}
			length += 2
			if !need(size) {
				return corrupt(int64(start), RuleTruncated)
			}
			b1, b2 := in[start+size-2], in[start+size-1]
			dist = int(b2)<<6 + int(b1>>2) + 1
			lit = int(b1 & 3)
		default:
			length, size = int(f&7), 3
			if length == 0 {
				if !need(2) {
					return corrupt(int64(start), RuleTruncated)
				}
				length, size = int(in[pos+1])+7, 4
			}
			if !need(size) {
				return corrupt(int64(start), RuleTruncated)
			}
			b0, b1 := in[start+size-2], in[start+size-1]
			if f&8 != 0 {
				return lim(start, "far match with bit 3 set")
			}
			dd := int(b1)<<6 | int(b0>>2)
			if dd == 0 && length != 1 {
				if f != 0x12 || b0 != 0 {
					return lim(start, "block marker other than 12 00 00")
				}
				if (start-HeaderSize)%writerBlock+3 > writerBlock {
					return lim(start, "block marker crosses a 0x2000 block")
				}
				rel := start + 3 - HeaderSize
				next := (rel + writerBlock - 1) / writerBlock * writerBlock
				if (rel+defaultAlign-1)/defaultAlign*defaultAlign != next {
					return lim(start, "block marker whose 0x1000 and 0x2000 skips differ")
				}
				pos = min(next+HeaderSize, len(in))
				state = stMatch
				continue
			}
			lit = int(b0 & 3)
			if dd == 0 {
				length = 0
			} else {
				length += 2
				dist = dd + 0x4000
				if dist > maxFarDist {
					return lim(start, fmt.Sprintf("far match distance %d past %d", dist, maxFarDist))
				}
			}
		}
		if !need(size + lit) {
			return corrupt(int64(start), RuleTruncated)
		}
		if int64(dist) > olen {
			return corrupt(int64(start), RuleDistance)
		}
		if err := blockFit(start, size+lit); err != "" {
			return lim(start, err)
		}
		olen += int64(length + lit)
		pos = start + size + lit
		state = stMatch
		if lit != 0 {
			state = stLittle
		}
	}
	return nil
}

// blockFit applies the writer's padding rule to a packet of size bytes at
// stream offset off.
func blockFit(off, size int) string {
	if (off-HeaderSize)%writerBlock+size > writerBlock-3 {
		return fmt.Sprintf("%d-byte packet at %#x of its 0x2000 block needs a block marker first", size, (off-HeaderSize)%writerBlock)
	}
	return ""
}
