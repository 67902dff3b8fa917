package fsnode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/mkdisc"
	"gcfs/gltf"
	"gcfs/gltf/gltftest"
	"gcfs/mesh"
)

// glbDoc is a glb's JSON and BIN chunks, read as the specification lays
// them out (not with package gltf).
type glbDoc struct {
	Meshes []struct {
		Primitives []struct {
			Attributes map[string]int `json:"attributes"`
			Indices    int            `json:"indices"`
			Material   int            `json:"material"`
		} `json:"primitives"`
	} `json:"meshes"`
	Materials []struct {
		Name string `json:"name"`
		PBR  struct {
			BaseColorTexture *struct {
				Index int `json:"index"`
			} `json:"baseColorTexture"`
		} `json:"pbrMetallicRoughness"`
		DoubleSided bool `json:"doubleSided"`
	} `json:"materials"`
	Textures []struct {
		Source int `json:"source"`
	} `json:"textures"`
	Images []struct {
		BufferView int `json:"bufferView"`
	} `json:"images"`
	Accessors []struct {
		BufferView    int `json:"bufferView"`
		ComponentType int `json:"componentType"`
		Count         int `json:"count"`
	} `json:"accessors"`
	BufferViews []struct {
		ByteOffset int `json:"byteOffset"`
		ByteLength int `json:"byteLength"`
	} `json:"bufferViews"`
	bin []byte
}

func readGLBDoc(t *testing.T, b []byte) *glbDoc {
	t.Helper()
	le := binary.LittleEndian
	if len(b) < 20 || string(b[:4]) != "glTF" || int(le.Uint32(b[8:])) != len(b) {
		t.Fatalf("not a glb of %d bytes", len(b))
	}
	jl := int(le.Uint32(b[12:]))
	var d glbDoc
	if err := json.Unmarshal(b[20:20+jl], &d); err != nil {
		t.Fatal(err)
	}
	if rest := b[20+jl:]; len(rest) > 8 {
		d.bin = rest[8:]
	}
	return &d
}

func (d *glbDoc) view(i int) []byte {
	v := d.BufferViews[i]
	return d.bin[v.ByteOffset : v.ByteOffset+v.ByteLength]
}

// triangles is every triangle of mesh 0 as its three converted-back game
// positions and its material's name.
func (d *glbDoc) triangles(t *testing.T) []string {
	var out []string
	for _, p := range d.Meshes[0].Primitives {
		pos := d.view(d.Accessors[p.Attributes["POSITION"]].BufferView)
		ia := d.Accessors[p.Indices]
		ib := d.view(ia.BufferView)
		at := func(k int) [3]float32 {
			var idx int
			if ia.ComponentType == 5123 {
				idx = int(binary.LittleEndian.Uint16(ib[2*k:]))
			} else {
				idx = int(binary.LittleEndian.Uint32(ib[4*k:]))
			}
			f := func(c int) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(pos[12*idx+4*c:])) }
			return [3]float32{f(0), -f(2), f(1)} // glTF (x, z, -y) back to game (x, y, z)
		}
		for k := 0; k+2 < ia.Count; k += 3 {
			out = append(out, strings.Join([]string{fmtP(at(k)), fmtP(at(k + 1)), fmtP(at(k + 2)), d.Materials[p.Material].Name}, " "))
		}
	}
	return out
}

func fmtP(p [3]float32) string {
	return strconv.FormatFloat(float64(p[0]), 'g', -1, 32) + "," + strconv.FormatFloat(float64(p[1]), 'g', -1, 32) + "," + strconv.FormatFloat(float64(p[2]), 'g', -1, 32)
}

// wantTriangles is the same of a mesh mkdisc made, materials named as the
// views name them.
func wantTriangles(m *mesh.Mesh, collision bool) []string {
	var out []string
	for _, tr := range m.Triangles {
		name := "tex_" + leftPad3(tr.Tex)
		if collision {
			name = "col_" + hex2(tr.Tex)
		}
		out = append(out, strings.Join([]string{fmtP(m.Positions[tr.V[0]]), fmtP(m.Positions[tr.V[1]]), fmtP(m.Positions[tr.V[2]]), name}, " "))
	}
	return out
}

