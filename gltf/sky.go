package gltf

import (
	"fmt"

	"gcfs/mesh"
)

// EncodeSky reads a sky block and writes it as a glb named name: one mesh
// and one node a shell (shell_N, in shell order), one material sky_NN a
// sky texture its triangles use, with png(NN)'s bytes embedded and alpha
// blended (the sky's textures fade); untextured triangles get the writer's
// "untextured" material. It returns the shells read.
func EncodeSky(name string, block []byte, png func(tex int32) ([]byte, error)) ([]byte, []mesh.Mesh, error) {
	s, shells, err := SkyScene(name, block, PNGBytes(png))
	if err != nil {
		return nil, nil, err
	}
	out, err := Encode(s)
	return out, shells, err
}

// SkyScene is a sky block's Scene as EncodeSky writes it, texture filling
// each sky_NN material's PNG (or, for Size, its PNGSize).
func SkyScene(name string, block []byte, texture Texturer) (*Scene, []mesh.Mesh, error) {
	shells, err := mesh.ReadSky(block)
	if err != nil {
		return nil, nil, err
	}
	s := &Scene{}
	mapping := map[int32]int{}
	for i := range shells {
		m := &shells[i]
		for _, tex := range usedTextures(m) {
			if _, ok := mapping[tex]; ok || tex == mesh.NoTexture {
				continue
			}
			mat := Material{Name: fmt.Sprintf("sky_%02d", tex), BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: "BLEND"}
			if err := texture(tex, &mat); err != nil {
				return nil, nil, err
			}
			mapping[tex] = len(s.Materials)
			s.Materials = append(s.Materials, mat)
		}
	}
	for i := range shells {
		s.Meshes = append(s.Meshes, Mesh{Name: fmt.Sprintf("shell_%d", i), Geometry: &shells[i], Material: mapping})
		s.Nodes = append(s.Nodes, Node{Name: fmt.Sprintf("shell_%d", i), Mesh: i})
		s.Roots = append(s.Roots, i)
	}
	if len(s.Nodes) == 0 {
		s.Nodes = []Node{{Name: name, Mesh: NoMesh}} // a sky with no shells: an empty scene
		s.Roots = []int{0}
	}
	return s, shells, nil
}
