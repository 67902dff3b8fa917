package fsnode

import (
	"fmt"

	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/mesh"
)

// Class meshes as glTF (SPEC "Meshes as glTF"): beside a class directory's
// class block, mesh.glb (mobies: the high LOD) and, for mobies,
// mesh_low.glb: lazily sized views whose encode reads the block, decodes it
// with package mesh and writes it with gltf.ClassScene, one material per
// texture slot embedding the bytes of the slot's PNG view. A block that does
// not decode has no glb: the lazy view mechanism gives its view_error and
// the log line.

// classMeshViews adds the glb views of class directory cdir.
func (b *builder) classMeshViews(cdir *Node, cl *levelcore.Class) {
	src := childNamed(cdir, "class")
	if src == nil || b.t.opt.NoViews {
		return
	}
	slots := cl.TextureSlots()
	pngs := make([]*Node, slots)
	for _, s := range cl.Slots {
		pngs[s.Slot] = childNamed(cdir, fmt.Sprintf("%02d.png", s.Slot))
	}
	kind := string(cl.Kind)
	add := func(file string, lod mesh.LOD) {
		name := gltf.ClassMeshName(kind, cl.OClass, lod)
		v := b.addLazyView(src, file, ViewGLB, func(ec *encodeCtx) (encodedView, error) {
			// the textures before the mesh is read: where both fail, the
			// texture's error is the one given, whichever the encode
			tex := make([]gltf.Material, slots)
			for k, n := range pngs {
				if n == nil {
					continue // a slot whose texture was left out: a plain material
				}
				if err := ec.png(&tex[k], n); err != nil {
					return encodedView{}, fmt.Errorf("texture slot %d: %w", k, err)
				}
			}
			how := parseClassHigh
			if lod == mesh.Low {
				how = parseClassLow
			}
			m, err := ec.mesh(src, how, func(block []byte) (*mesh.Mesh, error) { return mesh.ReadClass(kind, lod, block, slots) })
			if err != nil {
				return encodedView{}, err
			}
			return sceneView(gltf.ClassScene(name, m, tex), ec.sizeOnly, meshAttrs(m))
		})
		if v != nil {
			v.vm.lazy.deps = func() []*Node { return nonNil(pngs) }
		}
	}
	add("mesh.glb", mesh.High)
	if cl.Kind == levelcore.Moby {
		add("mesh_low.glb", mesh.Low)
	}
}
