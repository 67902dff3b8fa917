package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/fsnode"
)

func benchLayout(b *testing.B, layout mkdisc.Layout) (string, *mkdisc.Result) {
	b.Helper()
	path := filepath.Join(b.TempDir(), string(layout)+".iso")
	res, err := mkdisc.Generate(path, layout, 1)
	if err != nil {
		b.Fatal(err)
	}
	return path, res
}

// BenchmarkTreeRetail: opening the retail-layout image and listing its whole
// tree, no decoding (target: well under 100 ms).
func BenchmarkTreeRetail(b *testing.B) {
	img, _ := benchLayout(b, mkdisc.Retail)
	b.Run("open-build-walk", func(b *testing.B) {
		nodes := 0
		for i := 0; i < b.N; i++ {
			f, err := os.Open(img)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := f.Stat()
			im, err := discimg.Open(f, st.Size())
			if err != nil {
				b.Fatal(err)
			}
			tree, err := fsnode.Build(im, fsnode.Options{})
			if err != nil {
				b.Fatal(err)
			}
			nodes = 0
			tree.Walk(func(n *fsnode.Node) error { nodes++; _ = n.Name; return nil })
			f.Close()
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
		b.ReportMetric(float64(nodes), "nodes")
	})
	b.Run("ls-R", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			treeOK(b, "ls", "-R", img)
		}
		b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/list")
	})
}

// BenchmarkTreeSmall: manifest of the small layout in MB/s of tree bytes, and
// extract against cp of the image file.
func BenchmarkTreeSmall(b *testing.B) {
	img, res := benchLayout(b, mkdisc.Small)
	var treeBytes int64
	for _, e := range res.Manifest {
		treeBytes += e.Size
	}
	b.Run("manifest", func(b *testing.B) {
		b.SetBytes(treeBytes)
		for i := 0; i < b.N; i++ {
			treeOK(b, "manifest", img)
		}
	})
	b.Run("extract-vs-cp", func(b *testing.B) {
		dir := b.TempDir()
		var tCP, tExtract time.Duration
		for i := 0; i < b.N; i++ {
			out, dst := filepath.Join(dir, "out"), filepath.Join(dir, "copy.iso")
			os.RemoveAll(out)
			os.Remove(dst)
			t0 := time.Now()
			if err := exec.Command("cp", img, dst).Run(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			treeOK(b, "extract", "-q", img, out)
			t2 := time.Now()
			tCP += t1.Sub(t0)
			tExtract += t2.Sub(t1)
		}
		b.ReportMetric(tCP.Seconds()/tExtract.Seconds(), "speed_vs_cp")
		b.ReportMetric(float64(treeBytes)/1e6/(tExtract.Seconds()/float64(b.N)), "extract_MB/s")
		b.ReportMetric(float64(res.ImageSize)/1e6/(tCP.Seconds()/float64(b.N)), "cp_MB/s")
		b.ReportMetric(float64(len(res.Manifest)), "files")
	})
}
