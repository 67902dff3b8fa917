package gltf

import (
	"image/color"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"gcfs/gltf/gltftest"
)

// TestValidatorRandomMeshes: meshes of random bytes (any float bits: huge,
// tiny, negative zero; degenerate and repeated triangles; zero normals)
// that pass Check and that the writer accepts (it refuses NaN and
// infinities) pass the Khronos validator with no error.
func TestValidatorRandomMeshes(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		b := make([]byte, r.Intn(600))
		r.Read(b)
		m := meshFromBytes(b)
		if m.Check() != nil {
			continue
		}
		out, err := Encode(Single("f", m, []Material{{Name: "a", BaseColor: [4]float32{1, 1, 1, 1}, PNG: tinyPNG(t, color.NRGBA{1, 2, 3, 255})}}, map[int32]int{0: 0, 1: 0}))
		if err != nil {
			continue
		}
		p := filepath.Join(dir, "r"+string(rune('a'+i%26))+string(rune('a'+i/26))+".glb")
		os.WriteFile(p, out, 0o644)
		paths = append(paths, p)
	}
	o := gltftest.Validate(t, paths...)
	if len(o.Files) < 100 {
		t.Fatalf("%d of 300 random meshes encoded", len(o.Files))
	}
	gltftest.RequireValid(t, o)
}
