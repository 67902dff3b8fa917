// Package gltf writes a Scene of meshes (package mesh's, in the game's
// coordinates) as binary glTF 2.0 (glb): a JSON chunk and a BIN chunk, as the
// Khronos specification lays them out. It is hand-written (no Go glTF module
// is served here) and small: it writes what gcfs's views need and nothing
// else.
//
// What it writes:
//   - one glTF mesh per Scene mesh that has triangles, one primitive per
//     texture reference its triangles use (in ascending order), each with its
//     material; POSITION (with the min and max the specification requires),
//     NORMAL and TEXCOORD_0 when the mesh has them, shared by the mesh's
//     primitives; indices as unsigned shorts when the vertices allow it,
//     else unsigned ints;
//   - materials double-sided (the GS does not cull: the game's winding is not
//     reliable), metallic 0, roughness 1, the base colour given, and the PNG
//     given embedded as an image in the BIN chunk and used as the base colour
//     texture. A primitive whose mesh has no UVs cannot sample a texture; it
//     gets an untextured copy of its material (same name and colour);
//   - nodes with names, meshes, matrices and children; one scene of the root
//     nodes. A hidden node tree (Node.Hidden, for the level scene's
//     collision) is marked with KHR_node_visibility {"visible": false}
//     (listed in extensionsUsed, not extensionsRequired: a reader that does
//     not know it shows the tree, one that does, Blender's importer among
//     them, hides it) and extras {"hidden": true}.
//
// Coordinates: the game is Z-up, glTF Y-up; a position or normal (x, y, z) is
// written (x, z, −y), in the game's units, and a node's matrix M (given in
// game coordinates) as C·M·C⁻¹ with C that change of basis, so that a
// hierarchy placed in game coordinates lands where its meshes do.
//
// Output is deterministic: the same Scene gives the same bytes. Size gives
// the exact glb length without writing the BIN chunk (it walks the meshes
// once for the POSITION bounds and the primitive groups). Encode's memory is
// the output plus the per-mesh grouping of triangles: bounded by its input.
package gltf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

	"gcfs/bufpool"
	"gcfs/mesh"
)

// Scene is what a glb holds.
type Scene struct {
	Meshes    []Mesh
	Materials []Material
	Nodes     []Node
	Roots     []int // indices into Nodes: the scene's top-level nodes
}

// Mesh is one mesh and how its triangles' texture references map to the
// Scene's materials.
type Mesh struct {
	Name     string
	Geometry *mesh.Mesh
	// Material maps a triangle's Tex to an index into Scene.Materials.
	// Triangles whose Tex it does not map get the writer's own grey,
	// double-sided material "untextured".
	Material map[int32]int
}

// Material is one material: a name, a base colour (linear RGBA in [0, 1]),
// and optionally the PNG bytes of its base colour texture.
type Material struct {
	Name      string
	BaseColor [4]float32
	PNG       []byte
	// PNGSize stands for PNG's length where PNG is nil: enough for Size,
	// which never reads the bytes, so that a glb is sized without reading
	// its textures. Encode refuses it.
	PNGSize int64
	// AlphaMode is glTF's: "" (OPAQUE), "MASK" or "BLEND".
	AlphaMode string
}

// Node is one node: a name, a mesh (an index into Scene.Meshes, or NoMesh),
// a transform in game coordinates, and children (indices into Scene.Nodes).
type Node struct {
	Name     string
	Mesh     int
	Matrix   *[16]float32 // column-major, as glTF's; nil: identity
	Children []int
	// Hidden marks the node, and so the tree under it, hidden (see the
	// package comment).
	Hidden bool
}

// NoMesh is a Node.Mesh for a node without one.
const NoMesh = -1

// Single is a Scene of one mesh in one node named name, with materials.
func Single(name string, m *mesh.Mesh, materials []Material, material map[int32]int) *Scene {
	return &Scene{
		Meshes:    []Mesh{{Name: name, Geometry: m, Material: material}},
		Materials: materials,
		Nodes:     []Node{{Name: name, Mesh: 0}},
		Roots:     []int{0},
	}
}

