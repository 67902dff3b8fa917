package fsnode

import (
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// SizeChildren sizes the lazily sized views among n's children (glb
// meshes, gameplay.json, level.glb: each sized by an encode when the
// sidecar does not have it) on every core at once, and returns when all
// are sized. A listing calls it: the lookups that follow it (READDIRPLUS
// looks up every entry) would otherwise encode them one after another on
// one core, and on the retail tree's first find those encodes were most
// of the time. Views sized already cost a check each.
func (n *Node) SizeChildren() {
	if n == nil || n.Kind != Dir {
		return
	}
	if n.tree != nil {
		n.tree.sizeAheadBelow(n)
	}
	var todo []*Node
	for _, c := range n.listed() {
		if c != nil && c.Kind == View && c.vm != nil && c.vm.lazy != nil && !c.vm.lazy.sized.Load() {
			todo = append(todo, c)
		}
	}
	if len(todo) < 2 {
		return // none, or one the lookup sizes as soon
	}
	workers := min(cores, len(todo))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(todo)) {
					return
				}
				todo[i].sizeLazy(false)
			}
		}()
	}
	wg.Wait()
}

// Sizing ahead of a listing walk (find, a file manager's tree view, du):
// the tree's one size-ahead worker keeps a cursor in tree order, depth
// first (the order such a walk lists directories), and sizes the lazily
// sized views it passes, on a core the walk is not using. A listing of a
// directory the cursor has not entered moves the cursor there; a listing
// of one it has entered (the walk is behind it) leaves the cursor where it
// is. Either way the cursor then goes on past the directory, into its
// siblings and its ancestors' siblings, so that while a walk crosses a
// level's light directories the worker is already sizing the next level's
// level.glb and gameplay.json. Each listing allows sizeAheadViews more
// views past it: a walk that goes on keeps the worker going, one that
// stops (a file manager's one directory) costs at most that many encodes
// of a spare core's time.
const sizeAheadViews = 64

type sizeAhead struct {
	mu      sync.Mutex
	dir     *Node // the newest request, not taken yet
	gen     atomic.Uint64
	running bool
	wake    chan struct{} // a new request for a running worker (1 buffered)
	started atomic.Int64  // worker goroutines started, for tests
	// entered is the directories the running worker's cursor has entered,
	// and atEnd whether the cursor is at the end of the tree: a listing of
	// an entered directory then has nothing for the worker to do, and does
	// not wake it (with the sidecar every view is sized, and the cursor
	// crosses the whole tree on the walk's first listing).
	entered map[*Node]bool
	atEnd   bool
}

// sizeAheadLinger is how long an idle worker waits for the next listing
// before its goroutine (and its thread, locked at a low priority) ends: a
// walk lists a directory every few hundred microseconds, and a worker
// started afresh for each cost a thread's creation and exit each time (439
// threads in one retail find with the sidecar, where nothing was left to
// size).
const sizeAheadLinger = 200 * time.Millisecond

// sizeAheadBelow tells the worker that n was listed.
func (t *Tree) sizeAheadBelow(n *Node) {
	if !t.ready.Load() {
		return
	}
	s := &t.sizing
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.running && s.atEnd && s.entered[n] {
		return
	}
	s.dir = n
	s.gen.Add(1)
	if s.wake == nil {
		s.wake = make(chan struct{}, 1)
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if !s.running {
		s.running = true
		s.started.Add(1)
		t.siblingScans.Add(1) // Quiesce waits for it too
		go func() {
			defer t.siblingScans.Done()
			t.runSizeAhead()
		}()
	}
}

// runSizeAhead serves listings until none comes for sizeAheadLinger, at a
// low CPU priority (backgroundThread): it must not delay the walk's
// requests.
func (t *Tree) runSizeAhead() {
	backgroundThread()
	s := &t.sizing
	var cur treeCursor
	s.mu.Lock()
	s.entered, s.atEnd = map[*Node]bool{}, false
	s.mu.Unlock()
	budget := 0
	var seen uint64
	idle := time.NewTimer(sizeAheadLinger)
	defer idle.Stop()
	for {
		if s.gen.Load() != seen {
			s.mu.Lock()
			dir := s.dir
			s.dir, seen = nil, s.gen.Load()
			if dir != nil {
				budget = sizeAheadViews
				if !s.entered[dir] {
					s.entered[dir] = true
					s.atEnd = false
					cur.jump(dir)
				}
			}
			s.mu.Unlock()
		}
		if budget > 0 {
			c := cur.next()
			if c == nil {
				budget = 0
				s.mu.Lock()
				s.atEnd = true
				s.mu.Unlock()
				continue
			}
			switch {
			case c.Kind == Dir:
				s.mu.Lock()
				s.entered[c] = true
				s.mu.Unlock()
			case c.Kind == View && c.vm != nil && c.vm.lazy != nil && !c.vm.lazy.sized.Load():
				c.sizeLazy(false)
				budget--
			}
			continue
		}
		if s.gen.Load() != seen {
			continue
		}
		idle.Reset(sizeAheadLinger)
		select {
		case <-s.wake:
			continue
		case <-idle.C:
		}
		s.mu.Lock()
		if s.gen.Load() == seen {
			s.running = false
			s.entered, s.atEnd = nil, false // the next run starts both afresh
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
	}
}

// treeCursor is a position in the tree's depth-first order: a stack of the
// directories it is in, each with the index of its next child.
type treeCursor struct {
	st []cursorFrame
}

type cursorFrame struct {
	kids []*Node
	i    int
}

// jump puts the cursor at d's first child, with d's ancestors' frames past
// the children on the way to d, so that it goes on after d's subtree.
func (c *treeCursor) jump(d *Node) {
	var path []*Node
	for n := d; n != nil; n = n.Parent {
		path = append(path, n)
	}
	c.st = c.st[:0]
	for k := len(path) - 1; k > 0; k-- {
		kids := path[k].listed()
		c.st = append(c.st, cursorFrame{kids: kids, i: childIndex(kids, path[k-1]) + 1})
	}
	c.st = append(c.st, cursorFrame{kids: d.listed()})
}

// childIndex is the index of c among kids: found by name where kids are
// in name order (a built tree's are), else by a scan; len(kids)-1 when c
// is not there (the cursor then goes on after them).
func childIndex(kids []*Node, c *Node) int {
	i := sort.Search(len(kids), func(i int) bool { return kids[i].Name >= c.Name })
	if i < len(kids) && kids[i] == c {
		return i
	}
	for i, k := range kids {
		if k == c {
			return i
		}
	}
	return len(kids) - 1
}

// next moves the cursor to the next node in depth-first order (into a
// directory as it returns it) and returns it; nil at the end of the tree.
func (c *treeCursor) next() *Node {
	for len(c.st) > 0 {
		f := &c.st[len(c.st)-1]
		if f.i >= len(f.kids) {
			c.st = c.st[:len(c.st)-1]
			continue
		}
		n := f.kids[f.i]
		f.i++
		if n == nil {
			continue
		}
		if n.Kind == Dir {
			c.st = append(c.st, cursorFrame{kids: n.listed()})
		}
		return n
	}
	return nil
}
