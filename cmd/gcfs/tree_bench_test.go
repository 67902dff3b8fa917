package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
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
// extract against cp -r of the same tree and cp of the image file.
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
	// extract-vs-cp: extract against cp -r of the tree it wrote (the same
	// files created: on this kind of machine, creating 16,000 files costs
	// more than reading the disc) and against cp of the image file.
	b.Run("extract-vs-cp", func(b *testing.B) {
		// On tmpfs when there is one: file creation on this machine's disk
		// varies tenfold from run to run (ext4 with discard).
		dir := b.TempDir()
		if shm, err := os.MkdirTemp("/dev/shm", "gcfs-bench-"); err == nil {
			dir = shm
			b.Cleanup(func() { os.RemoveAll(shm) })
		}
		var tImg, tExtract, tTree time.Duration
		for i := 0; i < b.N; i++ {
			out, tree, dst := filepath.Join(dir, "out"), filepath.Join(dir, "tree"), filepath.Join(dir, "copy.iso")
			os.RemoveAll(out)
			os.RemoveAll(tree)
			os.Remove(dst)
			syscall.Sync() // the removals' writeback is not the next run's cost
			t0 := time.Now()
			if err := exec.Command("cp", img, dst).Run(); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			treeOK(b, "extract", "-q", img, out)
			t2 := time.Now()
			if err := exec.Command("cp", "-r", out, tree).Run(); err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			tImg += t1.Sub(t0)
			tExtract += t2.Sub(t1)
			tTree += t3.Sub(t2)
		}
		b.ReportMetric(tTree.Seconds()/tExtract.Seconds(), "speed_vs_cp-r")
		b.ReportMetric(tImg.Seconds()/tExtract.Seconds(), "speed_vs_cp-image")
		b.ReportMetric(float64(treeBytes)/1e6/(tExtract.Seconds()/float64(b.N)), "extract_MB/s")
		b.ReportMetric(float64(treeBytes)/1e6/(tTree.Seconds()/float64(b.N)), "cp-r_MB/s")
		b.ReportMetric(float64(res.ImageSize)/1e6/(tImg.Seconds()/float64(b.N)), "cp-image_MB/s")
		b.ReportMetric(float64(len(res.Manifest)), "files")
	})
}
