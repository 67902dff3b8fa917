package fsnode

import (
	"fmt"
	"strconv"

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
	slots := 0
	for _, s := range cl.Slots {
		slots = max(slots, s.Slot+1)
	}
	pngs := make([]*Node, slots)
	for _, s := range cl.Slots {
		pngs[s.Slot] = childNamed(cdir, fmt.Sprintf("%02d.png", s.Slot))
	}
	kind := string(cl.Kind)
	add := func(file string, lod mesh.LOD) {
		name := gltf.ClassMeshName(kind, cl.OClass, lod)
		b.addLazyView(src, file, ViewGLB, func(sizeOnly bool) (encodedView, error) {
			block, err := readWhole(src)
			if err != nil {
				return encodedView{}, err
			}
			if sizeOnly { // the textures' lengths, not their bytes
				sizes := make([]int64, slots)
				for k, n := range pngs {
					if n == nil {
						continue
					}
					if sizes[k], err = pngSize(n, fmt.Sprintf("texture slot %d", k)); err != nil {
						return encodedView{}, err
					}
				}
				size, m, err := gltf.ClassGLBSize(kind, lod, name, block, sizes)
				if err != nil {
					return encodedView{}, err
				}
				return encodedView{size: size, attrs: classMeshAttrs(m)}, nil
			}
			tex := make([][]byte, slots)
			for k, n := range pngs {
				if n == nil {
					continue // a slot whose texture was left out: a plain material
				}
				if tex[k], err = readWhole(n); err != nil {
					return encodedView{}, fmt.Errorf("texture slot %d: %w", k, err)
				}
			}
			glb, m, err := gltf.ClassGLB(kind, lod, name, block, tex)
			if err != nil {
				return encodedView{}, err
			}
			return encodedView{data: glb, attrs: classMeshAttrs(m)}, nil
		})
	}
	add("mesh.glb", mesh.High)
	if cl.Kind == levelcore.Moby {
		add("mesh_low.glb", mesh.Low)
	}
}

func classMeshAttrs(m *mesh.Mesh) []Attr {
	return []Attr{{"vertices", strconv.Itoa(len(m.Positions))}, {"triangles", strconv.Itoa(len(m.Triangles))}}
}
