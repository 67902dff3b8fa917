package mesh

import (
	"encoding/binary"
	"fmt"
	"math"

	"gcfs/mesh/vif"
)

// Tfrags (LEVEL-CORE §2.4): the level's terrain, a block of fragments each
// with three overlapping LODs. ReadTfrags reads every fragment's LOD 0 into
// one mesh in world space: each vertex info record is one vertex, at its
// position (common ++ LOD01 ++ LOD0 positions, index vertex/2) plus the
// fragment's base position (the common list's STROW), / 1024; UV (s, t) /
// 4096, a negative coordinate halved as Wrench does; the normal from the
// light record at the position's index. Faces come from the LOD 0 strips
// over the LOD 0 index list; a triangle's Tex is the TEX0 data_lo of the
// active texture record: an index into the level's tfrag texture table.

// Sizes of the tfrag structures.
const (
	tfragsHeaderSize = 0x10
	tfragHeaderSize  = 0x40
	tfragTexRecord   = 0x50
	tfragVUHeader    = 0x28
	tfragLightSize   = 8
)

// tfragHeader is what the reader uses of a TfragHeader.
type tfragHeader struct {
	data                                 int64
	lod2Ofs, sharedOfs, lod1Ofs, lod0Ofs int64
	rgbaOfs                              int64
	commonSize, lod2Size, lod1Size       int64
	textureCount                         int
	lightOfs                             int64
	vertCount                            int
}

func readTfragHeader(b []byte) tfragHeader {
	le := binary.LittleEndian
	return tfragHeader{
		data:         int64(int32(le.Uint32(b[0x10:]))),
		lod2Ofs:      int64(le.Uint16(b[0x14:])),
		sharedOfs:    int64(le.Uint16(b[0x16:])),
		lod1Ofs:      int64(le.Uint16(b[0x18:])),
		lod0Ofs:      int64(le.Uint16(b[0x1a:])),
		rgbaOfs:      int64(le.Uint16(b[0x1e:])),
		commonSize:   int64(b[0x20]),
		lod2Size:     int64(b[0x21]),
		lod1Size:     int64(b[0x22]),
		textureCount: int(b[0x28]),
		lightOfs:     int64(le.Uint16(b[0x30:])),
		vertCount:    int(b[0x3c]),
	}
}

// TfragStats are counts of a tfrags block's reading.
type TfragStats struct {
	Fragments int
}

// ReadTfrags reads a tfrags block (core_data's, or a decoded chnktfrag
// stream) as one mesh; a *Error when any fragment cannot be read.
func ReadTfrags(b []byte) (*Mesh, TfragStats, error) {
	le := binary.LittleEndian
	var st TfragStats
	if len(b) < tfragsHeaderSize {
		return nil, st, &Error{What: "tfrags", Offset: 0, Reason: fmt.Sprintf("a %d-byte block is shorter than its 0x10-byte header", len(b))}
	}
	table := int64(int32(le.Uint32(b[0:])))
	count := int64(int32(le.Uint32(b[4:])))
	size := int64(len(b))
	switch {
	case count < 0:
		return nil, st, &Error{What: "tfrags", Offset: 4, Reason: fmt.Sprintf("tfrag count %d", count)}
	case count == 0:
		return &Mesh{}, st, nil
	case table < tfragsHeaderSize || table > size || count > (size-table)/tfragHeaderSize:
		return nil, st, &Error{What: "tfrags", Offset: 0, Reason: fmt.Sprintf("a table of %d headers at %#x runs past the %d-byte block", count, table, size)}
	}
	m := &Mesh{}
	for i := int64(0); i < count; i++ {
		at := table + i*tfragHeaderSize
		if err := readTfrag(b, table, at, m); err != nil {
			if e, ok := err.(*Error); ok {
				e.What = fmt.Sprintf("tfrag %d: %s", i, e.What)
			}
			return nil, st, err
		}
	}
	st.Fragments = int(count)
	return m, st, nil
}

// tfragData is one fragment's data, offsets from its start (block offsets
// in errors).
type tfragData struct {
	b    []byte
	base int64 // block offset of b[0]
}

func (d tfragData) sub(what string, from, to int64) ([]byte, error) {
	if from < 0 || to < from || to > int64(len(d.b)) {
		return nil, &Error{What: what, Offset: d.base + from, Reason: fmt.Sprintf("[%#x, %#x) of the fragment runs outside its %#x bytes", from, to, len(d.b))}
	}
	return d.b[from:to], nil
}

func vifList(what string, d tfragData, from, to int64) ([]vif.Command, error) {
	b, err := d.sub(what, from, to)
	if err != nil {
		return nil, err
	}
	cmds, err := vif.Parse(b)
	if err != nil {
		ve := err.(*vif.Error)
		return nil, &Error{What: what, Offset: d.base + from + ve.Offset, Reason: ve.Reason}
	}
	return cmds, nil
}

