package gltf

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"gcfs/gltf/gltftest"
	"gcfs/mesh"
)

// The tests read the glb back with a reader written here from the glTF 2.0
// specification (not with the writer's own structures).

type readGLB struct {
	doc map[string]any
	bin []byte
}

func parseGLB(t testing.TB, b []byte) readGLB {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 20 || le.Uint32(b) != 0x46546C67 || le.Uint32(b[4:]) != 2 {
		t.Fatalf("not a glb 2 header: % x", b[:min(len(b), 12)])
	}
	if int(le.Uint32(b[8:])) != len(b) {
		t.Fatalf("header length %d, file %d", le.Uint32(b[8:]), len(b))
	}
	jl := int(le.Uint32(b[12:]))
	if le.Uint32(b[16:]) != 0x4E4F534A || jl%4 != 0 || 20+jl > len(b) {
		t.Fatalf("JSON chunk: length %d type %#x", jl, le.Uint32(b[16:]))
	}
	var g readGLB
	if err := json.Unmarshal(b[20:20+jl], &g.doc); err != nil {
		t.Fatalf("JSON chunk: %v", err)
	}
	rest := b[20+jl:]
	if len(rest) > 0 {
		if len(rest) < 8 || le.Uint32(rest[4:]) != 0x004E4942 {
			t.Fatalf("second chunk is not BIN")
		}
		bl := int(le.Uint32(rest))
		if bl%4 != 0 || 8+bl != len(rest) {
			t.Fatalf("BIN chunk length %d of %d bytes", bl, len(rest)-8)
		}
		g.bin = rest[8:]
	}
	return g
}

func (g readGLB) list(name string) []any {
	l, _ := g.doc[name].([]any)
	return l
}

func (g readGLB) obj(name string, i int) map[string]any {
	return g.list(name)[i].(map[string]any)
}

func num(v any) int { return int(v.(float64)) }

// accessorBytes is the bytes of accessor i.
func (g readGLB) accessorBytes(t testing.TB, i int) (map[string]any, []byte) {
	a := g.obj("accessors", i)
	bv := g.obj("bufferViews", num(a["bufferView"]))
	off, n := num(bv["byteOffset"]), num(bv["byteLength"])
	if off%4 != 0 {
		t.Errorf("buffer view at %d: not 4-aligned", off)
	}
	return a, g.bin[off : off+n]
}

func (g readGLB) vec3s(t testing.TB, i int) [][3]float32 {
	a, b := g.accessorBytes(t, i)
	out := make([][3]float32, num(a["count"]))
	for k := range out {
		for c := 0; c < 3; c++ {
			out[k][c] = math.Float32frombits(binary.LittleEndian.Uint32(b[12*k+4*c:]))
		}
	}
	return out
}

func (g readGLB) indices(t testing.TB, i int) []uint32 {
	a, b := g.accessorBytes(t, i)
	out := make([]uint32, num(a["count"]))
	for k := range out {
		switch num(a["componentType"]) {
		case 5123:
			out[k] = uint32(binary.LittleEndian.Uint16(b[2*k:]))
		case 5125:
			out[k] = binary.LittleEndian.Uint32(b[4*k:])
		default:
			t.Fatalf("index component type %v", a["componentType"])
		}
	}
	return out
}

func tinyPNG(t testing.TB, c color.NRGBA) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 2, 2))
	for i := 0; i < 4; i++ {
		img.Set(i%2, i/2, c)
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// box is a unit box in game coordinates: 8 corners, 12 triangles, the
// top (z = 1) with texture 1, the rest texture 0.
func box(x0, y0, z0 float32) *mesh.Mesh {
	m := &mesh.Mesh{}
	for i := 0; i < 8; i++ {
		m.Positions = append(m.Positions, [3]float32{x0 + float32(i&1), y0 + float32(i>>1&1), z0 + float32(i>>2&1)})
		m.UVs = append(m.UVs, [2]float32{float32(i & 1), float32(i >> 1 & 1)})
		m.Normals = append(m.Normals, [3]float32{0, 0, 2}) // not unit: the writer normalises
	}
	quads := [][4]uint32{{0, 1, 3, 2}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 3, 7, 6}, {0, 2, 6, 4}, {1, 3, 7, 5}}
	for q, f := range quads {
		tex := int32(0)
		if q == 1 {
			tex = 1
		}
		m.Triangles = append(m.Triangles, mesh.Triangle{V: [3]uint32{f[0], f[1], f[2]}, Tex: tex}, mesh.Triangle{V: [3]uint32{f[0], f[2], f[3]}, Tex: tex})
	}
	return m
}