// maxGLB is the largest glb the format can say (its length is a uint32).
const maxGLB = math.MaxUint32

const (
	glbMagic  = 0x46546C67 // "glTF"
	chunkJSON = 0x4E4F534A // "JSON"
	chunkBIN  = 0x004E4942 // "BIN\0"

	targetArray   = 34962
	targetElement = 34963

	compFloat  = 5126
	compUShort = 5123
	compUInt   = 5125

	modeTriangles = 4
)

// Size is the exact length of Encode(s), computed without writing the BIN
// chunk.
func Size(s *Scene) (int64, error) {
	p, err := plan(s)
	if err != nil {
		return 0, err
	}
	defer p.release()
	return p.size(), nil
}

// Encode writes s as a glb.
func Encode(s *Scene) ([]byte, error) {
	for i, m := range s.Materials {
		if m.PNG == nil && m.PNGSize != 0 {
			return nil, invalid("material %d (%q): a PNG size without its bytes (only Size takes one)", i, m.Name)
		}
	}
	p, err := plan(s)
	if err != nil {
		return nil, err
	}
	defer p.release()                // (its JSON is copied into out)
	out := make([]byte, 0, p.size()) // ≤ maxGLB, checked by plan
	out = binary.LittleEndian.AppendUint32(out, glbMagic)
	out = binary.LittleEndian.AppendUint32(out, 2)
	out = binary.LittleEndian.AppendUint32(out, uint32(p.size()))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(p.json)))
	out = binary.LittleEndian.AppendUint32(out, chunkJSON)
	out = append(out, p.json...)
	if p.bin > 0 {
		out = binary.LittleEndian.AppendUint32(out, uint32(p.bin))
		out = binary.LittleEndian.AppendUint32(out, chunkBIN)
		start := len(out)
		for _, w := range p.writes {
			for int64(len(out)-start) < w.off {
				out = append(out, 0)
			}
			out = w.write(out)
		}
		for int64(len(out)-start) < p.bin {
			out = append(out, 0)
		}
	}
	if int64(len(out)) != p.size() {
		return nil, fmt.Errorf("gltf: wrote %d bytes, planned %d", len(out), p.size())
	}
	return out, nil
}

// layout is a planned glb: its JSON chunk (padded) and the BIN chunk's
// length and contents, as writes at offsets.
type layout struct {
	json   []byte
	bin    int64
	writes []binWrite
}

// jsonBufs holds the JSON chunks' buffers between plans: Size measures the
// chunk and Encode copies it, and both give its buffer back (release).
// Sizing every glb view of the retail tree wrote 73 MB of JSON a round into
// buffers made for it.
var jsonBufs bufpool.Pool

// release gives the JSON chunk's buffer back; p must not be used after.
func (p *layout) release() {
	b := p.json
	jsonBufs.Put(&b)
	p.json = nil
}

func (p *layout) size() int64 {
	n := 12 + 8 + int64(len(p.json))
	if p.bin > 0 {
		n += 8 + p.bin
	}
	return n
}

type binWrite struct {
	off   int64
	write func([]byte) []byte
}

func pad4(n int64) int64 { return (n + 3) &^ 3 }

