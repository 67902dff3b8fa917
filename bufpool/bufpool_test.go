package bufpool

import (
	"runtime"
	"testing"
)

// A buffer of n bytes has length n and its class's capacity; one past the
// classes is made to measure; a buffer given back serves a later request
// of its class, and one whose capacity is not a class's serves only the
// class below it (whose requests it can hold whole).
func TestPool(t *testing.T) {
	for _, tc := range []struct{ n, cap int }{
		{0, 0}, {1, 64 << 10}, {64 << 10, 64 << 10}, {64<<10 + 1, 128 << 10},
		{3 << 20, 4 << 20}, {16 << 20, 16 << 20}, {16<<20 + 1, 16<<20 + 1},
	} {
		var bp Pool
		p := bp.Get(tc.n)
		if len(*p) != tc.n || cap(*p) != tc.cap {
			t.Errorf("get(%d): len %d cap %d, want len %d cap %d", tc.n, len(*p), cap(*p), tc.n, tc.cap)
		}
	}

	var bp Pool
	p := bp.Get(100 << 10) // class 128 KiB
	(*p)[0] = 7
	bp.Put(p)
	q := bp.Get(70 << 10) // the same class
	if len(*q) != 70<<10 || cap(*q) != 128<<10 {
		t.Fatalf("a class's second get: len %d cap %d", len(*q), cap(*q))
	}
	// (sync.Pool may drop what it holds, under -race at random: reuse is
	// not asserted, only that whatever comes back has the room asked.)

	// A grown buffer of 200 KiB is not a class's capacity: it may serve
	// requests up to 128 KiB, never one of 256 KiB.
	odd := make([]byte, 10, 200<<10)
	bp.Put(&odd)
	for range 4 {
		r := bp.Get(256 << 10)
		if cap(*r) < 256<<10 || len(*r) != 256<<10 {
			t.Fatalf("get(256 KiB) after an odd put: len %d cap %d", len(*r), cap(*r))
		}
	}
	small := make([]byte, 100)
	bp.Put(&small) // below every class: dropped, not kept
	if r := bp.Get(64 << 10); cap(*r) < 64<<10 {
		t.Fatalf("get(64 KiB) after a small put: cap %d", cap(*r))
	}
	bp.Put(nil)
}

func TestClass(t *testing.T) {
	for _, tc := range []struct{ n, class int }{
		{-1, -1}, {0, -1}, {1, 0}, {64 << 10, 0}, {64<<10 + 1, 1}, {1 << 20, 4},
		{16 << 20, maxShift - minShift}, {16<<20 + 1, -1},
	} {
		if got := class(tc.n); got != tc.class {
			t.Errorf("class(%d) = %d, want %d", tc.n, got, tc.class)
		}
	}
}

// TestPoolKeeps: a buffer given back outlives collections (the kept free
// list), up to KeepMax bytes of them; past that they go to the sync.Pool.
func TestPoolKeeps(t *testing.T) {
	var bp Pool
	p := bp.Get(1 << 20)
	bp.Put(p)
	runtime.GC()
	runtime.GC()
	if q := bp.Get(1<<20 - 5); q != p || len(*q) != 1<<20-5 {
		t.Fatal("a buffer given back did not outlive two collections")
	}
	var ps []*[]byte
	for range KeepMax/(4<<20) + 2 {
		ps = append(ps, bp.Get(4<<20))
	}
	for _, p := range ps {
		bp.Put(p)
	}
	if bp.keptLen != KeepMax || len(bp.kept[class(4<<20)]) != KeepMax/(4<<20) {
		t.Fatalf("kept %d bytes in %d buffers, want %d", bp.keptLen, len(bp.kept[class(4<<20)]), KeepMax)
	}
	for range KeepMax / (4 << 20) {
		bp.Get(4 << 20)
	}
	if bp.keptLen != 0 {
		t.Fatalf("%d bytes kept after taking them all", bp.keptLen)
	}
}
