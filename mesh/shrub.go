package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Shrub classes (LEVEL-CORE §2.3): a 0x40-byte header, packet entries
// {offset, size} at 0x40, 24 normals, and per packet a VIF list of three
// UNPACKs (a header with GIF tags and texture records, positions, STs and
// normal indices) whose GS packet offsets, replayed in order, say where
// primitives begin and textures change.

const (
	shrubHeaderSize   = 0x40
	shrubEntrySize    = 8
	shrubNormals      = 24
	shrubGifTagSize   = 0x10
	shrubTextureSize  = 0x40
	shrubPrimList     = 3 // GS PRIM type: triangle list
	shrubPrimStrip    = 4 // triangle strip
	shrubPacketHeader = 0x10
)

// ReadShrub decodes the shrub class block b; slots is the number of texture
// slots the class has.
func ReadShrub(b []byte, slots int) (*Mesh, error) {
	const what = "shrub class"
	fail := func(at int64, format string, args ...any) error {
		return &Error{What: what, Offset: at, Reason: fmt.Sprintf(format, args...)}
	}
	if len(b) < shrubHeaderSize {
		return nil, fail(0, "block of %d bytes is shorter than the %#x-byte header", len(b), shrubHeaderSize)
	}
	s32 := func(at int64) int64 { return int64(int32(binary.LittleEndian.Uint32(b[at:]))) }
	s16 := func(p []byte, at int64) int16 { return int16(binary.LittleEndian.Uint16(p[at:])) }
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b[0x20:]))
	if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return nil, fail(0x20, "scale is not a finite number")
	}
	count := int64(s16(b, 0x28))
	if count < 0 || count*shrubEntrySize > int64(len(b))-shrubHeaderSize {
		return nil, fail(0x28, "%d packet entries run outside the block's %d bytes", count, len(b))
	}
	no := s32(0x2c)
	if no < 0 || no > int64(len(b)) || shrubNormals*8 > int64(len(b))-no {
		return nil, fail(0x2c, "normals at %#x run outside the block's %d bytes", no, len(b))
	}
	var normals [shrubNormals][3]float32
	for k := range normals {
		for c := 0; c < 3; c++ {
			normals[k][c] = float32(s16(b, no+8*int64(k)+2*int64(c))) / 32767
		}
	}
	m := &Mesh{}
	f := scale / 1024
	tex := int32(NoTexture) // the current texture, across packets
	for i := int64(0); i < count; i++ {
		e := shrubHeaderSize + i*shrubEntrySize
		l, err := ReadVIFList(fmt.Sprintf("%s packet %d VIF list", what, i), b, s32(e), s32(e+4))
		if err != nil {
			return nil, err
		}
		if len(l.Unpacks) != 3 {
			return nil, fail(s32(e), "packet %d's VIF list has %d UNPACKs, not 3", i, len(l.Unpacks))
		}
		h, p1, p2 := l.Unpacks[0], l.Unpacks[1], l.Unpacks[2]
		if h.Format != V4_32 || p1.Format != V4_16 || p2.Format != V4_16 || len(h.Data) < shrubPacketHeader {
			return nil, fail(h.Offset, "packet %d's UNPACKs are not a V4_32 header and two V4_16 vertex lists", i)
		}
		hd := h.Data
		textures := int64(int32(binary.LittleEndian.Uint32(hd)))
		tags := int64(int32(binary.LittleEndian.Uint32(hd[4:])))
		verts := int64(int32(binary.LittleEndian.Uint32(hd[8:])))
		hb := int64(len(hd)) - shrubPacketHeader
		if tags < 0 || textures < 0 || tags > hb/shrubGifTagSize || textures > (hb-tags*shrubGifTagSize)/shrubTextureSize {
			return nil, fail(h.Offset, "packet %d's %d GIF tags and %d texture records run outside its %d-byte header UNPACK", i, tags, textures, len(hd))
		}
		if verts < 0 || verts > int64(len(p1.Data))/8 || verts > int64(len(p2.Data))/8 {
			return nil, fail(p1.Offset, "packet %d's %d vertices run outside its vertex UNPACKs", i, verts)
		}
		tagAt := func(k int64) int64 { return shrubPacketHeader + k*shrubGifTagSize }
		texAt := func(k int64) int64 { return shrubPacketHeader + tags*shrubGifTagSize + k*shrubTextureSize }
		var nextTag, nextTex, nextVert, next int64
		prim := -1
		var cur []entry
		flush := func() {
			if cur == nil {
				return
			}
			base := uint32(len(m.Positions)) - uint32(len(cur))
			for k := range cur {
				cur[k].v = k
			}
			if prim == shrubPrimList {
				for k := 0; k+2 < len(cur); k += 3 {
					m.Triangles = append(m.Triangles, Triangle{V: [3]uint32{base + uint32(k), base + uint32(k+1), base + uint32(k+2)}, Tex: cur[k+2].tex})
				}
			} else {
				m.Triangles = appendStrip(m.Triangles, cur, base, false)
			}
			cur = nil
		}
	replay:
		for nextTag < tags || nextTex < textures || nextVert < verts {
			switch {
			case nextTag < tags && int64(int32(binary.LittleEndian.Uint32(hd[tagAt(nextTag)+0xc:]))) == next:
				flush()
				lo := binary.LittleEndian.Uint64(hd[tagAt(nextTag):])
				prim = int(lo>>47) & 7
				if prim != shrubPrimList && prim != shrubPrimStrip {
					return nil, fail(h.Offset+4+tagAt(nextTag), "packet %d's GIF tag %d has primitive %d, not a triangle list or strip", i, nextTag, prim)
				}
				nextTag++
				next++
			case nextTex < textures && int64(int32(binary.LittleEndian.Uint32(hd[texAt(nextTex)+0xc:]))) == next:
				flush()
				t := int32(binary.LittleEndian.Uint32(hd[texAt(nextTex)+0x30:]))
				if t < 0 || int64(t) >= int64(slots) {
					return nil, fail(h.Offset+4+texAt(nextTex)+0x30, "packet %d's texture record %d names texture slot %d, the class has %d", i, nextTex, t, slots)
				}
				tex = t
				nextTex++
				next += 5
			case nextVert < verts && int64(s16(p1.Data, 8*nextVert+6)) == next:
				if prim < 0 {
					return nil, fail(p1.Offset, "packet %d: vertex %d comes before any GIF tag", i, nextVert)
				}
				at := 8 * nextVert
				n := int64(binary.LittleEndian.Uint16(p2.Data[at+6:]) & 0x7fff)
				if n >= shrubNormals {
					return nil, fail(p2.Offset+4+at+6, "packet %d's vertex %d names normal %d of %d", i, nextVert, n, shrubNormals)
				}
				m.Positions = append(m.Positions, [3]float32{float32(s16(p1.Data, at)) * f, float32(s16(p1.Data, at+2)) * f, float32(s16(p1.Data, at+4)) * f})
				m.UVs = append(m.UVs, [2]float32{float32(s16(p2.Data, at)) / 4096, float32(s16(p2.Data, at+2)) / 4096})
				m.Normals = append(m.Normals, normals[n])
				cur = append(cur, entry{tex: tex})
				nextVert++
				next += 3
			case nextVert < verts && int64(s16(p1.Data, 8*nextVert+6)) == next-3:
				break replay // padding vertices end a small packet
			default:
				return nil, fail(h.Offset, "packet %d: nothing of the GS packet at offset %d", i, next)
			}
		}
		flush()
	}
	return m, nil
}
