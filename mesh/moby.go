package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Moby classes (LEVEL-CORE §2.1): a 0x48-byte header, a packet table whose
// high-LOD entries come first and low-LOD entries next, and per packet a VIF
// list (STs, indices, texture records) and a vertex table. Skinning and
// animation are ignored: positions are the bind pose, as stored.

// LOD selects a moby class's packet list.
type LOD int

const (
	High LOD = iota // the high-LOD packets
	Low             // the low-LOD packets
)

func (l LOD) String() string {
	if l == Low {
		return "low LOD"
	}
	return "high LOD"
}

const (
	mobyHeaderSize      = 0x48
	mobyPacketEntrySize = 0x10
	mobyVertexHeader    = 0x10
	mobyVertexSize      = 0x10
	mobyCacheSize       = 512
	mobyTextureRecord   = 0x40
	mobyMaxPadding      = 7 // Wrench requires fewer padding vertices than this
	// MobyTexNone is the TEX0 data_lo of an untextured moby primitive.
	MobyTexNone = -1
)

// mobyVertex is a decoded vertex: what the cache keeps (position and
// normal; UVs are per packet vertex).
type mobyVertex struct {
	pos, normal [3]float32
}

// angles are the sine and cosine of k × π/128, the moby normal's angle
// units (the game keeps such a table too).
var angles = func() (t [256]struct{ sin, cos float64 }) {
	for k := range t {
		a := float64(k) * math.Pi / 128
		t[k].sin, t[k].cos = math.Sin(a), math.Cos(a)
	}
	return t
}()

type entry struct {
	v   int // packet vertex
	tex int32
}

// ReadMoby decodes the lod packet list of the moby class block b; slots is
// the number of texture slots the class has (a texture number at or past it
// is an error). A class without a packet table (offset 0) yields an empty
// mesh.
func ReadMoby(b []byte, lod LOD, slots int) (*Mesh, error) {
	what := "moby class " + lod.String()
	if len(b) < mobyHeaderSize {
		return nil, &Error{What: what, Offset: 0, Reason: fmt.Sprintf("block of %d bytes is shorter than the %#x-byte header", len(b), mobyHeaderSize)}
	}
	if b[0xb] != 0 {
		return nil, &Error{What: what, Offset: 0xb, Reason: "R&C1-format class (format byte non-zero) is not read"}
	}
	table := int64(int32(binary.LittleEndian.Uint32(b)))
	m := &Mesh{}
	if table == 0 {
		return m, nil
	}
	first, count := int64(0), int64(b[4])
	if lod == Low {
		first, count = int64(b[4]), int64(b[5])
	}
	if table < 0 || table > int64(len(b)) || (first+count)*mobyPacketEntrySize > int64(len(b))-table {
		return nil, &Error{What: what, Offset: 0, Reason: fmt.Sprintf("packet table at %#x with %d entries runs outside the block's %d bytes", table, first+count, len(b))}
	}
	scale := math.Float32frombits(binary.LittleEndian.Uint32(b[0x24:]))
	if math.IsNaN(float64(scale)) || math.IsInf(float64(scale), 0) {
		return nil, &Error{What: what, Offset: 0x24, Reason: "scale is not a finite number"}
	}
	r := mobyReader{b: b, what: what, m: m, slots: slots, scale: scale / 1024}
	// Each packet's entry gives its vertex count (at most 255, and at most
	// 255 packets): the vertex arrays are made once at their size rather
	// than grown packet by packet.
	nv := 0
	for i := first; i < first+count; i++ {
		nv += int(b[table+i*mobyPacketEntrySize+0xf])
	}
	m.Positions = make([][3]float32, 0, nv)
	m.Normals = make([][3]float32, 0, nv)
	m.UVs = make([][2]float32, 0, nv)
	for i := first; i < first+count; i++ {
		if err := r.packet(table + i*mobyPacketEntrySize); err != nil {
			return nil, err
		}
	}
	return m, nil
}

type mobyReader struct {
	b     []byte
	what  string
	m     *Mesh
	slots int
	scale float32
	cache [mobyCacheSize]*mobyVertex
	tex   int32 // current texture number, across the packets of a list
	// ents and starts are a packet's strips, reused from packet to packet:
	// strip k is ents[starts[k]:starts[k+1]] (the last runs to the end).
	ents   []entry
	starts []int
}

func (r *mobyReader) u16(at int64) int { return int(binary.LittleEndian.Uint16(r.b[at:])) }

func (r *mobyReader) fail(at int64, format string, args ...any) error {
	return &Error{What: r.what, Offset: at, Reason: fmt.Sprintf(format, args...)}
}

