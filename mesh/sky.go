package mesh

import (
	"encoding/binary"
	"fmt"
)

// The sky (LEVEL-CORE §2.6), GC form: a 0x40-byte header whose shells[8]
// (at 0x20, shell_count at 0x06) are sky-block offsets of shells {s32
// cluster_count, s32 flags} (flags bit 0: untextured), each followed at
// +0x10 by cluster_count clusters {Vec4f bsphere; s32 data; s16
// vertex_count, tri_count, vertex_offset, st_offset, tri_offset,
// data_size}; a cluster's vertices {s16 x, y, z, alpha} (/1024), STs {s16
// s, t} (/4096) and triangles {u8 i0, i1, i2, texture} lie at data + their
// offsets, indices local to the cluster.

const (
	skyHeaderSize     = 0x40
	skyMaxShells      = 8
	skyShellHeader    = 0x10
	skyClusterHeader  = 0x20
	skyVertexSize     = 8
	skySTSize         = 4
	skyTriangleSize   = 4
	skyUntexturedFace = 0xff
)

// ReadSky reads every shell of a sky block as one Mesh, in shell order:
// positions in game units (s16 / 1024), UVs (s16 / 4096), triangles in the
// stored index order with Tex the sky texture def index (NoTexture for
// 0xff, and for every triangle of a shell flagged untextured). A texture
// index past the header's texture_count, or anything outside the block, is
// an *Error naming the shell and cluster; every count is bounded by the
// block's bytes before it sizes anything.
func ReadSky(b []byte) ([]Mesh, error) {
	size := int64(len(b))
	if size < skyHeaderSize {
		return nil, &Error{What: "sky header", Offset: 0, Reason: fmt.Sprintf("the block has %d bytes, the header needs %#x", size, skyHeaderSize)}
	}
	le := binary.LittleEndian
	shells := int64(int16(le.Uint16(b[6:])))
	textures := int64(int16(le.Uint16(b[0xc:])))
	if shells < 0 || shells > skyMaxShells {
		return nil, &Error{What: "sky header", Offset: 6, Reason: fmt.Sprintf("shell count %d is outside 0..%d", shells, skyMaxShells)}
	}
	in := func(off, n int64) bool { return off >= 0 && n >= 0 && off <= size && n <= size-off }
	out := make([]Mesh, 0, shells)
	for s := int64(0); s < shells; s++ {
		at := int64(int32(le.Uint32(b[0x20+4*s:])))
		what := fmt.Sprintf("sky shell %d", s)
		if !in(at, skyShellHeader) {
			return nil, &Error{What: what, Offset: 0x20 + 4*s, Reason: fmt.Sprintf("header at %#x outside the block's %#x bytes", at, size)}
		}
		clusters := int64(int32(le.Uint32(b[at:])))
		untextured := le.Uint32(b[at+4:])&1 != 0
		if clusters < 0 || !in(at+skyShellHeader, clusters*skyClusterHeader) {
			return nil, &Error{What: what, Offset: at, Reason: fmt.Sprintf("%d clusters at %#x run past the block's %#x bytes", clusters, at+skyShellHeader, size)}
		}
		var m Mesh
		for c := int64(0); c < clusters; c++ {
			h := at + skyShellHeader + c*skyClusterHeader
			cw := fmt.Sprintf("%s cluster %d", what, c)
			data := int64(int32(le.Uint32(b[h+0x10:])))
			nv, nt := int64(int16(le.Uint16(b[h+0x14:]))), int64(int16(le.Uint16(b[h+0x16:])))
			vo, so, to := int64(int16(le.Uint16(b[h+0x18:]))), int64(int16(le.Uint16(b[h+0x1a:]))), int64(int16(le.Uint16(b[h+0x1c:])))
			switch {
			case nv < 0 || nt < 0:
				return nil, &Error{What: cw, Offset: h + 0x14, Reason: fmt.Sprintf("%d vertices, %d triangles", nv, nt)}
			case !in(data+vo, nv*skyVertexSize):
				return nil, &Error{What: cw, Offset: h + 0x18, Reason: fmt.Sprintf("%d vertices at %#x outside the block's %#x bytes", nv, data+vo, size)}
			case !in(data+so, nv*skySTSize):
				return nil, &Error{What: cw, Offset: h + 0x1a, Reason: fmt.Sprintf("%d STs at %#x outside the block's %#x bytes", nv, data+so, size)}
			case !in(data+to, nt*skyTriangleSize):
				return nil, &Error{What: cw, Offset: h + 0x1c, Reason: fmt.Sprintf("%d triangles at %#x outside the block's %#x bytes", nt, data+to, size)}
			}
			base := uint32(len(m.Positions))
			for v := int64(0); v < nv; v++ { // nv bounded by the block's bytes
				p := b[data+vo+v*skyVertexSize:]
				m.Positions = append(m.Positions, [3]float32{
					float32(int16(le.Uint16(p))) / 1024, float32(int16(le.Uint16(p[2:]))) / 1024, float32(int16(le.Uint16(p[4:]))) / 1024})
				st := b[data+so+v*skySTSize:]
				m.UVs = append(m.UVs, [2]float32{float32(int16(le.Uint16(st))) / 4096, float32(int16(le.Uint16(st[2:]))) / 4096})
			}
			for t := int64(0); t < nt; t++ {
				f := b[data+to+t*skyTriangleSize:]
				for k := 0; k < 3; k++ {
					if int64(f[k]) >= nv {
						return nil, &Error{What: cw, Offset: data + to + t*skyTriangleSize, Reason: fmt.Sprintf("triangle %d uses vertex %d of %d", t, f[k], nv)}
					}
				}
				tex := int32(f[3])
				switch {
				case f[3] == skyUntexturedFace || untextured:
					tex = NoTexture
				case int64(f[3]) >= textures:
					return nil, &Error{What: cw, Offset: data + to + t*skyTriangleSize + 3, Reason: fmt.Sprintf("triangle %d names sky texture %d of %d", t, f[3], textures)}
				}
				m.Triangles = append(m.Triangles, Triangle{V: [3]uint32{base + uint32(f[0]), base + uint32(f[1]), base + uint32(f[2])}, Tex: tex})
			}
		}
		out = append(out, m)
	}
	return out, nil
}