// The JSON document, in the field order written.
type (
	docAsset struct {
		Version   string `json:"version"`
		Generator string `json:"generator"`
	}
	docScene struct {
		Nodes []int `json:"nodes,omitempty"`
	}
	docNode struct {
		Name       string          `json:"name,omitempty"`
		Mesh       *int            `json:"mesh,omitempty"`
		Matrix     []float64       `json:"matrix,omitempty"`
		Children   []int           `json:"children,omitempty"`
		Extensions *docNodeExt     `json:"extensions,omitempty"`
		Extras     *docHiddenExtra `json:"extras,omitempty"`
	}
	docNodeExt struct {
		Visibility docVisibility `json:"KHR_node_visibility"`
	}
	docVisibility struct {
		Visible bool `json:"visible"`
	}
	docHiddenExtra struct {
		Hidden bool `json:"hidden"`
	}
	docMesh struct {
		Name       string         `json:"name,omitempty"`
		Primitives []docPrimitive `json:"primitives"`
	}
	docPrimitive struct {
		Attributes docAttributes `json:"attributes"`
		Indices    int           `json:"indices"`
		Material   int           `json:"material"`
		Mode       int           `json:"mode"`
	}
	docAttributes struct {
		Position  int  `json:"POSITION"`
		Normal    *int `json:"NORMAL,omitempty"`
		TexCoord0 *int `json:"TEXCOORD_0,omitempty"`
	}
	docMaterial struct {
		Name        string `json:"name,omitempty"`
		PBR         docPBR `json:"pbrMetallicRoughness"`
		AlphaMode   string `json:"alphaMode,omitempty"`
		DoubleSided bool   `json:"doubleSided"`
	}
	docPBR struct {
		BaseColorFactor  []float64  `json:"baseColorFactor"`
		BaseColorTexture *docTexRef `json:"baseColorTexture,omitempty"`
		MetallicFactor   float64    `json:"metallicFactor"`
		RoughnessFactor  float64    `json:"roughnessFactor"`
	}
	docTexRef struct {
		Index int `json:"index"`
	}
	docTexture struct {
		Sampler int `json:"sampler"`
		Source  int `json:"source"`
	}
	docSampler struct {
		MagFilter int `json:"magFilter"`
		MinFilter int `json:"minFilter"`
	}
	docImage struct {
		BufferView int    `json:"bufferView"`
		MimeType   string `json:"mimeType"`
	}
	docAccessor struct {
		BufferView    int       `json:"bufferView"`
		ComponentType int       `json:"componentType"`
		Count         int       `json:"count"`
		Type          string    `json:"type"`
		Max           []float64 `json:"max,omitempty"`
		Min           []float64 `json:"min,omitempty"`
	}
	docBufferView struct {
		Buffer     int   `json:"buffer"`
		ByteOffset int64 `json:"byteOffset"`
		ByteLength int64 `json:"byteLength"`
		Target     int   `json:"target,omitempty"`
	}
	docBuffer struct {
		ByteLength int64 `json:"byteLength"`
	}
	document struct {
		Asset          docAsset        `json:"asset"`
		ExtensionsUsed []string        `json:"extensionsUsed,omitempty"`
		Scene          int             `json:"scene"`
		Scenes         []docScene      `json:"scenes"`
		Nodes          []docNode       `json:"nodes,omitempty"`
		Meshes         []docMesh       `json:"meshes,omitempty"`
		Materials      []docMaterial   `json:"materials,omitempty"`
		Textures       []docTexture    `json:"textures,omitempty"`
		Samplers       []docSampler    `json:"samplers,omitempty"`
		Images         []docImage      `json:"images,omitempty"`
		Accessors      []docAccessor   `json:"accessors,omitempty"`
		BufferViews    []docBufferView `json:"bufferViews,omitempty"`
		Buffers        []docBuffer     `json:"buffers,omitempty"`
	}
)

// Generator is the asset.generator written.
const Generator = "gcfs"

// planner builds the document and the BIN layout.
type planner struct {
	s   *Scene
	doc document
	p   layout
	// material indices in doc: a Scene material's, its untextured copy's
	// (-1 until made), the writer's "untextured" fallback (-1 until made)
	mat, plain []int
	fallback   int
	texOf      []int // Scene material → doc texture, or -1
}

// ErrInvalid is wrapped by every error about a Scene that cannot be written.
var ErrInvalid = errors.New("gltf: scene cannot be written")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, args...))
}

