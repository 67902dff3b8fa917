package codec

// decodeFast is the decoder's inner loop for the packets that need no check
// but their own fields: run calls it with bounds that make every other check
// unnecessary, and it returns at the first packet it cannot take (a control
// packet, a literal packet the literal rules may reject, a distance past the
// output), which run's checked path then decodes or reports, so errors and
// their offsets are run's.
//
// The caller guarantees, for every pos < inEnd and o <= oEnd: a whole packet
// and an 8-byte read from pos are inside in (in[pos:pos+maxPacket+8]), the
// largest packet's output and the copies' over-writes are inside out
// (out[o:o+writeSlack]), and the packet's output stays within the output
// limit and starts before the stop. It keeps few variables live so they stay
// in registers, and copies as s2 and lz4 do: lengths and distance checked
// once per packet, 8- and 16-byte moves where source and destination are that
// far apart, copy for long runs that do not overlap, a repeated 8-byte
// pattern for short periods.
func decodeFast(in []byte, pos int, out []byte, o int, state uint8, strict bool, inEnd, oEnd int) (int, int, uint8) {
	for pos < inEnd && o <= oEnd {
		w := ld64(in, pos)
		f := byte(w)
		if f >= 0x40 { // short match: 3-8 bytes within 2048, then 0-3 little literals
			dist := int(byte(w>>8))<<3 + int(f>>2&7) + 1
			if dist > o {
				break
			}
			src := o - dist
			if dist >= 8 {
				st64(out, o, ld64(out, src))
			} else {
				st64(out, o, pattern8(out, src, dist))
			}
			o += int(f>>5) + 1
			lit := int(f & 3)
			st32(out, o, uint32(w>>16))
			o += lit
			pos += 2 + lit
			state = uint8((lit+3)>>2) * stLittle
			continue
		}
		var length, dist, adv int
		if f >= 0x20 { // match: 3-288 bytes within 16384
			length, adv = int(f&0x1F), 3
			if length == 0 {
				length, adv = int(byte(w>>8))+0x1F, 4
				w >>= 8
			}
			length += 2
			dist = int(uint16(w>>8)>>2) + 1
		} else if f >= 0x10 { // far match: 3-264 bytes, 16385-49151 back
			length, adv = int(f&7), 3
			if length == 0 {
				length, adv = int(byte(w>>8))+7, 4
				w >>= 8
			}
			dd := int(f&8)<<11 | int(uint16(w>>8)>>2)
			if dd == 0 {
				break // dummy or block marker
			}
			length += 2
			dist = dd + 0x4000
		} else { // literal packet
			if state == stLiteral || state == stLittle && strict {
				break
			}
			n, p := int(f)+3, pos+1
			if f == 0 {
				n, p = int(byte(w>>8))+18, pos+2
			}
			if n <= 16 {
				st64(out, o, ld64(in, p))
				st64(out, o+8, ld64(in, p+8))
			} else {
				copy(out[o:o+n], in[p:p+n])
			}
			o += n
			pos = p + n
			state = stLiteral
			continue
		}
		if dist > o {
			break
		}
		src := o - dist
		switch {
		case dist >= 16 && length <= 16:
			st64(out, o, ld64(out, src))
			st64(out, o+8, ld64(out, src+8))
		case dist >= length:
			copy(out[o:o+length], out[src:src+length])
		case dist >= 8: // overlapping: 8-byte moves, each from written bytes
			for i := 0; i < length; i += 8 {
				st64(out, o+i, ld64(out, src+i))
			}
		default: // a period under 8: one 8-byte pattern, repeated
			v := pattern8(out, src, dist)
			st64(out, o, v)
			step := dist * ((8 + dist - 1) / dist) // a multiple of the period, 8..14 back: written bytes
			for i := 8; i < length; i += 8 {
				st64(out, o+i, ld64(out, o+i-step))
			}
		}
		o += length
		lit := int(byte(w>>8)) & 3 // (w is past the length byte)
		st32(out, o, ld32(in, pos+adv))
		o += lit
		pos += adv + lit
		state = uint8((lit+3)>>2) * stLittle
	}
	return pos, o, state
}

// pattern8 is the 8 bytes a copy from src, dist < 8 before the destination,
// writes: the dist bytes at src repeated (an overlapping forward copy).
func pattern8(out []byte, src, dist int) uint64 {
	v := ld64(out, src)
	switch dist {
	case 1:
		return (v & 0xFF) * 0x0101010101010101
	case 2:
		return (v & 0xFFFF) * 0x0001000100010001
	case 4:
		return (v & 0xFFFFFFFF) * 0x0000000100000001
	}
	// 3, 5, 6, 7: the first dist bytes, then each byte from dist before.
	v &= 1<<(8*uint(dist)) - 1
	for i := dist; i < 8; i += dist {
		v |= v << (8 * uint(i))
	}
	return v
}
