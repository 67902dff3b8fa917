package gltf

import (
	"fmt"

	"gcfs/mesh"
)

// ClassScene is the Scene of a class's mesh.glb (SPEC "Meshes as glTF"):
// one mesh and node named name, one material per texture slot, named by
// the slot ("00", "01", … as the slot's PNG), embedding textures[slot]'s
// PNG (or, for Size, sized by its PNGSize; neither: a slot without a
// texture, its material plain white; the other fields are set here),
// triangles mapped to their slot's material (an untextured triangle, Tex
// NoTexture, gets the writer's grey). The tree and mkdisc both make a
// class's glb with it, so that they agree byte for byte.
func ClassScene(name string, m *mesh.Mesh, textures []Material) *Scene {
	mats := make([]Material, len(textures))
	index := make(map[int32]int, len(textures))
	for k, t := range textures {
		mats[k] = Material{Name: fmt.Sprintf("%02d", k), BaseColor: [4]float32{1, 1, 1, 1}, PNG: t.PNG, PNGSize: t.PNGSize}
		index[int32(k)] = k
	}
	return Single(name, m, mats, index)
}

// PNGTextures is the textures argument of ClassScene for slots of the PNGs
// pngs (nil: a slot without a texture).
func PNGTextures(pngs [][]byte) []Material {
	t := make([]Material, len(pngs))
	for k, p := range pngs {
		t[k].PNG = p
	}
	return t
}

// ClassGLB decodes a class block (mesh.ReadClass) and encodes its glb with
// ClassScene; it returns the glb and the mesh (for its counts).
func ClassGLB(kind string, lod mesh.LOD, name string, block []byte, pngs [][]byte) ([]byte, *mesh.Mesh, error) {
	m, err := mesh.ReadClass(kind, lod, block, len(pngs))
	if err != nil {
		return nil, nil, err
	}
	b, err := Encode(ClassScene(name, m, PNGTextures(pngs)))
	if err != nil {
		return nil, nil, err
	}
	return b, m, nil
}

// ClassMeshName is the name of a class's mesh in its glb: kind and o_class
// ("moby_0500"), and "_low" for a moby's low LOD.
func ClassMeshName(kind string, oclass int32, lod mesh.LOD) string {
	n := fmt.Sprintf("%s_%04d", kind, oclass)
	if kind == "moby" && lod == mesh.Low {
		n += "_low"
	}
	return n
}