func plan(s *Scene) (*layout, error) {
	if s == nil {
		return nil, invalid("no scene")
	}
	pl := &planner{s: s, fallback: -1}
	pl.doc.Asset = docAsset{Version: "2.0", Generator: Generator}
	if err := pl.materials(); err != nil {
		return nil, err
	}
	meshIndex := make([]int, len(s.Meshes)) // Scene mesh → doc mesh, or -1 when it has no triangles
	for i := range s.Meshes {
		k, err := pl.mesh(&s.Meshes[i])
		if err != nil {
			return nil, fmt.Errorf("mesh %d (%q): %w", i, s.Meshes[i].Name, err)
		}
		meshIndex[i] = k
	}
	pl.images()
	if err := pl.nodes(meshIndex); err != nil {
		return nil, err
	}
	if pl.p.bin > 0 {
		pl.p.bin = pad4(pl.p.bin) // a chunk's length is a multiple of 4
		pl.doc.Buffers = []docBuffer{{ByteLength: pl.p.bin}}
	}
	d := &pl.doc
	js, err := d.appendJSON((*jsonBufs.Get(512 + 160*(len(d.Nodes)+len(d.Accessors)+len(d.BufferViews)+len(d.Materials))))[:0])
	if err != nil {
		return nil, fmt.Errorf("gltf: JSON: %w", err)
	}
	for len(js)%4 != 0 {
		js = append(js, ' ')
	}
	pl.p.json = js
	if pl.p.size() > maxGLB {
		return nil, invalid("%d bytes, more than a glb can hold", pl.p.size())
	}
	return &pl.p, nil
}

// finite01 checks a colour component.
func finite01(v float32) bool { return v >= 0 && v <= 1 }

func (pl *planner) materials() error {
	s := pl.s
	pl.mat = make([]int, len(s.Materials))
	pl.plain = make([]int, len(s.Materials))
	pl.texOf = make([]int, len(s.Materials))
	for i, m := range s.Materials {
		for _, c := range m.BaseColor {
			if !finite01(c) {
				return invalid("material %d (%q): base colour %v outside [0, 1]", i, m.Name, m.BaseColor)
			}
		}
		switch m.AlphaMode {
		case "", "OPAQUE", "MASK", "BLEND":
		default:
			return invalid("material %d (%q): alpha mode %q", i, m.Name, m.AlphaMode)
		}
		pl.texOf[i] = -1
		pl.plain[i] = -1
		dm := docMaterial{Name: m.Name, PBR: docPBR{BaseColorFactor: color64(m.BaseColor), MetallicFactor: 0, RoughnessFactor: 1},
			DoubleSided: true}
		if m.AlphaMode != "OPAQUE" {
			dm.AlphaMode = m.AlphaMode
		}
		if m.pngLen() < 0 {
			return invalid("material %d (%q): PNG size %d", i, m.Name, m.PNGSize)
		}
		if m.pngLen() > 0 {
			if len(pl.doc.Samplers) == 0 {
				// linear magnification, trilinear minification; wrap
				// modes repeat (the default)
				pl.doc.Samplers = []docSampler{{MagFilter: 9729, MinFilter: 9987}}
			}
			pl.texOf[i] = len(pl.doc.Textures)
			// images are written in the textures' order (images)
			pl.doc.Textures = append(pl.doc.Textures, docTexture{Sampler: 0, Source: pl.texOf[i]})
			dm.PBR.BaseColorTexture = &docTexRef{Index: pl.texOf[i]}
		}
		pl.mat[i] = len(pl.doc.Materials)
		pl.doc.Materials = append(pl.doc.Materials, dm)
	}
	return nil
}

func color64(c [4]float32) []float64 {
	return []float64{float64(c[0]), float64(c[1]), float64(c[2]), float64(c[3])}
}

// A Texturer gives a material the PNG of texture tex: its bytes (PNG), or
// where the glb is only sized, its length (PNGSize). The scene builders
// (TfragScene, SkyScene) take one, so a glb is planned once whichever it
// is to be.
type Texturer func(tex int32, mat *Material) error

// PNGBytes is the Texturer of png's bytes.
func PNGBytes(png func(tex int32) ([]byte, error)) Texturer {
	return func(tex int32, mat *Material) (err error) {
		mat.PNG, err = png(tex)
		return err
	}
}

// pngLen is the length of the material's PNG: its bytes', or PNGSize
// where it has none.
func (m *Material) pngLen() int64 {
	if m.PNG != nil {
		return int64(len(m.PNG))
	}
	return m.PNGSize
}

// images appends the embedded PNGs after the meshes' data, one image and
// buffer view each (textures were numbered in material order, as these).
func (pl *planner) images() {
	for i, m := range pl.s.Materials {
		if pl.texOf[i] < 0 {
			continue
		}
		png := m.PNG
		bv := pl.view(m.pngLen(), 0, func(b []byte) []byte { return append(b, png...) })
		pl.doc.Images = append(pl.doc.Images, docImage{BufferView: bv, MimeType: "image/png"})
	}
}

