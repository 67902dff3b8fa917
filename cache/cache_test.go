package cache

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func block(n int, b byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = b
	}
	return p
}

func TestGetHitMiss(t *testing.T) {
	c := New(1 << 20)
	loads := 0
	load := func() ([]byte, error) { loads++; return block(100, 7), nil }
	for i := 0; i < 3; i++ {
		v, err := c.Get(Key{1, 2}, load)
		if err != nil || len(v) != 100 || v[0] != 7 {
			t.Fatalf("Get = %d bytes, %v", len(v), err)
		}
	}
	if loads != 1 {
		t.Fatalf("loads = %d, want 1", loads)
	}
	s := c.Stats()
	if s.Hits != 2 || s.Misses != 1 || s.Bytes != 100 || s.Entries != 1 || s.MaxBytes != 1<<20 {
		t.Fatalf("stats = %+v", s)
	}
	if _, ok := c.Peek(Key{1, 2}); !ok {
		t.Fatal("Peek missed a cached block")
	}
	if _, ok := c.Peek(Key{2, 2}); ok {
		t.Fatal("Peek found an absent block")
	}
	if s2 := c.Stats(); s2.Misses != 1 || s2.Hits != 2 {
		t.Fatalf("Peek changed counters: %+v", s2)
	}
}

func TestBudgetNeverExceeded(t *testing.T) {
	const budget = 10_000
	c := New(budget)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 2000; i++ {
		n := rng.Intn(3000)
		k := Key{uint64(rng.Intn(5)), rng.Intn(40)}
		if _, err := c.Get(k, func() ([]byte, error) { return block(n, 1), nil }); err != nil {
			t.Fatal(err)
		}
		s := c.Stats()
		if s.Bytes > budget || s.Bytes < 0 {
			t.Fatalf("after %d gets: %d bytes cached, budget %d", i, s.Bytes, budget)
		}
	}
	if c.Stats().Evictions == 0 {
		t.Fatal("no evictions despite a budget far below the working set")
	}
}

func TestLRUOrder(t *testing.T) {
	c := New(300)
	get := func(b int) {
		c.Get(Key{1, b}, func() ([]byte, error) { return block(100, byte(b)), nil })
	}
	get(1)
	get(2)
	get(3)
	get(1) // 1 becomes most recent; 2 is now oldest
	get(4) // evicts 2
	if _, ok := c.Peek(Key{1, 2}); ok {
		t.Fatal("least recently used block 2 was kept")
	}
	for _, b := range []int{1, 3, 4} {
		if _, ok := c.Peek(Key{1, b}); !ok {
			t.Fatalf("block %d evicted out of LRU order", b)
		}
	}
	if s := c.Stats(); s.Evictions != 1 || s.Bytes != 300 || s.Entries != 3 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestOversizedBlockNotKept(t *testing.T) {
	c := New(100)
	v, err := c.Get(Key{1, 1}, func() ([]byte, error) { return block(101, 1), nil })
	if err != nil || len(v) != 101 {
		t.Fatalf("Get = %d, %v", len(v), err)
	}
	if s := c.Stats(); s.Bytes != 0 || s.Entries != 0 {
		t.Fatalf("oversized block cached: %+v", s)
	}
}

func TestMergedMisses(t *testing.T) {
	c := New(1 << 20)
	var loads atomic.Int32
	release := make(chan struct{})
	const n = 32
	var wg sync.WaitGroup
	var started sync.WaitGroup
	started.Add(n)
	results := make([][]byte, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			started.Done()
			v, err := c.Get(Key{9, 9}, func() ([]byte, error) {
				loads.Add(1)
				<-release
				return block(64, 5), nil
			})
			if err != nil {
				t.Error(err)
			}
			results[i] = v
		}(i)
	}
	started.Wait()
	// Give every goroutine time to reach Get before the single load finishes.
	time.Sleep(50 * time.Millisecond)
	close(release)
	wg.Wait()
	if got := loads.Load(); got != 1 {
		t.Fatalf("%d loads for %d concurrent Gets of one key, want 1", got, n)
	}
	for i, v := range results {
		if len(v) != 64 || v[0] != 5 {
			t.Fatalf("goroutine %d got %d bytes", i, len(v))
		}
	}
	if s := c.Stats(); s.Misses != 1 || s.Hits != n-1 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestErrorsNotCached(t *testing.T) {
	c := New(1 << 20)
	bad := errors.New("corrupt")
	calls := 0
	for i := 0; i < 3; i++ {
		_, err := c.Get(Key{1, 1}, func() ([]byte, error) { calls++; return nil, bad })
		if !errors.Is(err, bad) {
			t.Fatalf("err = %v", err)
		}
	}
	if calls != 3 {
		t.Fatalf("failing load called %d times, want 3 (errors must not be cached)", calls)
	}
	v, err := c.Get(Key{1, 1}, func() ([]byte, error) { return []byte("ok"), nil })
	if err != nil || string(v) != "ok" {
		t.Fatalf("after errors: %q, %v", v, err)
	}
	if s := c.Stats(); s.Entries != 1 || s.Bytes != 2 {
		t.Fatalf("stats = %+v", s)
	}
}

func TestPanicInLoad(t *testing.T) {
	c := New(1 << 20)
	_, err := c.Get(Key{1, 1}, func() ([]byte, error) { panic("boom") })
	var pe *PanicError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want PanicError", err)
	}
	// The key is not stuck in flight.
	v, err := c.Get(Key{1, 1}, func() ([]byte, error) { return []byte("x"), nil })
	if err != nil || string(v) != "x" {
		t.Fatalf("after panic: %q, %v", v, err)
	}
}

