package mesh

import (
	"fmt"
	"math"
)

// MobyClass is a moby class for WriteMoby: its scale and its two LODs'
// strips.
type MobyClass struct {
	Scale     float32
	High, Low []Strip
}

// MobyMaxPacketVertices is how many packet vertices (array and duplicate)
// WriteMoby puts in one packet; a strip must fit in one.
const MobyMaxPacketVertices = 48

// mobyKey is a cached vertex: what a duplicate entry copies.
type mobyKey struct {
	pos     [3]int16
	az, ele uint8
}

// WriteMoby lays out a GC-format moby class (LEVEL-CORE §2.1) as Wrench's
// packer does: the header, an empty joint list, the packet table (high LOD,
// then low), each packet's VIF list (STs, indices, texture records) and
// vertex table, the vertex ids in the slot rule's places; a vertex an
// earlier packet of the list cached (same position and normal) is sent as a
// duplicate entry.
func WriteMoby(c *MobyClass) ([]byte, error) {
	w := &wbuf{}
	w.zeros(mobyHeaderSize)
	w.u32(0) // the joint list at 0x48: count 0
	w.pad(0x10)
	table := w.at()
	var lists [][][]Strip
	for _, strips := range [][]Strip{c.High, c.Low} {
		p, err := mobyPackets(strips)
		if err != nil {
			return nil, err
		}
		lists = append(lists, p)
	}
	nh, nl := len(lists[0]), len(lists[1])
	if nh+nl > 255 {
		return nil, fmt.Errorf("mesh: moby class of %d+%d packets, the header counts a byte each", nh, nl)
	}
	w.zeros((nh + nl) * mobyPacketEntrySize)
	e := table
	for _, l := range lists {
		mw := mobyWriter{w: w}
		for _, p := range l {
			if err := mw.packet(e, p); err != nil {
				return nil, err
			}
			e += mobyPacketEntrySize
		}
	}
	w.pad(0x10)
	w.put32(0, uint32(table))
	w.b[4], w.b[5], w.b[6], w.b[7] = byte(nh), byte(nl), 0, byte(nh+nl)
	w.put32(0x1c, 0x48) // joints
	w.put32(0x24, math.Float32bits(c.Scale))
	return w.b, nil
}

// mobyPackets groups a list's strips into packets of at most
// MobyMaxPacketVertices distinct vertices.
func mobyPackets(strips []Strip) ([][]Strip, error) {
	var out [][]Strip
	var cur []Strip
	seen := map[StripVertex]bool{}
	for _, s := range strips {
		if len(s.Verts) < 3 || s.List {
			return nil, fmt.Errorf("mesh: a moby strip needs 3 or more vertices and is no list")
		}
		add := 0
		mine := map[StripVertex]bool{}
		for _, v := range s.Verts {
			if !seen[v] && !mine[v] {
				mine[v] = true
				add++
			}
		}
		if add > MobyMaxPacketVertices {
			return nil, fmt.Errorf("mesh: a moby strip of %d distinct vertices, a packet holds %d", add, MobyMaxPacketVertices)
		}
		if len(seen)+add > MobyMaxPacketVertices {
			out = append(out, cur)
			cur, seen = nil, map[StripVertex]bool{}
		}
		for _, v := range s.Verts {
			seen[v] = true
		}
		cur = append(cur, s)
	}
	if cur != nil {
		out = append(out, cur)
	}
	return out, nil
}

// mobyWriter keeps the vertex cache's contents and the current texture
// across the packets of one list, as the reader does.
type mobyWriter struct {
	w      *wbuf
	owner  [256]mobyKey // ids below 256: Wrench's writer keeps 8 bits of a shifted id
	filled [256]bool
	ids    map[mobyKey]int
	next   int
	tex    int32
}

