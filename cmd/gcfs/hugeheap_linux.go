package main

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeHeap asks the kernel for transparent huge pages under the Go heap
// (madvise MADV_HUGEPAGE), where the system's policy is "madvise" (Debian's
// default): the runtime no longer asks for them itself. A page fault is
// the cost of every page the heap touches first, and on a virtual machine
// it is dear: 12 µs a 4 KiB page here, where a 2 MiB page costs about as
// much as eight. A server whose heap grows to its cache's budget faulted
// 87,000 times on the retail tree's first find (about a second of CPU);
// the cache's blocks are megabytes of bytes each, which huge pages fit.
//
// The heap's mappings are found by one of its objects: the run of
// adjacent mappings (the runtime's reservation, mapped piece by piece as
// the heap grows) around the one holding it. Each writable mapping of the
// run is advised once; a piece mapped since is a mapping of its own,
// advised on the next call (after each collection: memPacer).
type hugeHeap struct {
	mu      sync.Mutex
	probe   []byte // a heap object, kept alive: where the heap is
	advised map[[2]uintptr]bool
	failed  bool
	// reserved is where reserve's memory began (for its test: the
	// mapping holding it is advised).
	reserved uintptr
}

func newHugeHeap() *hugeHeap {
	return &hugeHeap{probe: make([]byte, 64<<10), advised: map[[2]uintptr]bool{}}
}

// reserve has the runtime map n bytes of heap at once, advised, for the
// heap to grow into: a large object of fresh memory the runtime does not
// touch (it is known zero), dropped at once. The runtime keeps what it
// maps, so the heap's growth up to n lands in huge pages from its first
// touch; advise alone, after a collection, finds most of a new piece
// already faulted in 4 KiB pages.
func (h *hugeHeap) reserve(n int) {
	if h == nil || n <= 0 {
		return
	}
	b := make([]byte, n)
	h.mu.Lock()
	h.probe, h.reserved = b, uintptr(unsafe.Pointer(&b[0]))
	h.mu.Unlock()
	h.advise()
	h.mu.Lock()
	h.probe = make([]byte, 64<<10)
	h.mu.Unlock()
}

// advise advises the heap's mappings not advised yet. Any failure (no
// /proc, a kernel without THP) stops it for good: it is advice.
func (h *hugeHeap) advise() {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed {
		return
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		h.failed = true
		return
	}
	at := uintptr(unsafe.Pointer(unsafe.SliceData(h.probe)))
	for _, m := range heapMappings(maps, at) {
		if h.advised[m] {
			continue
		}
		if _, _, e := unix.Syscall(unix.SYS_MADVISE, m[0], m[1]-m[0], unix.MADV_HUGEPAGE); e != 0 {
			h.failed = true
			return
		}
		h.advised[m] = true
	}
}

// heapMappings is the writable private anonymous mappings of the run of
// adjacent mappings in maps (/proc/self/maps) around the one holding at.
func heapMappings(maps []byte, at uintptr) [][2]uintptr {
	type vma struct {
		start, end uintptr
		rw         bool
	}
	var vmas []vma
	hold := -1
	for len(maps) > 0 {
		line := maps
		if i := bytes.IndexByte(maps, '\n'); i >= 0 {
			line, maps = maps[:i], maps[i+1:]
		} else {
			maps = nil
		}
		f := bytes.Fields(line)
		if len(f) < 5 {
			continue
		}
		dash := bytes.IndexByte(f[0], '-')
		if dash < 0 {
			continue
		}
		s, err1 := strconv.ParseUint(string(f[0][:dash]), 16, 64)
		e, err2 := strconv.ParseUint(string(f[0][dash+1:]), 16, 64)
		if err1 != nil || err2 != nil || e <= s {
			continue
		}
		anon := len(f) == 5 && string(f[4]) == "0" // no file, not [stack] or [heap]
		v := vma{uintptr(s), uintptr(e), anon && string(f[1]) == "rw-p"}
		if v.start <= at && at < v.end {
			hold = len(vmas)
		}
		vmas = append(vmas, v)
	}
	if hold < 0 || !vmas[hold].rw {
		return nil
	}
	lo, hi := hold, hold
	for lo > 0 && vmas[lo-1].end == vmas[lo].start {
		lo--
	}
	for hi+1 < len(vmas) && vmas[hi+1].start == vmas[hi].end {
		hi++
	}
	var out [][2]uintptr
	for _, v := range vmas[lo : hi+1] {
		if v.rw {
			out = append(out, [2]uintptr{v.start, v.end})
		}
	}
	return out
}
