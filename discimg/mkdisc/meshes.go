package mkdisc

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"gcfs/assets"
	"gcfs/codec"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/mesh"
)

// Mesh blocks of known geometry (SPEC "The synthetic disc"): tfrags and
// collision in LEVEL-CORE §2.4 and §2.5's exact formats (laid out as
// Wrench's packer lays them out, so that its unpacker reads them too),
// with the geometry they hold returned beside the bytes. Each block records
// what it was made from in bytes its format leaves free (tfrags: the
// header's two unknown words; collision: the 8 bytes between the header and
// the mesh), so that a test holding only the block can make it again
// (TfragsOf, CollisionOf) and compare.

// TfragsBlock is a tfrags block of fragments fragments (ribbons, fans made
// of 3-index strips, boxes of one strip a face; 1–3 texture records each,
// naming entries below texCount of the tfrag texture table), padded with
// filler to at least size bytes, and the mesh its LOD 0 is, as
// mesh.ReadTfrags gives it.
func TfragsBlock(seed uint32, fragments, texCount, size int) ([]byte, *mesh.Mesh) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7f4a9c))
	frags := make([]tfFrag, fragments)
	for i := range frags {
		frags[i] = newTfFrag(rng, i, texCount)
	}
	table := 0x40
	b := make([]byte, table+0x40*len(frags))
	le := binary.LittleEndian
	le.PutUint32(b[0:], uint32(table))
	le.PutUint32(b[4:], uint32(len(frags)))
	le.PutUint32(b[8:], uint32(texCount)) // "thingy" (f32 in Wrench): the texture count made for
	le.PutUint32(b[12:], seed)            // "mysterious_second_thingy": the seed
	m := &mesh.Mesh{}
	for i := range frags {
		for len(b)%16 != 0 {
			b = append(b, 0)
		}
		start := len(b)
		var h [0x40]byte
		b = frags[i].write(b, h[:])
		le.PutUint32(h[0x10:], uint32(start-table))
		copy(b[table+0x40*i:], h[:])
		frags[i].appendMesh(m)
	}
	if len(b) < size {
		b = append(b, codec.SampleData(int64(seed), size-len(b))...)
	}
	return b, m
}

// TfragsOf makes again the tfrags block b was made as (its fragment count,
// texture count and seed are in its header) and returns its mesh, or false
// when b is not one TfragsBlock made.
func TfragsOf(b []byte) (*mesh.Mesh, bool) {
	if len(b) < 16 {
		return nil, false
	}
	le := binary.LittleEndian
	n, tex, seed := int(le.Uint32(b[4:])), int(le.Uint32(b[8:])), le.Uint32(b[12:])
	if n > 4096 || tex > 1<<16 {
		return nil, false
	}
	again, m := TfragsBlock(seed, n, tex, 0)
	if len(again) > len(b) || string(again) != string(b[:len(again)]) {
		return nil, false
	}
	return m, true
}

type tfInfo struct{ s, t, parent, vertex int16 }

type tfStrip struct {
	count int8 // with the flag: count − 128
	adGif int8
}

// tfFrag is one fragment's content.
type tfFrag struct {
	base    [3]int32
	pos     [][3]int16
	infos   []tfInfo
	light   [][2]int8 // azimuth, elevation per position
	strips  []tfStrip
	indices []byte
	texs    []int32 // texture records' TEX0 data_lo
}

