package integration

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"gcfs/discimg"
	"gcfs/discimg/gameplay"
	"gcfs/fsnode"
)

// BenchmarkGameplayJSON: gameplay.json of the level with the largest decoded
// gameplay (the retail layout unless -short): the encode alone (package
// gameplay's reading of the decoded stream and its JSON write, the stream in
// memory), and the first lookup's sizing through a fresh in-process tree
// with no index sidecar (the stream decoded, then the one encode).
func BenchmarkGameplayJSON(b *testing.B) {
	d := getDisc(b, benchLayout())
	var best lsEntry
	for _, e := range d.entries {
		if strings.HasPrefix(e.Path, "G/LEVEL") && strings.HasSuffix(e.Path, "/gameplay") && e.Size > best.Size {
			best = e
		}
	}
	if best.Path == "" {
		b.Fatal("no level gameplay")
	}
	f, err := os.Open(d.path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	res := map[string][]float64{}
	b.ResetTimer()
	var jsonSize int64
	var mobies int
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		img, err := discimg.Open(f, st.Size())
		if err != nil {
			b.Fatal(err)
		}
		tree, err := fsnode.Build(img, fsnode.Options{})
		if err != nil {
			b.Fatal(err)
		}
		gp, err := tree.Lookup(best.Path)
		if err != nil {
			b.Fatal(err)
		}
		js, err := tree.Lookup(best.Path + ".json")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 := time.Now()
		jsonSize = js.Size()
		res["first-size-ms"] = append(res["first-size-ms"], ms(t0))
		b.StopTimer()
		r, err := gp.Open()
		if err != nil {
			b.Fatal(err)
		}
		plain, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		t0 = time.Now()
		g, err := gameplay.Read(plain)
		if err != nil {
			b.Fatal(err)
		}
		var out bytes.Buffer
		if err := gameplay.WriteJSON(&out, g.Doc); err != nil {
			b.Fatal(err)
		}
		res["encode-ms"] = append(res["encode-ms"], ms(t0))
		b.StopTimer()
		if int64(out.Len()) != jsonSize {
			b.Fatalf("%s.json: %d bytes encoded, %d sized", best.Path, out.Len(), jsonSize)
		}
		mobies = len(g.Mobies)
		b.StartTimer()
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k)
	}
	b.ReportMetric(float64(best.Size), "gameplay-bytes")
	b.ReportMetric(float64(jsonSize), "json-bytes")
	b.ReportMetric(float64(mobies), "mobies")
	b.Logf("%s: %d decoded bytes, gameplay.json %d bytes, %d mobies", best.Path, best.Size, jsonSize, mobies)
}

// BenchmarkLevelGLB: level.glb of the level with the most gameplay
// instances (retail layout unless -short): its size, the meshes and nodes
// it holds, the first lookup's sizing through a fresh tree with no index
// sidecar (streams decoded, the scene assembled and encoded once), and the
// heap that sizing allocated (runtime.MemStats TotalAlloc, and the peak
// HeapInuse seen after it, as a bound on its memory).
func BenchmarkLevelGLB(b *testing.B) {
	d := getDisc(b, benchLayout())
	var best lsEntry
	for _, e := range d.entries {
		if strings.HasPrefix(e.Path, "G/LEVEL") && strings.HasSuffix(e.Path, "/gameplay.json") && e.Size > best.Size {
			best = e
		}
	}
	if best.Path == "" {
		b.Fatal("no level gameplay.json")
	}
	glbPath := strings.TrimSuffix(best.Path, "gameplay.json") + "level.glb"
	f, err := os.Open(d.path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	res := map[string][]float64{}
	var size int64
	var meshes, nodes string
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		img, err := discimg.Open(f, st.Size())
		if err != nil {
			b.Fatal(err)
		}
		tree, err := fsnode.Build(img, fsnode.Options{})
		if err != nil {
			b.Fatal(err)
		}
		v, err := tree.Lookup(glbPath)
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		t0 := time.Now()
		size = v.Size()
		res["first-size-ms"] = append(res["first-size-ms"], ms(t0))
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		res["alloc-MiB"] = append(res["alloc-MiB"], float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20))
		if err := v.Err(); err != nil || size == 0 {
			b.Fatalf("%s: %d bytes, %v", glbPath, size, err)
		}
		meshes, _ = v.Xattr(fsnode.XattrPrefix + "meshes")
		nodes, _ = v.Xattr(fsnode.XattrPrefix + "nodes")
		b.StartTimer()
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k)
	}
	b.ReportMetric(float64(size), "glb-bytes")
	b.Logf("%s: %d bytes, %s meshes, %s nodes", glbPath, size, meshes, nodes)
}
