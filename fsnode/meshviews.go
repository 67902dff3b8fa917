package fsnode

import (
	"fmt"
	"io"
	"strconv"

	"gcfs/cache"
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
	v = b.addLazyView(src, src.Name+".glb", ViewGLB, func(ec *encodeCtx) (encodedView, error) {
		return encodeMeshView(v, src, kind, core, ec)
	})
	if v != nil && kind == meshTfrags {
		v.vm.lazy.deps = func() []*Node { return tfragPNGs(core) }
	}
}

// tfragPNGs are the level's tfrag texture PNG views (core/textures/tfrag/).
func tfragPNGs(core func() *Node) []*Node {
	if c := core(); c != nil {
		if t := c.Child("textures"); t != nil {
			if tf := t.Child("tfrag"); tf != nil {
				return append([]*Node(nil), tf.Children...)
			}
		}
	}
	return nil
}

func nonNil(ns []*Node) []*Node {
	var out []*Node
	for _, n := range ns {
		if n != nil {
			out = append(out, n)
		}
	}
	return out
}

// readWhole reads a node's bytes (bounded by --max-decoded).
func readWhole(n *Node) ([]byte, error) {
	size, err := wholeSize(n)
	if err != nil {
		return nil, err
	}
	return readWholeInto(n, make([]byte, size)) // bounded above
}

func readWholeInto(n *Node, buf []byte) ([]byte, error) {
	r, err := n.openForModel()
	if err != nil {
		return nil, err
	}
	size := int64(len(buf))
	if got, err := r.ReadAt(buf, 0); int64(got) != size {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%s: %d of %d bytes", n.path, got, size)
		}
		return nil, err
	}
	return buf, nil
}

// readSource is readWhole into a buffer of wholeBufs (sizing every glb
// view reads every mesh's source block whole: a class's, a level's core
// data and chunks): done gives it back, and the bytes must not be used
// after (the encodes that read a source keep nothing of it: a glb's bytes
// and the meshes are their own).
//
// A decoded source none of whose blocks is cached is decoded straight into
// the buffer (decodeSource), and if not sized yet, sized by that decode
// (its size would otherwise cost a scan of the stream, and the read a
// decode after); its blocks are kept in the cache's cold segment for the
// few encodes that read it again (a level's scene reads every chunk and
// its gameplay after their own views). The main LRU kept them for long
// after the listing's sizing had moved on, each in fresh memory, which on
// a small VM costs more than the decode (first-touch page faults: 2-3 ms a
// MB, the decode under 1). Only within the tree's slots for whole streams
// in memory (takeBig, as decodeWhole): concurrent encodes beyond them scan
// and read through the cache.
func readSource(n *Node) (b []byte, done func(), err error) {
	decoded := n.decodeSource() // (nil for all but a decoded stream)
	if n.within != nil {
		// A part of a decoded stream (a class's block in core_data): the
		// stream decoded whole into the cold segment, where the part's
		// read finds it, sized by that decode if it was not (its size
		// would otherwise cost a scan, and the part's read a decode).
		wholeBufs.Put(n.within.decodeSource())
	}
	size, err := wholeSize(n)
	if err != nil {
		wholeBufs.Put(decoded)
		return nil, func() {}, err
	}
	if decoded != nil {
		if int64(len(*decoded)) == size {
			return *decoded, func() { wholeBufs.Put(decoded) }, nil
		}
		wholeBufs.Put(decoded) // (the size step and the decode disagree: the read reports it)
	}
	p := wholeBufs.Get(int(size)) // bounded above
	done = func() { wholeBufs.Put(p) }
	b, err = readWholeInto(n, *p)
	if err != nil {
		done()
		return nil, func() {}, err
	}
	return b, done, nil
}

