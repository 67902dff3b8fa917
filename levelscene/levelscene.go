// Package levelscene assembles a whole level as one glTF scene (SPEC "The
// tree, third edition", the whole level as one scene): the tfrags of the
// core and of every chunk, one mesh per class that instances use, one node
// per tie, shrub and moby instance placed by its matrix or
// position/rotation/scale (LEVEL-CORE §2.8), named moby_<o_class>_<uid>,
// tie_<o_class>_<uid>, shrub_<o_class>_<index>, and the collision (core and
// chunks) as a hidden node tree. It is FUSE-free: callers hand it decoded
// bytes (the tree's level.glb view, mkdisc's manifest), package gltf encodes
// the Scene.
//
// A class whose mesh cannot be read (no class in the core, no block, a
// reader's error, no triangles) is left out with its instances and named
// in Result.LeftOut; no node references a missing mesh, and the node count
// is bounded by the records (one a record, one a static block, one a sky
// shell (at most 8), six group nodes). The sky is every shell of the sky
// block, under a node "sky". Materials are one per texture the meshes
// reference, named by table and index. Where the caller gives textures
// (Input.Texture), each embeds its PNG, found by the path of the tree's PNG
// view below the level core (TexturePath: the tree and mkdisc resolve the
// same names); a texture that cannot be had leaves its material a plain
// colour, named in Result.LeftOut. Collision materials are colours only.
package levelscene

import (
	"fmt"
	"hash/fnv"
	"math"
	"sort"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/mesh"
)

// sceneBuilder assembles a level's Scene.
type sceneBuilder struct {
	s         gltf.Scene
	materials map[string]int
	leftOut   []string
	texture   func(path string, mat *gltf.Material) error
}

// A texRef is a material a mesh's texture reference names: its name (by
// table and index), the core-relative path of its PNG ("" for none: a
// collision type, a slot past the class's table) and the alpha mode the
// mesh's own glb gives it.
type texRef struct {
	name, path, alpha string
}

// TexturePath is the path, relative to a level core's directory
// (data.d/core/), of the PNG view of a class's texture slot: the tree's
// mobies|ties|shrubs/OOOO/SS.png.
func TexturePath(kind levelcore.ClassKind, oclass int32, slot int) string {
	return fmt.Sprintf("%s/%02d.png", classDir(kind, oclass), slot)
}

// ClassBlockPath is the path, relative to a level core's directory, of a
// class's block: mobies|ties|shrubs/OOOO/class.
func ClassBlockPath(kind levelcore.ClassKind, oclass int32) string {
	return classDir(kind, oclass) + "/class"
}

func classDir(kind levelcore.ClassKind, oclass int32) string {
	dir := map[levelcore.ClassKind]string{levelcore.Moby: "mobies", levelcore.Tie: "ties", levelcore.Shrub: "shrubs"}[kind]
	return fmt.Sprintf("%s/%04d", dir, oclass)
}

// TfragTexturePath and SkyTexturePath are the paths, relative to a level
// core's directory, of the PNG views of tfrag texture i and sky texture i.
func TfragTexturePath(i int32) string { return fmt.Sprintf("textures/tfrag/%03d.png", i) }

// SkyTexturePath: see TfragTexturePath.
func SkyTexturePath(i int32) string { return fmt.Sprintf("sky.d/textures/%02d.png", i) }

func (sb *sceneBuilder) material(r texRef) int {
	if i, ok := sb.materials[r.name]; ok {
		return i
	}
	h := fnv.New32a()
	h.Write([]byte(r.name))
	v := h.Sum32()
	c := func(k uint) float32 { return 0.25 + 0.75*float32((v>>k)&0xff)/255 }
	m := gltf.Material{Name: r.name, BaseColor: [4]float32{c(0), c(8), c(16), 1}}
	if r.path != "" && sb.texture != nil {
		t := gltf.Material{Name: r.name, BaseColor: [4]float32{1, 1, 1, 1}, AlphaMode: r.alpha}
		if err := sb.texture(r.path, &t); err != nil {
			sb.leftOut = append(sb.leftOut, fmt.Sprintf("texture %s (%s): %v", r.name, r.path, err))
		} else {
			m = t
		}
	}
	sb.s.Materials = append(sb.s.Materials, m)
	sb.materials[r.name] = len(sb.s.Materials) - 1
	return len(sb.s.Materials) - 1
}