// packet decodes the packet whose table entry is at e.
func (r *mobyReader) packet(e int64) error {
	b := r.b
	vifOff := int64(binary.LittleEndian.Uint32(b[e:]))
	vifSize := int64(binary.LittleEndian.Uint16(b[e+4:])) * 16
	vo := int64(binary.LittleEndian.Uint32(b[e+8:]))
	dataSize := int64(b[e+0xc]) * 16
	transfer := int(b[e+0xf])
	l, err := ReadVIFList(r.what+" packet VIF list", b, vifOff, vifSize)
	if err != nil {
		return err
	}
	if len(l.Unpacks) < 2 {
		return r.fail(vifOff, "VIF list has %d UNPACKs, a packet needs its STs and indices", len(l.Unpacks))
	}
	st, idx := l.Unpacks[0], l.Unpacks[1]
	if st.Format != V2_16 || idx.Format != V4_8 {
		return r.fail(st.Offset, "UNPACK formats %#x, %#x: STs are V2_16 and indices V4_8", st.Format, idx.Format)
	}
	var texData []byte
	texOff := int64(0)
	if len(l.Unpacks) >= 3 {
		tu := l.Unpacks[2]
		if tu.Format != V4_32 || len(tu.Data)%mobyTextureRecord != 0 {
			return r.fail(tu.Offset, "texture UNPACK of format %#x and %d bytes is not whole V4_32 records of 0x40", tu.Format, len(tu.Data))
		}
		texData, texOff = tu.Data, tu.Offset+4
	}
	// The vertex table.
	if vo > int64(len(b)) || dataSize > int64(len(b))-vo || dataSize < mobyVertexHeader {
		return r.fail(e+8, "vertex table at %#x of %d bytes runs outside the block's %d", vo, dataSize, len(b))
	}
	two, three, main, dups := r.u16(vo+2), r.u16(vo+4), r.u16(vo+6), r.u16(vo+8)
	tvc := r.u16(vo + 0xa)
	arrayOff := int64(r.u16(vo + 0xc))
	if tvc != transfer || two+three+main+dups != tvc {
		return r.fail(vo, "vertex counts %d+%d+%d+%d disagree with the transfer count %d (packet entry: %d)", two, three, main, dups, tvc, transfer)
	}
	n := int64(two + three + main)
	if arrayOff%16 != 0 || arrayOff > dataSize || n*mobyVertexSize > dataSize-arrayOff {
		return r.fail(vo+0xc, "vertex array at +%#x with %d vertices runs outside the vertex table's %d bytes", arrayOff, n, dataSize)
	}
	p := (dataSize-arrayOff)/mobyVertexSize - n // padding vertices
	if p < 1 || p >= mobyMaxPadding {
		return r.fail(vo, "%d padding vertices after %d vertices (the vertex-id rule needs 1 to 6)", p, n)
	}
	dupAt := vo + mobyVertexHeader + 2*int64(r.u16(vo))
	dupAt = (dupAt + 3) &^ 3
	dupAt = (dupAt + 7) &^ 7
	if dupAt+2*int64(dups) > int64(len(b)) {
		return r.fail(vo, "%d duplicate entries at %#x run outside the block", dups, dupAt)
	}
	total := n + int64(dups)
	if int64(len(st.Data))/4 < total {
		return r.fail(st.Offset, "%d STs for %d packet vertices", len(st.Data)/4, total)
	}
	// Vertex ids: slot k is the low 9 bits of array vertex k's first u16
	// for k < n+p, then the six u16 at bytes 4–0xf of the last padding
	// vertex; vertex j's id is slot j+7.
	arr := vo + arrayOff
	last := arr + (n+p-1)*mobyVertexSize
	slot := func(k int64) int {
		if k < n+p {
			return r.u16(arr+k*mobyVertexSize) & 0x1ff
		}
		return r.u16(last+4+2*(k-n-p)) & 0x1ff
	}
	base := uint32(len(r.m.Positions))
	uv := func(j int64) [2]float32 {
		return [2]float32{float32(int16(binary.LittleEndian.Uint16(st.Data[4*j:]))) / 4096,
			float32(int16(binary.LittleEndian.Uint16(st.Data[4*j+2:]))) / 4096}
	}
	verts := make([]mobyVertex, n) // n is bounded by the vertex table's bytes
	for j := int64(0); j < n; j++ {
		at := arr + j*mobyVertexSize
		v := &verts[j]
		for k := 0; k < 3; k++ {
			v.pos[k] = float32(int16(binary.LittleEndian.Uint16(b[at+0xa+2*int64(k):]))) * r.scale
		}
		az, el := angles[b[at+8]], angles[b[at+9]]
		v.normal = [3]float32{float32(az.sin * el.cos), float32(az.cos * el.cos), float32(el.sin)}
		r.cache[slot(j+7)] = v
		r.add(v, uv(j))
	}
	for d := int64(0); d < int64(dups); d++ {
		c := r.u16(dupAt+2*d) >> 7
		v := r.cache[c] // c < 512: a u16 shifted by 7
		if v == nil {
			return r.fail(dupAt+2*d, "duplicate vertex %d uses vertex-cache slot %d before it is filled", d, c)
		}
		r.add(v, uv(n+d))
	}
	return r.indices(idx, texData, texOff, base, int(total))
}

