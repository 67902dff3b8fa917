package codec

import (
	"errors"
	"math"
)

// Packet-level constants of note 000.
const (
	maxPacket    = 2 + 273                  // a long literal is the longest packet
	maxWindow    = 0x4000*2 + 255*0x40 + 63 // farthest a match reaches back: 49151
	outSlack     = 288 + 3                  // most a packet adds to the output
	defaultAlign = 0x1000
)

// Decoder states: what the previous packet was, for the literal-pair rules.
const (
	stMatch   uint8 = iota // start, or a match/dummy/marker without little literals
	stLiteral              // a literal packet
	stLittle               // a match that carried 1-3 little literals
)

// errNeedInput is returned by run when the buffered input may end inside the
// next packet and more of the stream exists.
var errNeedInput = errors.New("codec: need input")

// errWindow means a match reaches before the window a partial decode was given:
// the index or the reader is inconsistent, not the stream.
var errWindow = errors.New("codec: match reaches before the decode window (stream changed since it was indexed?)")

// decoder holds the state of one decode, possibly over a window of the input
// (in, whose in[0] is stream offset inBase) and a window of the output (out,
// whose out[0] is output offset outBase).
type decoder struct {
	in     []byte
	inBase int64
	pos    int   // next packet, index into in
	end    int64 // declared size: the stream ends here
	full   bool  // in reaches end

	out     []byte
	outBase int64
	state   uint8
	first   bool // the next packet is the stream's first (LZO-style first byte)

	align  int64
	strict bool
	maxOut int64

	minRef int64 // lowest output offset any match read from (for index windows)
}

func (d *decoder) setOptions(opt Options) {
	d.align = opt.Align
	if d.align <= 0 {
		d.align = defaultAlign
	}
	d.strict = opt.Strict
	d.maxOut = opt.MaxOutput
	if d.maxOut <= 0 {
		d.maxOut = math.MaxInt64
	}
}

func corrupt(off int64, r Rule) error { return &CorruptError{Offset: off, Rule: r} }

