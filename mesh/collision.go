package mesh

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Collision (LEVEL-CORE §2.5): a sparse three-level grid (z, y, x) of 4-unit
// cells, each with its own vertices (packed 10/10/12-bit offsets from the
// cell's centre) and faces, the first quad_count of them quads. The same
// world vertex and face are stored in every cell they touch; ReadCollision
// merges both (vertices by their exact position, faces by their vertex set
// and type) and keeps each face's type byte as its Tex. Quads are two
// triangles (v0, v1, v2), (v0, v2, v3); winding as stored (Wrench reverses
// it; the glb is double-sided). Positions are world units.

// CollisionStats are counts of a collision block's reading.
type CollisionStats struct {
	Cells      int // non-empty cells read
	Faces      int // faces as stored (quads once), duplicates included
	Duplicates int // faces dropped as repeats of one already read
}

// collision reading's errors name the mesh's offsets from the block start.
type collReader struct {
	b    []byte
	mesh int64 // block offset of the mesh
}

func (r *collReader) need(what string, at, n int64) error {
	if at < 0 || n < 0 || at > int64(len(r.b)) || n > int64(len(r.b))-at {
		return &Error{What: "collision " + what, Offset: at, Reason: fmt.Sprintf("%d bytes at %#x run past the %#x-byte block", n, at, len(r.b))}
	}
	return nil
}

// ReadCollision reads a collision block (core_data's, or a decoded
// chunkcoll stream) as one mesh.
func ReadCollision(b []byte) (*Mesh, CollisionStats, error) {
	le := binary.LittleEndian
	var st CollisionStats
	r := &collReader{b: b}
	if err := r.need("header", 0, 8); err != nil {
		return nil, st, err
	}
	r.mesh = int64(int32(le.Uint32(b)))
	m0 := r.mesh
	if err := r.need("grid", m0, 4); err != nil {
		return nil, st, err
	}
	zFirst, zCount := int64(int16(le.Uint16(b[m0:]))), int64(le.Uint16(b[m0+2:]))
	if err := r.need("z offsets", m0+4, 2*zCount); err != nil {
		return nil, st, err
	}
	m := &Mesh{}
	verts := map[[3]float32]uint32{}
	type faceKey struct {
		v   [4]uint32 // sorted; v[3] = MaxUint32 for a triangle
		tex int32
	}
	faces := map[faceKey]bool{}
	var read int64 // vertices and faces read, in every cell
	// The maps and slices grow with what is read (bounded below), nothing
	// is sized by a count.
	for iz := int64(0); iz < zCount; iz++ {
		zo := int64(le.Uint16(b[m0+4+2*iz:])) * 4
		if zo == 0 {
			continue
		}
		zAt := m0 + zo
		if err := r.need("y node", zAt, 4); err != nil {
			return nil, st, err
		}
		yFirst, yCount := int64(int16(le.Uint16(b[zAt:]))), int64(le.Uint16(b[zAt+2:]))
		if err := r.need("y offsets", zAt+4, 4*yCount); err != nil {
			return nil, st, err
		}
		for iy := int64(0); iy < yCount; iy++ {
			yo := int64(le.Uint32(b[zAt+4+4*iy:]))
			if yo == 0 {
				continue
			}
			yAt := m0 + yo
			if err := r.need("x node", yAt, 4); err != nil {
				return nil, st, err
			}
			xFirst, xCount := int64(int16(le.Uint16(b[yAt:]))), int64(le.Uint16(b[yAt+2:]))
			if err := r.need("x cells", yAt+4, 4*xCount); err != nil {
				return nil, st, err
			}
			for ix := int64(0); ix < xCount; ix++ {
				xv := le.Uint32(b[yAt+4+4*ix:])
				co := int64(xv >> 8)
				if co == 0 {
					continue
				}
				centre := [3]float32{float32(4*(xFirst+ix) + 2), float32(4*(yFirst+iy) + 2), float32(4*(zFirst+iz) + 2)}
				cAt := m0 + co
				if err := r.need("cell", cAt, 4); err != nil {
					return nil, st, err
				}
				fc, vc, qc := int64(le.Uint16(b[cAt:])), int64(b[cAt+2]), int64(b[cAt+3])
				if qc > fc {
					return nil, st, &Error{What: "collision cell", Offset: cAt, Reason: fmt.Sprintf("%d quads of %d faces", qc, fc)}
				}
				if err := r.need("cell", cAt, 4+4*vc+4*fc+qc); err != nil {
					return nil, st, err
				}
				st.Cells++
				// Honest cells have bytes of their own (4 a vertex, 4
				// a face): more read than the block holds means cells
				// share bytes, and a grid of them could make any number.
				read += vc + fc
				if read > int64(len(b))/4 {
					return nil, st, &Error{What: "collision cell", Offset: cAt, Reason: fmt.Sprintf("the cells read so far hold more vertices and faces than the %#x-byte block can", len(b))}
				}
				local := make([]uint32, vc) // ≤ 255
				for k := int64(0); k < vc; k++ {
					v := le.Uint32(b[cAt+4+4*k:])
					// 10-, 10- and 12-bit signed fields
					x := int32(v<<22) >> 22
					y := int32(v<<12) >> 22
					z := int32(v) >> 20
					p := [3]float32{centre[0] + float32(x)/16, centre[1] + float32(y)/16, centre[2] + float32(z)/64}
					id, ok := verts[p]
					if !ok {
						id = uint32(len(m.Positions))
						verts[p] = id
						m.Positions = append(m.Positions, p)
					}
					local[k] = id
				}
				fAt := cAt + 4 + 4*vc
				qAt := fAt + 4*fc
				for k := int64(0); k < fc; k++ {
					f := b[fAt+4*k:]
					n := 3
					idx := [4]int64{int64(f[0]), int64(f[1]), int64(f[2]), 0}
					if k < qc {
						n = 4
						idx[3] = int64(b[qAt+k])
					}
					var key faceKey
					key.v[3] = math.MaxUint32
					var gv [4]uint32
					for c := 0; c < n; c++ {
						if idx[c] >= vc {
							return nil, st, &Error{What: "collision face", Offset: fAt + 4*k, Reason: fmt.Sprintf("vertex %d of the cell's %d", idx[c], vc)}
						}
						gv[c] = local[idx[c]]
						key.v[c] = gv[c]
					}
					st.Faces++
					key.tex = int32(f[3])
					sortKey(&key.v, n)
					if faces[key] {
						st.Duplicates++
						continue
					}
					faces[key] = true
					tex := int32(f[3])
					m.Triangles = append(m.Triangles, Triangle{V: [3]uint32{gv[0], gv[1], gv[2]}, Tex: tex})
					if n == 4 {
						m.Triangles = append(m.Triangles, Triangle{V: [3]uint32{gv[0], gv[2], gv[3]}, Tex: tex})
					}
				}
			}
		}
	}
	return m, st, nil
}

func sortKey(v *[4]uint32, n int) {
	for i := 1; i < n; i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
}
