package main

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestHeapMappings: the run of adjacent mappings around the one holding
// the address, its writable anonymous ones only; nothing when the address
// is in no mapping or in one of a file.
func TestHeapMappings(t *testing.T) {
	maps := []byte(`00400000-008d0000 r-xp 00000000 fe:00 9997519                            /work/main/bin/gcfs
00e4f000-02e99000 rw-p 00000000 00:00 0 
30250000000-30252400000 ---p 00000000 00:00 0 
30252400000-30252800000 rw-p 00000000 00:00 0 
30252800000-30253800000 rw-p 00000000 00:00 0 
30253800000-30254000000 rw-p 00000000 00:00 0                            [stack]
30254000000-30257000000 ---p 00000000 00:00 0 
30258000000-30259000000 rw-p 00000000 00:00 0 
7f658c000000-7f658c021000 rw-p 00000000 00:00 0 
bad line
7f658c021000-7f6590000000 ---p 00000000 00:00 0`)
	got := heapMappings(maps, 0x30252900000)
	want := [][2]uintptr{{0x30252400000, 0x30252800000}, {0x30252800000, 0x30253800000}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("heap mappings %x, want %x", got, want)
	}
	for _, at := range []uintptr{0x500000, 0x30257800000, 0x30254000000, 1} {
		if got := heapMappings(maps, at); got != nil {
			t.Errorf("at %#x: %x, want none (a file's, a gap, not writable, nothing)", at, got)
		}
	}
}

// TestHugeHeapReserve: after reserve, the mapping under the memory it
// reserved is advised for huge pages ("hg" among its VmFlags in smaps),
// where the kernel offers them on advice. (Not a heap object allocated
// after it: with the package's other tests run first in the process, the
// runtime may place it in free pages of an older mapping, not adjacent to
// the reserve's, which only the next advise after a collection reaches.)
func TestHugeHeapReserve(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") && !strings.Contains(string(mode), "[always]") {
		t.Skipf("transparent huge pages not offered on advice here (%q, %v)", mode, err)
	}
	h := newHugeHeap()
	h.reserve(64 << 20)
	if h.failed {
		t.Fatal("the advice failed")
	}
	at := h.reserved
	smaps, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	in := false
	for _, l := range strings.Split(string(smaps), "\n") {
		f := strings.Fields(l)
		if len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":") {
			s, e, _ := strings.Cut(f[0], "-")
			lo, err1 := strconv.ParseUint(s, 16, 64)
			hi, err2 := strconv.ParseUint(e, 16, 64)
			in = err1 == nil && err2 == nil && uintptr(lo) <= at && at < uintptr(hi)
			continue
		}
		if in && len(f) > 0 && f[0] == "VmFlags:" {
			for _, fl := range f[1:] {
				if fl == "hg" {
					return
				}
			}
			t.Fatalf("the heap's mapping at %#x is not advised: %s", at, l)
		}
	}
	t.Fatalf("no mapping holds the heap object at %#x", at)
}
