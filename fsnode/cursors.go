package fsnode

import (
	"sync"

	"gcfs/codec"
)

// cursorSet keeps a few in-order decodes between blocks (codec.Cursor), by
// file: the next block of a file read in order (a read-ahead chain, the
// file-ahead worker, a reader's own misses) decodes on from where the
// block before it ended, instead of copying that block's last 48 KiB in
// as its window first. Each cursor holds its decode buffers (the
// decoder's output, sized for a group's decode, and an input chunk of up
// to 256 KiB: under 1 MiB), so a tree keeps at most cursorMax, the least
// recently used going first, and one per file.
type cursorSet struct {
	mu   sync.Mutex
	ents []cursorEnt // least recently put first
}

type cursorEnt struct {
	key uint64 // the file's key in its cache
	cur *codec.Cursor
}

// cursorMax bounds a tree's cursors: the read-ahead chains and the
// file-ahead worker at once, and a few readers.
const cursorMax = 8

// take removes and returns the file's cursor if it is at block i.
func (s *cursorSet) take(key uint64, i int) *codec.Cursor {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, e := range s.ents {
		if e.key == key && e.cur.Next() == i {
			s.ents = append(s.ents[:k], s.ents[k+1:]...)
			return e.cur
		}
	}
	return nil
}

// put keeps cur (nil: nothing) as the file's cursor, releasing the one it
// replaces and, past cursorMax, the least recently put.
func (s *cursorSet) put(key uint64, cur *codec.Cursor) {
	if cur == nil {
		return
	}
	var drop []*codec.Cursor
	s.mu.Lock()
	for k, e := range s.ents {
		if e.key == key {
			drop = append(drop, e.cur)
			s.ents = append(s.ents[:k], s.ents[k+1:]...)
			break
		}
	}
	s.ents = append(s.ents, cursorEnt{key, cur})
	for len(s.ents) > cursorMax {
		drop = append(drop, s.ents[0].cur)
		s.ents = append(s.ents[:0], s.ents[1:]...)
	}
	s.mu.Unlock()
	for _, c := range drop {
		c.Release()
	}
}
