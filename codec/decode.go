package codec

import (
	"encoding/binary"
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

	minRef   int64 // lowest output offset any match read from (for index windows)
	trackRef bool  // keep minRef (only the index builder needs it)
}

// clampAlign is the marker alignment to use for Options.Align: the default
// for 0 or less, and at most 2^32 (stream offsets are 32-bit, so larger
// values all mean "to the end"; the bound keeps the rounding from overflowing).
func clampAlign(a int64) int64 {
	if a <= 0 {
		return defaultAlign
	}
	return min(a, 1<<32)
}

func (d *decoder) setOptions(opt Options) {
	d.align = clampAlign(opt.Align)
	d.strict = opt.Strict
	d.maxOut = opt.MaxOutput
	if d.maxOut <= 0 {
		d.maxOut = math.MaxInt64
	}
}

func corrupt(off int64, r Rule) error { return &CorruptError{Offset: off, Rule: r} }

// writeSlack is the room run keeps past the output before each packet: the
// largest packet's output plus the 8-byte over-writes of the copy loops.
const writeSlack = outSlack + 16

// run decodes packets until the stream ends (nil), a packet boundary at or past
// stopIn (stream offset) or stopOut (output offset) is reached (nil), the
// buffered input runs short (errNeedInput), or the stream breaks a rule. The
// output holds exactly the packets that decoded cleanly.
//
// Away from the buffers' ends, the limit and the stop, packets are decoded by
// decodeFast (fast.go); the loop here decodes the rest and every packet
// decodeFast leaves (control packets, literal-rule checks, errors). It
// checks each packet's lengths and distance once, then copies with 8-byte
// moves where source and destination are 8 or more apart (writing up to 7
// bytes past the packet's end, inside writeSlack), and with copy for long
// non-overlapping runs.
func (d *decoder) run(stopIn, stopOut int64) error {
	in, pos, state := d.in, d.pos, d.state
	o := len(d.out)
	out := d.out[:cap(d.out)]
	outBase, minRef, trackRef := d.outBase, d.minRef, d.trackRef
	endRel := len(in) // d.in never extends past end
	soft := len(in)
	if !d.full {
		soft = len(in) - maxPacket
	}
	stopRel := int64(math.MaxInt64)
	if stopIn != math.MaxInt64 {
		stopRel = stopIn - d.inBase
	}
	stopO := int64(math.MaxInt64)
	if stopOut != math.MaxInt64 {
		stopO = stopOut - outBase
	}
	maxLen := d.maxOut - outBase // output length (in out) allowed
	var err error
	// One bound for the loop: the stream's end, the stop offset and the end
	// of the fully buffered packets, whichever comes first.
	lim := endRel
	if int64(lim) > stopRel {
		lim = int(max(stopRel, 0))
	}
	if soft+1 < lim {
		lim = soft + 1
	}
	inFast := min(lim, len(in)-(maxPacket+8)) // decodeFast's input bound

	if d.first && pos < endRel {
		d.first = false
		if f := in[pos]; f > 0x11 {
			n := int(f) - 17
			if pos+1+n > len(in) {
				if !d.full {
					d.first = true
					return errNeedInput
				}
				err = corrupt(d.inBase+int64(pos), RuleTruncated)
				goto done
			}
			if int64(o+n) > maxLen {
				err = corrupt(d.inBase+int64(pos), RuleOutputLimit)
				goto done
			}
			if len(out)-o < n+writeSlack {
				out = grow(out[:o], n+writeSlack, maxLen)
				out = out[:cap(out)]
			}
			o += copy(out[o:], in[pos+1:pos+1+n])
			pos += 1 + n
			state = stLiteral
			if n < 4 {
				state = stLittle
			}
		}
	}

	for pos < lim && int64(o) < stopO {
		if len(out)-o < writeSlack {
			out = grow(out[:o], writeSlack, maxLen)
			out = out[:cap(out)]
		}
		if pos < inFast && !trackRef {
			oEnd := len(out) - writeSlack
			if m := maxLen - outSlack; m < int64(oEnd) {
				oEnd = int(max(m, -1))
			}
			if s := stopO - 1; s < int64(oEnd) {
				oEnd = int(s)
			}
			p0 := pos
			pos, o, state = decodeFast(in, pos, out, o, state, d.strict, inFast, oEnd)
			if pos != p0 {
				continue
			}
		}
		start := pos
		f := in[pos]
		if f >= 0x40 && pos+8 <= len(in) {
			// Short match (57% of packets on asset data), with its little
			// literals known to be inside the buffer.
			w := binary.LittleEndian.Uint64(in[pos:])
			length := int(f>>5) + 1
			dist := int(byte(w>>8))<<3 + int(f>>2&7) + 1
			lit := int(f & 3)
			if int64(o+length+lit) > maxLen {
				err = corrupt(d.inBase+int64(start), RuleOutputLimit)
				break
			}
			if dist > o {
				if outBase+int64(o) < int64(dist) {
					err = corrupt(d.inBase+int64(start), RuleDistance)
				} else {
					err = errWindow
				}
				break
			}
			src := o - dist
			if trackRef && outBase+int64(src) < minRef {
				minRef = outBase + int64(src)
			}
			switch {
			case dist >= 8:
				binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[src:]))
			case dist >= 4:
				binary.LittleEndian.PutUint32(out[o:], binary.LittleEndian.Uint32(out[src:]))
				binary.LittleEndian.PutUint32(out[o+4:], binary.LittleEndian.Uint32(out[src+4:]))
			case dist == 1:
				binary.LittleEndian.PutUint64(out[o:], uint64(out[src])*0x0101010101010101)
			default:
				s8 := out[src : src+8 : src+8]
				d8 := out[o : o+8 : o+8]
				for i := range d8 {
					d8[i] = s8[i] // forwards, so overlap repeats the pattern
				}
			}
			o += length
			binary.LittleEndian.PutUint32(out[o:], uint32(w>>16)) // the little literals
			o += lit
			pos += 2 + lit
			state = uint8((lit+3)>>2) * stLittle
			continue
		}
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
			if int64(o+n) > maxLen {
				err = corrupt(d.inBase+int64(start), RuleOutputLimit)
				break
			}
			if n <= 16 && pos+16 <= len(in) {
				binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(in[pos:]))
				binary.LittleEndian.PutUint64(out[o+8:], binary.LittleEndian.Uint64(in[pos+8:]))
			} else {
				copy(out[o:o+n], in[pos:pos+n])
			}
			o += n
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
		case f >= 0x20 && pos+8 <= len(in): // match, header and literals buffered
			w := binary.LittleEndian.Uint64(in[pos:])
			length, p = int(f&0x1F), pos+3
			if length == 0 {
				length, p = int(byte(w>>8))+0x1F, pos+4
				w >>= 8
			}
			length += 2
			b1 := byte(w >> 8)
			dist = int(byte(w>>16))<<6 + int(b1>>2) + 1
			lit = int(b1 & 3)
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
		if int64(o+length+lit) > maxLen {
			err = corrupt(d.inBase+int64(start), RuleOutputLimit)
			break
		}
		if length > 0 {
			if dist > o {
				if outBase+int64(o) < int64(dist) {
					err = corrupt(d.inBase+int64(start), RuleDistance)
				} else {
					err = errWindow
				}
				break
			}
			src := o - dist
			if trackRef && outBase+int64(src) < minRef {
				minRef = outBase + int64(src)
			}
			switch {
			case dist >= 8:
				if length <= 16 {
					binary.LittleEndian.PutUint64(out[o:], binary.LittleEndian.Uint64(out[src:]))
					binary.LittleEndian.PutUint64(out[o+8:], binary.LittleEndian.Uint64(out[src+8:]))
				} else if dist >= length {
					copy(out[o:o+length], out[src:src+length])
				} else {
					for i := 0; i < length; i += 8 {
						binary.LittleEndian.PutUint64(out[o+i:], binary.LittleEndian.Uint64(out[src+i:]))
					}
				}
			case dist == 1:
				v := uint64(out[src]) * 0x0101010101010101
				for i := 0; i < length; i += 8 {
					binary.LittleEndian.PutUint64(out[o+i:], v)
				}
			default:
				// Period 2-7: bytes up to 8, then 8-byte moves from a
				// multiple of the period at least 8 back.
				if dist >= 4 {
					binary.LittleEndian.PutUint32(out[o:], binary.LittleEndian.Uint32(out[src:]))
					binary.LittleEndian.PutUint32(out[o+4:], binary.LittleEndian.Uint32(out[src+4:]))
				} else {
					for i := 0; i < 8; i++ { // 8 bytes: within writeSlack
						out[o+i] = out[src+i]
					}
				}
				if length > 8 {
					step := dist * ((8 + dist - 1) / dist)
					for i := 8; i < length; i += 8 {
						binary.LittleEndian.PutUint64(out[o+i:], binary.LittleEndian.Uint64(out[o+i-step:]))
					}
				}
			}
			o += length
		}
		switch lit {
		case 0:
			state = stMatch
		default:
			if p+4 <= len(in) {
				binary.LittleEndian.PutUint32(out[o:], binary.LittleEndian.Uint32(in[p:]))
			} else {
				copy(out[o:o+lit], in[p:p+lit])
			}
			o += lit
			state = stLittle
		}
		pos = p + lit
	}
	if err == nil && pos < endRel && int64(pos) < stopRel && int64(o) < stopO {
		err = errNeedInput // stopped at the end of the fully buffered packets
	}
