// Package fsnode owns the tree model of a disc: directories, raw files and
// decoded files with their names, exact sizes, stable inode numbers, extended
// attributes and readers. Both front ends (the CLI and the FUSE nodes in
// fsnode/fusefs) serve this one model. It does not import go-fuse.
//
// API CONTRACT (written before the implementation; other packages code against
// these signatures — change them only together with their callers).
package fsnode

import (
	"errors"
	"io"

	"gcfs/cache"
	"gcfs/discimg"
)

// Kind is what a node is.
type Kind int

const (
	Dir     Kind = iota // an ISO directory, a container, a SCENE group
	Raw                 // bytes straight from the image
	Decoded             // the decoded output of a WAD stream
)

// Attr is one extended attribute (Name includes "user.gcfs.").
type Attr struct{ Name, Value string }

// Node is one entry of the tree.
type Node struct {
	Name     string
	Kind     Kind
	Ino      uint64  // stable across mounts: derived from the path
	Parent   *Node   // nil for the root
	Children []*Node // directories only, sorted by name
	// implementation-defined fields follow
}

// Path is the node's path relative to the root, no leading slash ("" for root).
func (n *Node) Path() string { return "" }

// Child finds a direct child by name.
func (n *Node) Child(name string) *Node { return nil }

// Size is the file's exact size in bytes (a decoded file's comes from the
// codec's size scan on first call, then remembered; a stream that breaks the
// format reports the length that decodes cleanly). Directories: 0.
func (n *Node) Size() int64 { return 0 }

// Xattrs lists the node's extended attributes, including user.gcfs.error when
// the file cannot be read whole.
func (n *Node) Xattrs() []Attr { return nil }

// Err says why the file cannot be read whole (corrupt stream, extent past the
// image's end), or nil. For a decoded file it runs the size scan.
func (n *Node) Err() error { return nil }

// Reader reads a file's bytes.
type Reader interface {
	io.ReaderAt
	Size() int64
}

// Open returns a reader for a file. A decoded file whose stream is corrupt
// fails here (the FUSE layer maps it to EIO). ReadAt on a raw file returns an
// error (not zeros) for bytes the image does not have.
func (n *Node) Open() (Reader, error) { return nil, errors.New("TODO") }

// Options tune the tree.
type Options struct {
	CacheSize  int64 // decoded-block budget in bytes (default 256 MiB)
	MaxDecoded int64 // largest decoded stream (default 256 MiB)
	// Logf, when set, receives one line per problem found (bad table, corrupt
	// stream on open, read past the image's end).
	Logf func(format string, args ...any)
}

// Tree is a disc's whole tree.
type Tree struct {
	Root  *Node
	Image *discimg.Image
	Cache *cache.Cache
}

// Build makes the tree from an opened image in one pass of directory records and
// container headers; it decodes nothing.
func Build(img *discimg.Image, opt Options) (*Tree, error) { return nil, errors.New("TODO") }

// Lookup finds a node by path relative to the root ("G/LEVEL0.WAD/gameplay").
func (t *Tree) Lookup(path string) (*Node, error) { return nil, errors.New("TODO") }

// Walk calls fn for every node in depth-first, name order (root first).
func (t *Tree) Walk(fn func(n *Node) error) error { return nil }