// addMesh adds m as a Scene mesh whose triangles' Tex name their material
// through texName; -1 when it has no triangles.
func (sb *sceneBuilder) addMesh(name string, m *mesh.Mesh, texName func(tex int32) texRef) int {
	if m == nil || len(m.Triangles) == 0 {
		return -1
	}
	mat := map[int32]int{}
	for _, t := range m.Triangles {
		if _, ok := mat[t.Tex]; !ok && t.Tex != mesh.NoTexture {
			mat[t.Tex] = sb.material(texName(t.Tex))
		}
	}
	sb.s.Meshes = append(sb.s.Meshes, gltf.Mesh{Name: name, Geometry: m, Material: mat})
	return len(sb.s.Meshes) - 1
}

func (sb *sceneBuilder) node(n gltf.Node) int {
	sb.s.Nodes = append(sb.s.Nodes, n)
	return len(sb.s.Nodes) - 1
}

// mobyMatrix is T(position) · S(scale) · Rz · Ry · Rx (LEVEL-CORE §2.8),
// column-major.
func mobyMatrix(p, r [3]float32, s float32) [16]float32 {
	cx, sx := math.Cos(float64(r[0])), math.Sin(float64(r[0]))
	cy, sy := math.Cos(float64(r[1])), math.Sin(float64(r[1]))
	cz, sz := math.Cos(float64(r[2])), math.Sin(float64(r[2]))
	// R = Rz·Ry·Rx, rows
	R := [3][3]float64{
		{cz * cy, cz*sy*sx - sz*cx, cz*sy*cx + sz*sx},
		{sz * cy, sz*sy*sx + cz*cx, sz*sy*cx - cz*sx},
		{-sy, cy * sx, cy * cx},
	}
	var m [16]float32
	for c := 0; c < 3; c++ {
		for row := 0; row < 3; row++ {
			m[4*c+row] = float32(R[row][c] * float64(s))
		}
	}
	m[12], m[13], m[14], m[15] = p[0], p[1], p[2], 1
	return m
}

// placed is an instance matrix as stored, with the file's 0.01 in the last
// element made 1 (LEVEL-CORE §2.8).
func placed(m [16]float32) [16]float32 {
	m[3], m[7], m[11], m[15] = 0, 0, 0, 1
	return m
}

func finite(m [16]float32) bool {
	for _, v := range m {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return false
		}
	}
	return true
}

// Input is what a level's scene is made of: its decoded gameplay, its core
// (the reading of core_index) and decoded core_data, and each chunk's
// decoded tfrags and collision streams (nil where the level has none).
type Input struct {
	Gameplay []byte
	Core     *levelcore.Core
	CoreData []byte
	Chunks   [][2][]byte
	// Texture, when set, gives a material the PNG at path below the level
	// core's directory (textures/tfrag/NNN.png, sky.d/textures/NN.png,
	// TexturePath): its bytes, or where the glb is only sized, its length
	// (PNGSize). An error leaves that material a plain colour.
	Texture func(path string, mat *gltf.Material) error
	// Block, when set, gives the bytes of a block of the core (its name:
	// tfrags, collision, sky) or of a class (ClassBlockPath), by its path
	// below the level core's directory, where they are not its slice of
	// CoreData (an overlay's edit of that block): ok false leaves the
	// slice. An error leaves the block out, named.
	Block func(path string) (b []byte, ok bool, err error)
	// Mesh, when set, stands between Build and the mesh readers: it gives
	// the mesh read makes of a block, named by its path below the level
	// core's directory (a class's ClassBlockPath, read at its high LOD;
	// the core's "tfrags" and "collision") and its place in CoreData (at),
	// or of a chunk's stream (ChunkStreamPath; at nil), where a caller
	// that keeps the meshes its views read has it already (the same
	// bytes, read the same way).
	Mesh func(path string, at *levelcore.Block, read func() (*mesh.Mesh, error)) (*mesh.Mesh, error)
}

// ChunkStreamPath names chunk k's stream name ("tfrags", "collision") to
// Input.Mesh.
func ChunkStreamPath(k int, name string) string { return fmt.Sprintf("chunk%d/%s", k, name) }

// Result is the scene and what it leaves out.
type Result struct {
	Scene *gltf.Scene
	// LeftOut names each class whose instances are left out (and why), and
	// each tfrag or collision block that does not read, and a sky that does not.
	LeftOut []string
	// InstancesLeftOut counts the instances of those classes (and any whose
	// transform is not finite).
	InstancesLeftOut int
}

