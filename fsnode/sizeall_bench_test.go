package fsnode

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"gcfs/discimg/mkdisc"
)

// cpuTime is the process's CPU time so far (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSizeAllRetail: what a first find (no sidecar) has the server
// encode: every lazily sized view of the retail layout (class glbs, mesh
// glbs, gameplay.json, level.glb) sized in tree order on one goroutine, as
// the size-ahead worker sizes them, each on a fresh build (no sizes kept),
// with its blocks from a cache that starts empty. ms/size-all is the wall
// time of the sizing alone, cpu-ms/size-all the process's CPU in it (the
// server's CPU is what a first find is short of), MB-alloc/op what it allocated (the collector's
// work follows it), views/op how many were sized.
func BenchmarkSizeAllRetail(b *testing.B) {
	path, _ := sharedImage(b, mkdisc.Retail)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tree, _ := openDisc(b, path, -1, Options{})
		var views []*Node
		_ = tree.Walk(func(v *Node) error {
			if v.Kind == View && v.vm != nil && v.vm.lazy != nil {
				views = append(views, v)
			}
			return nil
		})
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		t0, c0 := time.Now(), cpuTime()
		for _, v := range views {
			v.sizeLazy(false)
		}
		d, c := time.Since(t0), cpuTime()-c0
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(d.Milliseconds()), "ms/size-all")
		b.ReportMetric(float64(c.Milliseconds()), "cpu-ms/size-all")
		b.ReportMetric(float64(m1.TotalAlloc-m0.TotalAlloc)/1e6, "MB-alloc/op")
		b.ReportMetric(float64(len(views)), "views/op")
		b.ReportMetric(float64(m1.NumGC-m0.NumGC), "GCs/op")
		b.StartTimer()
	}
}
