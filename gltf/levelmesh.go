package gltf

import (
	"fmt"
	"math"
	"sort"

	"gcfs/mesh"
)

// The level core's mesh views as scenes: what fsnode serves as tfrags.glb
// and collision.glb, and what mkdisc plans for them (one function, so that
// the two agree by construction; the geometry is tested against the
// generator's own in fsnode and package mesh).

// EncodeTfrags reads a tfrags block and writes it as a glb named name, one
// material tex_NNN per tfrag texture its triangles use with png(NNN)'s
// bytes embedded (png fails for a texture past the level's table: then no
// glb).
func EncodeTfrags(name string, block []byte, png func(tex int32) ([]byte, error)) ([]byte, *mesh.Mesh, error) {
	s, m, err := TfragScene(name, block, PNGBytes(png))
	if err != nil {
		return nil, nil, err
	}
	out, err := Encode(s)
	return out, m, err
}

// TfragScene is a tfrags block's Scene as EncodeTfrags writes it, texture
// filling each tex_NNN material's PNG (or, for Size, its PNGSize).
func TfragScene(name string, block []byte, texture Texturer) (*Scene, *mesh.Mesh, error) {
	m, _, err := mesh.ReadTfrags(block)
	if err != nil {
		return nil, nil, err
	}
	s, err := TfragMeshScene(name, m, texture)
	if err != nil {
		return nil, nil, err
	}
	return s, m, nil
}

// TfragMeshScene is TfragScene of tfrags already read (mesh.ReadTfrags).
func TfragMeshScene(name string, m *mesh.Mesh, texture Texturer) (*Scene, error) {
	mats := []Material{}
	mapping := map[int32]int{}
	for _, tex := range usedTextures(m) {
		if tex == mesh.NoTexture {
			continue
		}
		mat := Material{Name: fmt.Sprintf("tex_%03d", tex), BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: "MASK"}
		if err := texture(tex, &mat); err != nil {
			return nil, err
		}
		mapping[tex] = len(mats)
		mats = append(mats, mat)
	}
	return Single(name, m, mats, mapping), nil
}

// EncodeCollision reads a collision block and writes it as a glb named
// name, one material col_XX a collision type, each of its own colour.
func EncodeCollision(name string, block []byte) ([]byte, *mesh.Mesh, error) {
	s, m, err := CollisionScene(name, block)
	if err != nil {
		return nil, nil, err
	}
	out, err := Encode(s)
	return out, m, err
}

// CollisionScene is a collision block's Scene as EncodeCollision writes it.
func CollisionScene(name string, block []byte) (*Scene, *mesh.Mesh, error) {
	m, _, err := mesh.ReadCollision(block)
	if err != nil {
		return nil, nil, err
	}
	return CollisionMeshScene(name, m), m, nil
}

// CollisionMeshScene is CollisionScene of a collision mesh already read
// (mesh.ReadCollision).
func CollisionMeshScene(name string, m *mesh.Mesh) *Scene {
	mats := []Material{}
	mapping := map[int32]int{}
	for _, tex := range usedTextures(m) {
		mapping[tex] = len(mats)
		mats = append(mats, Material{Name: fmt.Sprintf("col_%02x", tex), BaseColor: CollisionColour(tex)})
	}
	return Single(name, m, mats, mapping)
}

// usedTextures is the distinct Tex values of m's triangles, ascending.
func usedTextures(m *mesh.Mesh) []int32 {
	seen := map[int32]bool{}
	for _, t := range m.Triangles {
		seen[t.Tex] = true
	}
	out := make([]int32, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// CollisionColour is a colour of its own for each collision type 0–255:
// hues spaced by the golden ratio (no two types alike), saturation and
// value fixed.
func CollisionColour(t int32) [4]float32 {
	h := math.Mod(float64(t)*0.6180339887498949, 1) * 6
	s, v := 0.65, 0.9
	i := int(h)
	f := h - float64(i)
	p, q, u := v*(1-s), v*(1-s*f), v*(1-s*(1-f))
	var r, g, b float64
	switch i {
	case 0:
		r, g, b = v, u, p
	case 1:
		r, g, b = q, v, p
	case 2:
		r, g, b = p, v, u
	case 3:
		r, g, b = p, q, v
	case 4:
		r, g, b = u, p, v
	default:
		r, g, b = v, p, q
	}
	return [4]float32{float32(r), float32(g), float32(b), 1}
}