func TestZeroBudget(t *testing.T) {
	c := New(0)
	v, err := c.Get(Key{1, 1}, func() ([]byte, error) { return []byte("abc"), nil })
	if err != nil || string(v) != "abc" {
		t.Fatal(v, err)
	}
	if s := c.Stats(); s.Entries != 0 || s.Bytes != 0 {
		t.Fatalf("zero budget cached: %+v", s)
	}
}

func TestConcurrentStress(t *testing.T) {
	const budget = 64 << 10
	c := New(budget)
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(int64(g)))
			for i := 0; i < 3000; i++ {
				k := Key{uint64(rng.Intn(4)), rng.Intn(64)}
				want := byte(k.File*64 + uint64(k.Block))
				v, err := c.Get(k, func() ([]byte, error) {
					if rng.Intn(10) == 0 {
						return nil, fmt.Errorf("transient")
					}
					return block(1+rng.Intn(4096), want), nil
				})
				if err == nil && (len(v) == 0 || v[0] != want) {
					t.Errorf("key %v: got block of %d bytes starting %d", k, len(v), v[0])
					return
				}
				if s := c.Stats(); s.Bytes > budget {
					t.Errorf("budget exceeded: %d", s.Bytes)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	s := c.Stats()
	var sum int64
	for _, k := range c.lru.Keys() {
		v, _ := c.lru.Peek(k)
		sum += int64(len(v))
	}
	if sum != s.Bytes {
		t.Fatalf("byte count drifted: counter %d, actual %d", s.Bytes, sum)
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(1 << 30)
	blk := block(64<<10, 1)
	for i := 0; i < 1024; i++ {
		c.Get(Key{1, i}, func() ([]byte, error) { return blk, nil })
	}
	load := func() ([]byte, error) { return blk, nil }
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			c.Get(Key{1, i & 1023}, load)
			i++
		}
	})
}

func TestPut(t *testing.T) {
	c := New(250)
	c.Put(Key{1, 0}, block(100, 1))
	c.Put(Key{1, 1}, block(100, 2))
	if v, ok := c.Peek(Key{1, 1}); !ok || v[0] != 2 {
		t.Fatal("a put block is not cached")
	}
	v, err := c.Get(Key{1, 0}, func() ([]byte, error) { t.Fatal("Get loaded a put block"); return nil, nil })
	if err != nil || v[0] != 1 {
		t.Fatalf("Get of a put block: %v", err)
	}
	c.Put(Key{1, 1}, block(120, 3)) // a replacement, not an eviction
	if s := c.Stats(); s.Misses != 0 || s.Bytes != 220 || s.Evictions != 0 || s.Entries != 2 {
		t.Fatalf("stats after puts: %+v", s)
	}
	c.Put(Key{1, 2}, block(100, 4)) // over budget: the oldest goes
	if s := c.Stats(); s.Bytes > 250 || s.Evictions != 1 {
		t.Fatalf("budget after put: %+v", s)
	}
	c.Put(Key{1, 3}, block(251, 5)) // larger than the budget: not kept
	if _, ok := c.Peek(Key{1, 3}); ok || c.MaxBytes() != 250 {
		t.Fatal("a block over the budget was kept")
	}
}

