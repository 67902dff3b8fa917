package main

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

func TestMemLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct{ budget, live, cached, want int64 }{
		{256 * mib, 0, 0, 256*mib + 64*mib},
		// a full cache and a large tree: the limit stays above the live heap
		{256 * mib, 330 * mib, 256 * mib, 256*mib + 64*mib + 74*mib},
		// live below what the cache counts (blocks counted, not yet live): no credit
		{64 * mib, 10 * mib, 60 * mib, 64*mib + 16*mib},
		// a small cache beside a large tree: the room is half the tree's heap
		{64 * mib, 194 * mib, 64 * mib, 64*mib + 65*mib + 130*mib},
		// the room is a quarter of a large budget
		{1024 * mib, 0, 0, 1024*mib + 256*mib},
	} {
		if got := memLimitFor(c.budget, c.live, c.cached); got != c.want {
			t.Errorf("memLimitFor(%d, %d, %d) = %d, want %d", c.budget, c.live, c.cached, got, c.want)
		}
		if l := memLimitFor(c.budget, c.live, c.cached); l < c.live+memHeadroomFor(c.budget)/2 && c.live > c.cached {
			t.Errorf("limit %d leaves no room above a live heap of %d", l, c.live)
		}
	}
}

// TestMemPacerFollowsLiveHeap: with a live heap larger than the cache's
// budget and nothing in the cache, the limit rises above it after a
// collection, where a fixed budget+headroom limit would sit below it (and
// the collector would run without pause).
func TestMemPacerFollowsLiveHeap(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	const budget = 8 << 20
	p := startMemPacer(budget, func() int64 { return 0 })
	defer p.stop()
	live := make([][]byte, 0, 96)
	for range 96 {
		live = append(live, make([]byte, 1<<20)) // 96 MiB held live, not the cache's
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		runtime.GC()
		time.Sleep(20 * time.Millisecond) // the finalizer goroutine paces
		if l := debug.SetMemoryLimit(-1); l >= 96<<20+budget {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("limit %d MiB never rose above the 96 MiB live heap", debug.SetMemoryLimit(-1)>>20)
		}
	}
	runtime.KeepAlive(live)
}
