package fsnode

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"gcfs/gltf/gltftest"
	"gcfs/mesh"
)

// TestSkyGLB: every level's sky.glb (beside the sky block) holds one mesh a
// shell with the shells' triangles (mesh.ReadSky of the block), its
// materials embed the bytes of the sky.d/textures/ PNG views they name, its
// xattrs count shells, vertices and triangles, and it passes the Khronos
// validator (skipped without node and the validator, as the other glbs).
func TestSkyGLB(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	dir := t.TempDir()
	var files []string
	for _, lvl := range mustLookup(t, tree, "G").List() {
		core := lvl.Child("data.d")
		if core = childOrNil(core, "core"); core == nil {
			continue
		}
		v := core.Child("sky.glb")
		if v == nil {
			t.Fatalf("%s: no sky.glb", core.Path())
		}
		glb := readAll(t, v)
		shells, err := mesh.ReadSky(readAll(t, core.Child("sky")))
		if err != nil {
			t.Fatal(err)
		}
		d := readGLBDoc(t, glb)
		if len(d.Meshes) != len(shells) || len(shells) < 2 {
			t.Fatalf("%s: %d meshes, %d shells", v.Path(), len(d.Meshes), len(shells))
		}
		nt := 0
		for _, m := range shells {
			nt += len(m.Triangles)
		}
		if s, _ := v.Xattr(XattrPrefix + "shells"); s != strconv.Itoa(len(shells)) {
			t.Errorf("%s: shells %q", v.Path(), s)
		}
		if s, _ := v.Xattr(XattrPrefix + "triangles"); s != strconv.Itoa(nt) {
			t.Errorf("%s: triangles %q, want %d", v.Path(), s, nt)
		}
		textured := 0
		for _, m := range d.Materials {
			if !strings.HasPrefix(m.Name, "sky_") {
				continue
			}
			textured++
			img := d.Images[d.Textures[m.PBR.BaseColorTexture.Index].Source]
			png := readAll(t, mustLookup(t, tree, core.Path()+"/sky.d/textures/"+strings.TrimPrefix(m.Name, "sky_")+".png"))
			if !bytes.Equal(d.view(img.BufferView), png) {
				t.Errorf("%s: %s's image is not the PNG view's bytes", v.Path(), m.Name)
			}
		}
		if textured == 0 {
			t.Errorf("%s: no sky texture material", v.Path())
		}
		f := filepath.Join(dir, strings.ReplaceAll(v.Path(), "/", "_"))
		if err := os.WriteFile(f, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 20 {
		t.Fatalf("%d sky.glb files", len(files))
	}
	if n := len(logs.Lines()); n != 0 {
		t.Errorf("log: %q", logs.Lines())
	}
	gltftest.RequireValid(t, gltftest.Validate(t, files...))
}

func childOrNil(n *Node, name string) *Node {
	if n == nil {
		return nil
	}
	return n.Child(name)
}