func sampleScene(t testing.TB) *Scene {
	noUV := box(5, 0, 0)
	noUV.UVs, noUV.Normals = nil, nil
	big := &mesh.Mesh{}
	for i := 0; i < 70000; i++ { // past unsigned-short indices
		big.Positions = append(big.Positions, [3]float32{float32(i % 300), float32(i / 300), 0.1})
	}
	for i := 0; i+2 < 70000; i += 3 {
		big.Triangles = append(big.Triangles, mesh.Triangle{V: [3]uint32{uint32(i), uint32(i + 1), uint32(i + 2)}, Tex: 7})
	}
	move := [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 10, 20, 30, 1}
	return &Scene{
		Meshes: []Mesh{
			{Name: "box", Geometry: box(0, 0, 0), Material: map[int32]int{0: 0, 1: 1}},
			{Name: "plain", Geometry: noUV, Material: map[int32]int{0: 0, 1: 1}},
			{Name: "empty", Geometry: &mesh.Mesh{}},
			{Name: "big", Geometry: big, Material: map[int32]int{}},
		},
		Materials: []Material{
			{Name: "tex_000", BaseColor: [4]float32{1, 1, 1, 1}, PNG: tinyPNG(t, color.NRGBA{200, 10, 10, 255})},
			{Name: "col_1f", BaseColor: [4]float32{0.2, 0.4, 0.6, 1}, AlphaMode: "BLEND"},
		},
		Nodes: []Node{
			{Name: "level", Mesh: NoMesh, Children: []int{1, 2, 3}},
			{Name: "box", Mesh: 0, Matrix: &move},
			{Name: "empty", Mesh: 2},
			{Name: "big", Mesh: 3},
			{Name: "collision", Mesh: NoMesh, Children: []int{5}, Hidden: true},
			{Name: "plain", Mesh: 1},
		},
		Roots: []int{0, 4},
	}
}

