package fsnode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/mesh"
)

// glbMeshNames is the set of a glb's mesh names.
func glbMeshNames(t *testing.T, b []byte) map[string]bool {
	t.Helper()
	if len(b) < 20 {
		t.Fatalf("not a glb: %d bytes", len(b))
	}
	var doc struct {
		Meshes []struct {
			Name string `json:"name"`
		} `json:"meshes"`
	}
	if err := json.Unmarshal(b[20:20+binary.LittleEndian.Uint32(b[12:])], &doc); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range doc.Meshes {
		out[m.Name] = true
	}
	return out
}

// TestMeshMemo: a level's class, tfrags and collision glbs and its
// level.glb parse their shared blocks once, whichever is read first (the
// memo's hits), and give the bytes they give where each parses for
// itself; a level.glb derived from an edit of core_data reads the edited
// class block, not the disc's mesh the memo keeps.
func TestMeshMemo(t *testing.T) {
	path, _ := small(t)
	var lv *Node
	classesFirst, _ := openDisc(t, path, -1, Options{})
	levelFirst, _ := openDisc(t, path, -1, Options{})
	alone, _ := openDisc(t, path, -1, Options{})
	for _, l := range classesFirst.Root.Child("G").Children {
		if l.Child("level.glb") != nil && l.Child("chunk0.d") != nil {
			lv = l
			break
		}
	}
	if lv == nil {
		t.Fatal("test setup: no level with a level.glb and a chunk")
	}
	at := func(tree *Node, p string) *Node {
		t.Helper()
		n, err := tree.tree.Lookup(strings.TrimPrefix(tree.Path()+"/"+p, "/"))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// the shared views: every class's mesh.glb, the core's and the chunks'
	// tfrags and collision glbs
	var shared []string
	_ = WalkFrom(lv, func(v *Node) error {
		if v.Kind == View && v.vm != nil && v.vm.lazy != nil && v.Name != "level.glb" && v.Name != "gameplay.json" && v.Name != "mesh_low.glb" {
			shared = append(shared, v.Path())
		}
		return nil
	})
	if len(shared) < 5 {
		t.Fatalf("test setup: %d shared views below %s", len(shared), lv.Path())
	}
	glb := lv.Path() + "/level.glb"

	// classes first: the level.glb takes their meshes
	want := map[string][]byte{}
	for _, p := range shared {
		want[p] = readAll(t, at(classesFirst.Root, p))
	}
	if classesFirst.meshHits.Load() != 0 {
		t.Fatalf("%d hits before any view shares a block", classesFirst.meshHits.Load())
	}
	got := readAll(t, at(classesFirst.Root, glb))
	hits := classesFirst.meshHits.Load()
	if hits < 3 {
		t.Errorf("level.glb after its views took %d meshes from the memo", hits)
	}
	wantGLB := readAll(t, at(alone.Root, glb))
	if alone.meshHits.Load() != 0 {
		t.Fatalf("level.glb alone: %d hits", alone.meshHits.Load())
	}
	if !bytes.Equal(got, wantGLB) {
		t.Errorf("level.glb through the memo: %d bytes, %d where it parses alone", len(got), len(wantGLB))
	}

	// level.glb first: the views take its meshes
	if b := readAll(t, at(levelFirst.Root, glb)); !bytes.Equal(b, wantGLB) {
		t.Error("level.glb differs between trees")
	}
	for _, p := range shared {
		if b := readAll(t, at(levelFirst.Root, p)); !bytes.Equal(b, want[p]) {
			t.Errorf("%s after level.glb: %d bytes, %d before it", p, len(b), len(want[p]))
		}
	}
	if n := levelFirst.meshHits.Load(); n < hits {
		t.Errorf("views after level.glb took %d meshes from the memo, level.glb after them %d", n, hits)
	}

	// core_data edited: a placed moby's class block zeroed in it. The
	// memo holds that class's disc mesh (classesFirst read every view).
	lvc := at(classesFirst.Root, lv.Path())
	g, err := gameplay.Read(readAll(t, lvc.Child("gameplay")))
	if err != nil || len(g.Mobies) == 0 {
		t.Fatalf("test setup: gameplay: %v, %d mobies", err, len(g.Mobies))
	}
	classMesh := ""
	var classDir *Node
	var edit []byte
	cd := at(lvc, "data.d/core_data")
	for _, m := range g.Mobies {
		cls := at(lvc, "data.d/core").Child("mobies").Child(fmt.Sprintf("%04d", m.OClass))
		if cls == nil || cls.Child("class") == nil || !glbMeshNames(t, got)[fmt.Sprintf("moby_%d", m.OClass)] {
			continue
		}
		c := cls.Child("class")
		edit = bytes.Clone(readAll(t, cd))
		clear(edit[c.woff : c.woff+c.size])
		classMesh, classDir = fmt.Sprintf("moby_%d", m.OClass), cls
		break
	}
	if classMesh == "" {
		t.Fatal("test setup: no placed moby class with a mesh")
	}
	// A class block the scene finds elsewhere in core_data than the
	// class's node (a class listed twice) is read, not taken from the memo.
	c := classDir
	cn := c.Child("class")
	hook := levelMeshes(lvc, at(lvc, "data.d/core"), cd, &encodeCtx{})
	own := &mesh.Mesh{}
	read := func() (*mesh.Mesh, error) { return own, nil }
	rel := "mobies/" + c.Name + "/class"
	if m, _ := hook(rel, &levelcore.Block{Offset: cn.woff, Size: cn.size}, read); m == own {
		t.Fatalf("%s at its node's place: read, not the memo's", rel)
	}
	if m, _ := hook(rel, &levelcore.Block{Offset: cn.woff + 16, Size: cn.size}, read); m != own {
		t.Errorf("%s elsewhere in core_data: the memo's mesh", rel)
	}
	b, ok, err := at(classesFirst.Root, glb).Derived(func(n *Node) ([]byte, bool, error) {
		if n == cd {
			return edit, true, nil
		}
		return nil, false, nil
	})
	if err != nil || !ok {
		t.Fatalf("level.glb of the edited core_data: ok %v, %v", ok, err)
	}
	if names := glbMeshNames(t, b); names[classMesh] || len(names) == 0 {
		t.Errorf("level.glb of core_data with %s's block zeroed: meshes %v", classMesh, names)
	}
}