func newTfFrag(rng *rand.Rand, i, texCount int) tfFrag {
	f := tfFrag{base: [3]int32{int32(i%8) * 16 << 10, int32(i/8) * 16 << 10, int32(rng.IntN(8)) << 10}}
	for k := 0; k < 1+rng.IntN(3); k++ {
		f.texs = append(f.texs, int32(rng.IntN(max(texCount, 1))))
	}
	addPos := func(x, y, z int) int {
		f.pos = append(f.pos, [3]int16{int16(x), int16(y), int16(z)})
		f.light = append(f.light, [2]int8{int8(rng.IntN(256) - 128), int8(rng.IntN(128) - 64)})
		return len(f.pos) - 1
	}
	addInfo := func(p int, s, t int) byte {
		f.infos = append(f.infos, tfInfo{s: int16(s), t: int16(t), parent: 0, vertex: int16(2 * p)})
		return byte(len(f.infos) - 1)
	}
	flagged := func(count, rec int) tfStrip {
		return tfStrip{count: int8(count - 128), adGif: int8(5 * (rec % len(f.texs)))}
	}
	switch i % 3 {
	case 0: // a ribbon: one strip of 2k vertices
		k := 3 + rng.IntN(8)
		for j := 0; j < k; j++ {
			for side := 0; side < 2; side++ {
				p := addPos(j*1024, side*2048, rng.IntN(512))
				f.indices = append(f.indices, addInfo(p, j*4096, side*4096-2048)) // negative t: Wrench halves it
			}
		}
		f.strips = append(f.strips, flagged(2*k, 0))
	case 1: // a fan: 3-index strips around a centre
		n := 4 + rng.IntN(6)
		c := addInfo(addPos(0, 0, 1024), 2048, 2048)
		var rim []byte
		for j := 0; j <= n; j++ {
			a := float64(j) * 2 * math.Pi / float64(n)
			p := addPos(int(3000*math.Cos(a)), int(3000*math.Sin(a)), 0)
			rim = append(rim, addInfo(p, int(2048+2048*math.Cos(a)), int(2048+2048*math.Sin(a))))
		}
		for j := 0; j < n; j++ {
			s := tfStrip{count: 3, adGif: -1}
			if j == 0 || j == n/2 {
				s = flagged(3, j)
			}
			f.strips = append(f.strips, s)
			f.indices = append(f.indices, c, rim[j], rim[j+1])
		}
	default: // a box: 8 positions, a 4-vertex strip (two triangles) a face
		sz := 1024 * (1 + rng.IntN(3))
		var corner [8]int
		for c := range corner {
			corner[c] = addPos(c&1*sz, c>>1&1*sz, c>>2&1*sz)
		}
		faces := [6][4]int{{0, 1, 2, 3}, {4, 5, 6, 7}, {0, 1, 4, 5}, {2, 3, 6, 7}, {0, 2, 4, 6}, {1, 3, 5, 7}}
		for q, fc := range faces {
			for v, c := range fc {
				f.indices = append(f.indices, addInfo(corner[c], v&1*4096, v>>1*4096))
			}
			f.strips = append(f.strips, flagged(4, q))
		}
	}
	return f
}

// appendMesh adds the fragment's LOD 0 as mesh.ReadTfrags reads it.
func (f *tfFrag) appendMesh(m *mesh.Mesh) {
	first := uint32(len(m.Positions))
	for _, in := range f.infos {
		pi := int(in.vertex) / 2
		p := f.pos[pi]
		m.Positions = append(m.Positions, [3]float32{float32(f.base[0]+int32(p[0])) / 1024, float32(f.base[1]+int32(p[1])) / 1024, float32(f.base[2]+int32(p[2])) / 1024})
		uv := [2]float32{float32(in.s) / 4096, float32(in.t) / 4096}
		for c := range uv {
			if uv[c] < 0 {
				uv[c] *= 0.5
			}
		}
		m.UVs = append(m.UVs, uv)
		az := float64(f.light[pi][0]) * math.Pi / 128
		el := float64(f.light[pi][1]) * math.Pi / 128
		m.Normals = append(m.Normals, [3]float32{float32(math.Cos(az) * math.Cos(el)), float32(math.Sin(az) * math.Cos(el)), float32(math.Sin(el))})
	}
	tex := int32(mesh.NoTexture)
	next := 0
	for _, s := range f.strips {
		count := int(s.count)
		if count < 0 {
			count += 128
			if s.adGif >= 0 {
				tex = f.texs[int(s.adGif)/5]
			}
		}
		for k := 0; k+2 < count; k++ {
			m.Triangles = append(m.Triangles, mesh.Triangle{V: [3]uint32{first + uint32(f.indices[next+k]), first + uint32(f.indices[next+k+1]), first + uint32(f.indices[next+k+2])}, Tex: tex})
		}
		next += count
	}
}