func TestEncodeReadBack(t *testing.T) {
	s := sampleScene(t)
	b, err := Encode(s)
	if err != nil {
		t.Fatal(err)
	}
	size, err := Size(s)
	if err != nil || size != int64(len(b)) {
		t.Fatalf("Size %d (%v), Encode wrote %d", size, err, len(b))
	}
	g := parseGLB(t, b)
	if v := g.doc["asset"].(map[string]any)["version"]; v != "2.0" {
		t.Errorf("asset.version %v", v)
	}
	meshes := g.list("meshes")
	if len(meshes) != 3 {
		t.Fatalf("%d meshes, want 3 (the empty one left out)", len(meshes))
	}
	// box: two primitives (texture 0, then 1), positions converted.
	m0 := g.obj("meshes", 0)
	prims := m0["primitives"].([]any)
	if len(prims) != 2 {
		t.Fatalf("box: %d primitives, want 2", len(prims))
	}
	want := box(0, 0, 0)
	p0 := prims[0].(map[string]any)
	attrs := p0["attributes"].(map[string]any)
	pos := g.vec3s(t, num(attrs["POSITION"]))
	for i, p := range want.Positions {
		if pos[i] != [3]float32{p[0], p[2], -p[1]} {
			t.Fatalf("position %d: %v, want (x, z, -y) of %v", i, pos[i], p)
		}
	}
	pa := g.obj("accessors", num(attrs["POSITION"]))
	if mx := pa["max"].([]any); mx[0].(float64) != 1 || mx[1].(float64) != 1 || mx[2].(float64) != 0 {
		t.Errorf("POSITION max %v", mx)
	}
	if mn := pa["min"].([]any); mn[2].(float64) != -1 {
		t.Errorf("POSITION min %v", mn)
	}
	for _, n := range g.vec3s(t, num(attrs["NORMAL"])) {
		if n != [3]float32{0, 1, 0} {
			t.Fatalf("normal %v: want game +z as glTF +y, unit", n)
		}
	}
	var got [][3]uint32
	for k, pr := range prims {
		ix := g.indices(t, num(pr.(map[string]any)["indices"]))
		for i := 0; i+2 < len(ix); i += 3 {
			got = append(got, [3]uint32{ix[i], ix[i+1], ix[i+2]})
		}
		mat := g.obj("materials", num(pr.(map[string]any)["material"]))
		if mat["doubleSided"] != true {
			t.Errorf("primitive %d: material not double-sided", k)
		}
	}
	var wantTris [][3]uint32
	for _, tex := range []int32{0, 1} {
		for _, tr := range want.Triangles {
			if tr.Tex == tex {
				wantTris = append(wantTris, tr.V)
			}
		}
	}
	if len(got) != len(wantTris) {
		t.Fatalf("%d triangles, want %d", len(got), len(wantTris))
	}
	for i := range got {
		if got[i] != wantTris[i] {
			t.Fatalf("triangle %d: %v, want %v", i, got[i], wantTris[i])
		}
	}
	// The textured material embeds the PNG; the UV-less mesh uses an
	// untextured copy.
	img := g.obj("images", 0)
	bv := g.obj("bufferViews", num(img["bufferView"]))
	if emb := g.bin[num(bv["byteOffset"]) : num(bv["byteOffset"])+num(bv["byteLength"])]; !bytes.Equal(emb, s.Materials[0].PNG) {
		t.Error("embedded image is not the material's PNG")
	}
	plain := g.obj("meshes", 1)["primitives"].([]any)[0].(map[string]any)
	pm := g.obj("materials", num(plain["material"]))
	if pm["name"] != "tex_000" || pm["pbrMetallicRoughness"].(map[string]any)["baseColorTexture"] != nil {
		t.Errorf("UV-less primitive's material %v: want tex_000 without texture", pm)
	}
	// big: unsigned-int indices; unmapped texture: the writer's material.
	bp := g.obj("meshes", 2)["primitives"].([]any)[0].(map[string]any)
	if ct := num(g.obj("accessors", num(bp["indices"]))["componentType"]); ct != 5125 {
		t.Errorf("70000 vertices: index component type %d", ct)
	}
	if n := g.obj("materials", num(bp["material"]))["name"]; n != "untextured" {
		t.Errorf("unmapped texture's material %v", n)
	}
	// Nodes: the move's matrix conjugated, the hidden tree marked, the
	// empty mesh's node without a mesh.
	nb := g.obj("nodes", 1)
	mat := nb["matrix"].([]any)
	if mat[12].(float64) != 10 || mat[13].(float64) != 30 || mat[14].(float64) != -20 {
		t.Errorf("translation (10, 20, 30) written %v %v %v, want 10 30 -20", mat[12], mat[13], mat[14])
	}
	if _, ok := g.obj("nodes", 2)["mesh"]; ok {
		t.Error("node of an empty mesh has a mesh")
	}
	col := g.obj("nodes", 4)
	vis := col["extensions"].(map[string]any)["KHR_node_visibility"].(map[string]any)
	if vis["visible"] != false {
		t.Errorf("hidden node: %v", col)
	}
	if used := g.list("extensionsUsed"); len(used) != 1 || used[0] != "KHR_node_visibility" {
		t.Errorf("extensionsUsed %v", used)
	}
	if g.doc["extensionsRequired"] != nil {
		t.Error("extensionsRequired written")
	}
	// Deterministic.
	b2, _ := Encode(sampleScene(t))
	if !bytes.Equal(b, b2) {
		t.Error("two encodes of the same scene differ")
	}
}

