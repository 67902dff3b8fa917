// Package fsnode owns the tree model of a disc: directories, raw files and
// decoded files with their names, exact sizes, stable inode numbers, extended
// attributes and readers. Both front ends (the CLI and the FUSE nodes in
// fsnode/fusefs) serve this one model. It does not import go-fuse.
//
// The tree is built from the ISO directory records, the container headers,
// the part tables and a prefix of every extent (to spot WAD streams and the
// assets the views read); a decoded file is decoded only when its bytes are
// asked for, or at build where its content holds parts or a texture header.
package fsnode

import (
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"gcfs/cache"
	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/memfile"
	"gcfs/mesh"
)

// Kind is what a node is.
type Kind int

const (
	Dir     Kind = iota // an ISO directory, a container, a SCENE group
	Raw                 // bytes straight from the image
	Decoded             // the decoded output of a WAD stream
	// Nested: bytes of a range of a decoded file (a part inside a decoded
	// stream), read through that file's index and cache.
	Nested
	// View: a file computed on read from another node (a texture's PNG, a
	// sound's WAV, a subtitle's SRT).
	View
)

func (k Kind) String() string {
	switch k {
	case Dir:
		return "dir"
	case Raw:
		return "raw"
	case Decoded:
		return "decoded"
	case Nested:
		return "nested"
	case View:
		return "view"
	}
	return "unknown"
}

// Attr is one extended attribute (Name includes "user.gcfs.").
type Attr struct{ Name, Value string }

// Node is one entry of the tree.
type Node struct {
	Name string
	Kind Kind
	// hasRange: off and size are an image range (packed beside Kind).
	hasRange bool
	// hasExpected: expected holds a recorded decoded size.
	hasExpected bool
	shortLogged atomic.Bool
	seq         int32   // index in the tree's order of decoded files (fileahead.go); -1 if none
	Ino         uint64  // stable across mounts: derived from the path
	Parent      *Node   // nil for the root
	Children    []*Node // directories only, sorted by name

	tree *Tree
	path string

	// Image range: for files the extent (a decoded file's is the stream's
	// extent), for ISO directories and containers their own extent.
	off       int64 // image byte offset of the first byte
	size      int64 // bytes on disc
	staticErr error // why a raw file cannot be read whole (known at build)

	entry  *discimg.Entry  // ISO record, when the node comes from one
	extent *discimg.Extent // files and groups inside a container
	// rare: what few nodes carry (containers, G/*.WAD files, part tables
	// that failed); nil on the others.
	rare *rareState

	// Parts (SPEC "Parts of a file"). layout is what the node's content
	// holds (decoded content for a decoded file); a NAME.d/ directory keeps
	// the table it shows (parts) and the file it is of (partsOf).
	layout  discimg.PartLayout
	parts   *discimg.Parts
	partsOf *Node
	// within is the decoded file whose content holds this node's bytes
	// (Nested files, and streams inside decoded content), at woff; nil: the
	// image holds them.
	within *Node
	woff   int64
	// expected is the decoded size another table records (core_data's, at
	// core_index+0x8c), when hasExpected; warn says how the stream disagrees.
	expected int64
	warn     error
	inFile   string // an extent past its container: the file its bytes lie in
	wadOf    *Node  // NAME.wad: the decoded NAME whose stream it is
	// Views: vm for a view node; viewErr on a source that has none (why);
	// viewDirOf on a subtitle blob's NAME.d/ of SRT views.
	vm        *viewMeta
	viewErr   error
	viewDirOf *Node
	// lc: a level core node's reading (levelcore.go)
	lc *coreMeta

	// Decoded files: their own state (nil for every other kind, which the
	// tree has tens of thousands of).
	*decodedState

	// Directories: the streams of their decoded files were prefetched.
	prefetchOnce sync.Once
}

// rareState is what only a few nodes of a tree carry.
type rareState struct {
	cont     *discimg.Container // container directories
	toc      string             // container directories: what RC2.HDR says of them
	tableErr error              // a G/*.WAD that stayed a plain file: why
	partsErr error              // a part table that could not be read: why
}

