package fsnode

import (
	"container/list"
	"sync"

	"gcfs/codec"
)

// sizedLRU is a map bounded by its values' sizes (each given as it is
// put), dropping the least recently used first. The most recent value is
// always kept, even when it alone is over the budget.
type sizedLRU[K comparable, V any] struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front = most recent; values are *lruEntry[K, V]
	byKey map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	k    K
	v    V
	size int64
}

func newSizedLRU[K comparable, V any](max int64) *sizedLRU[K, V] {
	return &sizedLRU[K, V]{max: max, order: list.New(), byKey: make(map[K]*list.Element)}
}

func (l *sizedLRU[K, V]) get(k K) (v V, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[k]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*lruEntry[K, V]).v, true
	}
	return v, false
}

func (l *sizedLRU[K, V]) put(k K, v V, size int64) {
	size = max(size, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byKey[k]; ok {
		old := e.Value.(*lruEntry[K, V])
		l.used -= old.size
		old.v, old.size = v, size
		l.used += size
		l.order.MoveToFront(e)
	} else {
		l.byKey[k] = l.order.PushFront(&lruEntry[K, V]{k: k, v: v, size: size})
		l.used += size
	}
	for l.used > l.max && l.order.Len() > 1 {
		e := l.order.Back()
		ent := e.Value.(*lruEntry[K, V])
		l.order.Remove(e)
		delete(l.byKey, ent.k)
		l.used -= ent.size
	}
}

// stats returns the number of values kept and their sizes' sum.
func (l *sizedLRU[K, V]) stats() (int, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len(), l.used
}

// indexLRU remembers built stream indexes, bounded by their MaxMemSize (an
// index's window snapshots are filled lazily as it is read, so its MemSize
// grows after it is put here, up to MaxMemSize, which is known when it is
// built): an evicted index is rebuilt on the next Open.
type indexLRU struct {
	l *sizedLRU[*Node, *codec.Index]
}

func newIndexLRU(max int64) *indexLRU { return &indexLRU{newSizedLRU[*Node, *codec.Index](max)} }

func (l *indexLRU) get(n *Node) *codec.Index {
	ix, _ := l.l.get(n)
	return ix
}

func (l *indexLRU) put(n *Node, ix *codec.Index) { l.l.put(n, ix, ix.MaxMemSize()) }

// stats returns the number of remembered indexes and their bytes.
func (l *indexLRU) stats() (int, int64) { return l.l.stats() }