// TestConjugate: a rotation of 90° about the game's z axis (up) is a
// rotation about glTF's y axis; the conjugated matrix maps converted
// points as the original maps game points.
func TestConjugate(t *testing.T) {
	m := [16]float32{0, 1, 0, 0, -1, 0, 0, 0, 0, 0, 2, 0, 3, 4, 5, 1} // rot z 90°, scale z 2, move
	c := conjugate(&m)
	apply := func(col func(r, c int) float64, p [3]float64) [3]float64 {
		var o [3]float64
		for r := 0; r < 3; r++ {
			o[r] = col(r, 3)
			for k := 0; k < 3; k++ {
				o[r] += col(r, k) * p[k]
			}
		}
		return o
	}
	game := func(r, k int) float64 { return float64(m[k*4+r]) }
	gl := func(r, k int) float64 { return c[k*4+r] }
	for _, p := range [][3]float64{{1, 2, 3}, {-1, 0, 7}} {
		q := apply(game, p)
		wantGL := [3]float64{q[0], q[2], -q[1]}
		gotGL := apply(gl, [3]float64{p[0], p[2], -p[1]})
		if gotGL != wantGL {
			t.Errorf("point %v: %v, want %v", p, gotGL, wantGL)
		}
	}
}

func TestEncodeRejects(t *testing.T) {
	nan := float32(math.NaN())
	cases := map[string]*Scene{
		"NaN position": Single("m", &mesh.Mesh{Positions: [][3]float32{{nan, 0, 0}, {0, 0, 0}, {1, 1, 1}},
			Triangles: []mesh.Triangle{{V: [3]uint32{0, 1, 2}}}}, nil, nil),
		"index past vertices": Single("m", &mesh.Mesh{Positions: [][3]float32{{0, 0, 0}}, Triangles: []mesh.Triangle{{V: [3]uint32{0, 1, 2}}}}, nil, nil),
		"colour out of range": {Materials: []Material{{Name: "x", BaseColor: [4]float32{2, 0, 0, 1}}}},
		"material past table": Single("m", box(0, 0, 0), nil, map[int32]int{0: 3}),
		"cycle":               {Nodes: []Node{{Mesh: NoMesh, Children: []int{1}}, {Mesh: NoMesh, Children: []int{0}}}},
		"two parents":         {Nodes: []Node{{Mesh: NoMesh, Children: []int{2}}, {Mesh: NoMesh, Children: []int{2}}, {Mesh: NoMesh}}},
		"root is a child":     {Nodes: []Node{{Mesh: NoMesh, Children: []int{1}}, {Mesh: NoMesh}}, Roots: []int{0, 1}},
		"mesh past meshes":    {Nodes: []Node{{Mesh: 4}}, Roots: []int{0}},
	}
	for name, s := range cases {
		if _, err := Encode(s); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if _, err := Size(s); err == nil {
			t.Errorf("%s: sized", name)
		}
	}
}

// meshFromBytes makes a mesh of arbitrary content (any float bits) that
// passes Check, for the fuzz target.
func meshFromBytes(b []byte) *mesh.Mesh {
	le := binary.LittleEndian
	if len(b) < 2 {
		return &mesh.Mesh{}
	}
	nv, flags := int(b[0])%64, b[1]
	b = b[2:]
	f := func() float32 {
		if len(b) < 4 {
			return 0
		}
		v := math.Float32frombits(le.Uint32(b))
		b = b[4:]
		return v
	}
	m := &mesh.Mesh{}
	for i := 0; i < nv; i++ {
		m.Positions = append(m.Positions, [3]float32{f(), f(), f()})
		if flags&1 != 0 {
			m.Normals = append(m.Normals, [3]float32{f(), f(), f()})
		}
		if flags&2 != 0 {
			m.UVs = append(m.UVs, [2]float32{f(), f()})
		}
	}
	for nv > 0 && len(b) >= 4 {
		m.Triangles = append(m.Triangles, mesh.Triangle{V: [3]uint32{uint32(b[0]) % uint32(nv), uint32(b[1]) % uint32(nv), uint32(b[2]) % uint32(nv)}, Tex: int32(int8(b[3]))})
		b = b[4:]
	}
	return m
}