// VIF codes as Wrench's packer writes them.
const (
	vifSTMOD0  = 0x05000000
	vifSTMOD1  = 0x05000001
	vifSTCYCL2 = 0x01000102
	vifSTCYCL4 = 0x01000404
)

func putU32(b []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(b, v) }

// vifUnpack appends an UNPACK of format (vn/vl) to VU address addr of
// payload (num elements; padded to 4 bytes).
func vifUnpack(b []byte, format, addr int, unsigned bool, payload []byte, elem int) []byte {
	num := len(payload) / elem
	if num > 256 || num*elem != len(payload) {
		panic("mkdisc: an UNPACK of more than 256 elements")
	}
	code := uint32(0x60|format)<<24 | uint32(num&0xff)<<16 | 0x8000 | uint32(addr&0x3ff)
	if unsigned {
		code |= 0x4000
	}
	b = putU32(b, code)
	b = append(b, payload...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func vifSTROW(b []byte, r [4]uint32) []byte {
	b = putU32(b, 0x30000000)
	for _, v := range r {
		b = putU32(b, v)
	}
	return b
}

func pad16(b []byte) []byte {
	for len(b)%16 != 0 {
		b = append(b, 0)
	}
	return b
}

// write appends the fragment's data (LEVEL-CORE §2.4's five lists, colours,
// lights, mspheres, cube) at b's end (16-aligned) and fills its header h but
// for h's data field.
func (f *tfFrag) write(b, h []byte) []byte {
	le := binary.LittleEndian
	start := len(b)
	rel := func() int { return len(b) - start }
	// VU memory map, as Wrench's allocator lays one out.
	nrec, npos, ninfo := len(f.texs), len(f.pos), len(f.infos)
	idx := append([]byte(nil), f.indices...)
	for len(idx)%4 != 0 {
		idx = append(idx, 0)
	}
	adGifs := 9
	posAddr := adGifs + 5*nrec
	infoAddr := posAddr + 2*npos
	idxAddr := infoAddr + ninfo
	stripAddr := idxAddr + len(idx)/4
	var strips []byte
	for _, s := range f.strips {
		strips = append(strips, byte(s.count), 0, byte(s.adGif), 0)
	}
	var infos []byte
	for _, in := range f.infos {
		for _, v := range []int16{in.s, in.t, in.parent, in.vertex} {
			infos = le.AppendUint16(infos, uint16(v))
		}
	}
	var pos []byte
	for _, p := range f.pos {
		for _, v := range p {
			pos = le.AppendUint16(pos, uint16(v))
		}
	}
	var texs []byte
	for _, d := range f.texs {
		for k, reg := range []byte{0x06, 0x14, 0x08, 0x34, 0x36} { // TEX0_1, TEX1_1, CLAMP_1, MIPTBP1_1, MIPTBP2_1
			var r [16]byte
			if k == 0 {
				le.PutUint32(r[0:], uint32(d))
			}
			r[8] = reg
			texs = append(texs, r[:]...)
		}
	}
	var vuh [0x28]byte
	le.PutUint16(vuh[0x00:], uint16(npos))
	le.PutUint16(vuh[0x0c:], uint16(posAddr))
	le.PutUint16(vuh[0x0e:], uint16(infoAddr))
	le.PutUint16(vuh[0x12:], uint16(infoAddr+ninfo))
	le.PutUint16(vuh[0x16:], uint16(infoAddr+ninfo))
	le.PutUint16(vuh[0x18:], uint16(idxAddr))
	le.PutUint16(vuh[0x24:], uint16(stripAddr))
	le.PutUint16(vuh[0x26:], uint16(adGifs))
	idxRow := [4]uint32{uint32(infoAddr), uint32(infoAddr), uint32(infoAddr), uint32(infoAddr)}
	baseRow := [4]uint32{uint32(f.base[0]), uint32(f.base[1]), uint32(f.base[2]), 0}
	// LOD 2
	b = vifSTROW(b, idxRow)
	b = putU32(b, vifSTMOD1)
	b = vifUnpack(b, 0xe, idxAddr, true, idx, 4)
	b = putU32(b, vifSTMOD0)
	b = vifUnpack(b, 0xe, stripAddr, false, strips, 4)
	b = pad16(b)
	shared := rel()
	// common: command #5 is the base position's STROW
	b = vifUnpack(b, 0xd, 0, true, vuh[:], 8)
	texOfs := rel() + 4
	b = vifUnpack(b, 0xc, adGifs, false, texs, 16)
	b = vifSTROW(b, [4]uint32{0x45000000, 0x45000000, 0, uint32(posAddr)})
	b = putU32(b, vifSTMOD1)
	b = vifUnpack(b, 0xd, infoAddr, false, infos, 8)
	b = vifSTROW(b, baseRow)
	b = putU32(b, vifSTCYCL2)
	b = vifUnpack(b, 0x9, posAddr, false, pos, 6)
	b = putU32(b, vifSTCYCL4)
	b = putU32(b, vifSTMOD0)
	b = pad16(b)
	lod1 := rel()
	b = vifUnpack(b, 0xe, stripAddr, false, strips, 4)
	b = vifSTROW(b, idxRow)
	b = putU32(b, vifSTMOD1)
	b = vifUnpack(b, 0xe, idxAddr, true, idx, 4)
	b = pad16(b)
	lod01 := rel()
	b = vifSTROW(b, baseRow)
	b = putU32(b, vifSTCYCL2)
	b = pad16(b)
	lod0 := rel()
	b = putU32(b, vifSTMOD0)
	b = putU32(b, vifSTCYCL4)
	b = vifUnpack(b, 0xe, stripAddr, false, strips, 4)
	b = vifSTROW(b, idxRow)
	b = putU32(b, vifSTMOD1)
	b = vifUnpack(b, 0xe, idxAddr, true, idx, 4)
	b = putU32(b, vifSTMOD0)
	b = pad16(b)
	end := rel()
	rgbaOfs := rel()
	rgbaSize := (npos + 3) / 4
	for k := 0; k < 4*rgbaSize; k++ {
		b = append(b, byte(40*k), byte(255-k), 0x60, 0x80)
	}
	b = pad16(b)
	lightOfs := rel()
	for _, v := range baseRow {
		b = putU32(b, v)
	}
	for _, l := range f.light {
		b = append(b, 0, 0x40, byte(l[0]), byte(l[1]), 0xff, 0x7f, 0, 0)
	}
	b = pad16(b)
	msphereOfs := rel()
	cubeOfs := rel()
	for k := 0; k < 8; k++ {
		for c := 0; c < 4; c++ {
			b = le.AppendUint16(b, uint16(int16(k*64+c)))
		}
	}
	// The header.
	tris := 0
	for _, s := range f.strips {
		c := int(s.count)
		if c < 0 {
			c += 128
		}
		tris += max(c-2, 0)
	}
	cx, cy, cz := float32(f.base[0])/1024, float32(f.base[1])/1024, float32(f.base[2])/1024
	le.PutUint32(h[0x00:], math.Float32bits(cx))
	le.PutUint32(h[0x04:], math.Float32bits(cy))
	le.PutUint32(h[0x08:], math.Float32bits(cz))
	le.PutUint32(h[0x0c:], math.Float32bits(8))
	le.PutUint16(h[0x14:], 0)
	le.PutUint16(h[0x16:], uint16(shared))
	le.PutUint16(h[0x18:], uint16(lod1))
	le.PutUint16(h[0x1a:], uint16(lod01))
	le.PutUint16(h[0x1c:], uint16(texOfs))
	le.PutUint16(h[0x1e:], uint16(rgbaOfs))
	h[0x20] = byte((lod1 - shared) / 16) // common_size
	h[0x21] = byte(lod1 / 16)            // lod_2_size
	h[0x22] = byte((lod0 - shared) / 16) // lod_1_size
	h[0x23] = byte((end - lod01) / 16)   // lod_0_size
	h[0x28] = byte(nrec)
	h[0x29] = byte(rgbaSize)
	h[0x2c] = 0 // no mspheres
	le.PutUint16(h[0x2e:], uint16(msphereOfs))
	le.PutUint16(h[0x30:], uint16(lightOfs))
	le.PutUint16(h[0x32:], uint16(msphereOfs))
	h[0x34] = 0xff
	le.PutUint16(h[0x36:], 0xffff)
	le.PutUint16(h[0x38:], uint16(cubeOfs))
	h[0x3c] = byte(npos)
	h[0x3d] = byte(tris)
	le.PutUint16(h[0x3e:], 100)
	return b
}

// CollisionBlock is a collision block (LEVEL-CORE §2.5) of a grid of cells
// about cells big, each holding a box of quads and a triangle of their own
// types, and a triangle stored in two neighbouring cells (merged once when
// read), padded with filler to at least size bytes, and the mesh it holds
// (triangles of quads as mesh.ReadCollision splits them; the order of
// vertices and triangles is not the reader's: compare them as sets).
func CollisionBlock(seed uint32, cells, size int) ([]byte, *mesh.Mesh) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xc011))
	le := binary.LittleEndian
	nx := 2 + rng.IntN(2)
	ny := max(1, cells/(2*nx))
	nz := 2
	zf, yf, xf := rng.IntN(4)-2, rng.IntN(20), rng.IntN(20)
	type face struct {
		v      [][3]int32 // packed-unit offsets from the cell centre: x, y /16, z /64
		kind   byte
		shared bool // stored in two cells; in the mesh once
	}
	type cell struct {
		x, y, z int
		faces   []face
	}
	var grid []cell
	m := &mesh.Mesh{}
	addTri := func(c cell, v [3][3]int32, kind byte) {
		var t mesh.Triangle
		for k, p := range v {
			t.V[k] = uint32(len(m.Positions))
			m.Positions = append(m.Positions, collWorld(c.x, c.y, c.z, p))
		}
		t.Tex = int32(kind)
		m.Triangles = append(m.Triangles, t)
	}
	for iz := 0; iz < nz; iz++ {
		for iy := 0; iy < ny; iy++ {
			for ix := 0; ix < nx; ix++ {
				if (ix+iy+iz)%4 == 3 {
					continue // an empty cell
				}
				c := cell{x: xf + ix, y: yf + iy, z: zf + iz}
				kind := byte(rng.IntN(256))
				// a box of 6 quads, ±1 unit about an offset inside the cell
				o := [3]int32{int32(rng.IntN(9) - 4), int32(rng.IntN(9) - 4), int32(rng.IntN(17) - 8)}
				corner := func(k int) [3]int32 {
					return [3]int32{o[0] + int32(k&1*32-16), o[1] + int32(k>>1&1*32-16), o[2] + int32(k>>2&1*128-64)}
				}
				for _, q := range [6][4]int{{0, 1, 3, 2}, {4, 6, 7, 5}, {0, 4, 5, 1}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 5, 7, 3}} {
					f := face{kind: kind}
					for _, k := range q {
						f.v = append(f.v, corner(k))
					}
					c.faces = append(c.faces, f)
				}
				tk := byte(rng.IntN(256))
				c.faces = append(c.faces, face{kind: tk, v: [][3]int32{{-30, -30, 100}, {30, -30, 110}, {0, 30, 120}}})
				grid = append(grid, c)
			}
		}
	}
	// A triangle on the boundary between two x-neighbours, stored in both.
	for i := 0; i+1 < len(grid); i++ {
		a, c := &grid[i], &grid[i+1]
		if a.y == c.y && a.z == c.z && c.x == a.x+1 {
			f := face{kind: 0x2a, shared: true, v: [][3]int32{{32, -20, -10}, {32, 20, -10}, {32, 0, 60}}}
			g := face{kind: 0x2a, shared: true, v: [][3]int32{{-32, 0, 60}, {-32, -20, -10}, {-32, 20, -10}}} // the same world points, another order
			a.faces = append(a.faces, f)
			c.faces = append(c.faces, g)
			addTri(*a, [3][3]int32{f.v[0], f.v[1], f.v[2]}, f.kind)
			break
		}
	}
	for _, c := range grid {
		for _, f := range c.faces {
			if f.shared {
				continue // added once above
			}
			addTri(c, [3][3]int32{f.v[0], f.v[1], f.v[2]}, f.kind)
			if len(f.v) == 4 {
				addTri(c, [3][3]int32{f.v[0], f.v[2], f.v[3]}, f.kind)
			}
		}
	}
	// The bytes: header {mesh, hero_groups}, seed and cell count, then the
	// mesh at 0x10: z node, y nodes, x nodes, cells (16-aligned).
	b := make([]byte, 0x10)
	le.PutUint32(b[0:], 0x10)
	le.PutUint32(b[8:], seed)
	le.PutUint32(b[12:], uint32(cells))
	mesh0 := 0x10
	at := func() int { return len(b) - mesh0 }
	b = le.AppendUint16(b, uint16(int16(zf)))
	b = le.AppendUint16(b, uint16(nz))
	zOffs := len(b)
	b = append(b, make([]byte, 2*nz)...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	cellOf := map[[3]int]cell{}
	for _, c := range grid {
		cellOf[[3]int{c.x, c.y, c.z}] = c
	}
	for iz := 0; iz < nz; iz++ {
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		le.PutUint16(b[zOffs+2*iz:], uint16(at()/4))
		b = le.AppendUint16(b, uint16(int16(yf)))
		b = le.AppendUint16(b, uint16(ny))
		yOffs := len(b)
		b = append(b, make([]byte, 4*ny)...)
		for iy := 0; iy < ny; iy++ {
			le.PutUint32(b[yOffs+4*iy:], uint32(at()))
			b = le.AppendUint16(b, uint16(int16(xf)))
			b = le.AppendUint16(b, uint16(nx))
			xCells := len(b)
			b = append(b, make([]byte, 4*nx)...)
			for ix := 0; ix < nx; ix++ {
				c, ok := cellOf[[3]int{xf + ix, yf + iy, zf + iz}]
				if !ok {
					continue
				}
				b = pad16(b)
				cAt := at()
				quads := 0
				for _, f := range c.faces {
					if len(f.v) == 4 {
						quads++
					}
				}
				// vertices of the cell, each once; quads first
				var verts [][3]int32
				vi := func(p [3]int32) byte {
					for k, q := range verts {
						if q == p {
							return byte(k)
						}
					}
					verts = append(verts, p)
					return byte(len(verts) - 1)
				}
				var fs, q3 []byte
				for pass := 0; pass < 2; pass++ {
					for _, f := range c.faces {
						if (len(f.v) == 4) != (pass == 0) {
							continue
						}
						fs = append(fs, vi(f.v[0]), vi(f.v[1]), vi(f.v[2]), f.kind)
						if len(f.v) == 4 {
							q3 = append(q3, vi(f.v[3]))
						}
					}
				}
				b = le.AppendUint16(b, uint16(len(c.faces)))
				b = append(b, byte(len(verts)), byte(quads))
				for _, p := range verts {
					b = le.AppendUint32(b, uint32(p[0])&0x3ff|(uint32(p[1])&0x3ff)<<10|uint32(p[2])<<20)
				}
				b = append(b, fs...)
				b = append(b, q3...)
				b = pad16(b)
				le.PutUint32(b[xCells+4*ix:], uint32(cAt)<<8|uint32((at()-cAt)/16))
			}
		}
	}
	b = pad16(b)
	if len(b) < size {
		b = append(b, codec.SampleData(int64(seed)+1, size-len(b))...)
	}
	return b, m
}

