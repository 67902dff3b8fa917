package mesh

import (
	"fmt"
	"math"
)

// TieClass is a tie class for WriteTie: its scale, its texture slot count
// (one AD-GIF record each) and LOD 0's strips.
type TieClass struct {
	Scale  float32
	Slots  int
	Strips []Strip
}

// tieMaxGS bounds a packet's GS offsets: strip tag offsets are a byte.
const tieMaxGS = 240

// WriteTie lays out a GC tie class (LEVEL-CORE §2.2): the header, the
// AD-GIF records, LOD 0's packet table and packets (LODs 1 and 2 empty).
// In a packet the GS offsets run from 6 (after the first AD-GIF): a texture
// change between strips is an AD-GIF (at most 3 more a packet), each strip
// a tag (1), each vertex 3; a vertex a packet already sent (same position
// and ST) is sent again through its record's second GS offset; records
// alternate between the dinky and fat forms.
func WriteTie(c *TieClass) ([]byte, error) {
	if c.Slots < 1 || c.Slots > 15 {
		return nil, fmt.Errorf("mesh: tie class of %d slots", c.Slots)
	}
	// Group strips into packets.
	type packet struct{ strips []Strip }
	var packets []packet
	var cur packet
	gs, switches := tieFirstOffset, 0
	var tex int32
	for i, s := range c.Strips {
		if s.Tex < 0 || int(s.Tex) >= c.Slots || len(s.Verts) < 3 || s.List {
			return nil, fmt.Errorf("mesh: tie strip %d: texture %d of %d slots, %d vertices", i, s.Tex, c.Slots, len(s.Verts))
		}
		need := 1 + 3*len(s.Verts)
		sw := len(cur.strips) > 0 && s.Tex != tex
		if sw {
			need += 6
		}
		if 1+3*len(s.Verts) > tieMaxGS-tieFirstOffset {
			return nil, fmt.Errorf("mesh: tie strip %d of %d vertices does not fit a packet", i, len(s.Verts))
		}
		if len(cur.strips) > 0 && (gs+need > tieMaxGS || (sw && switches == 3) || len(cur.strips) == 60) {
			packets = append(packets, cur)
			cur, gs, switches, sw = packet{}, tieFirstOffset, 0, false
			need = 1 + 3*len(s.Verts)
		}
		if sw {
			switches++
		}
		gs += need
		tex = s.Tex
		cur.strips = append(cur.strips, s)
	}
	if len(cur.strips) > 0 {
		packets = append(packets, cur)
	}
	if len(packets) > 255 {
		return nil, fmt.Errorf("mesh: tie class of %d packets", len(packets))
	}
	w := &wbuf{}
	w.zeros(tieHeaderSize)
	adGifs := w.at()
	for k := 0; k < c.Slots; k++ {
		w.adData(int32(k), gsTEX0_1)
		w.adData(0, gsTEX1_1)
		w.adData(0, gsMIPTBP1_1)
		w.adData(0, gsCLAMP_1)
		w.adData(0, gsMIPTBP2_1)
	}
	w.pad(0x10)
	table := w.at()
	w.zeros(len(packets) * tiePacketEntrySize)
	for i, p := range packets {
		w.pad(0x10)
		d := w.at()
		type rec struct {
			v       StripVertex
			gs, gs2 int
		}
		var recs []rec
		sent := map[StripVertex]int{} // record of a vertex without a second offset yet
		var dest [4]int32
		var src [4]int32
		for k := range dest {
			dest[k] = -1
		}
		src[0] = p.strips[0].Tex * tieADGifRecord
		gs, gif, tex := tieFirstOffset, 1, p.strips[0].Tex
		var tags []int
		for _, s := range p.strips {
			if s.Tex != tex {
				dest[gif-1], src[gif] = int32(gs), s.Tex*tieADGifRecord
				gif++
				gs += 6
				tex = s.Tex
			}
			tags = append(tags, gs)
			gs++
			for _, v := range s.Verts {
				if r, ok := sent[v]; ok {
					recs[r].gs2 = gs
					delete(sent, v)
				} else {
					sent[v] = len(recs)
					recs = append(recs, rec{v: v, gs: gs})
				}
				gs += 3
			}
		}
		dinky := (len(recs) + 1) / 2
		if (len(recs)-dinky)%2 == 1 {
			dinky++ // an even count of fat vertices fills whole qwords
		}
		for _, o := range dest {
			w.u32(uint32(o))
		}
		for _, o := range src {
			w.u32(uint32(o))
		}
		hdr := make([]byte, 12)
		hdr[3] = byte(len(p.strips))
		hdr[8] = byte(dinky*2 + 4)
		hdr[9] = byte((len(recs) - dinky) * tieFatSize / 16)
		w.b = append(w.b, hdr...)
		for k, s := range p.strips {
			w.u8(byte(len(s.Verts)))
			w.u8(0)
			w.u8(byte(tags[k]))
			w.u8(0)
		}
		w.pad(0x10)
		vo := w.at()
		for k, r := range recs {
			if k < dinky {
				w.s16(r.v.Pos[0])
				w.s16(r.v.Pos[1])
				w.s16(r.v.Pos[2])
				w.u16(uint16(r.gs))
				w.s16(r.v.ST[0])
				w.s16(r.v.ST[1])
				w.u16(0x1000)
				w.u16(uint16(r.gs2))
				continue
			}
			w.zeros(6)
			w.u16(uint16(r.gs))
			w.s16(r.v.Pos[0])
			w.s16(r.v.Pos[1])
			w.s16(r.v.Pos[2])
			w.u16(0)
			w.s16(r.v.ST[0])
			w.s16(r.v.ST[1])
			w.u16(0x1000)
			w.u16(uint16(r.gs2))
		}
		if (w.at()-d)/16 > 255 || (vo-d)/16 > 255 {
			return nil, fmt.Errorf("mesh: tie packet %d of %d bytes does not fit its table entry", i, w.at()-d)
		}
		e := table + i*tiePacketEntrySize
		w.put32(e, uint32(d-table))
		w.b[e+8] = byte((vo - d) / 16)
		w.b[e+9] = byte((w.at() - vo) / 16)
	}
	w.pad(0x10)
	w.put32(0, uint32(table))
	w.put32(4, uint32(table))
	w.put32(8, uint32(table))
	w.b[0xc] = byte(len(packets))
	w.b[0xf] = byte(c.Slots)
	w.put32(0x1c, uint32(adGifs))
	w.put32(0x40, math.Float32bits(c.Scale))
	return w.b, nil
}