func FuzzEncode(f *testing.F) {
	f.Add([]byte{3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x3f, 0, 1, 2, 0})
	f.Add(bytes.Repeat([]byte{0xff}, 200))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := meshFromBytes(b)
		if m.Check() != nil {
			t.Skip()
		}
		s := Single("fuzz", m, []Material{{Name: "a", BaseColor: [4]float32{1, 1, 1, 1}, PNG: []byte{1, 2, 3}}}, map[int32]int{0: 0, 1: 0})
		out, err := Encode(s)
		size, serr := Size(s)
		if (err == nil) != (serr == nil) {
			t.Fatalf("Encode %v, Size %v", err, serr)
		}
		if err != nil {
			return
		}
		if size != int64(len(out)) {
			t.Fatalf("Size %d, encoded %d", size, len(out))
		}
		g := parseGLB(t, out)
		if len(m.Triangles) > 0 {
			tris := 0
			for _, p := range g.obj("meshes", 0)["primitives"].([]any) {
				tris += len(g.indices(t, num(p.(map[string]any)["indices"]))) / 3
			}
			if tris != len(m.Triangles) {
				t.Fatalf("%d triangles written, %d in the mesh", tris, len(m.Triangles))
			}
		}
	})
}

// TestValidator: the sample scene (textures, a UV-less mesh, an empty mesh,
// unsigned-int indices, a moved node, a hidden tree) and a few odd meshes
// pass the Khronos validator with no error.
func TestValidator(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	write := func(name string, s *Scene) {
		b, err := Encode(s)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p := filepath.Join(dir, name+".glb")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	write("sample", sampleScene(t))
	write("empty", &Scene{})
	write("degenerate", Single("d", &mesh.Mesh{Positions: [][3]float32{{1, 2, 3}}, Normals: [][3]float32{{0, 0, 0}},
		Triangles: []mesh.Triangle{{V: [3]uint32{0, 0, 0}, Tex: 5}}}, nil, nil))
	write("fuzzseed", Single("f", meshFromBytes(bytes.Repeat([]byte{0x41, 0x07, 0x3f, 0x80}, 60)), nil, nil))
	// A glb with a wrong POSITION max (same length): the validator must
	// say so, or this test proves nothing.
	bad, _ := Encode(sampleScene(t))
	i := bytes.Index(bad, []byte(`"max":[1,`))
	if i < 0 {
		t.Fatal("no POSITION max in the sample")
	}
	copy(bad[i:], `"max":[9,`)
	badPath := filepath.Join(dir, "bad.glb")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	if o := gltftest.Validate(t, badPath); len(o.Files) != 1 || o.Files[0].Errors == 0 {
		t.Fatalf("a wrong POSITION max passes the validator: %+v", o)
	}
	o := gltftest.Validate(t, paths...)
	if len(o.Files) != len(paths) {
		t.Fatalf("%d reports for %d files", len(o.Files), len(paths))
	}
	gltftest.RequireValid(t, o)
	for _, f := range o.Files {
		t.Logf("%s: %d errors, %d warnings, %d infos %q", filepath.Base(f.Path), f.Errors, f.Warnings, f.Infos, f.Messages)
	}
}

// TestBlenderImport imports the sample scene in Blender, headless, when
// Blender is installed (skips otherwise), and checks it made the meshes.
func TestBlenderImport(t *testing.T) {
	blender, err := exec.LookPath("blender")
	if err != nil {
		t.Skip("no blender")
	}
	b, err := Encode(sampleScene(t))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "sample.glb")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	expr := "import bpy, sys\n" +
		"bpy.ops.wm.read_factory_settings(use_empty=True)\n" +
		"r = bpy.ops.import_scene.gltf(filepath=sys.argv[-1])\n" +
		"print('GCFS-IMPORT', r, len([o for o in bpy.data.objects if o.type == 'MESH']))\n"
	out, err := exec.Command(blender, "-b", "--factory-startup", "--python-exit-code", "1", "--python-expr", expr, "--", p).CombinedOutput()
	if err != nil {
		t.Fatalf("blender: %v\n%s", err, out)
	}
	// box, plain and big have triangles (empty does not): three mesh objects.
	if !bytes.Contains(out, []byte("GCFS-IMPORT {'FINISHED'} 3")) {
		t.Fatalf("blender import:\n%s", out)
	}
}

