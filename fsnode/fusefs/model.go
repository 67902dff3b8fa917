package fusefs

import (
	"gcfs/fsnode"
)

// entry is what the FUSE nodes ask of a model node beyond its place in the
// tree. *fsnode.Node implements it; tests use fakes to reach error paths that
// a well-formed image never shows.
type entry interface {
	Path() string
	Size() int64
	Xattrs() []fsnode.Attr
	// ImageRange is where the node's bytes lie in the image (raw reads are
	// spliced from there).
	ImageRange() (off, size int64, ok bool)
	Open() (fsnode.Reader, error)
	// Err is the problem the model already knows of (and has logged).
	Err() error
}

// mnode is one model node as the FUSE layer sees it.
type mnode struct {
	name     string
	kind     fsnode.Kind
	ino      uint64
	children []*mnode
	e        entry
	added    bool // shown: its name was not refused at mount
	lazy     bool // a lazy directory: children mirrored on first look (lazydir.go)
}

// fromTree mirrors the model's tree structure.
func fromTree(t *fsnode.Tree) *mnode {
	if t == nil || t.Root == nil {
		return &mnode{kind: fsnode.Dir, e: emptyEntry{}}
	}
	return fromNode(t.Root, 0)
}

// maxDepth bounds the recursion over a model that, through some bug, loops.
const maxDepth = 64

func fromNode(n *fsnode.Node, depth int) *mnode {
	m := &mnode{name: n.Name, kind: n.Kind, ino: n.Ino, e: n}
	if n.Kind == fsnode.Dir && !n.Listed() {
		m.lazy = true
		return m
	}
	if n.Kind == fsnode.Dir && depth < maxDepth {
		m.children = make([]*mnode, 0, len(n.Children))
		for _, c := range n.Children {
			if c != nil {
				m.children = append(m.children, fromNode(c, depth+1))
			}
		}
	}
	return m
}

// emptyEntry stands in for a missing model root.
type emptyEntry struct{}

func (emptyEntry) Path() string                     { return "" }
func (emptyEntry) Size() int64                      { return 0 }
func (emptyEntry) Xattrs() []fsnode.Attr            { return nil }
func (emptyEntry) ImageRange() (int64, int64, bool) { return 0, 0, false }
func (emptyEntry) Open() (fsnode.Reader, error)     { return nil, errNotFile }
func (emptyEntry) Err() error                       { return nil }