// TestHas: a key is had while its load runs and once it is cached, not
// before, nor after a failed load.
func TestHas(t *testing.T) {
	c := New(1 << 20)
	k := Key{1, 0}
	if c.Has(k) {
		t.Fatal("an empty cache has a key")
	}
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Get(k, func() ([]byte, error) {
			close(started)
			<-release
			return block(10, 1), nil
		})
	}()
	<-started
	if !c.Has(k) {
		t.Error("a key being loaded is not had")
	}
	close(release)
	<-done
	if !c.Has(k) {
		t.Error("a cached key is not had")
	}
	k2 := Key{1, 1}
	c.Get(k2, func() ([]byte, error) { return nil, errors.New("bad block") })
	if c.Has(k2) {
		t.Error("a key whose load failed is had")
	}
}

// TestDrop: a dropped block leaves the cache and its bytes, counted as
// dropped, not evicted; dropping what is not cached changes nothing.
func TestDrop(t *testing.T) {
	c := New(1000)
	c.Put(Key{1, 0}, block(100, 1))
	c.Put(Key{1, 1}, block(200, 2))
	c.Drop(Key{1, 0})
	c.Drop(Key{1, 7})
	if c.Has(Key{1, 0}) || !c.Has(Key{1, 1}) {
		t.Fatal("Drop took the wrong block")
	}
	if s := c.Stats(); s.Bytes != 200 || s.Entries != 1 || s.Dropped != 1 || s.Evictions != 0 {
		t.Fatalf("stats after drops: %+v", s)
	}
}

// A recyclable block's buffer is handed out again only once no entry holds
// it and every Get and Peek that returned it was released; one never
// released keeps it out of the free list for good.
func TestRecycle(t *testing.T) {
	c := New(4 * BufferSize)
	fill := func(k Key, b byte) []byte {
		v := c.NewBuffer(1000)
		for i := range v {
			v[i] = b
		}
		c.PutRecyclable(k, v)
		return v
	}
	same := func(a, b []byte) bool { return base(a) == base(b) }
	a := fill(Key{1, 0}, 1)
	got, _ := c.Get(Key{1, 0}, nil) // held once
	p, _ := c.Peek(Key{1, 0})       // held twice
	c.Drop(Key{1, 0})
	if n := c.NewBuffer(1000); same(n, a) {
		t.Fatal("a dropped block still held was handed out again")
	}
	c.Release(got)
	if n := c.NewBuffer(1000); same(n, a) {
		t.Fatal("a dropped block held by a Peek was handed out again")
	}
	c.Release(p)
	c.Release(p) // (a release too many is ignored)
	if n := c.NewBuffer(1000); !same(n, a) || len(n) != 1000 {
		t.Fatal("a block no one holds was not recycled")
	}
	if s := c.Stats(); s.Recycled != 1 {
		t.Fatalf("recycled %d, want 1", s.Recycled)
	}

	// Evicted by the budget, with no hold: recycled at once.
	b := fill(Key{2, 0}, 2)
	for i := 1; i <= 4; i++ {
		fill(Key{2, i}, 2) // (4 more: the budget counts lengths, so none is evicted yet)
	}
	c.Put(Key{3, 0}, make([]byte, 4*BufferSize-4000)) // evicts the oldest
	if c.Cached(Key{2, 0}) {
		t.Fatal("the oldest block was not evicted")
	}
	if n := c.NewBuffer(10); !same(n, b) {
		t.Fatal("an evicted block no one holds was not recycled")
	}

	// A Peek never released pins the buffer; a Put over the same key with
	// the same block does not end the entry's hold.
	d := fill(Key{4, 0}, 4)
	c.Put(Key{4, 0}, d)
	if _, ok := c.Peek(Key{4, 0}); !ok {
		t.Fatal("block 4 not cached")
	}
	c.Drop(Key{4, 0})
	for range 2 * c.freeMax {
		if n := c.NewBuffer(1000); same(n, d) {
			t.Fatal("a block held by a Peek never released was recycled")
		}
	}

	// Not a buffer of the cache's: kept and dropped as any block.
	e := make([]byte, 100)
	c.PutRecyclable(Key{5, 0}, e)
	c.Drop(Key{5, 0})
	if c.leases[base(e)] != nil || c.leases[base(d)] == nil {
		t.Fatal("leases: a foreign buffer got one, or the pinned block lost its")
	}
}

