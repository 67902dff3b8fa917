package fsnode

import (
	"container/list"
	"sync"

	"gcfs/codec"
)

// indexLRU remembers built stream indexes, bounded by their MaxMemSize (an
// index's window snapshots are filled lazily as it is read, so its MemSize
// grows after it is put here, up to MaxMemSize, which is known when it is
// built): an evicted index is rebuilt on the next Open. The most recent index
// is always kept, even when it alone is over the budget.
type indexLRU struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front = most recent; values are *ixEntry
	byN   map[*Node]*list.Element
}

type ixEntry struct {
	n    *Node
	ix   *codec.Index
	size int64
}

func newIndexLRU(max int64) *indexLRU {
	return &indexLRU{max: max, order: list.New(), byN: make(map[*Node]*list.Element)}
}

func (l *indexLRU) get(n *Node) *codec.Index {
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byN[n]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*ixEntry).ix
	}
	return nil
}

func (l *indexLRU) put(n *Node, ix *codec.Index) {
	sz := ix.MaxMemSize()
	if sz < 1 {
		sz = 1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.byN[n]; ok {
		old := e.Value.(*ixEntry)
		l.used -= old.size
		old.ix, old.size = ix, sz
		l.used += sz
		l.order.MoveToFront(e)
	} else {
		l.byN[n] = l.order.PushFront(&ixEntry{n: n, ix: ix, size: sz})
		l.used += sz
	}
	for l.used > l.max && l.order.Len() > 1 {
		e := l.order.Back()
		ent := e.Value.(*ixEntry)
		l.order.Remove(e)
		delete(l.byN, ent.n)
		l.used -= ent.size
	}
}

// stats returns the number of remembered indexes and their bytes.
func (l *indexLRU) stats() (int, int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len(), l.used
}
