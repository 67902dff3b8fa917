// Package cache owns the byte-bounded LRU of decoded blocks that every decoded
// file reads through: bounded in bytes, concurrent misses on one block merged into
// one load, safe for parallel use. Blocks a speculative read brings in (the
// model's, sizing a listing's views) live in a small cold segment of their own,
// so that they neither push out what readers use nor hold fresh memory for long.
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
	ColdBytes               int64 // of Bytes, the cold segment's
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
//
// The cold segment is a second LRU, within the budget and bounded to an
// eighth of it, for the blocks of speculative reads (GetCold, PutCold): a
// read that may never be repeated (the model's reads while a listing's views
// are sized, which decode a level's streams whole). A cold block a reader
// asks for (Get, GetRecyclable) moves to the main LRU; one a speculative
// read asks for again stays cold. Sizing every view of the retail layout
// kept some 80 MB of such blocks in the main LRU, each in a buffer of fresh
// memory, and fresh memory costs a page fault a page: in the cold segment
// they are evicted once the sizing has moved on, and their buffers
// recycled for the next level's.
type Cache struct {
	maxBytes int64
	coldMax  int64

	mu        sync.Mutex
	lru       *simplelru.LRU[Key, []byte]
	cold      *simplelru.LRU[Key, []byte]
	coldBytes int64
	inflight  map[Key]*call
	bytes     int64
	hits      int64
	misses    int64
	evicted   int64
	dropped   int64

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
	c := &Cache{maxBytes: maxBytes, coldMax: max(maxBytes/8, 0), inflight: make(map[Key]*call), leases: make(map[*byte]*lease)}
	// The free buffers are outside the budget: a sixteenth of it.
	c.freeMax = int(min(max(maxBytes/16/BufferSize, 16), 1024))
	// onEvict runs under c.mu (it is only called from methods we call with
	// the lock held), so the byte counts stay exact.
	evict := func(v []byte) {
		c.bytes -= int64(len(v))
		c.evicted++
		if l := c.leases[base(v)]; l != nil {
			l.entries--
			c.settle(v, l)
		}
	}
	var err error
	c.lru, err = simplelru.NewLRU[Key, []byte](math.MaxInt32, func(_ Key, v []byte) { evict(v) })
	if err != nil {
		panic(err) // only for a non-positive size, which MaxInt32 is not
	}
	c.cold, err = simplelru.NewLRU[Key, []byte](math.MaxInt32, func(_ Key, v []byte) {
		c.coldBytes -= int64(len(v))
		evict(v)
	})
	if err != nil {
		panic(err)
	}
	return c
}

// Get returns the block for k, calling load on a miss; concurrent Gets of one
// missing key call load once and share its result. Errors are not cached.
// Callers must not modify the returned slice. A load must return a buffer
// of its own, never one a Get or Peek returned (its waiters share it
// without a hold of their own: see Release).
func (c *Cache) Get(k Key, load func() ([]byte, error)) ([]byte, error) {
	return c.get(k, load, false, false)
}

// GetRecyclable is Get for a load that returns its block in a buffer from
// NewBuffer no one else holds: the buffer is recycled (like
// PutRecyclable's) once the cache lets go of the block and the caller, and
// every Get merged into the load, has released it (Release).
func (c *Cache) GetRecyclable(k Key, load func() ([]byte, error)) ([]byte, error) {
	return c.get(k, load, true, false)
}

// GetCold is GetRecyclable for a speculative read: a block it loads goes to
// the cold segment, and a cold block it finds stays there.
func (c *Cache) GetCold(k Key, load func() ([]byte, error)) ([]byte, error) {
	return c.get(k, load, true, true)
}

func (c *Cache) get(k Key, load func() ([]byte, error), recyclable, cold bool) ([]byte, error) {
	c.mu.Lock()
	if v, ok := c.lru.Get(k); ok {
		c.hits++
		c.acquire(v)
		c.mu.Unlock()
		return v, nil
	}
	if v, ok := c.cold.Get(k); ok {
		c.hits++
		c.acquire(v) // (before a move: the lease must not see no holder)
		if !cold {
			c.promote(k, v)
		}
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
		c.addRecyclable(k, cl.val, 1+cl.waiters, cold)
	} else if cl.err == nil {
		c.add(k, cl.val, false)
	}
	c.mu.Unlock()
	close(cl.done)
	return cl.val, cl.err
}

