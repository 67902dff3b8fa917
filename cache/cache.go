// Package cache owns the byte-bounded LRU of decoded blocks that every decoded
// file reads through: bounded in bytes, concurrent misses on one block merged into
// one load, safe for parallel use.
package cache

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

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
	Recycled                int64 // buffers handed out again by NewBuffer
	Bytes, MaxBytes         int64
	Entries                 int
}

// call is one load in flight; later Gets of the same key wait on done.
type call struct {
	done    chan struct{}
	val     []byte
	err     error
	waiters int32 // Gets merged into it (each holds val: GetRecyclable)
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

	// Recycling (NewBuffer, PutRecyclable, Release): the leases of the
	// cached blocks whose buffers go back to free once no entry holds
	// them and every Get or Peek that returned them was released.
	leases   map[*byte]*lease
	free     [][]byte // buffers of BufferSize, len 0
	freeMax  int
	recycled int64
}

// lease counts who holds a recyclable block's buffer: the cache's entries
// with it, and the Gets and Peeks that returned it not yet released.
type lease struct{ entries, refs int32 }

// BufferSize is the capacity of a recyclable buffer (NewBuffer): a decoded
// block of the codec's index (its 64 KiB target and the packet it ends
// with) fits, rounded up to the runtime's 8 KiB pages.
const BufferSize = 72 << 10

// New returns a cache holding at most maxBytes of block data. A budget of zero
// or less caches nothing (loads are still merged).
func New(maxBytes int64) *Cache {
	c := &Cache{maxBytes: maxBytes, inflight: make(map[Key]*call), leases: make(map[*byte]*lease)}
	// The free buffers are outside the budget: a sixteenth of it.
	c.freeMax = int(min(max(maxBytes/16/BufferSize, 16), 1024))
	// onEvict runs under c.mu (it is only called from methods we call with
	// the lock held), so the byte count stays exact.
	l, err := simplelru.NewLRU[Key, []byte](math.MaxInt32, func(_ Key, v []byte) {
		c.bytes -= int64(len(v))
		c.evicted++
		if l := c.leases[base(v)]; l != nil {
			l.entries--
			c.settle(v, l)
		}
	})
	if err != nil {
		panic(err) // only for a non-positive size, which MaxInt32 is not
	}
	c.lru = l
	return c
}

// Get returns the block for k, calling load on a miss; concurrent Gets of one
// missing key call load once and share its result. Errors are not cached.
// Callers must not modify the returned slice. A load must return a buffer
// of its own, never one a Get or Peek returned (its waiters share it
// without a hold of their own: see Release).
func (c *Cache) Get(k Key, load func() ([]byte, error)) ([]byte, error) {
	return c.get(k, load, false)
}

// GetRecyclable is Get for a load that returns its block in a buffer from
// NewBuffer no one else holds: the buffer is recycled (like
// PutRecyclable's) once the cache lets go of the block and the caller, and
// every Get merged into the load, has released it (Release).
func (c *Cache) GetRecyclable(k Key, load func() ([]byte, error)) ([]byte, error) {
	return c.get(k, load, true)
}