func (mw *mobyWriter) packet(entryAt int, strips []Strip) error {
	if mw.ids == nil {
		mw.ids = map[mobyKey]int{}
	}
	// Packet vertices: array vertices (first seen here) then duplicates
	// (cached by an earlier packet, or a second ST of one seen here).
	var array, dups []StripVertex
	index := map[StripVertex]int{}
	isDup := map[StripVertex]bool{}
	pinned := map[int]bool{}
	arrayKey := map[mobyKey]bool{}
	for _, s := range strips {
		for _, v := range s.Verts {
			if _, ok := index[v]; ok || isDup[v] {
				continue
			}
			k := mobyKey{v.Pos, v.Azimuth, v.Elevation}
			if id, ok := mw.ids[k]; ok && !arrayKey[k] {
				pinned[id] = true
				isDup[v] = true
				dups = append(dups, v)
				continue
			}
			if arrayKey[k] {
				isDup[v] = true
				dups = append(dups, v)
				continue
			}
			arrayKey[k] = true
			index[v] = len(array)
			array = append(array, v)
		}
	}
	// Fresh ids for the array vertices, never one a duplicate here reads.
	arrayID := make([]int, len(array))
	for i, v := range array {
		for pinned[mw.next] {
			mw.next = (mw.next + 1) % 256
		}
		id := mw.next
		mw.next = (mw.next + 1) % 256
		if mw.filled[id] {
			delete(mw.ids, mw.owner[id])
		}
		k := mobyKey{v.Pos, v.Azimuth, v.Elevation}
		mw.owner[id], mw.filled[id] = k, true
		mw.ids[k] = id
		arrayID[i] = id
	}
	for i, v := range dups {
		index[v] = len(array) + i
	}
	// The index list and texture records.
	var idx []byte
	var secrets []int8
	var records []int32
	for _, s := range strips {
		for j, v := range s.Verts {
			b := byte(index[v] + 1)
			if j == 0 && s.Tex != mw.tex {
				secrets = append(secrets, int8(b))
				records = append(records, s.Tex)
				mw.tex = s.Tex
				idx = append(idx, 0)
				continue
			}
			if j < 2 {
				b |= 0x80
			}
			idx = append(idx, b)
		}
	}
	idx = append(idx, 1, 1, 1, 0) // the pipeline tail the end rule drops, and the end
	secrets = append(secrets, 0)
	w := mw.w
	// VIF list: STs, indices, texture records.
	w.pad(0x10)
	vif := w.at()
	sts := make([]byte, 0, 4*(len(array)+len(dups)))
	for _, v := range append(append([]StripVertex{}, array...), dups...) {
		sts = append(sts, byte(v.ST[0]), byte(uint16(v.ST[0])>>8), byte(v.ST[1]), byte(uint16(v.ST[1])>>8))
	}
	w.b = AppendUnpack(w.b, V2_16, 0xc2, sts)
	ib := []byte{0, 0, byte(secrets[0]), 0}
	ib = append(ib, idx...)
	for len(ib)%4 != 0 {
		ib = append(ib, 0)
	}
	if len(records) > 0 {
		ib[1] = byte(len(ib) / 4)
	}
	w.b = AppendUnpack(w.b, V4_8, 0x12d, ib)
	texUnpack := 0
	if len(records) > 0 {
		for w.at()%0x10 != 0xc {
			w.u8(0)
		}
		tw := &wbuf{}
		for _, t := range records {
			tw.adData(0, gsTEX1_1)
			tw.adData(0, gsCLAMP_1)
			tw.adData(t, gsTEX0_1)
			tw.adData(0, gsMIPTBP1_1)
		}
		for k := 1; k < len(secrets); k++ {
			tw.b[(k-1)*0x10+0xc] = byte(secrets[k])
		}
		abs := w.at()
		w.b = AppendUnpack(w.b, V4_32, 0x12d+len(ib)/4, tw.b)
		w.pad(0x10)
		texUnpack = (w.at() - abs + 4) / 0x10
	}
	w.pad(0x10)
	vifSize := (w.at() - vif) / 0x10
	// Vertex table: header, (no matrix transfers,) duplicates, vertices.
	vo := w.at()
	n, d := len(array), len(dups)
	w.u16(0)
	w.u16(0)
	w.u16(0)
	w.u16(uint16(n))
	w.u16(uint16(d))
	w.u16(uint16(n + d))
	w.u16(0) // vertex_array_offset, below
	w.u16(0)
	w.pad(8)
	for _, v := range dups {
		w.u16(uint16(mw.ids[mobyKey{v.Pos, v.Azimuth, v.Elevation}] << 7))
	}
	w.pad(0x10)
	w.put16(vo+0xc, uint16(w.at()-vo))
	p := 1
	for (n+p)%4 != 3 {
		p++
	}
	slots := make([]uint16, n+p+6)
	for j := 0; j < n; j++ {
		slots[j+7] = uint16(arrayID[j])
	}
	for k := 0; k < n+p; k++ {
		if k < n {
			v := array[k]
			w.u16(slots[k])
			w.zeros(6)
			w.u8(v.Azimuth)
			w.u8(v.Elevation)
			w.s16(v.Pos[0])
			w.s16(v.Pos[1])
			w.s16(v.Pos[2])
			continue
		}
		w.u16(slots[k])
		if k < n+p-1 {
			w.zeros(14)
			continue
		}
		w.zeros(2)
		for i := 0; i < 6; i++ {
			w.u16(slots[n+p+i])
		}
	}
	size := (w.at() - vo) / 0x10
	if size > 255 || n+d > 255 || vifSize > 0xffff {
		return fmt.Errorf("mesh: moby packet of %d vertices does not fit its table entry", n+d)
	}
	t := n + d
	w.put32(entryAt, uint32(vif))
	w.put16(entryAt+4, uint16(vifSize))
	w.put16(entryAt+6, uint16(texUnpack))
	w.put32(entryAt+8, uint32(vo))
	w.b[entryAt+0xc] = byte(size)
	w.b[entryAt+0xd] = byte((0xf + t*6) / 16)
	w.b[entryAt+0xe] = byte((3 + t) / 4)
	w.b[entryAt+0xf] = byte(t)
	return nil
}
