package fsnode

import (
	"runtime"
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
	workers := min(runtime.GOMAXPROCS(0), len(todo))
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
// when a directory is listed, the tree's one size-ahead worker sizes the
// lazily sized views below it, depth first in tree order (the order such a
// walk lists them), on a core the walk is not using, up to
// sizeAheadViews of them. A newer listing replaces the request: the worker
// follows the walk. The walk's own listings then find the views sized,
// where each would otherwise wait for its encodes in turn. What is sized
// ahead for a walk that does not come costs a spare core's time, within
// the bound.
const sizeAheadViews = 64

type sizeAhead struct {
	mu      sync.Mutex
	dir     *Node // the newest request, not taken yet
	gen     atomic.Uint64
	running bool
	wake    chan struct{} // a new request for a running worker (1 buffered)
	started atomic.Int64  // worker goroutines started, for tests
}

// sizeAheadLinger is how long an idle worker waits for the next listing
// before its goroutine (and its thread, locked at a low priority) ends: a
// walk lists a directory every few hundred microseconds, and a worker
// started afresh for each cost a thread's creation and exit each time (439
// threads in one retail find with the sidecar, where nothing was left to
// size).
const sizeAheadLinger = 200 * time.Millisecond

// sizeAheadBelow asks the worker to size the views below n.
func (t *Tree) sizeAheadBelow(n *Node) {
	if !t.ready.Load() || !hasSubdirs(n) {
		return
	}
	s := &t.sizing
	s.mu.Lock()
	defer s.mu.Unlock()
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

func hasSubdirs(n *Node) bool {
	for _, c := range n.listed() {
		if c != nil && c.Kind == Dir {
			return true
		}
	}
	return false
}

// runSizeAhead serves requests until none comes for sizeAheadLinger, at a
// low CPU priority (backgroundThread): it must not delay the walk's
// requests.
func (t *Tree) runSizeAhead() {
	backgroundThread()
	s := &t.sizing
	idle := time.NewTimer(sizeAheadLinger)
	defer idle.Stop()
	for {
		s.mu.Lock()
		dir, gen := s.dir, s.gen.Load()
		s.dir = nil
		s.mu.Unlock()
		if dir == nil {
			idle.Reset(sizeAheadLinger)
			select {
			case <-s.wake:
				continue
			case <-idle.C:
			}
			s.mu.Lock()
			if s.dir == nil {
				s.running = false
				s.mu.Unlock()
				return
			}
			s.mu.Unlock()
			continue
		}
		budget := sizeAheadViews
		var walk func(d *Node) bool
		walk = func(d *Node) bool {
			for _, c := range d.listed() {
				if s.gen.Load() != gen || budget == 0 {
					return false
				}
				switch {
				case c == nil:
				case c.Kind == Dir:
					if !walk(c) {
						return false
					}
				case c.Kind == View && c.vm != nil && c.vm.lazy != nil && !c.vm.lazy.sized.Load():
					c.sizeLazy(false)
					budget--
				}
			}
			return true
		}
		walk(dir)
	}
}
