package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
)

// ShrubClass is a shrub class for WriteShrub: its scale, o_class, texture
// slot count and strips (and lists); a vertex's Azimuth is its normal index.
type ShrubClass struct {
	Scale  float32
	OClass int16
	Slots  int
	Strips []Strip
}

// ShrubNormal is normal k of the 24 WriteShrub writes, as stored (s16, the
// reader divides by 32767).
func ShrubNormal(k int) [3]int16 {
	a := float64(k%8) * math.Pi / 4
	e := float64(k/8-1) * math.Pi / 4
	return [3]int16{int16(math.Round(32767 * math.Cos(a) * math.Cos(e))), int16(math.Round(32767 * math.Sin(a) * math.Cos(e))), int16(math.Round(32767 * math.Sin(e)))}
}

// shrubMaxPacket bounds a packet's vertices.
const shrubMaxPacket = 60

// WriteShrub lays out a shrub class (LEVEL-CORE §2.3): the header, packet
// entries, the 24 normals, and per packet a VIF list of three UNPACKs whose
// GS offsets, from 0, place a texture record (5) at each packet's start and
// at each change, a GIF tag (1) before each primitive and its vertices (3
// each); a packet of fewer than 6 vertices is padded with copies of its
// last vertex at the same GS offset.
func WriteShrub(c *ShrubClass) ([]byte, error) {
	var packets [][]Strip
	var cur []Strip
	n := 0
	for i, s := range c.Strips {
		if s.Tex < 0 || int(s.Tex) >= c.Slots || len(s.Verts) < 3 || len(s.Verts) > shrubMaxPacket || (s.List && len(s.Verts)%3 != 0) {
			return nil, fmt.Errorf("mesh: shrub strip %d: texture %d of %d slots, %d vertices", i, s.Tex, c.Slots, len(s.Verts))
		}
		for _, v := range s.Verts {
			if int(v.Azimuth) >= shrubNormals {
				return nil, fmt.Errorf("mesh: shrub strip %d names normal %d", i, v.Azimuth)
			}
		}
		if n+len(s.Verts) > shrubMaxPacket {
			packets, cur, n = append(packets, cur), nil, 0
		}
		cur = append(cur, s)
		n += len(s.Verts)
	}
	if cur != nil {
		packets = append(packets, cur)
	}
	w := &wbuf{}
	w.zeros(shrubHeaderSize)
	w.zeros(len(packets) * shrubEntrySize)
	w.pad(0x10)
	normals := w.at()
	for k := 0; k < shrubNormals; k++ {
		v := ShrubNormal(k)
		w.s16(v[0])
		w.s16(v[1])
		w.s16(v[2])
		w.s16(0)
	}
	for i, p := range packets {
		var tags, texs, p1, p2 wbuf
		gs := 0
		tex := int32(-1)
		nv := 0
		var last StripVertex
		for _, s := range p {
			if s.Tex != tex {
				texs.adData(0, gsTEX1_1)
				binary.LittleEndian.PutUint32(texs.b[texs.at()-4:], uint32(gs))
				texs.adData(0, gsCLAMP_1)
				texs.adData(0, gsMIPTBP1_1)
				texs.adData(s.Tex, gsTEX0_1)
				tex = s.Tex
				gs += 5
			}
			prim := uint64(shrubPrimStrip)
			if s.List {
				prim = shrubPrimList
			}
			tag := uint64(len(s.Verts)) | 1<<46 | (prim|1<<4)<<47 | 3<<60
			tags.u32(uint32(tag))
			tags.u32(uint32(tag >> 32))
			tags.u32(0x512) // ST, RGBAQ, XYZ2
			tags.u32(uint32(gs))
			gs++
			for j, v := range s.Verts {
				p1.s16(v.Pos[0])
				p1.s16(v.Pos[1])
				p1.s16(v.Pos[2])
				p1.s16(int16(gs))
				nn := uint16(v.Azimuth)
				if j == len(s.Verts)-1 {
					nn |= 0x8000
				}
				p2.s16(v.ST[0])
				p2.s16(v.ST[1])
				p2.s16(0x1000)
				p2.u16(nn)
				gs += 3
				nv++
				last = v
			}
		}
		for ; nv < 6; nv++ { // padding: the last vertex again, at its GS offset
			p1.s16(last.Pos[0])
			p1.s16(last.Pos[1])
			p1.s16(last.Pos[2])
			p1.s16(int16(gs - 3))
			p2.s16(last.ST[0])
			p2.s16(last.ST[1])
			p2.s16(0x1000)
			p2.u16(uint16(last.Azimuth) | 0x8000)
		}
		var hd wbuf
		hd.u32(uint32(texs.at() / shrubTextureSize))
		hd.u32(uint32(tags.at() / shrubGifTagSize))
		hd.u32(uint32(nv))
		hd.u32(0)
		hd.b = append(append(hd.b, tags.b...), texs.b...)
		if hd.at()/16 > 256 || nv > 256 {
			return nil, fmt.Errorf("mesh: shrub packet %d too large", i)
		}
		w.pad(0x10)
		at := w.at()
		w.b = AppendUnpack(w.b, V4_32, 0, hd.b)
		w.b = AppendUnpack(w.b, V4_16, 0x80, p1.b)
		w.b = AppendUnpack(w.b, V4_16, 0xc0, p2.b)
		w.pad(0x10)
		w.put32(shrubHeaderSize+i*shrubEntrySize, uint32(at))
		w.put32(shrubHeaderSize+i*shrubEntrySize+4, uint32(w.at()-at))
	}
	w.pad(0x10)
	w.put32(0x20, math.Float32bits(c.Scale))
	w.put16(0x24, uint16(c.OClass))
	w.put16(0x28, uint16(len(packets)))
	w.put32(0x2c, uint32(normals))
	return w.b, nil
}