func unpackOf(what string, d tfragData, listAt int64, c vif.Command, format, record int) (int, error) {
	if c.Format() != format {
		return 0, &Error{What: what, Offset: d.base + listAt + c.Offset, Reason: fmt.Sprintf("UNPACK format %#x, want %#x", c.Format(), format)}
	}
	return len(c.Payload) / record, nil
}

type tfragPos struct{ x, y, z int16 }

type tfragVertex struct{ s, t, parent, vertex int16 }

func positionsOf(p []byte) []tfragPos {
	out := make([]tfragPos, len(p)/6) // bounded by the payload
	for i := range out {
		out[i] = tfragPos{int16(binary.LittleEndian.Uint16(p[6*i:])), int16(binary.LittleEndian.Uint16(p[6*i+2:])), int16(binary.LittleEndian.Uint16(p[6*i+4:]))}
	}
	return out
}

func vertexInfosOf(p []byte) []tfragVertex {
	le := binary.LittleEndian
	out := make([]tfragVertex, len(p)/8) // bounded by the payload
	for i := range out {
		out[i] = tfragVertex{int16(le.Uint16(p[8*i:])), int16(le.Uint16(p[8*i+2:])), int16(le.Uint16(p[8*i+4:])), int16(le.Uint16(p[8*i+6:]))}
	}
	return out
}