func leftPad3(v int32) string {
	s := strconv.Itoa(int(v))
	return strings.Repeat("0", max(0, 3-len(s))) + s
}
func hex2(v int32) string {
	s := strconv.FormatInt(int64(v), 16)
	return strings.Repeat("0", 2-len(s)) + s
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	sortStrings(c)
	return c
}

// meshViewsOf lists every mesh glb view of the tree (level.glb aside).
func meshViewsOf(tree *Tree) []*Node {
	var out []*Node
	_ = tree.Walk(func(n *Node) error {
		if k, _ := n.View(); k == ViewGLB && n.Name != "level.glb" { // level.glb: levelglb_test.go
			out = append(out, n)
		}
		return nil
	})
	return out
}

// TestMeshViewsGeometry: every tfrags.glb and collision.glb of the small
// layout (the core's and every chunk's) holds the geometry mkdisc wrote,
// triangle by triangle (collision as a set: the reader merges), tfrag
// materials embed the tfrag texture's PNG view bytes, xattrs count it; then
// the Khronos validator passes them all.
func TestMeshViewsGeometry(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{})
	views := meshViewsOf(tree)
	var core, chunk int
	dir := t.TempDir()
	var files []string
	for _, v := range views {
		_, src := v.View()
		if src.Name == "sky" || src.Name == "class" {
			continue // sky.glb: TestSkyGLB; a class's mesh.glb: classmesh_test.go
		}
		block := readAll(t, src)
		collision := src.Name == "collision"
		var want *mesh.Mesh
		var ok bool
		if collision {
			want, ok = mkdisc.CollisionOf(block)
		} else {
			want, ok = mkdisc.TfragsOf(block)
		}
		if !ok {
			t.Fatalf("%s: not a block mkdisc made", src.Path())
		}
		if strings.Contains(v.Path(), "/core/") {
			core++
		} else if strings.Contains(v.Path(), "/chunk") {
			chunk++
		}
		glb := readAll(t, v)
		if int64(len(glb)) != v.Size() {
			t.Fatalf("%s: %d bytes read, size %d", v.Path(), len(glb), v.Size())
		}
		d := readGLBDoc(t, glb)
		got, exp := d.triangles(t), wantTriangles(want, collision)
		// The glb groups triangles by material; the collision reader
		// merged the triangle stored twice: compare as sets.
		got, exp = sortedCopy(got), sortedCopy(exp)
		if collision {
			exp = dedupe(exp)
		}
		if len(got) != len(exp) {
			t.Fatalf("%s: %d triangles, want %d", v.Path(), len(got), len(exp))
		}
		for i := range exp {
			if got[i] != exp[i] {
				t.Fatalf("%s: triangle %d: %s, want %s", v.Path(), i, got[i], exp[i])
			}
		}
		for _, m := range d.Materials {
			if !m.DoubleSided {
				t.Errorf("%s: material %s not double-sided", v.Path(), m.Name)
			}
			if !collision {
				if m.PBR.BaseColorTexture == nil {
					t.Fatalf("%s: %s has no texture", v.Path(), m.Name)
				}
				img := d.Images[d.Textures[m.PBR.BaseColorTexture.Index].Source]
				pngPath := v.Parent.Path()
				if !strings.HasSuffix(pngPath, "/core") {
					pngPath = v.Parent.Parent.Path() + "/data.d/core"
				}
				png := readAll(t, mustLookup(t, tree, pngPath+"/textures/tfrag/"+strings.TrimPrefix(m.Name, "tex_")+".png"))
				if !bytes.Equal(d.view(img.BufferView), png) {
					t.Errorf("%s: %s's image is not the PNG view's bytes", v.Path(), m.Name)
				}
			}
		}
		if tv, _ := v.Xattr(XattrPrefix + "triangles"); tv != strconv.Itoa(len(got)) {
			t.Errorf("%s: user.gcfs.triangles %q, want %d", v.Path(), tv, len(got))
		}
		if vv, _ := v.Xattr(XattrPrefix + "vertices"); vv == "" || vv == "0" {
			t.Errorf("%s: user.gcfs.vertices %q", v.Path(), vv)
		}
		f := filepath.Join(dir, strings.ReplaceAll(v.Path(), "/", "_"))
		if err := os.WriteFile(f, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if core < 2 || chunk < 2 {
		t.Fatalf("%d core and %d chunk glb views", core, chunk)
	}
	if n := len(logs.Lines()); n != 0 {
		t.Errorf("log: %q", logs.Lines())
	}
	o := gltftest.Validate(t, files...)
	gltftest.RequireValid(t, o)
	warn := 0
	for _, f := range o.Files {
		warn += f.Warnings
	}
	t.Logf("validator %s: %d glb files, %d warnings", o.Validator, len(o.Files), warn)
}

func dedupe(s []string) []string {
	var out []string
	for i, v := range s {
		if i == 0 || v != s[i-1] {
			out = append(out, v)
		}
	}
	return out
}

// TestMeshViewBadInput: a block that is not a mesh gets no glb (Size 0,
// ViewFailed), its source's ViewError says why, one log line; the rest of
// the tree is served.
func TestMeshViewBadInput(t *testing.T) {
	d := writeDisc(t)
	tree, logs := openDisc(t, d.Path, -1, Options{})
	var src *Node
	_ = tree.Walk(func(n *Node) error {
		if src == nil && n.Kind == Raw && n.Size() >= 16 && n.Size() < 1<<20 {
			if _, _, err := mesh.ReadCollision(readAll(t, n)); err != nil {
				src = n // bytes that are no collision mesh
			}
		}
		return nil
	})
	b := &builder{t: tree}
	b.meshView(src, meshCollision, nil)
	v := src.Parent.Children[len(src.Parent.Children)-1]
	v.path = pathJoin(src.Parent.path, v.Name)
	before := len(logs.Lines())
	if v.Size() != 0 || !v.ViewFailed() || v.Err() == nil {
		t.Fatalf("Size %d ViewFailed %v Err %v", v.Size(), v.ViewFailed(), v.Err())
	}
	if _, err := v.runEncode(true); err == nil {
		t.Error("its size-only encode succeeded")
	}
	if err := src.ViewError(); err == nil || !strings.Contains(err.Error(), "no "+v.Name+": collision") {
		t.Errorf("source's ViewError: %v", err)
	}
	if got := len(logs.Lines()) - before; got != 1 {
		t.Errorf("%d log lines: %q", got, logs.Lines())
	}
	if len(readAll(t, src)) != int(src.Size()) {
		t.Error("the source no longer reads")
	}
	// A tfrag texture past the level's table: no glb either.
	blk, _ := mkdisc.TfragsBlock(5, 3, 4, 0)
	noTable := func(tex int32) ([]byte, error) {
		_, err := tfragPNG(func() *Node { return nil }, tex)
		return nil, err
	}
	if _, _, err := gltf.EncodeTfrags("tfrags", blk, noTable); err == nil || !strings.Contains(err.Error(), "past the level's tfrag texture table") {
		t.Errorf("tfrags naming textures of no table: %v", err)
	}
	noTableSize := func(tex int32, mat *gltf.Material) error {
		_, err := tfragPNG(func() *Node { return nil }, tex)
		return err
	}
	if _, _, err := gltf.TfragScene("tfrags", blk, noTableSize); err == nil || !strings.Contains(err.Error(), "past the level's tfrag texture table") {
		t.Errorf("tfrags naming textures of no table, sized: %v", err)
	}
}

func sortStrings(s []string) { sort.Strings(s) }
