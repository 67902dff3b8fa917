package codec

import (
	"encoding/binary"
	"math/bits"
)

// Writer limits of note 000 §4.
const (
	minLiteral    = 4
	maxLiteral    = 273
	maxShortLen   = 8
	maxShortDist  = 2048
	maxMatchLen   = 288
	maxMatchDist  = 16384
	maxFarLen     = 264
	minFarDist    = 16385
	maxFarDist    = 32704
	writerBlock   = 0x2000
	markerFiller  = 0xEE
	encHashBits   = 16
	encWindowMask = 1<<15 - 1 // chain ring; > maxFarDist
)

// encoder is one compression: a hash-chain match finder over three-byte
// prefixes with lazy evaluation, and a packet writer that keeps the limits.
type encoder struct {
	src   []byte
	out   []byte
	head  []int32 // hash -> latest position + 1 (0: none)
	chain []int32 // position & encWindowMask -> previous position + 1
	next  int     // positions below next are in the hash chains

	depth   int // chain links followed per search
	nice    int // stop searching at this length
	lazyMax int // try a lazy step only below this length

	pendLen, pendDist int // a match whose trailing literals are not known yet
}

// Encode compresses src into one stream that keeps every writer limit of note 000 §4.
// src must be shorter than 2 GiB (match positions are 32-bit; the header's
// size field is too).
func Encode(src []byte, opt EncodeOptions) []byte {
	e := &encoder{
		src:   src,
		out:   make([]byte, HeaderSize, HeaderSize+len(src)/2+64),
		head:  make([]int32, 1<<encHashBits),
		chain: make([]int32, encWindowMask+1),
	}
	if opt.Best {
		e.depth, e.nice, e.lazyMax = 128, maxMatchLen, maxMatchLen
	} else {
		e.depth, e.nice, e.lazyMax = 8, 32, 16
	}
	e.compress()
	putHeader(e.out, len(e.out), opt.Tag)
	return e.out
}

func hash3(v uint32) uint32 { return (v & 0xFFFFFF) * 2654435761 >> (32 - encHashBits) }

func (e *encoder) load3(p int) uint32 {
	s := e.src
	if p+4 <= len(s) {
		return binary.LittleEndian.Uint32(s[p:])
	}
	return uint32(s[p]) | uint32(s[p+1])<<8 | uint32(s[p+2])<<16
}

// insertTo adds every position below q (that has three bytes) to the chains.
func (e *encoder) insertTo(q int) {
	lim := len(e.src) - 2
	if q > lim {
		q = lim
	}
	for ; e.next < q; e.next++ {
		h := hash3(e.load3(e.next))
		e.chain[e.next&encWindowMask] = e.head[h]
		e.head[h] = int32(e.next + 1)
	}
}

// matchCost is the packet size of a match of length l at distance d, or 0 when
// no single packet can carry it.
func matchCost(l, d int) int {
	switch {
	case l < 3:
		return 0
	case d <= maxShortDist && l <= maxShortLen:
		return 2
	case d <= maxMatchDist:
		if l > maxMatchLen {
			return 0
		}
		if l <= 33 {
			return 3
		}
		return 4
	case d >= minFarDist && d <= maxFarDist:
		if l > maxFarLen {
			return 0
		}
		if l <= 9 {
			return 3
		}
		return 4
	}
	return 0
}

// maxLenAt is the longest match one packet carries at distance d.
func maxLenAt(d int) int {
	if d <= maxMatchDist {
		return maxMatchLen
	}
	return maxFarLen
}

// find returns the best match at p (gain = bytes saved against literals),
// searching positions already inserted.
func (e *encoder) find(p int) (bestLen, bestDist, bestGain int) {
	s := e.src
	if p+3 > len(s) {
		return 0, 0, 0
	}
	e.insertTo(p)
	avail := len(s) - p
	cand := int(e.head[hash3(e.load3(p))]) - 1
	for steps := e.depth; cand >= 0 && steps > 0; steps-- {
		d := p - cand
		if d > maxFarDist {
			break
		}
		limit := min(avail, maxLenAt(d))
		// Cheap reject: a candidate must beat bestLen to matter.
		if bestLen < limit && s[cand+bestLen] == s[p+bestLen] {
			l := matchLen(s[cand:cand+limit], s[p:p+limit])
			if c := matchCost(l, d); c > 0 {
				if g := l - c; g > bestGain || g == bestGain && l > bestLen {
					bestLen, bestDist, bestGain = l, d, g
					if l >= e.nice || l == limit && d <= maxMatchDist {
						break
					}
				}
			}
		}
		nc := int(e.chain[cand&encWindowMask]) - 1
		if nc >= cand {
			break // the ring slot was reused by a newer position
		}
		cand = nc
	}
	return
}