func readTfrag(b []byte, table, at int64, m *Mesh) error {
	h := readTfragHeader(b[at : at+tfragHeaderSize])
	start := table + h.data
	if h.data < 0 || start >= int64(len(b)) {
		return &Error{What: "header", Offset: at + 0x10, Reason: fmt.Sprintf("data at %#x, outside the %#x-byte block", start, len(b))}
	}
	// The fragment's bytes run to the block's end at most; every list is
	// checked inside them.
	d := tfragData{b: b[start:], base: start}
	// Common list: the base position (command #5, a STROW), the VU
	// header, the textures, the common vertex infos and positions.
	common, err := vifList("common list", d, h.sharedOfs, h.lod1Ofs)
	if err != nil {
		return err
	}
	if len(common) <= 5 || common[5].Cmd() != 0x30 {
		return &Error{What: "common list", Offset: start + h.sharedOfs, Reason: fmt.Sprintf("command #5 of %d is not a STROW (the base position)", len(common))}
	}
	le := binary.LittleEndian
	sr := common[5].Payload
	base := [3]int32{int32(le.Uint32(sr)), int32(le.Uint32(sr[4:])), int32(le.Uint32(sr[8:]))}
	cu := vif.Unpacks(common)
	if len(cu) != 4 {
		return &Error{What: "common list", Offset: start + h.sharedOfs, Reason: fmt.Sprintf("%d UNPACKs, want 4", len(cu))}
	}
	if len(cu[0].Payload) < tfragVUHeader {
		return &Error{What: "VU header", Offset: start + h.sharedOfs + cu[0].Offset, Reason: fmt.Sprintf("%d bytes, want %#x", len(cu[0].Payload), tfragVUHeader)}
	}
	vuh := cu[0].Payload
	count01, count0 := int(le.Uint16(vuh[4:])), int(le.Uint16(vuh[8:]))
	nTex, err := unpackOf("textures", d, h.sharedOfs, cu[1], vif.V4_32, tfragTexRecord)
	if err != nil {
		return err
	}
	texs := make([]int32, nTex) // bounded by the payload
	for i := range texs {
		texs[i] = int32(le.Uint32(cu[1].Payload[i*tfragTexRecord:])) // TEX0_1's data_lo
	}
	if _, err := unpackOf("common vertex info", d, h.sharedOfs, cu[2], vif.V4_16, 8); err != nil {
		return err
	}
	if _, err := unpackOf("common positions", d, h.sharedOfs, cu[3], vif.V3_16, 6); err != nil {
		return err
	}
	positions := positionsOf(cu[3].Payload)
	infos := vertexInfosOf(cu[2].Payload)
	// LOD 01: optional parent indices, second index list, vertex info,
	// positions, each present when the next UNPACK has its format.
	lod01End := h.sharedOfs + h.lod1Size*16
	l01, err := vifList("LOD 01 list", d, h.lod0Ofs, lod01End)
	if err != nil {
		return err
	}
	u := vif.Unpacks(l01)
	i := 0
	if i < len(u) && u[i].Format() == vif.V4_8 && count01 > 0 {
		i++
	}
	if i < len(u) && u[i].Format() == vif.V4_8 && u[i].Addr() != 0 {
		i++
	}
	if i < len(u) && u[i].Format() == vif.V4_16 {
		infos = append(infos, vertexInfosOf(u[i].Payload)...)
		i++
	}
	if i < len(u) && u[i].Format() == vif.V3_16 {
		positions = append(positions, positionsOf(u[i].Payload)...)
	}
	// LOD 0: optional positions; strips; indices; optional parent and
	// second indices; optional vertex info.
	lod0Len := h.rgbaOfs - (h.lod1Size+h.lod2Size-h.commonSize)*16
	l0, err := vifList("LOD 0 list", d, lod01End, lod01End+lod0Len)
	if err != nil {
		return err
	}
	u = vif.Unpacks(l0)
	i = 0
	if i < len(u) && u[i].Format() == vif.V3_16 {
		positions = append(positions, positionsOf(u[i].Payload)...)
		i++
	}
	if i+1 >= len(u) || u[i].Format() != vif.V4_8 || u[i+1].Format() != vif.V4_8 {
		return &Error{What: "LOD 0 list", Offset: start + lod01End, Reason: "no strips and indices (two V4_8 UNPACKs)"}
	}
	strips, indices := u[i].Payload, u[i+1].Payload
	i += 2
	if i < len(u) && u[i].Format() == vif.V4_8 && count0 > 0 {
		i++
	}
	if i < len(u) && u[i].Format() == vif.V4_8 {
		i++
	}
	if i < len(u) && u[i].Format() == vif.V4_16 {
		infos = append(infos, vertexInfosOf(u[i].Payload)...)
	}
	// Lights: a 0x10 copy of the base, then vert_count records.
	lights, err := d.sub("lights", h.lightOfs+0x10, h.lightOfs+0x10+int64(h.vertCount)*tfragLightSize)
	if err != nil {
		return err
	}
	// Vertices. Honest fragments have data of their own: their vertex
	// info records (8 bytes each) and indices (a byte each) are the
	// block's, so a block yields at most len/8 vertices and len
	// triangles; fragments whose data overlap to make more are refused
	// before anything is allocated for them.
	first := uint32(len(m.Positions))
	if int64(len(m.Positions))+int64(len(infos)) > int64(len(b))/8 {
		return &Error{What: "vertices", Offset: start, Reason: fmt.Sprintf("%d vertices, more than the %d-byte block holds", len(m.Positions)+len(infos), len(b))}
	}
	for k, v := range infos {
		pi := int(v.vertex) / 2
		if v.vertex < 0 || pi >= len(positions) {
			return &Error{What: "vertex info", Offset: start, Reason: fmt.Sprintf("record %d names position %d of %d", k, pi, len(positions))}
		}
		if pi >= h.vertCount {
			return &Error{What: "vertex info", Offset: start, Reason: fmt.Sprintf("record %d names position %d, past the %d light records", k, pi, h.vertCount)}
		}
		p := positions[pi]
		m.Positions = append(m.Positions, [3]float32{
			float32(base[0]+int32(p.x)) / 1024, float32(base[1]+int32(p.y)) / 1024, float32(base[2]+int32(p.z)) / 1024})
		uv := [2]float32{float32(v.s) / 4096, float32(v.t) / 4096}
		for c := range uv {
			if uv[c] < 0 {
				uv[c] *= 0.5
			}
		}
		m.UVs = append(m.UVs, uv)
		az := float64(int8(lights[pi*tfragLightSize+2])) * math.Pi / 128
		el := float64(int8(lights[pi*tfragLightSize+3])) * math.Pi / 128
		m.Normals = append(m.Normals, [3]float32{float32(math.Cos(az) * math.Cos(el)), float32(math.Sin(az) * math.Cos(el)), float32(math.Sin(el))})
	}
	// Faces: the LOD 0 strips over the LOD 0 indices.
	tex := int32(NoTexture)
	next := 0
	for s := 0; s+4 <= len(strips); s += 4 {
		count := int(int8(strips[s]))
		if count == 0 {
			break
		}
		if count < 0 {
			count += 128
			if ad := int(int8(strips[s+2])); ad >= 0 {
				if ad/5 >= len(texs) {
					return &Error{What: "strips", Offset: start, Reason: fmt.Sprintf("strip %d selects texture record %d of %d", s/4, ad/5, len(texs))}
				}
				tex = texs[ad/5]
			}
		}
		if next+count > len(indices) {
			return &Error{What: "strips", Offset: start, Reason: fmt.Sprintf("strip %d runs to index %d of %d", s/4, next+count, len(indices))}
		}
		if len(m.Triangles)+count > len(b) {
			return &Error{What: "strips", Offset: start, Reason: fmt.Sprintf("more triangles than the %d-byte block holds", len(b))}
		}
		for k := 0; k+2 < count; k++ {
			var t Triangle
			for c := 0; c < 3; c++ {
				ix := int(indices[next+k+c])
				if ix >= len(infos) {
					return &Error{What: "indices", Offset: start, Reason: fmt.Sprintf("index %d names vertex %d of %d", next+k+c, ix, len(infos))}
				}
				t.V[c] = first + uint32(ix)
			}
			t.Tex = tex
			m.Triangles = append(m.Triangles, t)
		}
		next += count
	}
	return nil
}