// GetRecyclable's block is held by its caller and by every Get merged into
// its load: its buffer is handed out again only once all have released it
// and the cache has let go of it.
func TestGetRecyclableHolds(t *testing.T) {
	c := New(4 * BufferSize)
	k := Key{7, 0}
	same := func(a, b []byte) bool { return base(a) == base(b) }
	started := make(chan struct{})
	var buf []byte
	var wg sync.WaitGroup
	var merged []byte
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-started
		merged, _ = c.Get(k, func() ([]byte, error) { t.Error("a second load ran"); return nil, nil })
	}()
	got, err := c.GetRecyclable(k, func() ([]byte, error) {
		buf = c.NewBuffer(1000)
		close(started)
		// Wait until the other Get is merged into this load.
		for {
			c.mu.Lock()
			w := c.inflight[k].waiters
			c.mu.Unlock()
			if w == 1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		return buf, nil
	})
	wg.Wait()
	if err != nil || !same(got, buf) || !same(merged, buf) {
		t.Fatalf("got %v: the load's buffer not shared", err)
	}
	c.Drop(k)
	c.Release(got)
	if n := c.NewBuffer(1000); same(n, buf) {
		t.Fatal("a block a merged Get still holds was handed out again")
	}
	c.Release(merged)
	if n := c.NewBuffer(1000); !same(n, buf) {
		t.Fatal("a GetRecyclable block no one holds was not recycled")
	}

	// A plain Get's load result is never recycled.
	plain := make([]byte, 10, BufferSize)
	v, _ := c.Get(Key{8, 0}, func() ([]byte, error) { return plain, nil })
	c.Drop(Key{8, 0})
	c.Release(v)
	for range 2 * c.freeMax {
		if n := c.NewBuffer(10); same(n, plain) {
			t.Fatal("a plain Get's block was recycled")
		}
	}
}