// matchLen counts equal leading bytes of a and b (len(a) == len(b)).
func matchLen(a, b []byte) int {
	n := 0
	for len(a)-n >= 8 {
		x := binary.LittleEndian.Uint64(a[n:]) ^ binary.LittleEndian.Uint64(b[n:])
		if x != 0 {
			return n + bits.TrailingZeros64(x)>>3
		}
		n += 8
	}
	for n < len(a) && a[n] == b[n] {
		n++
	}
	return n
}

func (e *encoder) compress() {
	s := e.src
	p, litStart := 0, 0
	for p+3 <= len(s) {
		l, d, g := e.find(p)
		if g <= 0 {
			p++
			continue
		}
		// Lazy evaluation: a better match one byte on wins over this one.
		for l < e.lazyMax && p+1+3 <= len(s) {
			l2, d2, g2 := e.find(p + 1)
			if g2 > g {
				p, l, d, g = p+1, l2, d2, g2
				continue
			}
			break
		}
		e.flush(s[litStart:p])
		e.pendLen, e.pendDist = l, d
		p += l
		litStart = p
		if l > 64 && !(e.depth > 64) {
			// Long matches (runs, repeats): skip hashing their middle.
			e.next = max(e.next, p-16)
		}
	}
	e.flush(s[litStart:])
}

// flush writes the pending match (if any) followed by the literals lits.
func (e *encoder) flush(lits []byte) {
	if e.pendLen > 0 {
		l, d := e.pendLen, e.pendDist
		e.pendLen = 0
		if len(lits) <= 3 {
			e.match(l, d, lits)
			return
		}
		e.match(l, d, nil)
	} else if len(lits) == 0 {
		return
	} else if len(lits) <= 3 {
		e.dummy(lits)
		return
	}
	// len(lits) >= 4, and the previous packet is not a literal packet.
	for {
		if len(lits) <= maxLiteral {
			e.literal(lits)
			return
		}
		e.literal(lits[:maxLiteral])
		lits = lits[maxLiteral:]
		if len(lits) <= 3 {
			e.dummy(lits)
			return
		}
		e.dummy(nil)
	}
}

// packet appends one packet (header bytes hdr, then tail), first padding to
// the next 0x2000 block of the packet data when it would cross one (note 000 §3).
func (e *encoder) packet(hdr, tail []byte) {
	size := len(hdr) + len(tail)
	if (len(e.out)+0x1FF0)%writerBlock+size > writerBlock-3 {
		e.out = append(e.out, 0x12, 0, 0)
		for (len(e.out)-HeaderSize)%writerBlock != 0 {
			e.out = append(e.out, markerFiller)
		}
	}
	e.out = append(e.out, hdr...)
	e.out = append(e.out, tail...)
}

func (e *encoder) literal(b []byte) {
	if len(b) <= 18 {
		e.packet([]byte{byte(len(b) - 3)}, b)
	} else {
		e.packet([]byte{0, byte(len(b) - 18)}, b)
	}
}

func (e *encoder) dummy(lits []byte) {
	e.packet([]byte{0x11, byte(len(lits)), 0}, lits)
}

// match writes a match of length l at distance d with 0-3 little literals.
func (e *encoder) match(l, d int, lits []byte) {
	var h [4]byte
	n := byte(len(lits))
	var hdr []byte
	switch {
	case d <= maxShortDist && l <= maxShortLen:
		h[0] = byte(l-1)<<5 | byte((d-1)&7)<<2 | n
		h[1] = byte((d - 1) >> 3)
		hdr = h[:2]
	case d <= maxMatchDist:
		i := 0
		if l <= 33 {
			h[0] = 0x20 | byte(l-2)
			i = 1
		} else {
			h[0], h[1] = 0x20, byte(l-33)
			i = 2
		}
		h[i] = byte((d-1)&0x3F)<<2 | n
		h[i+1] = byte((d - 1) >> 6)
		hdr = h[:i+2]
	default:
		dd := d - 0x4000
		i := 0
		if l <= 9 {
			h[0] = 0x10 | byte(l-2)
			i = 1
		} else {
			h[0], h[1] = 0x10, byte(l-9)
			i = 2
		}
		h[i] = byte(dd&0x3F)<<2 | n
		h[i+1] = byte(dd >> 6)
		hdr = h[:i+2]
	}
	e.packet(hdr, lits)
}