// collWorld is the world position of a packed cell vertex offset.
func collWorld(x, y, z int, p [3]int32) [3]float32 {
	return [3]float32{float32(4*x+2) + float32(p[0])/16, float32(4*y+2) + float32(p[1])/16, float32(4*z+2) + float32(p[2])/64}
}

// CollisionOf makes again the collision block b was made as (its seed and
// size are in the bytes before its mesh) and returns its mesh, or false
// when b is not one CollisionBlock made.
func CollisionOf(b []byte) (*mesh.Mesh, bool) {
	if len(b) < 16 {
		return nil, false
	}
	le := binary.LittleEndian
	seed, cells := le.Uint32(b[8:]), int(le.Uint32(b[12:]))
	if cells > 1<<16 {
		return nil, false
	}
	again, m := CollisionBlock(seed, cells, 0)
	if len(again) > len(b) || string(again) != string(b[:len(again)]) {
		return nil, false
	}
	return m, true
}

// Fragment and cell counts of the layouts' mesh blocks.
func meshCounts(small bool) (fragments, cells int) {
	if small {
		return 6, 8
	}
	return 300, 120
}

// meshContent is makeStreamOf's content for a chunk's tfrags (tfrags true)
// or collision stream: a block of known geometry padded to about n bytes.
// Chunk tfrags name the first 3 entries of the tfrag texture table (every
// layout's table has at least 3).
func meshContent(tfrags, small bool) func(rng *rand.Rand, n int) ([]byte, []treeEntry) {
	frags, cells := meshCounts(small)
	return func(rng *rand.Rand, n int) ([]byte, []treeEntry) {
		if tfrags {
			b, _ := TfragsBlock(rng.Uint32(), frags/2+1, 3, n)
			return b, nil
		}
		b, _ := CollisionBlock(rng.Uint32(), cells/2, n)
		return b, nil
	}
}

