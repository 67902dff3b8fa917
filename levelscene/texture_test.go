package levelscene_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/discimg/mkdisc"
	"gcfs/gltf"
	"gcfs/levelscene"
)

// TestTextures: each tfrag texture's material asks for its PNG by the tree's
// path once, however many triangles use it, and embeds what it is given; a
// texture that cannot be had leaves its material a plain colour, named in
// LeftOut, and the scene still encodes at the size it plans.
func TestTextures(t *testing.T) {
	block, m := mkdisc.TfragsBlock(7, 6, 4, 0x1000)
	used := map[int32]bool{}
	for _, tr := range m.Triangles {
		used[tr.Tex] = true
	}
	if len(used) < 2 {
		t.Fatalf("the block uses %d textures", len(used))
	}
	core := &levelcore.Core{Blocks: []levelcore.Block{{Name: "tfrags", Offset: 0, Size: int64(len(block))}}}
	gp := gameplay.Build(&gameplay.Desc{}).Bytes
	asked := map[string]int{}
	bad := ""
	texture := func(sizeOnly bool) func(string, *gltf.Material) error {
		return func(path string, mat *gltf.Material) error {
			asked[path]++
			if bad == "" {
				bad = path
			}
			if path == bad {
				return errors.New("unreadable")
			}
			if sizeOnly {
				mat.PNGSize = int64(len(path))
			} else {
				mat.PNG = []byte(path)
			}
			return nil
		}
	}
	sized, err := levelscene.Build(levelscene.Input{Gameplay: gp, Core: core, CoreData: block, Texture: texture(true)})
	if err != nil {
		t.Fatal(err)
	}
	for p, n := range asked {
		if n != 1 || !strings.HasPrefix(p, "textures/tfrag/") {
			t.Errorf("%s asked for %d times", p, n)
		}
	}
	if len(asked) != len(used) {
		t.Errorf("%d textures asked for, the tfrags use %d", len(asked), len(used))
	}
	if lo := strings.Join(sized.LeftOut, "; "); !strings.Contains(lo, "("+bad+"): unreadable") {
		t.Errorf("left out %q, not the texture that failed", lo)
	}
	clear(asked)
	full, err := levelscene.Build(levelscene.Input{Gameplay: gp, Core: core, CoreData: block, Texture: texture(false)})
	if err != nil {
		t.Fatal(err)
	}
	textured := 0
	for _, mat := range full.Scene.Materials {
		var k int
		if _, err := fmt.Sscanf(mat.Name, "tfrag_%03d", &k); err != nil {
			t.Fatalf("material %q", mat.Name)
		}
		path := fmt.Sprintf("textures/tfrag/%03d.png", k)
		switch {
		case path == bad && mat.PNG != nil, path != bad && string(mat.PNG) != path:
			t.Errorf("material %s embeds %q", mat.Name, mat.PNG)
		case path != bad:
			textured++
			if mat.BaseColor != [4]float32{1, 1, 1, 1} || mat.AlphaMode != "MASK" {
				t.Errorf("material %s: colour %v, alpha %q (tfrags.glb's are white, MASK)", mat.Name, mat.BaseColor, mat.AlphaMode)
			}
		}
	}
	if textured != len(used)-1 {
		t.Errorf("%d textured materials, want %d", textured, len(used)-1)
	}
	size, err := gltf.Size(sized.Scene)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gltf.Encode(full.Scene)
	if err != nil || int64(len(b)) != size {
		t.Fatalf("encoded %d bytes (%v), sized %d", len(b), err, size)
	}
}
