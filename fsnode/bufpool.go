package fsnode

import (
	"math/bits"
	"sync"
)

// wholeBufs holds, between uses, the buffers of streams handled whole: a
// stream read into memory for a whole decode or a parallel scan, a whole
// decode's output before its blocks are copied into the cache, a mesh
// source read whole (readSource). Each is used for one call and given back:
// sizing every lazily sized view of the retail tree made them afresh, some
// 220 MB of the 1.1 GB a round allocated, and each large allocation is
// memory the runtime clears and a collection paces by.
//
// Buffers come in power-of-two classes, so that a buffer given back serves
// any later request of its class rather than only one no longer than it;
// buffers past bufPoolMax are not kept. A sync.Pool keeps them only across
// a collection or two: an idle mount holds none of them for long.
var wholeBufs bufPool

const (
	bufPoolMinShift = 16 // 64 KiB: smaller buffers are not pooled
	bufPoolMaxShift = 24 // 16 MiB
	bufPoolMax      = 1 << bufPoolMaxShift
)

type bufPool struct {
	classes [bufPoolMaxShift - bufPoolMinShift + 1]sync.Pool // of *[]byte
}

// class is the pool class of a buffer of n bytes, or -1 when no class
// holds it.
func bufClass(n int) int {
	if n <= 0 || n > bufPoolMax {
		return -1
	}
	shift := max(bits.Len(uint(n-1)), bufPoolMinShift)
	return shift - bufPoolMinShift
}

// get returns a buffer of length n (its bytes are not cleared: callers
// write all of them before they read any). Capacity is n rounded up to its
// class.
func (bp *bufPool) get(n int) *[]byte {
	c := bufClass(n)
	if c < 0 {
		b := make([]byte, max(n, 0)) // bounded by the callers' checks
		return &b
	}
	if p, _ := bp.classes[c].Get().(*[]byte); p != nil {
		*p = (*p)[:n]
		return p
	}
	b := make([]byte, n, 1<<(c+bufPoolMinShift))
	return &b
}

// put gives a buffer back; it must not be used after. A buffer whose
// capacity is not a class's (one that grew, or was never the pool's) goes
// to the class it fills, when one does.
func (bp *bufPool) put(p *[]byte) {
	if p == nil {
		return
	}
	k := cap(*p)
	c := bufClass(k)
	if c < 0 {
		return
	}
	if 1<<(c+bufPoolMinShift) != k {
		c-- // a class's requests may need all of its capacity
		if c < 0 {
			return
		}
	}
	*p = (*p)[:0]
	bp.classes[c].Put(p)
}
