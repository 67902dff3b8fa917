package fsnode

import (
	"fmt"
	"io"
	"strconv"

	"gcfs/discimg"
	"gcfs/gltf"
	"gcfs/mesh"
)

// Mesh views (SPEC "Meshes as glTF"): tfrags.glb and collision.glb beside
// the level core's tfrags and collision blocks (data.d/core/) and beside the
// decoded tfrags and collision streams of every chunk<i>.d/. Each is a
// lazily sized view (lazyview.go): its size is known once it is encoded, at
// its first lookup, and kept (and in the index sidecar). The mesh readers
// are package mesh's, the writer package gltf's; this file composes them.

// ViewGLB is the user.gcfs.view of a binary glTF view.
const ViewGLB = "glb"

// meshKind is what a mesh view reads its source as.
type meshKind int

const (
	meshTfrags meshKind = iota
	meshCollision
)

// coreMeshViews adds tfrags.glb and collision.glb beside the core's blocks;
// tfrag textures are the PNG views under core/textures/tfrag/.
func (b *builder) coreMeshViews(core *Node) {
	for _, c := range append([]*Node(nil), core.Children...) {
		switch c.Name {
		case "tfrags":
			b.meshView(c, meshTfrags, func() *Node { return core })
		case "collision":
			b.meshView(c, meshCollision, nil)
		}
	}
}

// chunkMeshViews adds tfrags.glb and collision.glb beside the decoded
// streams of every chunk lump's chunk<i>.d/; their tfrag textures are the
// level's (data.d/core/ of the same container).
func (b *builder) chunkMeshViews() {
	dirs := nodesWhere(b.t.Root, partsDir(discimg.PartsChunk))
	for _, d := range dirs {
		level := d.Parent
		core := func() *Node {
			for _, c := range level.Children {
				if c.Kind == Dir && c.parts != nil && c.parts.Layout == discimg.PartsDataLump {
					return childNamed(c, "core")
				}
			}
			return nil
		}
		for _, c := range append([]*Node(nil), d.Children...) {
			if c.Kind != Decoded {
				continue
			}
			switch c.Name {
			case "tfrags":
				b.meshView(c, meshTfrags, core)
			case "collision":
				b.meshView(c, meshCollision, nil)
			}
		}
	}
}

// meshView adds NAME.glb beside src; core, for tfrags, finds the level core
// directory whose textures/tfrag/ the tfrags' textures are.
func (b *builder) meshView(src *Node, kind meshKind, core func() *Node) {
	var v *Node
	v = b.addLazyView(src, src.Name+".glb", ViewGLB, func(sizeOnly bool) (encodedView, error) {
		return encodeMeshView(v, src, kind, core, sizeOnly)
	})
}

// readWhole reads a node's bytes (bounded by --max-decoded).
func readWhole(n *Node) ([]byte, error) {
	size, err := wholeSize(n)
	if err != nil {
		return nil, err
	}
	r, err := n.Open()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size) // bounded above
	if got, err := r.ReadAt(buf, 0); int64(got) != size {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%s: %d of %d bytes", n.path, got, size)
		}
		return nil, err
	}
	return buf, nil
}

func encodeMeshView(v, src *Node, kind meshKind, core func() *Node, sizeOnly bool) (encodedView, error) {
	block, err := readWhole(src)
	if err != nil {
		return encodedView{}, err
	}
	var e encodedView
	var m *mesh.Mesh
	switch {
	case kind == meshTfrags && sizeOnly:
		e.size, m, err = gltf.SizeTfrags(src.Name, block, func(tex int32) (int64, error) {
			png, err := tfragPNG(core, tex)
			if err != nil {
				return 0, err
			}
			return pngSize(png, fmt.Sprintf("tfrag texture %d", tex))
		})
	case kind == meshTfrags:
		e.data, m, err = gltf.EncodeTfrags(src.Name, block, func(tex int32) ([]byte, error) {
			png, err := tfragPNG(core, tex)
			if err != nil {
				return nil, err
			}
			data, err := readWhole(png)
			if err != nil {
				return nil, fmt.Errorf("tfrag texture %d: %w", tex, err)
			}
			return data, nil
		})
	case sizeOnly:
		e.size, m, err = gltf.SizeCollision(src.Name, block)
	default:
		e.data, m, err = gltf.EncodeCollision(src.Name, block)
	}
	if err != nil {
		return encodedView{}, err
	}
	e.attrs = []Attr{
		{"vertices", strconv.Itoa(len(m.Positions))},
		{"triangles", strconv.Itoa(len(m.Triangles))},
	}
	return e, nil
}

// wholeSize is the size readWhole would read, and its errors before the
// read: what a size-only encode takes of a texture it would embed.
func wholeSize(n *Node) (int64, error) {
	size := n.Size()
	if err := n.Err(); err != nil {
		return 0, err
	}
	if size > n.tree.opt.MaxDecoded {
		return 0, fmt.Errorf("%s: %d bytes, more than --max-decoded (%d)", n.path, size, n.tree.opt.MaxDecoded)
	}
	return size, nil
}

// pngSize is wholeSize of a texture's PNG view, what naming it in an error
// (as the full encode names a texture it could not read).
func pngSize(png *Node, what string) (int64, error) {
	size, err := wholeSize(png)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	return size, nil
}

// tfragPNG is the level's tfrag texture tex's PNG view
// (core/textures/tfrag/NNN.png).
func tfragPNG(core func() *Node, tex int32) (*Node, error) {
	var table *Node
	if c := core(); c != nil {
		if t := c.Child("textures"); t != nil {
			table = t.Child("tfrag")
		}
	}
	var png *Node
	if table != nil && tex >= 0 {
		png = table.Child(fmt.Sprintf("%03d.png", tex))
	}
	if png == nil {
		n := 0
		if table != nil {
			n = len(table.Children)
		}
		return nil, fmt.Errorf("tfrag texture %d is past the level's tfrag texture table (%d entries)", tex, n)
	}
	return png, nil
}
