// Package cache owns the byte-bounded LRU of decoded blocks that every decoded
// file reads through: bounded in bytes, concurrent misses on one block merged into
// one load, safe for parallel use.
package cache

import (
	"fmt"
	"math"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Key names one decoded block of one file.
type Key struct {
	File  uint64 // the file's stable inode number
	Block int
}

// Stats are the cache's counters.
type Stats struct {
	Hits, Misses, Evictions int64
	Dropped                 int64 // blocks let go of by Drop, not by the budget
	Bytes, MaxBytes         int64
	Entries                 int
}

// call is one load in flight; later Gets of the same key wait on done.
type call struct {
	done chan struct{}
	val  []byte
	err  error
}

// Cache is a byte-bounded LRU of decoded blocks.
//
// The LRU itself is unbounded in entries; the byte budget is enforced here by
// evicting the oldest blocks until the sum of block lengths fits.
type Cache struct {
	maxBytes int64

	mu       sync.Mutex
	lru      *simplelru.LRU[Key, []byte]
	inflight map[Key]*call
	bytes    int64
	hits     int64
	misses   int64
	evicted  int64
	dropped  int64
}

// New returns a cache holding at most maxBytes of block data. A budget of zero
// or less caches nothing (loads are still merged).
func New(maxBytes int64) *Cache {
	c := &Cache{maxBytes: maxBytes, inflight: make(map[Key]*call)}
	// onEvict runs under c.mu (it is only called from methods we call with
	// the lock held), so the byte count stays exact.
	l, err := simplelru.NewLRU[Key, []byte](math.MaxInt32, func(_ Key, v []byte) {
		c.bytes -= int64(len(v))
		c.evicted++
	})
	if err != nil {
		panic(err) // only for a non-positive size, which MaxInt32 is not
	}
	c.lru = l
	return c
}

// Get returns the block for k, calling load on a miss; concurrent Gets of one
// missing key call load once and share its result. Errors are not cached.
// Callers must not modify the returned slice.
func (c *Cache) Get(k Key, load func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if v, ok := c.lru.Get(k); ok {
		c.hits++
		c.mu.Unlock()
		return v, nil
	}
	if cl, ok := c.inflight[k]; ok {
		// Merged into the load already running: counted as a hit on
		// that load's result, not as a second miss.
		c.hits++
		c.mu.Unlock()
		<-cl.done
		return cl.val, cl.err
	}
	c.misses++
	cl := &call{done: make(chan struct{})}
	c.inflight[k] = cl
	c.mu.Unlock()

	func() {
		// A panicking loader must not leave waiters blocked forever.
		defer func() {
			if r := recover(); r != nil {
				cl.err = &PanicError{Value: r}
			}
		}()
		cl.val, cl.err = load()
	}()

	c.mu.Lock()
	delete(c.inflight, k)
	if cl.err == nil {
		c.add(k, cl.val)
	}
	c.mu.Unlock()
	close(cl.done)
	return cl.val, cl.err
}

// add stores v under k and evicts until the budget holds. A block larger than
// the whole budget is returned to its caller but not kept. Called with c.mu held.
func (c *Cache) add(k Key, v []byte) {
	n := int64(len(v))
	if n > c.maxBytes {
		return
	}
	if c.lru.Remove(k) { // onEvict subtracts the old bytes
		c.evicted-- // a replacement is not an eviction
	}
	c.lru.Add(k, v)
	c.bytes += n
	for c.bytes > c.maxBytes {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

// Put stores a block that was decoded along with another (a whole stream
// decoded at once) without counting a miss; it replaces what k holds.
func (c *Cache) Put(k Key, v []byte) {
	c.mu.Lock()
	c.add(k, v)
	c.mu.Unlock()
}

// Drop lets go of k's block, if cached, before the budget would: its
// caller knows it will not be asked for again soon (a block the kernel's
// page cache now holds). A load of k in flight is not affected.
func (c *Cache) Drop(k Key) {
	c.mu.Lock()
	if c.lru.Remove(k) { // onEvict subtracts the bytes
		c.evicted--
		c.dropped++
	}
	c.mu.Unlock()
}

// MaxBytes is the cache's budget.
func (c *Cache) MaxBytes() int64 { return c.maxBytes }

// Peek returns a cached block without loading or counting a miss.
func (c *Cache) Peek(k Key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Peek(k)
}

// Has reports whether k is cached or being loaded (a Get of it now would
// not start a load of its own).
func (c *Cache) Has(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lru.Contains(k) {
		return true
	}
	_, ok := c.inflight[k]
	return ok
}

// Stats returns a snapshot of the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{
		Hits: c.hits, Misses: c.misses, Evictions: c.evicted, Dropped: c.dropped,
		Bytes: c.bytes, MaxBytes: c.maxBytes, Entries: c.lru.Len(),
	}
}

// PanicError is returned by Get when load panicked.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return "cache: load panicked: " + fmt.Sprint(e.Value) }