// run decodes packets until the stream ends (nil), a packet boundary at or past
// stopIn (stream offset) or stopOut (output offset) is reached (nil), the
// buffered input runs short (errNeedInput), or the stream breaks a rule. The
// output holds exactly the packets that decoded cleanly.
func (d *decoder) run(stopIn, stopOut int64) error {
	in, pos, out, state := d.in, d.pos, d.out, d.state
	outBase, minRef := d.outBase, d.minRef
	endRel := len(in) // d.in never extends past end
	soft := len(in)
	if !d.full {
		soft = len(in) - maxPacket
	}
	stopRel := int64(math.MaxInt64)
	if stopIn != math.MaxInt64 {
		stopRel = stopIn - d.inBase
	}
	maxLen := d.maxOut - outBase // output length (in out) allowed
	var err error

	if d.first && pos < endRel {
		d.first = false
		if f := in[pos]; f > 0x11 {
			n := int(f) - 17
			if pos+1+n > len(in) {
				if !d.full {
					d.first = true
					d.pos = pos
					return errNeedInput
				}
				err = corrupt(d.inBase+int64(pos), RuleTruncated)
				goto done
			}
			if int64(len(out)+n) > maxLen {
				err = corrupt(d.inBase+int64(pos), RuleOutputLimit)
				goto done
			}
			out = append(out, in[pos+1:pos+1+n]...)
			pos += 1 + n
			state = stLiteral
			if n < 4 {
				state = stLittle
			}
		}
	}

	for pos < endRel {
		if int64(pos) >= stopRel || outBase+int64(len(out)) >= stopOut {
			break
		}
		if pos > soft {
			err = errNeedInput
			break
		}
		start := pos
		f := in[pos]
		if f < 0x10 {
			if state != stMatch {
				if state == stLiteral {
					err = corrupt(d.inBase+int64(start), RuleLiteralPair)
					break
				}
				if d.strict {
					err = corrupt(d.inBase+int64(start), RuleStrictLiteral)
					break
				}
			}
			var n int
			if f == 0 {
				if pos+2 > len(in) {
					err = corrupt(d.inBase+int64(start), RuleTruncated)
					break
				}
				n = int(in[pos+1]) + 18
				pos += 2
			} else {
				n = int(f) + 3
				pos++
			}
			if pos+n > len(in) {
				err = corrupt(d.inBase+int64(start), RuleTruncated)
				break
			}
			if int64(len(out)+n) > maxLen {
				err = corrupt(d.inBase+int64(start), RuleOutputLimit)
				break
			}
			if cap(out)-len(out) < n {
				out = grow(out, outSlack, maxLen)
			}
			out = append(out, in[pos:pos+n]...)
			pos += n
			state = stLiteral
			continue
		}

		var length, dist, lit, p int
		switch {
		case f >= 0x40: // short match
			if pos+2 > len(in) {
				err = corrupt(d.inBase+int64(start), RuleTruncated)
				goto done
			}
			b1 := in[pos+1]
			length = int(f>>5) + 1
			dist = int(b1)<<3 + int(f>>2&7) + 1
			lit = int(f & 3)
			p = pos + 2
		case f >= 0x20: // match
			length = int(f & 0x1F)
			p = pos + 1
			if length == 0 {
				if p >= len(in) {
					err = corrupt(d.inBase+int64(start), RuleTruncated)
					goto done
				}
				length = int(in[p]) + 0x1F
				p++
			}
			length += 2
			if p+2 > len(in) {
				err = corrupt(d.inBase+int64(start), RuleTruncated)
				goto done
			}
			b1, b2 := in[p], in[p+1]
			p += 2
			dist = int(b2)<<6 + int(b1>>2) + 1
			lit = int(b1 & 3)
		default: // far match, dummy or block marker
			length = int(f & 7)
			p = pos + 1
			if length == 0 {
				if p >= len(in) {
					err = corrupt(d.inBase+int64(start), RuleTruncated)
					goto done
				}
				length = int(in[p]) + 7
				p++
			}
			if p+2 > len(in) {
				err = corrupt(d.inBase+int64(start), RuleTruncated)
				goto done
			}
			b0, b1 := in[p], in[p+1]
			p += 2
			dd := int(f&8)<<11 | int(b1)<<6 | int(b0>>2)
			if dd == 0 {
				if length != 1 { // block marker: skip to the next aligned offset
					rel := d.inBase + int64(p) - HeaderSize
					next := (rel + d.align - 1) / d.align * d.align
					np := next + HeaderSize - d.inBase
					if np > d.end-d.inBase {
						np = d.end - d.inBase // the filler runs to the stream's end
					}
					pos = int(np) // past a partial buffer: the loop ends, a refill follows
					state = stMatch
					continue
				}
				length = 0 // dummy: little literals only
			} else {
				length += 2
				dist = dd + 0x4000
			}
			lit = int(b0 & 3)
		}
		if p+lit > len(in) {
			err = corrupt(d.inBase+int64(start), RuleTruncated)
			break
		}
		if int64(len(out)+length+lit) > maxLen {
			err = corrupt(d.inBase+int64(start), RuleOutputLimit)
			break
		}
		if length > 0 {
			o := len(out)
			if dist > o {
				if outBase+int64(o) < int64(dist) {
					err = corrupt(d.inBase+int64(start), RuleDistance)
				} else {
					err = errWindow
				}
				break
			}
			if ref := outBase + int64(o-dist); ref < minRef {
				minRef = ref
			}
			if cap(out)-o < outSlack {
				out = grow(out, outSlack, maxLen)
			}
			out = out[:o+length]
			if dist >= length {
				copy(out[o:], out[o-dist:o-dist+length])
			} else if dist == 1 {
				b := out[o-1]
				seg := out[o : o+length]
				for i := range seg {
					seg[i] = b
				}
			} else {
				for n := 0; n < length; {
					n += copy(out[o+n:o+length], out[o-dist:o+n])
				}
			}
		}
		switch lit {
		case 0:
			state = stMatch
		case 1:
			out = append(out, in[p])
			state = stLittle
		default:
			out = append(out, in[p:p+lit]...)
			state = stLittle
		}
		pos = p + lit
	}
done:
	if err == nil && pos >= endRel && !d.full {
		err = errNeedInput
	}
	d.pos, d.out, d.state, d.minRef = pos, out, state, minRef
	return err
}

// grow returns out with room for at least extra more bytes, doubling, but
// never (much) past limit, the most out may hold.
func grow(out []byte, extra int, limit int64) []byte {
	n := 2*cap(out) + extra
	if n < 4096 {
		n = 4096
	}
	if limit < int64(n-extra) { // (limit may be MaxInt64: no sums with it)
		n = int(max(limit, int64(len(out)))) + extra
	}
	nb := make([]byte, len(out), n)
	copy(nb, out)
	return nb
}

// Decode decodes a whole stream held in src (src may run past the declared size;
// decoding stops at the declared size). On error the bytes decoded so far are
// returned with it.
func Decode(src []byte, opt Options) ([]byte, error) {
	h, err := parseHeaderIn(src, int64(len(src)))
	if err != nil {
		return []byte{}, err
	}
	d := decoder{in: src[HeaderSize:h.Size], inBase: HeaderSize, end: h.Size, full: true, first: true}
	d.setOptions(opt)
	// A guess at the output size: compressible assets expand 2-4x; the
	// buffer grows by doubling past it. Never more than the limit allows.
	guess := int64(len(d.in))*3 + 64
	if guess > d.maxOut {
		guess = d.maxOut
	}
	d.out = make([]byte, 0, guess+outSlack)
	d.minRef = math.MaxInt64
	err = d.run(math.MaxInt64, math.MaxInt64)
	return d.out, err
}
