package fsnode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/levelcore"
	"gcfs/discimg/mkdisc"
	"gcfs/gltf"
	"gcfs/gltf/gltftest"
	"gcfs/mesh"
)

// glbParts splits a glb into its JSON document and BIN chunk.
func glbParts(t *testing.T, b []byte) (map[string]any, []byte) {
	t.Helper()
	if !gltf.IsGLB(b) || len(b) < 20 {
		t.Fatalf("not a glb: % x", b[:min(len(b), 16)])
	}
	jl := int(binary.LittleEndian.Uint32(b[12:]))
	var doc map[string]any
	if err := json.Unmarshal(b[20:20+jl], &doc); err != nil {
		t.Fatal(err)
	}
	bin := b[20+jl+8:]
	return doc, bin
}

// TestClassMeshViews: every class directory with a class block has
// mesh.glb (mobies also mesh_low.glb), a glb of user.gcfs.view "glb" whose
// vertex and triangle counts are the decoded class's, whose triangle count
// is that of the geometry mkdisc wrote, with one material per texture slot
// embedding the slot's PNG view's bytes; every one of them passes the
// Khronos validator (when installed).
func TestClassMeshViews(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{})
	dir := t.TempDir()
	var files []string
	for _, lvl := range []string{"LEVEL1.WAD", "LEVEL2.WAD"} {
		core := mustLookup(t, tree, "G/"+lvl+"/data.d/core")
		c := core.LevelCore()
		classes := []struct {
			dir string
			cs  []levelcore.Class
		}{{"mobies", c.Mobies}, {"ties", c.Ties}, {"shrubs", c.Shrubs}}
		for _, k := range classes {
			for _, cl := range k.cs {
				cdir := mustLookup(t, tree, "G/"+lvl+"/data.d/core/"+k.dir+"/"+leftPad(cl.OClass))
				views := map[string]mesh.LOD{"mesh.glb": mesh.High}
				if cl.Kind == levelcore.Moby {
					views["mesh_low.glb"] = mesh.Low
				}
				for file, lod := range views {
					n := cdir.Child(file)
					if (n != nil) != (cl.Block != nil) {
						t.Fatalf("%s: %s %v, class block %v", cdir.Path(), file, n != nil, cl.Block)
					}
					if n == nil {
						continue
					}
					b := readAll(t, n)
					if int64(len(b)) != n.Size() {
						t.Fatalf("%s: %d bytes, Size %d", n.Path(), len(b), n.Size())
					}
					if v, _ := n.Xattr(XattrPrefix + "view"); v != "glb" {
						t.Errorf("%s: view %q", n.Path(), v)
					}
					var strips []mesh.Strip
					switch cl.Kind {
					case levelcore.Moby:
						g := mkdisc.MobyGeometry(cl.OClass, len(cl.Slots), true)
						strips = map[mesh.LOD][]mesh.Strip{mesh.High: g.High, mesh.Low: g.Low}[lod]
					case levelcore.Tie:
						strips = mkdisc.TieGeometry(cl.OClass, len(cl.Slots), true).Strips
					default:
						strips = mkdisc.ShrubGeometry(cl.OClass, len(cl.Slots), true).Strips
					}
					tris := 0
					for _, s := range strips {
						tris += len(s.Triangles())
					}
					m, err := mesh.ReadClass(string(cl.Kind), lod, readAll(t, cdir.Child("class")), len(cl.Slots))
					if err != nil {
						t.Fatal(err)
					}
					if v, _ := n.Xattr(XattrPrefix + "triangles"); v != strconv.Itoa(tris) || len(m.Triangles) != tris {
						t.Errorf("%s: triangles %q, decoded %d, mkdisc wrote %d", n.Path(), v, len(m.Triangles), tris)
					}
					if v, _ := n.Xattr(XattrPrefix + "vertices"); v != strconv.Itoa(len(m.Positions)) {
						t.Errorf("%s: vertices %q, decoded %d", n.Path(), v, len(m.Positions))
					}
					doc, bin := glbParts(t, b)
					mats, _ := doc["materials"].([]any)
					images, _ := doc["images"].([]any)
					views, _ := doc["bufferViews"].([]any)
					if len(mats) < len(cl.Slots) || len(images) != len(cl.Slots) {
						t.Fatalf("%s: %d materials, %d images for %d slots", n.Path(), len(mats), len(images), len(cl.Slots))
					}
					for k, s := range cl.Slots {
						mat := mats[k].(map[string]any)
						if mat["name"] != strconv.Itoa(100 + s.Slot)[1:] || mat["doubleSided"] != true {
							t.Errorf("%s: material %d %v", n.Path(), k, mat)
						}
						bv := views[int(images[k].(map[string]any)["bufferView"].(float64))].(map[string]any)
						off, _ := bv["byteOffset"].(float64)
						img := bin[int(off) : int(off)+int(bv["byteLength"].(float64))]
						if !bytes.Equal(img, readAll(t, cdir.Child(strconv.Itoa(100 + s.Slot)[1:]+".png"))) {
							t.Errorf("%s: image %d is not %02d.png's bytes", n.Path(), k, s.Slot)
						}
					}
					p := filepath.Join(dir, strings.ReplaceAll(strings.TrimPrefix(n.Path(), "G/"), "/", "_"))
					if err := os.WriteFile(p, b, 0o644); err != nil {
						t.Fatal(err)
					}
					files = append(files, p)
				}
			}
		}
	}
	if len(files) < 10 {
		t.Fatalf("only %d glbs", len(files))
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
	o := gltftest.Validate(t, files...)
	gltftest.RequireValid(t, o)
	warnings := 0
	for _, f := range o.Files {
		warnings += f.Warnings
	}
	t.Logf("%d class glbs, validator %s: no errors, %d warnings", len(o.Files), o.Validator, warnings)
}

