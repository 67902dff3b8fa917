package integration

import (
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkClassGLBCold: the first read of a class's mesh.glb (LEVEL1's
// largest) through a fresh mount, page cache dropped, no index sidecar:
// the lookup sizes it (one encode: the class block's part of core_data
// decoded, its slots' PNGs made), the read encodes it again.
func BenchmarkClassGLBCold(b *testing.B) {
	d := getDisc(b, benchLayout())
	var glb lsEntry
	for _, e := range d.entries {
		if strings.HasPrefix(e.Path, "G/LEVEL1.WAD/data.d/core/") && strings.HasSuffix(e.Path, "/mesh.glb") && e.Size > glb.Size {
			glb = e
		}
	}
	if glb.Size == 0 {
		b.Fatal("no mesh.glb in LEVEL1's core")
	}
	buf := make([]byte, 1<<20)
	var cold []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		m := testMount(b, d.path)
		dropCaches()
		b.StartTimer()
		t0 := time.Now()
		f, err := os.Open(m.path(glb.Path))
		if err != nil {
			b.Fatal(err)
		}
		if n, err := readAll(f, nil, buf); err != nil || n != glb.Size {
			b.Fatalf("%s: %d bytes, %v", glb.Path, n, err)
		}
		f.Close()
		cold = append(cold, float64(time.Since(t0).Microseconds())/1000)
		b.StopTimer()
		m.unmount(b)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(median(cold), "first-cold-ms")
	b.ReportMetric(float64(glb.Size), "glb-bytes")
}
