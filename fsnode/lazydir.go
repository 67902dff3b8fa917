package fsnode

import (
	"errors"
	"io/fs"
	"sort"
	"sync"
	"sync/atomic"
)

// A lazy directory is one whose children are made when it is first listed
// or looked into, not at build: the one kind today is a level core's
// sky.d/textures/, whose table lies in decoded core_data (listing it reads
// the sky block's header; see levelcore_sky.go). Walk, and so the build's
// own walks, pass over a lazy directory not yet listed; List, Child (and
// Lookup) and WalkListing list it.
type lazyDir struct {
	once sync.Once
	done atomic.Bool
	fill func(d *Node) []*Node // the children, unnamed paths and inodes
}

// Lazy reports whether n is a directory whose children are made when it is
// first listed.
func (n *Node) Lazy() bool { return n.lc != nil && n.lc.lazy != nil }

// Listed reports whether n's children are known: always, but for a lazy
// directory not yet listed.
func (n *Node) Listed() bool { return !n.Lazy() || n.lc.lazy.done.Load() }

// List returns a directory's children, sorted by name; a lazy directory's
// are made on the first call (the others wait for it).
func (n *Node) List() []*Node {
	if n.Lazy() {
		l := n.lc.lazy
		l.once.Do(func() {
			kids := l.fill(n)
			sort.Slice(kids, func(i, j int) bool { return kids[i].Name < kids[j].Name })
			for _, c := range kids {
				c.Parent, c.tree = n, n.tree
				c.path = pathJoin(n.path, c.Name)
				// The build's collision check (assignInos) is over; a
				// 64-bit path hash colliding with one of the tree's
				// ~10^5 inodes is not expected, 0 and 1 are avoided.
				c.Ino = inoHash(c.path, 0)
				for k := 1; c.Ino <= 1; k++ {
					c.Ino = inoHash(c.path, k)
				}
			}
			n.Children = kids
			l.done.Store(true)
		})
	}
	return n.Children
}

// listed is n's children when they are known, else nil (walk's view).
func (n *Node) listed() []*Node {
	if !n.Listed() {
		return nil
	}
	return n.Children
}

// WalkListing is WalkFrom that also lists lazy directories (an explicit
// look inside every one: the manifest, ls -R).
func WalkListing(n *Node, fn func(n *Node) error) error {
	if err := fn(n); err != nil {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	if n.Kind != Dir {
		return nil
	}
	for _, c := range n.List() {
		if err := WalkListing(c, fn); err != nil {
			return err
		}
	}
	return nil
}