// view reserves length bytes of BIN at the next 4-byte boundary as a buffer
// view, filled by write.
func (pl *planner) view(length int64, target int, write func([]byte) []byte) int {
	off := pad4(pl.p.bin)
	pl.p.writes = append(pl.p.writes, binWrite{off: off, write: write})
	pl.p.bin = off + length
	pl.doc.BufferViews = append(pl.doc.BufferViews, docBufferView{Buffer: 0, ByteOffset: off, ByteLength: length, Target: target})
	return len(pl.doc.BufferViews) - 1
}

func (pl *planner) accessor(a docAccessor) int {
	pl.doc.Accessors = append(pl.doc.Accessors, a)
	return len(pl.doc.Accessors) - 1
}

// materialFor is the doc material of Scene material k (-1: unmapped) for a
// primitive with or without UVs.
func (pl *planner) materialFor(k int, hasUV bool) int {
	if k < 0 {
		if pl.fallback < 0 {
			pl.fallback = len(pl.doc.Materials)
			pl.doc.Materials = append(pl.doc.Materials, docMaterial{Name: "untextured",
				PBR: docPBR{BaseColorFactor: []float64{0.5, 0.5, 0.5, 1}, MetallicFactor: 0, RoughnessFactor: 1}, DoubleSided: true})
		}
		return pl.fallback
	}
	if hasUV || pl.texOf[k] < 0 {
		return pl.mat[k]
	}
	if pl.plain[k] < 0 {
		dm := pl.doc.Materials[pl.mat[k]]
		pbr := dm.PBR
		pbr.BaseColorTexture = nil
		dm.PBR = pbr
		pl.plain[k] = len(pl.doc.Materials)
		pl.doc.Materials = append(pl.doc.Materials, dm)
	}
	return pl.plain[k]
}

// toGLTF converts a game (Z-up) vector to glTF's Y-up.
func toGLTF(v [3]float32) [3]float32 { return [3]float32{v[0], v[2], -v[1]} }

// finite: not a NaN or an infinity (whose exponent bits are all set), by
// a mask rather than through float64, since sizing a glb tests every
// coordinate of its meshes.
func finite(v float32) bool { return math.Float32bits(v)&0x7f800000 != 0x7f800000 }

// orderKey maps a float32 that is not a NaN to a uint32 in the same
// order, -0 below +0 (as the builtin min and max order them): the sign bit
// set for the positive, every bit flipped for the negative.
func orderKey(v float32) uint32 {
	b := math.Float32bits(v)
	return b ^ (uint32(int32(b)>>31) | 0x80000000)
}

// keyFloat is orderKey's inverse, as a float64.
func keyFloat(k uint32) float64 {
	if k&0x80000000 != 0 {
		return float64(math.Float32frombits(k ^ 0x80000000))
	}
	return float64(math.Float32frombits(^k))
}