func (r *mobyReader) add(v *mobyVertex, uv [2]float32) {
	r.m.Positions = append(r.m.Positions, v.pos)
	r.m.Normals = append(r.m.Normals, v.normal)
	r.m.UVs = append(r.m.UVs, uv)
}

// indices walks a packet's index list (LEVEL-CORE §2.1 step 2) into strips
// by Wrench's strip rule, then expands them into triangles.
func (r *mobyReader) indices(idx Unpack, texData []byte, texOff int64, base uint32, nverts int) error {
	if len(idx.Data) < 4 {
		return r.fail(idx.Offset, "index UNPACK of %d bytes has no header", len(idx.Data))
	}
	if idx.Data[3] != 0 {
		return r.fail(idx.Offset+4+3, "index header's last byte is %#x, not 0", idx.Data[3])
	}
	records := len(texData) / mobyTextureRecord
	secret := func(k int) int8 {
		if k == 0 {
			return int8(idx.Data[2])
		}
		return int8(texData[(k-1)*0x10+0xc])
	}
	ents, starts := r.ents[:0], r.starts[:0] // the strip being made is ents[starts[len(starts)-1]:]
	cur := func() int { return len(ents) - starts[len(starts)-1] }
	k := 0
	ended := false
	list := idx.Data[4:]
	at := func(j int) int64 { return idx.Offset + 4 + 4 + int64(j) }
	for j := 0; j < len(list) && !ended; j++ {
		bi := int8(list[j])
		if bi == 0 {
			if k > records {
				return r.fail(at(j), "index %d is a zero past the packet's %d secret indices", j, records+1)
			}
			s := secret(k)
			if s == 0 {
				if len(starts) == 0 || cur() < 3 {
					n := 0
					if len(starts) > 0 {
						n = cur()
					}
					return r.fail(at(j), "end of packet with %d indices in its strip, the rule drops three", n)
				}
				ents = ents[:len(ents)-3]
				ended = true
				break
			}
			if k >= records {
				return r.fail(at(j), "texture switch %d without a texture record (%d records)", k, records)
			}
			rec := texData[k*mobyTextureRecord:]
			t := int32(binary.LittleEndian.Uint32(rec[0x20:]))
			if t < MobyTexNone || int64(t) >= int64(r.slots) {
				return r.fail(texOff+int64(k)*mobyTextureRecord+0x20, "texture record %d names texture slot %d, the class has %d", k, t, r.slots)
			}
			r.tex = t
			k++
			bi = int8(uint8(s) | 0x80)
		}
		if bi < 0 {
			if j+1 < len(list) && int8(list[j+1]) <= 0 {
				starts = append(starts, len(ents)) // a new strip
			} else {
				if len(starts) == 0 || cur() < 1 {
					return r.fail(at(j), "index %d restarts a strip that has not begun", j)
				}
				ents = append(ents, ents[len(ents)-1])
			}
		}
		if len(starts) == 0 {
			return r.fail(at(j), "index %d comes before any strip begins", j)
		}
		v := int(bi&0x7f) - 1
		if v < 0 || v >= nverts {
			return r.fail(at(j), "index %d names vertex %d of the packet's %d", j, v, nverts)
		}
		ents = append(ents, entry{v: v, tex: r.tex})
	}
	r.ents, r.starts = ents, starts
	if !ended {
		return r.fail(idx.Offset, "index list of %d bytes ends without its end-of-packet marker", len(list))
	}
	for i, st := range starts {
		end := len(ents)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		r.m.Triangles = appendStrip(r.m.Triangles, ents[st:end], base, true)
	}
	return nil
}

// appendStrip expands a triangle strip of entries into triangles, the odd
// ones with their first two corners swapped (glTF's strip order), each
// with the texture of its closing entry; degenerate ones (a vertex twice)
// are dropped when dropDegenerate.
func appendStrip(out []Triangle, s []entry, base uint32, dropDegenerate bool) []Triangle {
	for i := 2; i < len(s); i++ {
		a, b, c := s[i-2].v, s[i-1].v, s[i].v
		if (i-2)%2 == 1 {
			a, b = b, a
		}
		if dropDegenerate && (a == b || b == c || a == c) {
			continue
		}
		tex := s[i].tex
		if tex < 0 {
			tex = NoTexture
		}
		out = append(out, Triangle{V: [3]uint32{base + uint32(a), base + uint32(b), base + uint32(c)}, Tex: tex})
	}
	return out
}
