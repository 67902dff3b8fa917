package integration

import (
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"gcfs/discimg"
	"gcfs/fsnode"
)

// BenchmarkLevelTextures: the PNGs of one level's core (LEVEL1's
// data.d/core/), through a fresh mount with the page cache dropped and no
// index sidecar: the first texture read (cold: the part of core_data it
// needs is decoded) and then every texture of the level; and the same
// through the in-process model (a fresh tree, no FUSE).
func BenchmarkLevelTextures(b *testing.B) {
	d := getDisc(b, benchLayout())
	var pngs []lsEntry
	for _, e := range d.entries {
		if strings.HasPrefix(e.Path, "G/LEVEL1.WAD/data.d/core/") && strings.HasSuffix(e.Path, ".png") {
			pngs = append(pngs, e)
		}
	}
	if len(pngs) == 0 {
		b.Fatal("no level texture in LEVEL1's core")
	}
	buf := make([]byte, 1<<20)
	readFile := func(path string, size int64) {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if n, err := readAll(f, nil, buf); err != nil || n != size {
			b.Fatalf("%s: %d bytes, %v", path, n, err)
		}
	}
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	res := map[string][]float64{}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		m := testMount(b, d.path)
		dropCaches()
		b.StartTimer()
		t0 := time.Now()
		readFile(m.path(pngs[0].Path), pngs[0].Size)
		res["first-cold-ms"] = append(res["first-cold-ms"], ms(t0))
		t0 = time.Now()
		for _, e := range pngs {
			readFile(m.path(e.Path), e.Size)
		}
		res["all-ms"] = append(res["all-ms"], ms(t0))
		b.StopTimer()
		reportRSS(b, m, "gcfs")
		m.unmount(b)
		dropCaches()
		first, all := modelTextures(b, d.path, pngs)
		res["model-first-cold-ms"] = append(res["model-first-cold-ms"], first)
		res["model-all-ms"] = append(res["model-all-ms"], all)
		b.StartTimer()
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k)
	}
	b.ReportMetric(float64(len(pngs)), "textures")
}

// modelTextures reads the first texture, then all, through a fresh tree
// built in this process (times in ms, the build excluded).
func modelTextures(b *testing.B, image string, pngs []lsEntry) (first, all float64) {
	f, err := os.Open(image)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	img, err := discimg.Open(f, st.Size())
	if err != nil {
		b.Fatal(err)
	}
	tree, err := fsnode.Build(img, fsnode.Options{})
	if err != nil {
		b.Fatal(err)
	}
	read := func(e lsEntry) {
		n, err := tree.Lookup(e.Path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := n.Open()
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, io.NewSectionReader(r, 0, r.Size())); err != nil {
			b.Fatal(err)
		}
	}
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	t0 := time.Now()
	read(pngs[0])
	first = ms(t0)
	t0 = time.Now()
	for _, e := range pngs {
		read(e)
	}
	return first, ms(t0)
}