func (c *Cache) get(k Key, load func() ([]byte, error), recyclable bool) ([]byte, error) {
	c.mu.Lock()
	if v, ok := c.lru.Get(k); ok {
		c.hits++
		c.acquire(v)
		c.mu.Unlock()
		return v, nil
	}
	if cl, ok := c.inflight[k]; ok {
		// Merged into the load already running: counted as a hit on
		// that load's result, not as a second miss.
		c.hits++
		cl.waiters++
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
	if cl.err == nil && recyclable {
		// Held by the caller and each merged Get (no more can merge: the
		// load is no longer in flight) until they release it.
		c.addRecyclable(k, cl.val, 1+cl.waiters)
	} else if cl.err == nil {
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
	if old, ok := c.lru.Peek(k); ok && len(old) == len(v) && base(old) == base(v) {
		return // holds it already (a lease must not see its entry go and come back)
	}
	if c.lru.Remove(k) { // onEvict subtracts the old bytes
		c.evicted-- // a replacement is not an eviction
	}
	c.lru.Add(k, v)
	c.bytes += n
	if l := c.leases[base(v)]; l != nil {
		l.entries++
	}
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

// Peek returns a cached block without loading or counting a miss. Like
// Get's, the block is the caller's until it calls Release(v) (or for
// good, if it never does).
func (c *Cache) Peek(k Key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.lru.Peek(k)
	if ok {
		c.acquire(v)
	}
	return v, ok
}

// Cached reports whether k is cached (not whether it is being loaded).
func (c *Cache) Cached(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(k)
}

// Recycling. A cache that streams far more bytes than it keeps (a mount
// whose reader hands every block to the kernel's page cache, which then
// holds it: see fsnode's ServeSlices) would otherwise take fresh memory
// for every block it decodes, and fresh memory costs a page fault and a
// clear per page, which on a small VM is most of what a cat of the whole
// tree costs. A block stored with PutRecyclable, in a buffer from
// NewBuffer, goes back to the free buffers once no entry of the cache
// holds it and every Get or Peek that returned it has been released
// (Release). A Get or Peek never released keeps the buffer out of the
// free list for good: a caller that keeps the bytes (or forgets) costs
// the recycling, never the bytes.

// NewBuffer returns a buffer of length n for a block to store with
// PutRecyclable: a free one when n fits BufferSize and one is free.
func (c *Cache) NewBuffer(n int) []byte {
	if n <= 0 || n > BufferSize {
		return make([]byte, max(n, 0))
	}
	c.mu.Lock()
	if k := len(c.free); k > 0 {
		b := c.free[k-1]
		c.free[k-1] = nil
		c.free = c.free[:k-1]
		c.recycled++
		c.mu.Unlock()
		return b[:n]
	}
	c.mu.Unlock()
	return make([]byte, n, BufferSize)
}

// PutRecyclable is Put for a block in a buffer from NewBuffer that no one
// else holds: its buffer is recycled once the cache and its readers are
// done with it.
func (c *Cache) PutRecyclable(k Key, v []byte) {
	c.mu.Lock()
	c.addRecyclable(k, v, 0)
	c.mu.Unlock()
}

// addRecyclable is add for a block in a buffer from NewBuffer that refs
// holders (and no one else) have: it gets a lease, so that its buffer is
// recycled once they have released it and no entry holds it. Called with
// c.mu held.
func (c *Cache) addRecyclable(k Key, v []byte, refs int32) {
	if cap(v) != BufferSize || c.leases[base(v)] != nil {
		c.add(k, v) // (not a buffer of ours, or one leased already: kept as is)
		return
	}
	l := &lease{refs: refs}
	c.leases[base(v)] = l
	c.add(k, v)
	if l.entries == 0 && l.refs == 0 {
		delete(c.leases, base(v)) // not kept (larger than the budget), held by no one
	}
}

// Release ends the hold on v (a block as Get or Peek returned it, not a
// piece of one) that one Get or Peek gave the caller.
func (c *Cache) Release(v []byte) {
	if cap(v) != BufferSize {
		return
	}
	c.mu.Lock()
	if l := c.leases[base(v)]; l != nil && l.refs > 0 {
		l.refs--
		c.settle(v, l)
	}
	c.mu.Unlock()
}

// acquire counts a hold on v, if it is recyclable. Called with c.mu held.
func (c *Cache) acquire(v []byte) {
	if l := c.leases[base(v)]; l != nil {
		l.refs++
	}
}

// settle frees v's buffer when nothing holds it. Called with c.mu held.
func (c *Cache) settle(v []byte, l *lease) {
	if l.entries > 0 || l.refs > 0 {
		return
	}
	delete(c.leases, base(v))
	if len(c.free) < c.freeMax {
		c.free = append(c.free, v[:0])
	}
}

// base identifies a block's buffer.
func base(v []byte) *byte {
	if cap(v) == 0 {
		return nil
	}
	return unsafe.SliceData(v)
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
		Hits: c.hits, Misses: c.misses, Evictions: c.evicted, Dropped: c.dropped, Recycled: c.recycled,
		Bytes: c.bytes, MaxBytes: c.maxBytes, Entries: c.lru.Len(),
	}
}

// PanicError is returned by Get when load panicked.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return "cache: load panicked: " + fmt.Sprint(e.Value) }