// mesh plans one mesh; -1 when it has no triangles (glTF has no empty mesh).
func (pl *planner) mesh(m *Mesh) (int, error) {
	g := m.Geometry
	if g == nil || len(g.Triangles) == 0 {
		return -1, nil
	}
	if err := g.Check(); err != nil {
		return 0, invalid("%v", err)
	}
	for k := range m.Material {
		if v := m.Material[k]; v < 0 || v >= len(pl.s.Materials) {
			return 0, invalid("texture %d maps to material %d of %d", k, v, len(pl.s.Materials))
		}
	}
	n := len(g.Positions)
	if n > math.MaxUint32 {
		return 0, invalid("%d vertices", n)
	}
	// POSITION, with its bounds (exact: the float32 values as float64),
	// kept as order keys: integer comparisons without branches, where the
	// builtin min and max on floats (their NaN handling) made this loop
	// most of a glb's sizing.
	lo0, lo1, lo2 := uint32(math.MaxUint32), uint32(math.MaxUint32), uint32(math.MaxUint32)
	var hi0, hi1, hi2 uint32
	for i, p := range g.Positions {
		if !finite(p[0]) || !finite(p[1]) || !finite(p[2]) {
			return 0, invalid("position %d is %v", i, p)
		}
		q := toGLTF(p)
		k0, k1, k2 := orderKey(q[0]), orderKey(q[1]), orderKey(q[2])
		lo0, lo1, lo2 = min(lo0, k0), min(lo1, k1), min(lo2, k2)
		hi0, hi1, hi2 = max(hi0, k0), max(hi1, k1), max(hi2, k2)
	}
	lo, hi := [3]uint32{lo0, lo1, lo2}, [3]uint32{hi0, hi1, hi2}
	for i, v := range g.UVs {
		if !finite(v[0]) || !finite(v[1]) {
			return 0, invalid("UV %d is %v", i, v)
		}
	}
	pos := g.Positions
	bv := pl.view(int64(n)*12, targetArray, func(b []byte) []byte {
		for _, p := range pos {
			b = appendVec3(b, toGLTF(p))
		}
		return b
	})
	attrs := docAttributes{Position: pl.accessor(docAccessor{BufferView: bv, ComponentType: compFloat, Count: n, Type: "VEC3",
		Max: []float64{keyFloat(hi[0]), keyFloat(hi[1]), keyFloat(hi[2])}, Min: []float64{keyFloat(lo[0]), keyFloat(lo[1]), keyFloat(lo[2])}})}
	if g.Normals != nil {
		nor := g.Normals
		bv := pl.view(int64(n)*12, targetArray, func(b []byte) []byte {
			for _, v := range nor {
				b = appendVec3(b, unit(toGLTF(v)))
			}
			return b
		})
		k := pl.accessor(docAccessor{BufferView: bv, ComponentType: compFloat, Count: n, Type: "VEC3"})
		attrs.Normal = &k
	}
	if g.UVs != nil {
		uv := g.UVs
		bv := pl.view(int64(n)*8, targetArray, func(b []byte) []byte {
			for _, v := range uv {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v[0]))
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v[1]))
			}
			return b
		})
		k := pl.accessor(docAccessor{BufferView: bv, ComponentType: compFloat, Count: n, Type: "VEC2"})
		attrs.TexCoord0 = &k
	}
	// One primitive per texture reference, ascending; its triangles in
	// their order in the mesh.
	// (A mesh's triangles come in runs of one texture: the map is asked at
	// the start of a run only.)
	counts := map[int32]int{}
	run, runTex := 0, int32(0)
	for i, t := range g.Triangles {
		if i > 0 && t.Tex != runTex {
			counts[runTex] += run
			run = 0
		}
		run, runTex = run+1, t.Tex
	}
	counts[runTex] += run
	texs := make([]int32, 0, len(counts))
	for k := range counts {
		texs = append(texs, k)
	}
	slices.Sort(texs)
	comp, width := compUInt, int64(4)
	if n < math.MaxUint16 { // 0xffff is the primitive restart value, not an index
		comp, width = compUShort, 2
	}
	dm := docMesh{Name: m.Name}
	tris := g.Triangles
	for _, tex := range texs {
		c := counts[tex]
		tex := tex
		bv := pl.view(int64(c)*3*width, targetElement, func(b []byte) []byte {
			for _, t := range tris {
				if t.Tex != tex {
					continue
				}
				for _, v := range t.V {
					if width == 2 {
						b = binary.LittleEndian.AppendUint16(b, uint16(v))
					} else {
						b = binary.LittleEndian.AppendUint32(b, v)
					}
				}
			}
			return b
		})
		ix := pl.accessor(docAccessor{BufferView: bv, ComponentType: comp, Count: 3 * c, Type: "SCALAR"})
		k, ok := m.Material[tex]
		if !ok {
			k = -1
		}
		dm.Primitives = append(dm.Primitives, docPrimitive{Attributes: attrs, Indices: ix,
			Material: pl.materialFor(k, g.UVs != nil), Mode: modeTriangles})
	}
	pl.doc.Meshes = append(pl.doc.Meshes, dm)
	return len(pl.doc.Meshes) - 1, nil
}

