package fsnode

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gcfs/discimg/mkdisc"
	"gcfs/gltf/gltftest"
)

// retailImage generates the retail layout in the test's temporary
// directory (removed with it: a sparse 3.8 GB image).
func retailImage(t testing.TB) string {
	t.Helper()
	path, _ := sharedImage(t, mkdisc.Retail)
	return path
}

// TestMeshViewsValidateRetail: every glb of the retail layout encodes with
// nothing logged, and passes the Khronos validator with no error: every
// level-wide glb (tfrags, collision, sky) and every fourth class mesh in
// tree order, so every level and class kind (one node process for the
// batch; all 10,000 class meshes took the validator 80 s of make test, and
// TestClassMeshViews validates every one of the small layout's).
func TestMeshViewsValidateRetail(t *testing.T) {
	if testing.Short() {
		t.Skip("the retail layout")
	}
	tree, logs := openDisc(t, retailImage(t), -1, Options{})
	dir := t.TempDir()
	var files []string
	classes := 0
	for _, v := range meshViewsOf(tree) {
		glb := readAll(t, v)
		if v.Name == "mesh.glb" || v.Name == "mesh_low.glb" {
			if classes++; classes%4 != 1 {
				continue
			}
		}
		f := filepath.Join(dir, strings.ReplaceAll(v.Path(), "/", "_"))
		if err := os.WriteFile(f, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) < 50 {
		t.Fatalf("%d glb views", len(files))
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("log %q", logs.Lines())
	}
	o := gltftest.Validate(t, files...)
	gltftest.RequireValid(t, o)
	warn := 0
	for _, f := range o.Files {
		warn += f.Warnings
	}
	t.Logf("validator %s: %d glb files of the retail layout, %d warnings", o.Validator, len(o.Files), warn)
}

// BenchmarkGLB: the glb encode rate (MB/s of glb) of a retail level's
// tfrags and collision (the block read included, from a warm cache), and
// the time to list and stat every glb of the retail layout on a first build
// (each encoded once) and on a build from the index sidecar (none).
func BenchmarkGLB(b *testing.B) {
	path := retailImage(b)
	tree, _ := openDisc(b, path, -1, Options{})
	for _, name := range []string{"tfrags", "collision"} {
		v := mustLookup(b, tree, "G/LEVEL1.WAD/data.d/core/"+name+".glb")
		_, src := v.View()
		readAll(b, src) // warm
		b.Run(name+"-encode", func(b *testing.B) {
			b.SetBytes(v.Size())
			for i := 0; i < b.N; i++ {
				if _, err := v.runEncode(false); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	statAllGLB := func(b *testing.B, tr *Tree) int {
		n := 0
		_ = tr.Walk(func(v *Node) error {
			if k, _ := v.View(); k == ViewGLB {
				_ = v.Size()
				n++
			}
			return nil
		})
		return n
	}
	dir := b.TempDir()
	b.Run("stat-all-first", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			os.RemoveAll(dir)
			tr, _, _ := buildIndexed(b, path, dir, Options{})
			b.StartTimer()
			t0 := time.Now()
			n := statAllGLB(b, tr)
			b.ReportMetric(float64(n), "glbs")
			b.ReportMetric(float64(time.Since(t0).Milliseconds()), "ms/stat-all")
			b.StopTimer()
			if err := tr.SaveIndex(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
	b.Run("stat-all-sidecar", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tr, _, _ := buildIndexed(b, path, dir, Options{})
			b.StartTimer()
			n := statAllGLB(b, tr)
			if tr.ViewEncodes() != 0 {
				b.Fatalf("%d encodes with the sidecar", tr.ViewEncodes())
			}
			b.ReportMetric(float64(n), "glbs")
		}
	})
}
