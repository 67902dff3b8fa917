// Package bufpool owns the pool of large byte buffers the tree's readers
// and encoders use for one call each and give back (whole streams, glb
// JSON chunks): power-of-two classes, so that a buffer given back serves
// any later request of its class.
package bufpool

import (
	"math/bits"
	"sync"
)

const (
	minShift = 16 // 64 KiB: smaller buffers are not pooled
	maxShift = 24 // 16 MiB
	Max      = 1 << maxShift
)

// KeepMax bounds the bytes of the buffers a Pool keeps through collections.
const KeepMax = 32 << 20

// Pool keeps buffers of 64 KiB to 16 MiB between uses, in power-of-two
// classes; buffers past Max are not kept. Up to KeepMax bytes of them are
// kept for good (a free list per class), the rest in a sync.Pool, which
// keeps them only across a collection or two. A sync.Pool alone was
// emptied by each collection of a first find, whose sizing collects five
// or six times: the pool made 92 MB of its buffers afresh in each round
// of BenchmarkSizeAllRetail, and fresh memory costs a page fault a page.
// The zero Pool is ready.
type Pool struct {
	mu      sync.Mutex
	kept    [maxShift - minShift + 1][]*[]byte
	keptLen int64                              // their capacities' sum
	classes [maxShift - minShift + 1]sync.Pool // of *[]byte
}

// class is the pool class of a buffer of n bytes, or -1 when no class
// holds it.
func class(n int) int {
	if n <= 0 || n > Max {
		return -1
	}
	shift := max(bits.Len(uint(n-1)), minShift)
	return shift - minShift
}

// Get returns a buffer of length n (its bytes are not cleared: callers
// write all of them before they read any). Capacity is n rounded up to its
// class.
func (bp *Pool) Get(n int) *[]byte {
	c := class(n)
	if c < 0 {
		b := make([]byte, max(n, 0)) // bounded by the callers' checks
		return &b
	}
	bp.mu.Lock()
	if k := len(bp.kept[c]); k > 0 {
		p := bp.kept[c][k-1]
		bp.kept[c][k-1] = nil
		bp.kept[c] = bp.kept[c][:k-1]
		bp.keptLen -= int64(cap(*p))
		bp.mu.Unlock()
		*p = (*p)[:n]
		return p
	}
	bp.mu.Unlock()
	if p, _ := bp.classes[c].Get().(*[]byte); p != nil {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<(c+minShift))
	return &b
}

// Put gives a buffer back; it must not be used after. A buffer whose
// capacity is not a class's (one that grew, or was never the pool's) goes
// to the class it fills, when one does.
func (bp *Pool) Put(p *[]byte) {
	if p == nil {
		return
	}
	k := cap(*p)
	c := class(k)
	if c < 0 {
		return
	}
	if 1<<(c+minShift) != k {
		c-- // a class's requests may need all of its capacity
		if c < 0 {
			return
		}
	}
	*p = (*p)[:0]
	bp.mu.Lock()
	if bp.keptLen+int64(k) <= KeepMax {
		bp.kept[c] = append(bp.kept[c], p)
		bp.keptLen += int64(k)
		bp.mu.Unlock()
		return
	}
	bp.mu.Unlock()
	bp.classes[c].Put(p)
}
