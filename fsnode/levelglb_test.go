package fsnode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/gltf/gltftest"
	"gcfs/mesh"
)

// TestLevelScene: every level's level.glb is exactly as long as its size
// (sized once, at the first lookup), passes the glTF validator, has one
// node per placed instance named by kind, class and uid, one mesh per class
// (never a node of a class left out), and counts the instances it leaves
// out: placed + left out = the gameplay's records.
func TestLevelScene(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	dir := t.TempDir()
	var files []string
	for _, lv := range tree.Root.Child("G").Children {
		v := lv.Child("level.glb")
		if lv.Child("gameplay") == nil || lv.Child("data.d") == nil {
			continue
		}
		if v == nil {
			t.Fatalf("%s: no level.glb", lv.Path())
		}
		if k, src := v.View(); k != ViewGLB || src != lv.Child("gameplay") {
			t.Errorf("%s: view %q of %v", v.Path(), k, src)
		}
		enc := tree.ViewEncodes()
		size := v.Size()
		if v.Size() != size || tree.ViewEncodes() != enc+1 {
			t.Errorf("%s: sized by %d encodes", v.Path(), tree.ViewEncodes()-enc)
		}
		b := readAll(t, v)
		if int64(len(b)) != size || len(b) < 20 {
			t.Fatalf("%s: %d bytes read, size %d", v.Path(), len(b), size)
		}
		n := binary.LittleEndian.Uint32(b[12:])
		var doc struct {
			Nodes []struct {
				Name     string `json:"name"`
				Mesh     *int   `json:"mesh"`
				Children []int  `json:"children"`
			} `json:"nodes"`
			Meshes []struct {
				Name string `json:"name"`
			} `json:"meshes"`
		}
		if err := json.Unmarshal(b[20:20+n], &doc); err != nil {
			t.Fatalf("%s: JSON chunk: %v", v.Path(), err)
		}
		// Every material of a texture embeds that texture's PNG view:
		// tfrag_NNN textures/tfrag/NNN.png, sky_NNN sky.d/textures/NN.png,
		// a class table's TABLE_NNN the PNG of a slot using entry NNN.
		core := lv.Child("data.d").Child("core")
		gd := readGLBDoc(t, b)
		textured := 0
		for _, m := range gd.Materials {
			var want [][]byte
			var k int
			switch {
			case strings.HasPrefix(m.Name, "col_"), m.Name == "untextured":
				if m.PBR.BaseColorTexture != nil {
					t.Errorf("%s: material %s has a texture", v.Path(), m.Name)
				}
				continue
			case sscan(m.Name, "tfrag_%03d", &k):
				want = append(want, readAll(t, mustChild(t, core, "textures", "tfrag", fmt.Sprintf("%03d.png", k))))
			case sscan(m.Name, "sky_%03d", &k):
				want = append(want, readAll(t, mustChild(t, core, "sky.d", "textures", fmt.Sprintf("%02d.png", k))))
			default:
				table, idx, _ := strings.Cut(m.Name, "_")
				for _, kd := range []string{"mobies", "ties", "shrubs"} {
					for _, cd := range childrenOf(core.Child(kd)) {
						for _, png := range cd.Children {
							tt, _ := png.Xattr(XattrPrefix + "texture_table")
							ti, _ := png.Xattr(XattrPrefix + "table_index")
							if i, _ := strconv.Atoi(idx); tt == table && ti == strconv.Itoa(i) && png.Name != "billboard.png" {
								want = append(want, readAll(t, png))
							}
						}
					}
				}
			}
			if len(want) == 0 || m.PBR.BaseColorTexture == nil {
				t.Errorf("%s: material %s: texture %v, %d PNG views of it", v.Path(), m.Name, m.PBR.BaseColorTexture, len(want))
				continue
			}
			got := gd.view(gd.Images[gd.Textures[m.PBR.BaseColorTexture.Index].Source].BufferView)
			if !slices.ContainsFunc(want, func(w []byte) bool { return bytes.Equal(w, got) }) {
				t.Errorf("%s: material %s embeds %d bytes, not its texture's PNG", v.Path(), m.Name, len(got))
			}
			textured++
		}
		if textured == 0 {
			t.Errorf("%s: no textured material", v.Path())
		}
		g, err := gameplay.Read(readAll(t, lv.Child("gameplay")))
		if err != nil {
			t.Fatal(err)
		}
		placed := 0
		for _, nd := range doc.Nodes {
			for _, kind := range []string{"moby_", "tie_", "shrub_"} {
				if !strings.HasPrefix(nd.Name, kind) {
					continue
				}
				placed++
				if nd.Mesh == nil {
					t.Fatalf("%s: node %s without a mesh", v.Path(), nd.Name)
				}
				// moby_<o_class>_<uid>: the mesh is its class's
				class := strings.Split(nd.Name, "_")[1]
				if want := kind + class; doc.Meshes[*nd.Mesh].Name != want {
					t.Fatalf("%s: node %s uses mesh %s", v.Path(), nd.Name, doc.Meshes[*nd.Mesh].Name)
				}
			}
		}
		left, _ := v.Xattr(XattrPrefix + "instances_left_out")
		nl, _ := strconv.Atoi(left)
		records := len(g.Mobies) + len(g.Ties) + len(g.Shrubs)
		if placed+nl != records || placed == 0 {
			t.Errorf("%s: %d nodes placed + %d left out, %d records", v.Path(), placed, nl, records)
		}
		// the sky: a node "sky" with one child a shell
		shells := 0
		if sky := lv.Child("data.d").Child("core").Child("sky"); sky != nil {
			ms, err := mesh.ReadSky(readAll(t, sky))
			if err != nil {
				t.Fatalf("%s: %v", sky.Path(), err)
			}
			shells = len(ms)
			found := false
			for _, nd := range doc.Nodes {
				if nd.Name == "sky" {
					found = true
					if len(nd.Children) != shells || nd.Mesh != nil {
						t.Errorf("%s: sky node has %d children (mesh %v), the block %d shells", v.Path(), len(nd.Children), nd.Mesh, shells)
					}
				}
			}
			if !found && shells > 0 {
				t.Errorf("%s: no sky node for %d shells", v.Path(), shells)
			}
		}
		if len(doc.Nodes) > records+3*4+8+shells {
			t.Errorf("%s: %d nodes for %d records", v.Path(), len(doc.Nodes), records)
		}
		if lo, _ := v.Xattr(XattrPrefix + "left_out"); strings.Contains(lo, "texture") {
			t.Errorf("%s: left out %q", v.Path(), lo)
		}
		if lo, _ := v.Xattr(XattrPrefix + "left_out"); nl > 0 && !strings.Contains(lo, "moby ") && !strings.Contains(lo, "tie ") && !strings.Contains(lo, "shrub ") {
			t.Errorf("%s: %d instances left out, left_out says %q", v.Path(), nl, lo)
		}
		p := filepath.Join(dir, strings.ReplaceAll(lv.Name, ".", "_")+".glb")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, p)
	}
	if len(files) < 20 {
		t.Fatalf("%d level scenes", len(files))
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
	gltftest.RequireValid(t, gltftest.Validate(t, files...))
}

func sscan(s, format string, v *int) bool {
	_, err := fmt.Sscanf(s, format, v)
	return err == nil && fmt.Sprintf(format, *v) == s
}

func mustChild(t *testing.T, n *Node, names ...string) *Node {
	t.Helper()
	for _, name := range names {
		c := n.Child(name)
		if c == nil {
			t.Fatalf("%s: no %s", n.Path(), name)
		}
		n = c
	}
	return n
}

func childrenOf(n *Node) []*Node {
	if n == nil {
		return nil
	}
	return n.Children
}