// tfragPNG is the PNG of tfrag texture tex of a level's core, as the tree
// shows it (core/textures/tfrag/NNN.png).
func tfragPNG(d *levelcore.Desc, tex int32) ([]byte, error) {
	if tex < 0 || int(tex) >= len(d.TfragTextures) {
		return nil, fmt.Errorf("tfrag texture %d of %d", tex, len(d.TfragTextures))
	}
	t := d.TfragTextures[tex]
	img, err := assets.DecodeIndexed8(t.Width, t.Height, d.Pixels[t.Pixels], d.Palettes[t.Palette])
	if err != nil {
		return nil, err
	}
	return assets.EncodePNG(img), nil
}

// meshFiles are the glb views the tree shows beside a tfrags and a
// collision block (paths prefix+"tfrags.glb", prefix+"collision.glb"),
// written by the writer the tree uses (gltf.EncodeTfrags,
// EncodeCollision); a nil block has none.
func meshFiles(prefix string, d *levelcore.Desc, tfrags, collision []byte) ([]ManifestEntry, error) {
	var out []ManifestEntry
	if tfrags != nil {
		glb, _, err := gltf.EncodeTfrags("tfrags", tfrags, func(tex int32) ([]byte, error) { return tfragPNG(d, tex) })
		if err != nil {
			return nil, fmt.Errorf("%stfrags.glb: %w", prefix, err)
		}
		out = append(out, ManifestEntry{Path: prefix + "tfrags.glb", Size: int64(len(glb)), SHA1: sha1Hex(glb)})
	}
	if collision != nil {
		glb, _, err := gltf.EncodeCollision("collision", collision)
		if err != nil {
			return nil, fmt.Errorf("%scollision.glb: %w", prefix, err)
		}
		out = append(out, ManifestEntry{Path: prefix + "collision.glb", Size: int64(len(glb)), SHA1: sha1Hex(glb)})
	}
	return out, nil
}