// rareOf is n's rareState, made on first use (during the build).
func (n *Node) rareOf() *rareState {
	if n.rare == nil {
		n.rare = &rareState{}
	}
	return n.rare
}

// decodedState is what only a decoded file carries: its stream's header, the
// size scan's result, its index and the state of its reads. A node gets one
// when it becomes a decoded file (becomeDecoded), so that the nodes of other
// kinds do not carry its ~140 bytes.
type decodedState struct {
	hdr      codec.Header
	scanOnce sync.Once
	decSize  int64
	decErr   error // *StreamError when the stream cannot be decoded whole
	ixMu     sync.Mutex
	// The index loaded from the sidecar, unproven (sidecar.go), and what
	// the fresh scan found when a decode through it failed (under ixMu);
	// freshKeys once its blocks are keyed apart.
	keptIx    atomic.Pointer[codec.Index]
	fallback  *indexFallback
	freshKeys atomic.Bool

	raRunning atomic.Bool                 // a read-ahead chain of this file's is decoding
	wholeMu   sync.Mutex                  // one whole-stream decode at a time (firstread.go)
	wholeIn   atomic.Pointer[cache.Cache] // the cache a whole-stream decode filled
	advised   atomic.Bool                 // its stream was advised into the page cache ahead of it (fileahead.go)
	bkey      atomic.Uint64               // buildKey, once given
}

// becomeDecoded makes n the decoded file of the stream whose header is h.
func (n *Node) becomeDecoded(h codec.Header) {
	n.Kind = Decoded
	n.decodedState = &decodedState{hdr: h}
}

// buildKey is the node's key in the build's cache: a number no other node of
// the tree has (given on first use).
func (n *Node) buildKey() uint64 {
	if k := n.bkey.Load(); k != 0 {
		return k
	}
	n.bkey.CompareAndSwap(0, n.tree.buildKeys.Add(1))
	return n.bkey.Load()
}

// Path is the node's path relative to the root, no leading slash ("" for root).
func (n *Node) Path() string { return n.path }

// Child finds a direct child by name.
func (n *Node) Child(name string) *Node {
	c := n.List()
	lo, hi := 0, len(c)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c[m].Name < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(c) && c[lo].Name == name {
		return c[lo]
	}
	return nil
}

// IsDir reports whether the node is a directory.
func (n *Node) IsDir() bool { return n.Kind == Dir }

// Size is the file's exact size in bytes (a decoded file's comes from the
// codec's size scan on first call, then remembered; a stream that breaks the
// format reports the length that decodes cleanly). Directories: 0.
func (n *Node) Size() int64 {
	switch n.Kind {
	case View:
		if n.vm != nil && n.vm.lazy != nil {
			n.lazySize() // sized at its first Size (lazyview.go)
		}
		return n.size
	case Raw, Nested:
		return n.size
	case Decoded:
		n.scan()
		return n.decSize
	}
	return 0
}

// Err says why the file cannot be read whole (corrupt stream, extent past the
// image's end), or nil. For a decoded file it runs the size scan.
func (n *Node) Err() error {
	switch n.Kind {
	case Raw:
		return n.staticErr
	case Nested:
		if n.staticErr != nil {
			return n.staticErr
		}
		return n.within.errBefore(n.woff + n.size)
	case View:
		return n.lazyErr()
	case Decoded:
		if n.staticErr != nil {
			return n.staticErr
		}
		n.scan()
		if n.decErr != nil {
			return n.decErr
		}
	}
	return nil
}

// Reader reads a file's bytes.
type Reader interface {
	io.ReaderAt
	Size() int64
}