// decodeSource is decoded source n's bytes, whole, in a buffer of
// wholeBufs the caller gives back, with a copy of its blocks in the cache's
// cold segment (cacheBlocks: for the next encode to read the source, the
// level's scene after a chunk's own views, and the reads of its parts), or
// nil where it reads through the cache instead:
// some of its blocks are cached, it fails (the read reports why), it does
// not fit what the tree holds in memory at once (wholeMax, a quarter of the
// cache, its slots for whole streams: takeBig), or the index is the
// sidecar's and may be wrong. Not sized yet, it is sized by the same
// decode (doScan's hand).
func (n *Node) decodeSource() *[]byte {
	c := n.tree.Cache
	if n.Kind != Decoded || n.within != nil || c == nil || n.Ino == 0 {
		return nil
	}
	if !n.tree.takeBig() {
		return nil
	}
	defer n.tree.releaseBig()
	budget := min(wholeMax, c.MaxBytes()/4, n.tree.opt.MaxDecoded)
	var out *[]byte
	n.scanOnce.Do(func() { n.doScan(budget, nil, &out) })
	if out != nil {
		n.tree.sourceDecodes.Add(1)
		return out
	}
	if n.decErr != nil || n.decSize > budget || n.streamLen() > budget {
		return nil
	}
	ix, err := n.index()
	if err != nil || ix == n.keptIx.Load() || ix.NumBlocks() == 0 {
		return nil
	}
	key := n.cacheKey(n.Ino, ix)
	for j := range ix.NumBlocks() {
		if c.Cached(cache.Key{File: key, Block: j}) {
			return nil
		}
	}
	src, err := n.streamInput()
	if err != nil {
		return nil
	}
	out, blocks := n.decodeAllPooled(ix, src)
	if out == nil {
		return nil
	}
	n.tree.sourceDecodes.Add(1)
	cacheBlocks(c, key, blocks, -1, true)
	return out
}

func encodeMeshView(v, src *Node, kind meshKind, core func() *Node, ec *encodeCtx) (encodedView, error) {
	how, read := parseCollision, func(b []byte) (*mesh.Mesh, error) {
		m, _, err := mesh.ReadCollision(b)
		return m, err
	}
	if kind == meshTfrags {
		how, read = parseTfrags, func(b []byte) (*mesh.Mesh, error) {
			m, _, err := mesh.ReadTfrags(b)
			return m, err
		}
	}
	m, err := ec.mesh(src, how, read)
	if err != nil {
		return encodedView{}, err
	}
	var s *gltf.Scene
	if kind == meshTfrags {
		s, err = gltf.TfragMeshScene(src.Name, m, func(tex int32, mat *gltf.Material) error {
			png, err := tfragPNG(core, tex)
			if err != nil {
				return err
			}
			if err := ec.png(mat, png); err != nil {
				return fmt.Errorf("tfrag texture %d: %w", tex, err)
			}
			return nil
		})
	} else {
		s = gltf.CollisionMeshScene(src.Name, m)
	}
	if err != nil {
		return encodedView{}, err
	}
	return sceneView(s, ec.sizeOnly, meshAttrs(m))
}

// meshAttrs is a one-mesh glb's attributes: its vertex and triangle counts.
func meshAttrs(m *mesh.Mesh) []Attr {
	return []Attr{{"vertices", strconv.Itoa(len(m.Positions))}, {"triangles", strconv.Itoa(len(m.Triangles))}}
}

// sceneView is a glb view's encode of scene s: its bytes, or for a
// size-only encode its length from the plan (gltf.Size), with attrs.
func sceneView(s *gltf.Scene, sizeOnly bool, attrs []Attr) (encodedView, error) {
	e := encodedView{attrs: attrs}
	var err error
	if sizeOnly {
		e.size, err = gltf.Size(s)
	} else {
		e.data, err = gltf.Encode(s)
	}
	if err != nil {
		return encodedView{}, err
	}
	return e, nil
}

// embedPNG gives a glb's material the PNG view png: its bytes (readWhole),
// or for a size-only encode its size alone, with the checks readWhole makes
// before it reads.
func embedPNG(mat *gltf.Material, png *Node, sizeOnly bool) (err error) {
	if sizeOnly {
		mat.PNGSize, err = wholeSize(png)
	} else {
		mat.PNG, err = readWhole(png)
	}
	return err
}

// wholeSize is the size readWhole would read, and its errors before the
// read.
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