func appendVec3(b []byte, v [3]float32) []byte {
	for _, c := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c))
	}
	return b
}

// unit normalises a normal; one that cannot be (zero, not finite) is
// written up (glTF +Y): the validator requires unit normals.
func unit(v [3]float32) [3]float32 {
	x, y, z := float64(v[0]), float64(v[1]), float64(v[2])
	l := math.Sqrt(x*x + y*y + z*z)
	if !(l > 1e-12) || math.IsInf(l, 0) {
		return [3]float32{0, 1, 0}
	}
	return [3]float32{float32(x / l), float32(y / l), float32(z / l)}
}

// conjugate converts a game-space column-major matrix to glTF space:
// C·M·C⁻¹, C mapping (x, y, z) to (x, z, −y). The bottom row is written
// (0, 0, 0, 1): node transforms are affine.
func conjugate(m *[16]float32) [16]float64 {
	// C as a permutation with signs: row r of C picks game axis src[r]
	// with sign sgn[r].
	src := [3]int{0, 2, 1}
	sgn := [3]float64{1, 1, -1}
	at := func(r, c int) float64 { return float64(m[c*4+r]) } // column-major
	var out [16]float64
	for r := 0; r < 3; r++ {
		for c := 0; c < 3; c++ {
			// (C M Cᵀ)[r][c] = sgn[r]·sgn[c]·M[src[r]][src[c]]
			out[c*4+r] = sgn[r] * sgn[c] * at(src[r], src[c])
		}
		out[12+r] = sgn[r] * at(src[r], 3)
	}
	out[15] = 1
	return out
}

func (pl *planner) nodes(meshIndex []int) error {
	s := pl.s
	n := len(s.Nodes)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = -1
	}
	for i, nd := range s.Nodes {
		for _, c := range nd.Children {
			if c < 0 || c >= n {
				return invalid("node %d: child %d of %d nodes", i, c, n)
			}
			if parent[c] >= 0 || c == i {
				return invalid("node %d: child %d already has a parent", i, c)
			}
			parent[c] = i
		}
	}
	seenRoot := make([]bool, n)
	for _, r := range s.Roots {
		if r < 0 || r >= n {
			return invalid("root %d of %d nodes", r, n)
		}
		if parent[r] >= 0 || seenRoot[r] {
			return invalid("root %d is a child or a root twice", r)
		}
		seenRoot[r] = true
	}
	// A cycle: a node whose parent chain does not end within n steps.
	for i := range s.Nodes {
		p, steps := parent[i], 0
		for p >= 0 {
			if steps++; steps > n {
				return invalid("node %d is in a cycle", i)
			}
			p = parent[p]
		}
	}
	hidden := false
	for i, nd := range s.Nodes {
		dn := docNode{Name: nd.Name, Children: nd.Children}
		if nd.Mesh != NoMesh {
			if nd.Mesh < 0 || nd.Mesh >= len(meshIndex) {
				return invalid("node %d: mesh %d of %d", i, nd.Mesh, len(meshIndex))
			}
			if k := meshIndex[nd.Mesh]; k >= 0 {
				dn.Mesh = &k
			}
		}
		if nd.Matrix != nil {
			for _, v := range nd.Matrix {
				if !finite(v) {
					return invalid("node %d: matrix %v", i, *nd.Matrix)
				}
			}
			c := conjugate(nd.Matrix)
			if c != identity {
				dn.Matrix = c[:]
			}
		}
		if nd.Hidden {
			hidden = true
			dn.Extensions = &docNodeExt{Visibility: docVisibility{Visible: false}}
			dn.Extras = &docHiddenExtra{Hidden: true}
		}
		pl.doc.Nodes = append(pl.doc.Nodes, dn)
	}
	if hidden {
		pl.doc.ExtensionsUsed = []string{"KHR_node_visibility"}
	}
	pl.doc.Scenes = []docScene{{Nodes: s.Roots}}
	return nil
}

var identity = [16]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}

// IsGLB reports whether b begins with a glb header.
func IsGLB(b []byte) bool {
	return len(b) >= 12 && bytes.Equal(b[:4], []byte("glTF"))
}