// TestClassMeshBadBlock: a moby class whose entry points into the middle of
// its block decodes to nothing: no mesh.glb or mesh_low.glb (Size 0,
// ViewFailed), the class's ViewError (info's view_error) says why, one log line a view; every
// other file of the level, other glbs included, reads as mkdisc wrote it.
func TestClassMeshBadBlock(t *testing.T) {
	path := copyOf(t)
	_, res := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ci := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core_index")
	index := readAll(t, ci)
	h, err := levelcore.ParseHeader(index)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := levelcore.Read(index, 1<<30)
	k := -1
	for i, c := range before.Mobies {
		if c.Block != nil && !c.Stashed {
			k = i
			break
		}
	}
	cl := before.Mobies[k]
	off, _, _ := ci.ImageRange()
	// The entry now names a data offset 0x40 into its block: a header of
	// vertex bytes. (The class before it runs 0x40 further; its mesh reads
	// as before, trailing bytes being no part of it.)
	patchImage(t, path, off+int64(h.MobyClasses.Offset)+int64(k)*0x20, le32(int32(cl.Block.Offset+0x40)))
	tree, logs := openDisc(t, path, -1, Options{LogBurst: 100})
	dir := "G/LEVEL2.WAD/data.d/core/mobies/" + leftPad(cl.OClass) + "/"
	for _, f := range []string{"mesh.glb", "mesh_low.glb"} {
		n := mustLookup(t, tree, dir+f)
		if n.Size() != 0 || !n.ViewFailed() || n.Err() == nil {
			t.Errorf("%s: Size %d, ViewFailed %v, Err %v", f, n.Size(), n.ViewFailed(), n.Err())
		}
		if c := logs.Count(dir + f); c != 1 {
			t.Errorf("%s logged %d times: %q", f, c, logs.Lines())
		}
	}
	src := mustLookup(t, tree, dir+"class")
	if err := src.ViewError(); err == nil || !strings.Contains(err.Error(), "no mesh.glb: moby class high LOD at ") {
		t.Errorf("class view_error %v", err)
	}
	checked := 0
	prefix := "G/LEVEL2.WAD/data.d/core/mobies/"
	for _, m := range res.Manifest {
		if !strings.HasPrefix(m.Path, "G/LEVEL2.WAD/data.d/core/") || strings.HasPrefix(m.Path, dir) ||
			(strings.HasPrefix(m.Path, prefix) && strings.HasSuffix(m.Path, "/class")) {
			continue // the class files at the changed boundary differ
		}
		n, err := tree.Lookup(m.Path)
		if err != nil {
			t.Errorf("%s: %v", m.Path, err)
			continue
		}
		if got := readAll(t, n); sha(got) != m.SHA1 {
			t.Errorf("%s changed", m.Path)
		}
		checked++
	}
	if checked < 30 {
		t.Fatalf("only %d files checked", checked)
	}
}
