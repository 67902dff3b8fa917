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
// the size-ahead worker sizes them, each round on a fresh build (no sizes
// kept) with a cache that starts empty. Per round, averaged: ms/size-all
// is the sizing's wall time, cpu-ms/size-all the process's CPU in it (a
// first find is short of the server's CPU), MB-alloc the bytes it
// allocated (the collector's work follows them), GCs its collections,
// mesh-hits the meshes views took from the memo (meshmemo.go); views is
// how many it sized.
func BenchmarkSizeAllRetail(b *testing.B) {
	path, _ := sharedImage(b, mkdisc.Retail)
	var wall, cpu time.Duration
	var alloc, gcs uint64
	var hits int64
	views := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		tree, _ := openDisc(b, path, -1, Options{})
		var lazy []*Node
		_ = tree.Walk(func(v *Node) error {
			if v.Kind == View && v.vm != nil && v.vm.lazy != nil {
				lazy = append(lazy, v)
			}
			return nil
		})
		views = len(lazy)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		t0, c0 := time.Now(), cpuTime()
		for _, v := range lazy {
			v.sizeLazy(false)
		}
		wall, cpu = wall+time.Since(t0), cpu+cpuTime()-c0
		b.StopTimer()
		runtime.ReadMemStats(&m1)
		alloc += m1.TotalAlloc - m0.TotalAlloc
		gcs += uint64(m1.NumGC - m0.NumGC)
		hits += tree.meshHits.Load()
		b.StartTimer()
	}
	n := float64(b.N)
	b.ReportMetric(float64(wall.Milliseconds())/n, "ms/size-all")
	b.ReportMetric(float64(cpu.Milliseconds())/n, "cpu-ms/size-all")
	b.ReportMetric(float64(alloc)/1e6/n, "MB-alloc/op")
	b.ReportMetric(float64(gcs)/n, "GCs/op")
	b.ReportMetric(float64(hits)/n, "mesh-hits/op")
	b.ReportMetric(float64(views), "views/op")
}