// add stores v under k, in the cold segment if cold, and evicts until the
// budgets hold: the cold segment's oldest past its bound, then the main
// LRU's oldest (the cold segment's when the main one is empty). A block
// larger than its budget is returned to its caller but not kept. Called
// with c.mu held.
func (c *Cache) add(k Key, v []byte, cold bool) {
	n := int64(len(v))
	if n > c.maxBytes || cold && n > c.coldMax {
		return
	}
	if old, ok := c.lru.Peek(k); ok && len(old) == len(v) && base(old) == base(v) {
		return // holds it already (a lease must not see its entry go and come back)
	}
	if old, ok := c.cold.Peek(k); ok && len(old) == len(v) && base(old) == base(v) {
		if !cold {
			c.promote(k, v)
		}
		return
	}
	c.remove(k) // a replacement is not an eviction
	seg := c.lru
	if cold {
		seg = c.cold
		c.coldBytes += n
	}
	seg.Add(k, v)
	c.bytes += n
	if l := c.leases[base(v)]; l != nil {
		l.entries++
	}
	c.fit()
}

// fit evicts until the budgets hold. Called with c.mu held.
func (c *Cache) fit() {
	for c.coldBytes > c.coldMax {
		if _, _, ok := c.cold.RemoveOldest(); !ok {
			break
		}
	}
	for c.bytes > c.maxBytes {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			if _, _, ok := c.cold.RemoveOldest(); !ok {
				break
			}
		}
	}
}

// remove takes k's block out of either segment, if there, without counting
// an eviction. Called with c.mu held.
func (c *Cache) remove(k Key) bool {
	if c.lru.Remove(k) || c.cold.Remove(k) { // onEvict subtracts the bytes
		c.evicted--
		return true
	}
	return false
}

// promote moves cold block v of k to the main LRU: a reader asked for it.
// Its caller holds it (the lease keeps its buffer through the move).
// Called with c.mu held.
func (c *Cache) promote(k Key, v []byte) {
	l := c.leases[base(v)]
	if l != nil {
		l.refs++ // (for the move: the removal must not free the buffer)
	}
	c.remove(k)
	c.add(k, v, false)
	if l != nil {
		l.refs--
		c.settle(v, l)
	}
}

// Put stores a block that was decoded along with another (a whole stream
// decoded at once) without counting a miss; it replaces what k holds.
func (c *Cache) Put(k Key, v []byte) {
	c.mu.Lock()
	c.add(k, v, false)
	c.mu.Unlock()
}

// Drop lets go of k's block, if cached, before the budget would: its
// caller knows it will not be asked for again soon (a block the kernel's
// page cache now holds). A load of k in flight is not affected.
func (c *Cache) Drop(k Key) {
	c.mu.Lock()
	if c.remove(k) {
		c.dropped++
	}
	c.mu.Unlock()
}

// MaxBytes is the cache's budget.
func (c *Cache) MaxBytes() int64 { return c.maxBytes }

// ColdMax is the cold segment's bound (within MaxBytes).
func (c *Cache) ColdMax() int64 { return c.coldMax }

// Peek returns a cached block without loading or counting a miss. Like
// Get's, the block is the caller's until it calls Release(v) (or for
// good, if it never does).
func (c *Cache) Peek(k Key) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.lru.Peek(k)
	if !ok {
		v, ok = c.cold.Peek(k)
	}
	if ok {
		c.acquire(v)
	}
	return v, ok
}

// Cached reports whether k is cached (not whether it is being loaded).
func (c *Cache) Cached(k Key) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Contains(k) || c.cold.Contains(k)
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
	c.addRecyclable(k, v, 0, false)
	c.mu.Unlock()
}

// PutCold is PutRecyclable for a block a speculative read decoded along
// with another: it goes to the cold segment, or stays where it is held.
func (c *Cache) PutCold(k Key, v []byte) {
	c.mu.Lock()
	c.addRecyclable(k, v, 0, true)
	c.mu.Unlock()
}

// addRecyclable is add for a block in a buffer from NewBuffer that refs
// holders (and no one else) have: it gets a lease, so that its buffer is
// recycled once they have released it and no entry holds it. Called with
// c.mu held.
func (c *Cache) addRecyclable(k Key, v []byte, refs int32, cold bool) {
	if cap(v) != BufferSize || c.leases[base(v)] != nil {
		c.add(k, v, cold) // (not a buffer of ours, or one leased already: kept as is)
		return
	}
	l := &lease{refs: refs}
	c.leases[base(v)] = l
	c.add(k, v, cold)
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
	if c.lru.Contains(k) || c.cold.Contains(k) {
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
		Bytes: c.bytes, MaxBytes: c.maxBytes, ColdBytes: c.coldBytes, Entries: c.lru.Len() + c.cold.Len(),
	}
}

// PanicError is returned by Get when load panicked.
type PanicError struct{ Value any }

func (e *PanicError) Error() string { return "cache: load panicked: " + fmt.Sprint(e.Value) }
