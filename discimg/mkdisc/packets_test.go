package mkdisc

import (
	"encoding/binary"
	"fmt"
	"testing"
)

// packetCounts is an independent walk of a stream's packets (note 000 §2),
// counting what codec.Stats does not split: long and short literals and
// overlapping (run-length) copies.
type packetCounts struct {
	longLit, shortLit, short, match, far, overlap, dummy, marker int
	decoded                                                      int64
}

func walkPackets(s []byte) (packetCounts, error) {
	var c packetCounts
	if len(s) < 16 || string(s[:3]) != "WAD" {
		return c, fmt.Errorf("no header")
	}
	end := int(binary.LittleEndian.Uint32(s[3:]))
	if end > len(s) {
		return c, fmt.Errorf("declared size %d past %d", end, len(s))
	}
	p := 16
	need := func(n int) error {
		if p+n > end {
			return fmt.Errorf("truncated at %#x", p)
		}
		return nil
	}
	copyMatch := func(l, d int) {
		if d < l {
			c.overlap++
		}
		c.decoded += int64(l)
	}
	for p < end {
		if err := need(1); err != nil {
			return c, err
		}
		flag := int(s[p])
		p++
		lits := 0
		switch {
		case flag < 0x10:
			n := flag + 3
			if flag == 0 {
				if err := need(1); err != nil {
					return c, err
				}
				n = int(s[p]) + 18
				p++
				c.longLit++
			} else {
				c.shortLit++
			}
			if err := need(n); err != nil {
				return c, err
			}
			p += n
			c.decoded += int64(n)
			continue
		case flag < 0x20:
			l := flag & 7
			if l == 0 {
				if err := need(1); err != nil {
					return c, err
				}
				l = int(s[p]) + 7
				p++
			}
			if err := need(2); err != nil {
				return c, err
			}
			b0, b1 := int(s[p]), int(s[p+1])
			p += 2
			if b0>>2 == 0 && b1 == 0 && flag&8 == 0 {
				if l == 1 {
					c.dummy++
					lits = b0 & 3
				} else {
					c.marker++
					p = 16 + (p-16+0xfff)/0x1000*0x1000
					continue
				}
			} else {
				c.far++
				copyMatch(l+2, 0x4000*(flag>>3&1+1)+b1*0x40+b0>>2)
				lits = b0 & 3
			}
		case flag < 0x40:
			l := flag & 0x1f
			if l == 0 {
				if err := need(1); err != nil {
					return c, err
				}
				l = int(s[p]) + 0x1f
				p++
			}
			if err := need(2); err != nil {
				return c, err
			}
			b1, b2 := int(s[p]), int(s[p+1])
			p += 2
			c.match++
			copyMatch(l+2, b2*0x40+b1>>2+1)
			lits = b1 & 3
		default:
			if err := need(1); err != nil {
				return c, err
			}
			b1 := int(s[p])
			p++
			c.short++
			copyMatch(flag>>5+1, b1*8+(flag>>2&7)+1)
			lits = flag & 3
		}
		if err := need(lits); err != nil {
			return c, err
		}
		p += lits
		c.decoded += int64(lits)
	}
	return c, nil
}

// TestPacketKinds: together, the small layout's streams use every packet kind
// of note 000, counted by a walk independent of the codec, whose decoded
// lengths must agree with what the generator hashed.
func TestPacketKinds(t *testing.T) {
	var total packetCounts
	for _, f := range built(t, Small) {
		for _, e := range f.entries {
			if e.decoded == nil {
				continue
			}
			buf := make([]byte, e.n)
			f.content.ReadAt(buf, e.off)
			c, err := walkPackets(buf)
			if err != nil {
				t.Errorf("%s/%s: %v", f.path, e.name, err)
				continue
			}
			if c.decoded != e.decoded.plainSize {
				t.Errorf("%s/%s: walk decodes %d bytes, generator hashed %d", f.path, e.name, c.decoded, e.decoded.plainSize)
			}
			total.longLit += c.longLit
			total.shortLit += c.shortLit
			total.short += c.short
			total.match += c.match
			total.far += c.far
			total.overlap += c.overlap
			total.dummy += c.dummy
			total.marker += c.marker
		}
	}
	t.Logf("packets: %+v", total)
	for kind, n := range map[string]int{"long literal": total.longLit, "short literal": total.shortLit,
		"short match": total.short, "match": total.match, "far match": total.far,
		"overlapping copy": total.overlap, "dummy": total.dummy, "block marker": total.marker} {
		if n == 0 {
			t.Errorf("no %s in the disc's streams", kind)
		}
	}
}
