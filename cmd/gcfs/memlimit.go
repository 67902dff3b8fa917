package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// memHeadroomFor is how far the server's heap may grow past what it holds
// live (the cache's blocks and the tree) before a collection must run: a
// quarter of the cache's budget, at least 16 MiB. The room is what the
// collector works in: each cycle marks the whole live heap (the tree's
// nodes, the cache's blocks), and at a fixed 16 MiB the retail tree's
// first find ran 11 cycles of ~90 ms of CPU each with the default 256 MiB
// cache; with 64 MiB, the server's CPU in that find fell from 458-570
// ticks to 365-465 (three interleaved runs), for a peak ~45 MB higher. A
// small cache keeps a small room: at 48 MiB with a 64 MiB cache the
// retail tree's server peaked at 197 MiB, over TestMemoryRetail's bound
// then (189 MiB). (memLimitFor gives a large tree more: half its heap.)
func memHeadroomFor(budget int64) int64 {
	return max(16<<20, budget/4)
}

// memLimitFor is the soft memory limit for a server whose cache may hold
// budget bytes: the budget, the headroom, and the live heap that is not
// the cache's (the tree, the inodes the kernel has looked up, open
// handles), which grows with what was looked at. A fixed cache+headroom
// limit sat below the live heap once a large tree's cache was full, and
// the collector then ran without pause (capped at half the CPU): on the
// retail tree's first find, with 72k nodes, it was 52% of the server's
// time.
//
// The headroom is at least half that other live heap, whatever the
// budget: each collection marks all of it, so a room far smaller than it
// runs a collection for every few megabytes allocated. With a 64 MiB
// cache the room was 16 MiB beside ~110 MB of other live heap, less than
// the runtime's own memory under the limit: in the retail tree's first
// find the heap's goal sat at the live heap (171-174 MB) and the collector
// ran 312 times. That find (1.4 GB allocated, most of it sizing views)
// took 13.0-14.1 s and 24-27 s of the machine's CPU, against 3 s with the
// default cache; at half the other heap, 4.5-6.1 s and 8-11 s, for a
// server 50 MB larger after it (245-256 MB against 197-198; three
// interleaved runs). The default budget's room (64 MiB) is about that
// half already: its find took the same time, its server 474-490 MB after
// it against 442-456.
func memLimitFor(budget, live, cached int64) int64 {
	rest := live - cached
	if rest < 0 {
		rest = 0
	}
	return budget + max(memHeadroomFor(budget), rest/2) + rest
}

// memPacer keeps the soft memory limit at memLimitFor after every
// collection, from the collector's own count of the live heap (no
// stop-the-world; it runs on the finalizer goroutine, once a cycle, so an
// idle server is never woken for it).
type memPacer struct {
	budget  int64
	cached  func() int64
	stopped atomic.Bool
	sample  []metrics.Sample
	huge    *hugeHeap
	mapped  uint64 // the runtime's mapped bytes when huge last advised
}

func startMemPacer(budget int64, cached func() int64) *memPacer {
	p := &memPacer{budget: budget, cached: cached, huge: newHugeHeap(),
		sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}}}
	debug.SetMemoryLimit(memLimitFor(budget, 0, 0))
	// The cache's budget and room for the tree beside it (the retail
	// tree's server peaks near 430 MB with the default 256 MiB): address
	// space only, none of it touched until the heap grows into it.
	p.huge.reserve(int(min(budget+512<<20, 2<<30)))
	p.arm()
	return p
}

// stop ends the pacing (the limit stays where it was).
func (p *memPacer) stop() { p.stopped.Store(true) }

// arm sets a finalizer on a fresh object that nothing references: the next
// collection finds it dead and runs the finalizer, which paces and re-arms.
func (p *memPacer) arm() {
	t := new([16]byte)
	runtime.SetFinalizer(t, func(*[16]byte) {
		if p.stopped.Load() {
			return
		}
		p.pace()
		p.arm()
	})
}

func (p *memPacer) pace() {
	metrics.Read(p.sample)
	var live int64
	if p.sample[0].Value.Kind() == metrics.KindUint64 {
		live = int64(p.sample[0].Value.Uint64())
	}
	debug.SetMemoryLimit(memLimitFor(p.budget, live, p.cached()))
	// The heap mapped more since the last advice: advise the new pieces.
	if p.sample[1].Value.Kind() == metrics.KindUint64 {
		if m := p.sample[1].Value.Uint64(); m > p.mapped {
			p.mapped = m
			p.huge.advise()
		}
	}
}