// TestCold: the cold segment holds what speculative reads load (GetCold,
// PutCold) within its bound, recycling the buffers it evicts; a
// speculative read's hit leaves a cold block cold, a reader's moves it to
// the main LRU, where the cold bound no longer reaches it.
func TestCold(t *testing.T) {
	c := New(16 * BufferSize) // cold bound: 2 buffers
	if c.ColdMax() != 2*BufferSize {
		t.Fatalf("cold bound %d, want %d", c.ColdMax(), 2*BufferSize)
	}
	var loads int
	load := func(b byte) func() ([]byte, error) {
		return func() ([]byte, error) {
			loads++
			v := c.NewBuffer(BufferSize)
			for i := range v {
				v[i] = b
			}
			return v, nil
		}
	}
	get := func(get func(Key, func() ([]byte, error)) ([]byte, error), k Key, b byte) []byte {
		t.Helper()
		v, err := get(k, load(b))
		if err != nil || len(v) != BufferSize || v[0] != b {
			t.Fatalf("%v: %d bytes, %v", k, len(v), err)
		}
		c.Release(v)
		return v
	}
	a := get(c.GetCold, Key{1, 0}, 1)
	get(c.GetCold, Key{1, 1}, 2)
	if s := c.Stats(); s.ColdBytes != 2*BufferSize || s.Bytes != 2*BufferSize || loads != 2 {
		t.Fatalf("two cold loads: %+v, %d loads", s, loads)
	}
	get(c.GetCold, Key{1, 0}, 1) // a hit: it stays cold, the newest of the two
	if loads != 2 {
		t.Fatal("a cold block was loaded again")
	}
	get(c.GetCold, Key{1, 2}, 3) // past the bound: {1,1}, the oldest, goes
	if c.Cached(Key{1, 1}) || !c.Cached(Key{1, 0}) || !c.Cached(Key{1, 2}) {
		t.Fatal("the cold bound did not evict the least recent cold block")
	}
	if s := c.Stats(); s.ColdBytes != 2*BufferSize || s.Recycled != 0 {
		t.Fatalf("after an eviction: %+v", s)
	}
	// The evicted buffer is the next one handed out.
	if n := c.NewBuffer(10); c.Stats().Recycled != 1 {
		t.Fatal("the evicted cold block's buffer was not recycled")
	} else {
		c.PutRecyclable(Key{9, 0}, n)
	}
	// A reader's hit promotes: cold bytes drop, the block stays.
	get(c.GetRecyclable, Key{1, 0}, 1)
	if s := c.Stats(); s.ColdBytes != BufferSize || !c.Cached(Key{1, 0}) || loads != 3 {
		t.Fatalf("after a reader's hit: %+v, %d loads", s, loads)
	}
	get(c.GetCold, Key{1, 3}, 4)
	get(c.GetCold, Key{1, 4}, 5) // evicts cold ones only: {1,2}
	if !c.Cached(Key{1, 0}) || c.Cached(Key{1, 2}) {
		t.Fatal("the cold bound reached a promoted block, or kept past it")
	}
	if p, ok := c.Peek(Key{1, 0}); !ok || base(p) != base(a) {
		t.Fatal("the promoted block is not the one loaded")
	} else {
		c.Release(p)
	}
	// PutCold of a block the main LRU holds leaves it there.
	v := c.NewBuffer(BufferSize)
	c.PutRecyclable(Key{2, 0}, v)
	c.PutCold(Key{2, 0}, v)
	if s := c.Stats(); s.ColdBytes != 2*BufferSize {
		t.Fatalf("PutCold of a main block moved it: %+v", s)
	}
	// Drop reaches the cold segment.
	c.Drop(Key{1, 4})
	if c.Cached(Key{1, 4}) || c.Stats().ColdBytes != BufferSize {
		t.Fatal("Drop left a cold block")
	}
}

// TestColdBudget: any mix of reader and speculative loads, puts and drops
// keeps both bounds, and the byte counts equal the blocks held.
func TestColdBudget(t *testing.T) {
	c := New(10 * BufferSize)
	rng := rand.New(rand.NewSource(1))
	keys := map[Key]bool{}
	for i := range 5000 {
		k := Key{uint64(rng.Intn(4)), rng.Intn(12)}
		keys[k] = true
		n := 1 + rng.Intn(BufferSize)
		mk := func() ([]byte, error) { return c.NewBuffer(n), nil }
		switch rng.Intn(5) {
		case 0:
			v, _ := c.GetRecyclable(k, mk)
			c.Release(v)
		case 1:
			v, _ := c.GetCold(k, mk)
			c.Release(v)
		case 2:
			v, _ := mk()
			c.PutCold(k, v)
		case 3:
			v, _ := mk()
			c.PutRecyclable(k, v)
		case 4:
			c.Drop(k)
		}
		s := c.Stats()
		var held int64
		bases := map[*byte]Key{}
		for k := range keys {
			if v, ok := c.Peek(k); ok {
				held += int64(len(v))
				if o, dup := bases[base(v)]; dup && base(v) != nil {
					t.Fatalf("op %d: %v and %v share a buffer", i, o, k)
				}
				bases[base(v)] = k
				c.Release(v)
			}
		}
		if s.Bytes > s.MaxBytes || s.ColdBytes > c.ColdMax() || s.ColdBytes > s.Bytes || held != s.Bytes {
			t.Fatalf("op %d: %+v, %d bytes held", i, s, held)
		}
	}
}