// TestPositionBounds: POSITION's min and max are the builtin min and max
// of the written positions, -0 below +0 included, and the primitives group
// the triangles by texture whatever their runs.
func TestPositionBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	negZero := float32(math.Copysign(0, -1))
	pool := []float32{0, negZero, 1, -1, 1e-30, -1e-30, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32}
	for round := range 300 {
		m := &mesh.Mesh{}
		n := 1 + rng.IntN(40)
		for range n {
			var p [3]float32
			for c := range p {
				if rng.IntN(2) == 0 {
					p[c] = pool[rng.IntN(len(pool))]
				} else {
					p[c] = float32(rng.NormFloat64() * 100)
				}
			}
			m.Positions = append(m.Positions, p)
		}
		texCount := map[int32]int{}
		for range 1 + rng.IntN(30) {
			tex := int32(rng.IntN(4))
			texCount[tex]++
			m.Triangles = append(m.Triangles, mesh.Triangle{V: [3]uint32{uint32(rng.IntN(n)), uint32(rng.IntN(n)), uint32(rng.IntN(n))}, Tex: tex})
		}
		b, err := Encode(Single("m", m, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		g := parseGLB(t, b)
		lo, hi := toGLTF(m.Positions[0]), toGLTF(m.Positions[0])
		for _, p := range m.Positions {
			q := toGLTF(p)
			for c := range q {
				lo[c], hi[c] = min(lo[c], q[c]), max(hi[c], q[c])
			}
		}
		acc := g.obj("accessors", 0)
		for c := range 3 {
			gotLo, gotHi := acc["min"].([]any)[c].(float64), acc["max"].([]any)[c].(float64)
			if gotLo != float64(lo[c]) || math.Signbit(gotLo) != math.Signbit(float64(lo[c])) ||
				gotHi != float64(hi[c]) || math.Signbit(gotHi) != math.Signbit(float64(hi[c])) {
				t.Fatalf("round %d axis %d: bounds [%v, %v], want [%v, %v]", round, c, gotLo, gotHi, lo[c], hi[c])
			}
		}
		prims := g.obj("meshes", 0)["primitives"].([]any)
		if len(prims) != len(texCount) {
			t.Fatalf("round %d: %d primitives for %d textures", round, len(prims), len(texCount))
		}
		total := 0
		for _, p := range prims {
			ix := g.obj("accessors", num(p.(map[string]any)["indices"]))
			total += num(ix["count"])
		}
		if total != 3*len(m.Triangles) {
			t.Fatalf("round %d: %d indices for %d triangles", round, total, len(m.Triangles))
		}
	}
}

// The JSON chunks' buffers are pooled across plans (jsonBufs): encodes and
// sizes of different scenes at once, each given back as the next starts,
// give every scene its own bytes, the same as one encode alone.
func TestEncodePooledJSON(t *testing.T) {
	small := &Scene{
		Meshes:    []Mesh{{Name: "box", Geometry: box(1, 2, 3), Material: map[int32]int{0: 0}}},
		Materials: []Material{{Name: "col", BaseColor: [4]float32{0.5, 0.5, 0.5, 1}}},
		Nodes:     []Node{{Name: "box", Mesh: 0}},
		Roots:     []int{0},
	}
	scenes := []*Scene{sampleScene(t), small}
	want := make([][]byte, len(scenes))
	for i, s := range scenes {
		b, err := Encode(s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = b
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range 20 {
				i := (g + r) % len(scenes)
				if size, err := Size(scenes[i]); err != nil || size != int64(len(want[i])) {
					errs <- fmt.Errorf("scene %d: Size %d (%v), want %d", i, size, err, len(want[i]))
					return
				}
				b, err := Encode(scenes[i])
				if err != nil || !bytes.Equal(b, want[i]) {
					errs <- fmt.Errorf("scene %d: Encode differs from the first (%v)", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