// Build assembles a level's scene. Only a gameplay shorter than its header
// is an error; everything else that does not read is left out and named.
func Build(in Input) (*Result, error) {
	g, err := gameplay.ReadInstances(in.Gameplay) // (the scene places instances: no document)
	if err != nil {
		return nil, err
	}
	core, data := in.Core, in.CoreData
	if core == nil {
		core = &levelcore.Core{}
	}
	block := func(path string, bl levelcore.Block) ([]byte, error) {
		if in.Block != nil {
			if b, ok, err := in.Block(path); ok || err != nil {
				return b, err
			}
		}
		if bl.Offset < 0 || bl.Size < 0 || bl.Offset > int64(len(data)) || bl.Size > int64(len(data))-bl.Offset {
			return nil, fmt.Errorf("block %#x+%#x outside core_data's %d bytes", bl.Offset, bl.Size, len(data))
		}
		return data[bl.Offset : bl.Offset+bl.Size], nil
	}
	sb := &sceneBuilder{materials: map[string]int{}, texture: in.Texture}
	var roots []int
	// tfrags and collision: the core's blocks, then each chunk's streams
	var tfragNodes, collNodes []int
	readMesh := func(path string, at *levelcore.Block, read func() (*mesh.Mesh, error)) (*mesh.Mesh, error) {
		if in.Mesh != nil {
			return in.Mesh(path, at, read)
		}
		return read()
	}
	addStatic := func(what, name, path string, at *levelcore.Block, b []byte, coll bool) {
		m, err := readMesh(path, at, func() (*mesh.Mesh, error) {
			if coll {
				m, _, err := mesh.ReadCollision(b)
				return m, err
			}
			m, _, err := mesh.ReadTfrags(b)
			return m, err
		})
		if err != nil {
			sb.leftOut = append(sb.leftOut, fmt.Sprintf("%s: %v", what, err))
			return
		}
		texName := func(t int32) texRef {
			return texRef{fmt.Sprintf("tfrag_%03d", t), TfragTexturePath(t), "MASK"}
		}
		if coll {
			texName = func(t int32) texRef { return texRef{name: fmt.Sprintf("col_%02x", t&0xff)} }
		}
		mi := sb.addMesh(name, m, texName)
		if mi < 0 {
			sb.leftOut = append(sb.leftOut, what+": no triangles")
			return
		}
		n := sb.node(gltf.Node{Name: name, Mesh: mi})
		if coll {
			collNodes = append(collNodes, n)
		} else {
			tfragNodes = append(tfragNodes, n)
		}
	}
	for _, bl := range core.Blocks {
		if bl.Name != "tfrags" && bl.Name != "collision" {
			continue
		}
		b, err := block(bl.Name, bl)
		if err != nil {
			sb.leftOut = append(sb.leftOut, "core "+bl.Name+": "+err.Error())
			continue
		}
		addStatic("core "+bl.Name, "core_"+bl.Name, bl.Name, &bl, b, bl.Name == "collision")
	}
	// the sky: every shell a mesh, under one "sky" node (LEVEL-CORE §2.6)
	var skyNodes []int
	for _, bl := range core.Blocks {
		if bl.Name != "sky" {
			continue
		}
		b, err := block(bl.Name, bl)
		if err == nil {
			var shells []mesh.Mesh
			if shells, err = mesh.ReadSky(b); err == nil {
				for i := range shells {
					name := fmt.Sprintf("sky_shell%d", i)
					if mi := sb.addMesh(name, &shells[i], func(t int32) texRef {
						return texRef{fmt.Sprintf("sky_%03d", t), SkyTexturePath(t), "BLEND"}
					}); mi >= 0 {
						skyNodes = append(skyNodes, sb.node(gltf.Node{Name: name, Mesh: mi}))
					}
				}
			}
		}
		if err != nil {
			sb.leftOut = append(sb.leftOut, "sky: "+err.Error())
		}
	}
	for k, ch := range in.Chunks {
		for j, name := range []string{"tfrags", "collision"} {
			if ch[j] == nil {
				continue
			}
			addStatic(fmt.Sprintf("chunk%d %s", k, name), fmt.Sprintf("chunk%d_%s", k, name), ChunkStreamPath(k, name), nil, ch[j], j == 1)
		}
	}
	if len(tfragNodes) > 0 {
		roots = append(roots, sb.node(gltf.Node{Name: "tfrags", Mesh: gltf.NoMesh, Children: tfragNodes}))
	}
	// classes: one mesh each, read the first time an instance needs it
	type classKey struct {
		kind levelcore.ClassKind
		o    int32
	}
	classes := map[classKey]*levelcore.Class{}
	for _, cs := range [][]levelcore.Class{core.Mobies, core.Ties, core.Shrubs} {
		for i := range cs {
			classes[classKey{cs[i].Kind, cs[i].OClass}] = &cs[i]
		}
	}
	meshOf := map[classKey]int{}
	var leftClasses []string
	classMesh := func(kind levelcore.ClassKind, o int32) int {
		k := classKey{kind, o}
		if mi, ok := meshOf[k]; ok {
			return mi
		}
		mi, why := -1, ""
		cl := classes[k]
		switch {
		case cl == nil:
			why = "no such class in the core"
		case cl.Block == nil:
			why = "no class block"
		default:
			path := ClassBlockPath(kind, o)
			b, err := block(path, *cl.Block)
			var m *mesh.Mesh
			if err == nil {
				// as the class's own mesh.glb reads it (the tree's, mkdisc's)
				m, err = readMesh(path, cl.Block, func() (*mesh.Mesh, error) {
					return mesh.ReadClass(string(kind), mesh.High, b, cl.TextureSlots())
				})
			}
			if err != nil {
				why = err.Error()
				break
			}
			texName := func(t int32) texRef {
				for _, s := range cl.Slots {
					if int32(s.Slot) == t {
						return texRef{fmt.Sprintf("%s_%03d", s.Texture.Table, s.TableIndex), TexturePath(kind, o, s.Slot), ""}
					}
				}
				return texRef{name: fmt.Sprintf("%s_%d_slot%d", kind, o, t)}
			}
			mi = sb.addMesh(fmt.Sprintf("%s_%d", kind, o), m, texName) // (ReadClass gives no mesh without triangles)
		}
		if why != "" {
			leftClasses = append(leftClasses, fmt.Sprintf("%s %d: %s", kind, o, why))
		}
		meshOf[k] = mi
		return mi
	}
	group := func(name string, kids []int) {
		if len(kids) > 0 {
			roots = append(roots, sb.node(gltf.Node{Name: name, Mesh: gltf.NoMesh, Children: kids}))
		}
	}
	skipped := 0
	place := func(kind levelcore.ClassKind, o int32, name string, m [16]float32) int {
		mi := classMesh(kind, o)
		if mi < 0 || !finite(m) {
			skipped++
			return -1
		}
		return sb.node(gltf.Node{Name: name, Mesh: mi, Matrix: &m})
	}
	var kids []int
	for _, t := range g.Ties {
		if n := place(levelcore.Tie, t.OClass, fmt.Sprintf("tie_%d_%d", t.OClass, t.UID), placed(t.Matrix)); n >= 0 {
			kids = append(kids, n)
		}
	}
	group("ties", kids)
	kids = nil
	for _, s := range g.Shrubs {
		if n := place(levelcore.Shrub, s.OClass, fmt.Sprintf("shrub_%d_%d", s.OClass, s.Index), placed(s.Matrix)); n >= 0 {
			kids = append(kids, n)
		}
	}
	group("shrubs", kids)
	kids = nil
	for _, m := range g.Mobies {
		if n := place(levelcore.Moby, m.OClass, fmt.Sprintf("moby_%d_%d", m.OClass, m.UID), mobyMatrix(m.Position, m.Rotation, m.Scale)); n >= 0 {
			kids = append(kids, n)
		}
	}
	group("mobies", kids)
	if len(skyNodes) > 0 {
		roots = append(roots, sb.node(gltf.Node{Name: "sky", Mesh: gltf.NoMesh, Children: skyNodes}))
	}
	if len(collNodes) > 0 {
		roots = append(roots, sb.node(gltf.Node{Name: "collision", Mesh: gltf.NoMesh, Children: collNodes, Hidden: true}))
	}
	sb.s.Roots = roots
	sort.Strings(leftClasses)
	return &Result{Scene: &sb.s, LeftOut: append(append([]string(nil), leftClasses...), sb.leftOut...), InstancesLeftOut: skipped}, nil
}