// Options tune the tree.
type Options struct {
	CacheSize  int64 // decoded-block budget in bytes (default 256 MiB)
	MaxDecoded int64 // largest decoded stream (default 256 MiB)
	NoViews    bool  // hide the views (PNG, WAV, SRT): only disc bytes
	// NoLevelCore: no data.d/core/ (the tree's second edition, for
	// comparing against it)
	NoLevelCore bool
	// Logf, when set, receives one line per problem found (bad table, corrupt
	// stream on open, read past the image's end).
	Logf func(format string, args ...any)
	// LogBurst: of each kind of problem, the first LogBurst lines are
	// logged, the rest counted and summarised (0: DefaultLogBurst).
	LogBurst int
	// QuietFileErrors: a file's own error (a recorded error, a corrupt
	// stream, bytes past the image's end) is not logged; the front end
	// reports it with the file (the CLI's cat, manifest and extract).
	QuietFileErrors bool
	// Cache, when set, is the decoded-block cache to use (shared, e.g. with
	// the image's decoded hunks); CacheSize is then ignored.
	Cache *cache.Cache
	// IndexCacheDir, when set with ImageFile, is where the tree's persisted
	// index (sidecar) is read at build and written by SaveIndex: decoded
	// sizes, stream errors and the decoded bytes the build reads, so that a
	// later build and stat of the same image read no stream. "": none.
	IndexCacheDir string
	// ImageFile is the image file's Stat (size and mtime key the sidecar).
	ImageFile os.FileInfo
	// ReadAhead > 0: after a read of a decoded file, this many blocks after
	// it are decoded in the background into the cache (a mount's setting).
	ReadAhead int
	// IndexSaveDelay > 0: the sidecar is also saved in the background this
	// long after the last change (a mount saves while it runs).
	IndexSaveDelay time.Duration
}

// Defaults for Options fields left zero.
const (
	DefaultCacheSize  = 256 << 20
	DefaultMaxDecoded = 256 << 20
)

// Tree is a disc's whole tree.
type Tree struct {
	Root  *Node
	Image *discimg.Image
	Cache *cache.Cache

	opt     Options
	lim     *Limiter // nil without Options.Logf
	indexes *indexLRU
	meshes  *sizedLRU[meshKey, *mesh.Mesh] // meshes views parsed (meshmemo.go)
	cursors cursorSet                      // in-order decodes kept between blocks (cursors.go)
	nodes   int
	toc     *discimg.TOC
	tocNode *Node
	// buildCache holds decoded blocks read while the tree is built (before
	// inode numbers exist), keyed by buildKey; dropped when Build returns.
	buildCache *cache.Cache
	buildKeys  atomic.Uint64
	side       *sidecar      // the persisted index; nil without one
	raSem      chan struct{} // read-ahead chains running (Options.ReadAhead)
	// viewEncodes counts the encodes of lazily sized views (lazyview.go).
	viewEncodes atomic.Int64
	// wholeDecodes counts the files decoded whole on a first read
	// (firstread.go), for tests.
	wholeDecodes atomic.Int64
	// sourceDecodes counts the sources an encode decoded for itself,
	// past the cache (decodeSource).
	sourceDecodes atomic.Int64
	// meshHits counts the meshes a view took from meshes, for tests.
	meshHits atomic.Int64
	// scanned counts the streams scanned for their index (NewIndex), for
	// tests.
	scanned        atomic.Int64
	parallelScans  atomic.Int64 // of those, on every core
	decodedIndexes atomic.Int64 // indexes built by decoding the stream whole instead (decodeIndex)
	// ready: the build is done (children fixed); scanSem bounds the
	// directories sized in the background at once (prefetch.go).
	ready   atomic.Bool
	scanSem chan struct{}
	// siblingScans counts the background directory scans running, so that
	// a front end can wait for them before it closes the image (Quiesce).
	siblingScans sync.WaitGroup
	// bigSem bounds the streams held in memory whole at once (firstread.go).
	bigSem chan struct{}
	ahead  fileAhead // read-ahead across files (fileahead.go)
	// memFiles: decoded files made whole for the kernel (memfiles.go)
	memFiles atomic.Pointer[memfile.Store]
	memAhead atomic.Int64 // files the file-ahead worker made for it
	sizing   sizeAhead    // sizing views ahead of a listing walk (sizeahead.go)
}