done:
	if err == nil && pos >= endRel && !d.full {
		err = errNeedInput
	}
	d.pos, d.out, d.state, d.minRef = pos, out[:o], state, minRef
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
func Decode(src []byte, opt Options) ([]byte, error) { return AppendDecode(nil, src, opt) }

// AppendDecode is Decode appending to dst (which may be a reused buffer: with
// enough capacity nothing is allocated). On error dst holds the clean prefix.
func AppendDecode(dst, src []byte, opt Options) ([]byte, error) {
	if dst == nil {
		dst = []byte{}
	}
	h, err := parseHeaderIn(src, int64(len(src)))
	if err != nil {
		return dst, err
	}
	d := decoder{in: src[HeaderSize:h.Size], inBase: HeaderSize, end: h.Size, full: true, first: true}
	d.setOptions(opt)
	// Decode into dst[base:], so distances count from there and earlier
	// content of dst is out of reach.
	base := len(dst)
	if cap(dst)-base < writeSlack {
		// A guess at the output size: compressible assets expand 2-4x; the
		// buffer grows by doubling past it. Never more than the limit allows.
		guess := int64(len(d.in))*3 + 64
		if guess > d.maxOut {
			guess = d.maxOut
		}
		nb := make([]byte, base, int64(base)+guess+writeSlack)
		copy(nb, dst)
		dst = nb
	}
	d.out = dst[base:base]
	err = d.run(math.MaxInt64, math.MaxInt64)
	if &d.out[:1][0] == &dst[base : base+1][0] {
		return dst[:base+len(d.out)], err // decoded in place
	}
	return append(dst[:base], d.out...), err // the output grew elsewhere
}
