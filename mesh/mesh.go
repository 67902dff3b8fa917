// Package mesh owns the geometry decoded from the level core's mesh formats
// (LEVEL-CORE §2: moby, tie and shrub classes, tfrags, collision, the sky):
// positions, normals and UVs where the format has them, triangles, and each
// triangle's texture reference. It is FUSE-free; the readers take a block's
// bytes and return a Mesh, and package gltf writes a Scene of them as glb.
//
// Coordinates stay as the game stores them (Z-up, game units); the writer
// converts to glTF's Y-up. Everything a reader takes is untrusted: a reader
// bounds every count by its block's bytes before it allocates.
package mesh

import "fmt"

// Mesh is one decoded mesh in the game's coordinates.
type Mesh struct {
	Positions [][3]float32
	Normals   [][3]float32 // one per position, or nil when the format has none
	UVs       [][2]float32 // one per position, or nil when the format has none
	Triangles []Triangle
}

// Triangle is three indices into a Mesh's vertices and the texture reference
// the format gives it: the class's texture slot (moby, tie, shrub), the tfrag
// texture table index (tfrags), the collision type byte (collision), the
// sky's texture index (sky); NoTexture when it has none.
type Triangle struct {
	V   [3]uint32
	Tex int32
}

// NoTexture is a Triangle.Tex for an untextured triangle.
const NoTexture = -1

// Check reports the first inconsistency of m: an index past its vertices, or
// normals or UVs whose count is not the positions'. A reader's output always
// passes; the writer checks again because a Scene may be assembled by hand.
func (m *Mesh) Check() error {
	n := len(m.Positions)
	if m.Normals != nil && len(m.Normals) != n {
		return fmt.Errorf("mesh: %d normals for %d positions", len(m.Normals), n)
	}
	if m.UVs != nil && len(m.UVs) != n {
		return fmt.Errorf("mesh: %d UVs for %d positions", len(m.UVs), n)
	}
	for i, t := range m.Triangles {
		for _, v := range t.V {
			if int64(v) >= int64(n) {
				return fmt.Errorf("mesh: triangle %d uses vertex %d of %d", i, v, n)
			}
		}
	}
	return nil
}

// Error is a mesh that cannot be read: what was being read, where in its
// block, and why. Offset is relative to the block's start.
type Error struct {
	What   string
	Offset int64
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s at %#x: %s", e.What, e.Offset, e.Reason)
}
