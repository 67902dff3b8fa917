package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// Tie classes (LEVEL-CORE §2.2): a 0x80-byte header, per LOD a packet
// table, and per packet the AD-GIF offsets, strip records and vertices
// whose GS packet offsets say, replayed in order, which strip each vertex
// joins and where the texture changes. LOD 0 is read.

const (
	tieHeaderSize      = 0x80
	tiePacketEntrySize = 0x10
	tieADGifRecord     = 0x50
	tieStripsAt        = 0x2c
	tieDinkySize       = 0x10
	tieFatSize         = 0x18
	tieFirstOffset     = 6 // the GS packet opens with the first AD-GIF
)

type tieVertex struct {
	x, y, z int16
	gs      int
	s, t    int16
}

// ReadTie decodes LOD 0 of the tie class block b; slots is the number of
// texture slots the class has.
func ReadTie(b []byte, slots int) (*Mesh, error) {
	const what = "tie class"
	fail := func(at int64, format string, args ...any) error {
		return &Error{What: what, Offset: at, Reason: fmt.Sprintf(format, args...)}
	}
	if len(b) < tieHeaderSize {
		return nil, fail(0, "block of %d bytes is shorter than the %#x-byte header", len(b), tieHeaderSize)
	}
	s32 := func(at int64) int64 { return int64(int32(binary.LittleEndian.Uint32(b[at:]))) }
	table, count := s32(0), int64(b[0xc])
	records := int64(b[0xf])
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b[0x40:]))
	if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return nil, fail(0x40, "scale is not a finite number")
	}
	if table < 0 || table > int64(len(b)) || count*tiePacketEntrySize > int64(len(b))-table {
		return nil, fail(0, "packet table at %#x with %d entries runs outside the block's %d bytes", table, count, len(b))
	}
	m := &Mesh{}
	f := scale / 1024
	for i := int64(0); i < count; i++ {
		e := table + i*tiePacketEntrySize
		d := table + s32(e)
		vertOff, vertSize := d+int64(b[e+8])*16, int64(b[e+9])*16
		if d < 0 || d > int64(len(b))-tieStripsAt {
			return nil, fail(e, "packet %d's data at %#x runs outside the block", i, d)
		}
		strips := int64(b[d+0x20+3])
		if strips*4 > int64(len(b))-d-tieStripsAt {
			return nil, fail(d+0x23, "packet %d's %d strip records run outside the block", i, strips)
		}
		if vertOff > int64(len(b)) || vertSize > int64(len(b))-vertOff {
			return nil, fail(e+8, "packet %d's vertices at %#x (%d bytes) run outside the block", i, vertOff, vertSize)
		}
		plus4 := int64(b[d+0x20+8])
		if plus4 < 4 || (plus4-4)/2*tieDinkySize > vertSize {
			return nil, fail(d+0x28, "packet %d's dinky vertex size %d does not fit its %d vertex bytes", i, plus4, vertSize)
		}
		dinky := (plus4 - 4) / 2
		fat := (vertSize - dinky*tieDinkySize) / tieFatSize
		var vs []tieVertex
		u16 := func(at int64) int { return int(binary.LittleEndian.Uint16(b[at:])) }
		s16 := func(at int64) int16 { return int16(binary.LittleEndian.Uint16(b[at:])) }
		add := func(v tieVertex, gs2 int) {
			vs = append(vs, v)
			if gs2 != 0 && gs2 != v.gs {
				v.gs = gs2
				vs = append(vs, v)
			}
		}
		for k := int64(0); k < dinky; k++ {
			at := vertOff + k*tieDinkySize
			add(tieVertex{x: s16(at), y: s16(at + 2), z: s16(at + 4), gs: u16(at + 6), s: s16(at + 8), t: s16(at + 0xa)}, u16(at+0xe))
		}
		for k := int64(0); k < fat; k++ {
			at := vertOff + dinky*tieDinkySize + k*tieFatSize
			add(tieVertex{x: s16(at + 8), y: s16(at + 0xa), z: s16(at + 0xc), gs: u16(at + 6), s: s16(at + 0x10), t: s16(at + 0x12)}, u16(at+0x16))
		}
		sort.SliceStable(vs, func(p, q int) bool { return vs[p].gs < vs[q].gs })
		uniq := vs[:0]
		for k, v := range vs {
			if k == 0 || v.gs != vs[k-1].gs {
				uniq = append(uniq, v)
			}
		}
		vs = uniq
		var dest, src [4]int64
		for k := range dest {
			dest[k], src[k] = s32(d+4*int64(k)), s32(d+0x10+4*int64(k))
		}
		texOf := func(k int) (int32, error) {
			r := src[k] / tieADGifRecord
			if src[k] < 0 || r >= records || r >= int64(slots) {
				return 0, fail(d+0x10+4*int64(k), "packet %d's AD-GIF %d names texture record %d (source %#x); the class has %d records and %d slots", i, k, r, src[k], records, slots)
			}
			return int32(r), nil
		}
		tex, err := texOf(0)
		if err != nil {
			return nil, err
		}
		next, nextStrip, nextVert, nextGif := int64(tieFirstOffset), int64(0), 0, 1
		var cur []entry
		flush := func() {
			if cur != nil {
				base := uint32(len(m.Positions)) - uint32(len(cur))
				for k := range cur {
					cur[k].v = k
				}
				m.Triangles = appendStrip(m.Triangles, cur, base, false)
			}
		}
		for nextStrip < strips || nextVert < len(vs) {
			switch {
			case nextStrip < strips && int64(b[d+tieStripsAt+4*nextStrip+2]) == next:
				flush()
				cur = []entry{}
				nextStrip++
				next++
			case nextVert < len(vs) && int64(vs[nextVert].gs) == next:
				if cur == nil {
					return nil, fail(vertOff, "packet %d: the vertex at GS offset %d comes before any strip", i, next)
				}
				v := vs[nextVert]
				m.Positions = append(m.Positions, [3]float32{float32(v.x) * f, float32(v.y) * f, float32(v.z) * f})
				m.UVs = append(m.UVs, [2]float32{float32(v.s) / 4096, float32(v.t) / 4096})
				cur = append(cur, entry{tex: tex})
				nextVert++
				next += 3
			case nextGif < 4 && dest[nextGif-1] == next:
				if tex, err = texOf(nextGif); err != nil {
					return nil, err
				}
				nextGif++
				next += 6
			default:
				return nil, fail(d, "packet %d: nothing of the GS packet at offset %d (strip %d of %d, vertex %d of %d)", i, next, nextStrip, strips, nextVert, len(vs))
			}
		}
		flush()
	}
	return m, nil
}
