package fsnode

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"strings"
	"sync"
	"sync/atomic"

	"gcfs/gltf"
)

// Lazily sized views: a view whose exact size is not known from the index
// alone (a mesh's glb, a level's gameplay.json) because only its encoder
// knows it. Such a view is sized at its first Size (a lookup, a stat) by
// encoding it once; the size is kept on the node, not the bytes (a stat of
// every glb of a disc must not hold them all), and recorded in the index
// sidecar so that a later build of the same image sizes it without encoding.
// The bytes of the encode that sized it go into the tree's block cache as
// the view's blocks (keepEncoded), so that the read that usually follows a
// stat serves them without encoding again; the cache's byte budget bounds
// them like any block, and a read that misses an evicted block encodes the
// view again, through the same viewReader as every view, checked against
// the size given: a
// sidecar is untrusted, so a size it recorded that the encoder does not
// reproduce is an error to the reader (and the entry corrected), never bytes
// cut or padded to fit.
//
// A view that does not encode has no file: its Size is 0, its Err the
// encoder's error, ViewFailed true (the FUSE layer answers ENOENT and leaves
// it out of listings made after), one log line, and its source's ViewError
// says why. A lazily sized view lies beside its source (ViewError looks for
// them among the source's siblings).

// encodedView is what a lazily sized view's encoder returns: the view's
// bytes, and attributes only the encode knows (user.gcfs.<Name>, e.g. a
// mesh's vertex and triangle counts).
type encodedView struct {
	data  []byte
	size  int64  // the length, where a size-only encode left data nil
	attrs []Attr // Name without XattrPrefix
}

// length is the view's length: its bytes', or the size a size-only encode
// gave.
func (e encodedView) length() int64 {
	if e.data != nil {
		return int64(len(e.data))
	}
	return e.size
}

// viewEncoder encodes a lazily sized view whole. It must be deterministic
// (the same bytes every time) and bounded by its source's bytes. Given
// sizeOnly, it may return only the length (data nil, size set) and the
// attributes, where it knows them without writing the bytes (a glb from
// its plan, JSON counted as it is written): the sizing of a listing or of
// the views ahead of a walk keeps no bytes, and a first find of the retail
// tree sizes 10,441 glbs. Whatever it returns, it must fail where the full
// encode fails and give the full encode's length: its tests compare the
// two on every view of a generated disc. It reads what it is made of
// through ec (its source, a glb's textures), so that the same encode
// derives the view from edits (derive.go).
type viewEncoder func(ec *encodeCtx) (encodedView, error)

// encodeCtx is what one encode of a lazily sized view reads its inputs
// through: the disc's bytes, or, where the view is derived from edits
// (edited set, derive.go), an input's current bytes where it has an edit
// or is computed from one.
type encodeCtx struct {
	sizeOnly bool
	edited   EditedFunc
	depth    int
	// readEdited holds the inputs read as an edit's bytes or computed
	// from one (current): any makes the encode a derived one (derive.go),
	// and a later step of the same encode asks it rather than reading an
	// input again (levelMeshes).
	readEdited map[*Node]bool
}

// source reads input n whole: readSource's pooled buffer (done returns
// it), or n's edited bytes.
func (ec *encodeCtx) source(n *Node) ([]byte, func(), error) {
	if b, ok, err := ec.current(n); ok || err != nil {
		return b, func() {}, err
	}
	return readSource(n)
}

// current is n's bytes with the edits when it has an edit or is computed
// from one (ok), nothing when the disc's bytes are current.
func (ec *encodeCtx) current(n *Node) ([]byte, bool, error) {
	if ec.edited == nil {
		return nil, false, nil
	}
	b, ok, err := n.current(ec.edited, ec.depth)
	if ok {
		if ec.readEdited == nil {
			ec.readEdited = map[*Node]bool{}
		}
		ec.readEdited[n] = true
	}
	return b, ok, err
}

// png gives a glb's material the PNG view png: its edited bytes, or the
// disc's (embedPNG: its size alone for a size-only encode).
func (ec *encodeCtx) png(mat *gltf.Material, png *Node) error {
	if b, ok, err := ec.currentPNG(png); ok || err != nil {
		mat.PNG = b
		return err
	}
	return embedPNG(mat, png, ec.sizeOnly)
}

// currentPNG is current for a PNG view: an edit that does not decode as a
// PNG is an error (a glb embedding it as image/png would fail the
// validator), named as the edit's, as a disc texture that fails is.
func (ec *encodeCtx) currentPNG(n *Node) ([]byte, bool, error) {
	b, ok, err := ec.current(n)
	if ok && err == nil {
		if _, derr := png.Decode(bytes.NewReader(b)); derr != nil {
			return nil, true, fmt.Errorf("the edit of %s is not a PNG: %v", n.path, derr)
		}
	}
	return b, ok, err
}

// lazyView is a lazily sized view's state (viewMeta.lazy).
type lazyView struct {
	encode viewEncoder
	// deps: the nodes the encode reads besides the view's source (a glb's
	// textures, level.glb's core_data and chunks), nil for none: what an
	// edit of which the view shows at once (Sources, Dependents)
	deps func() []*Node
	once sync.Once
	err  error // the encoder's, or a size out of bounds: the view has no file
	// fromSide: the size came from the sidecar (not yet proven by an encode)
	fromSide bool
	failed   atomic.Bool // sized, and err is set
	sized    atomic.Bool // once has run (SizeChildren skips it)

	mu         sync.Mutex
	attrs      []Attr
	attrsKnown bool
}

// addLazyView adds to src's directory a view of src named name, of kind
// (user.gcfs.view), sized at its first Size by encode.
func (b *builder) addLazyView(src *Node, name, kind string, encode viewEncoder) *Node {
	if b.t.opt.NoViews {
		return nil
	}
	v := &Node{Name: name, Kind: View, Parent: src.Parent, tree: b.t,
		vm: &viewMeta{source: src, kind: kind, lazy: &lazyView{encode: encode}}}
	src.Parent.Children = append(src.Parent.Children, v)
	return v
}

// maxLazyView bounds a lazily sized view (an encode or a recorded size past
// it is an error): the tree's --max-decoded, the largest content it holds.
func (t *Tree) maxLazyView() int64 { return t.opt.MaxDecoded }

// runEncode encodes the view (only its length and attributes where
// sizeOnly and the encoder can), counting it, and checks what it made.
func (n *Node) runEncode(sizeOnly bool) (encodedView, error) {
	l := n.vm.lazy
	n.tree.viewEncodes.Add(1)
	e, err := l.encode(&encodeCtx{sizeOnly: sizeOnly})
	if err != nil {
		return encodedView{}, err
	}
	if !sizeOnly && e.data == nil {
		e.data = []byte{} // an encoder that ignored the mode's empty view
	}
	if e.length() < 0 {
		return encodedView{}, fmt.Errorf("the encoder gave a length of %d", e.length())
	}
	if lim := n.tree.maxLazyView(); e.length() > lim {
		return encodedView{}, fmt.Errorf("%d bytes, more than the %d a view may have (--max-decoded)", e.length(), lim)
	}
	l.mu.Lock()
	l.attrs, l.attrsKnown = e.attrs, true
	l.mu.Unlock()
	return e, nil
}

// lazySize sizes a lazily sized view once: from the sidecar when it has the
// view, else by encoding it (and recording the size), keeping the encode's
// bytes for the read that usually follows a lookup's stat.
func (n *Node) lazySize() { n.sizeLazy(true) }

// sizeLazy is lazySize; keep false sizes the view without its bytes where
// the encoder can (viewEncoder's sizeOnly) and leaves them out of the cache: the
// sizing of a whole listing or of the views ahead of one (sizeahead.go),
// where a read of each rarely follows (a find, a file manager) and kept
// glbs pushed core_data's blocks out of the cache (a find then a cat of
// every retail glb read 20% more of the image with them kept).
func (n *Node) sizeLazy(keep bool) {
	l := n.vm.lazy
	l.once.Do(func() {
		defer l.sized.Store(true)
		if size, ok := n.sideViewSize(); ok {
			n.size, l.fromSide = size, true
			return
		}
		e, err := n.runEncode(!keep)
		if err != nil {
			l.err = &ViewError{Path: n.path, Err: err}
			l.failed.Store(true)
			n.logFile(l.err)
			return
		}
		n.size = e.length()
		n.sideRecordView(n.size)
		if keep && e.data != nil {
			n.keepEncoded(e.data)
		}
	})
}

// keepEncoded puts a view's encoded bytes into the tree's block cache as its
// blocks, keyed as viewReader reads them (viewBlockKey), when they are the
// size the view was given. Each block is a copy (the cache counts what it
// holds exactly; the encoder's buffer is let go). A view larger than an
// eighth of the budget is not kept: it would push out much of what the
// encodes themselves read (core_data's blocks), and its read encodes again.
func (n *Node) keepEncoded(data []byte) {
	c := n.tree.Cache
	size := int64(len(data))
	if c == nil || n.Ino == 0 || size != n.size || size > c.MaxBytes()/8 {
		return
	}
	for i := 0; int64(i)*viewBlock < size; i++ {
		off := int64(i) * viewBlock
		c.Put(n.viewBlockKey(i), bytes.Clone(data[off:min(off+viewBlock, size)]))
	}
}

// ViewFailed says whether n is a lazily sized view already found not to
// encode (it has no file). It never encodes: a listing asks it of every
// child.
func (n *Node) ViewFailed() bool {
	if n.vm == nil || n.vm.lazy == nil {
		return false
	}
	return n.vm.lazy.failed.Load()
}

// lazyErr is a lazily sized view's error once sized (nil for other nodes).
func (n *Node) lazyErr() error {
	if n.vm == nil || n.vm.lazy == nil {
		return nil
	}
	n.lazySize()
	return n.vm.lazy.err
}

// openLazy encodes a lazily sized view for reading, its length checked
// against the size the view was given.
func (n *Node) openLazy() (Reader, error) {
	if err := n.lazyErr(); err != nil {
		return nil, err
	}
	lazy := func() (io.ReaderAt, error) {
		e, err := n.runEncode(false)
		if err != nil {
			return nil, err
		}
		if got := int64(len(e.data)); got != n.size {
			l := n.vm.lazy
			if l.fromSide {
				n.sideCorrectView(n.size, got)
				return nil, fmt.Errorf("it encodes to %d bytes; the index sidecar %s recorded %d (the next tree has it right)", got, n.tree.side.file, n.size)
			}
			return nil, fmt.Errorf("it encodes to %d bytes, %d when it was sized (an encoder that is not deterministic)", got, n.size)
		}
		return bytesReader(e.data), nil
	}
	return &viewReader{n: n, lazy: lazy, cache: n.tree.Cache}, nil
}

// lazyXattrs adds what only the encode knows (encoding once more when the
// size came from the sidecar).
func (n *Node) lazyXattrs(add func(name, value string)) {
	l := n.vm.lazy
	n.lazySize()
	if l.err != nil {
		return
	}
	l.mu.Lock()
	known := l.attrsKnown
	l.mu.Unlock()
	if !known {
		if _, err := n.runEncode(true); err != nil { // for the attributes alone
			return
		}
	}
	l.mu.Lock()
	attrs := l.attrs
	l.mu.Unlock()
	for _, a := range attrs {
		add(a.Name, a.Value)
	}
}

// lazyViewErrors is why the lazily sized views of source n beside it do not
// encode ("" when they all do).
func (n *Node) lazyViewErrors() string {
	if n.Parent == nil {
		return ""
	}
	var why []string
	for _, c := range n.Parent.Children {
		if c.vm == nil || c.vm.lazy == nil || c.vm.source != n {
			continue
		}
		if err := c.lazyErr(); err != nil {
			why = append(why, fmt.Sprintf("no %s: %v", c.Name, strings.TrimPrefix(err.Error(), c.path+": view: ")))
		}
	}
	return strings.Join(why, "; ")
}

// ViewEncodes is how many times the tree's lazily sized views were encoded
// (for tests and benchmarks).
func (t *Tree) ViewEncodes() int64 { return t.viewEncodes.Load() }

// The sidecar's view entries: key "v" + the view's path (a decoded file's
// key starts with "i"), a size and nothing else.

func (n *Node) sideViewKey() string {
	k := "v" + n.path
	if len(k) > maxSideKey {
		return ""
	}
	return k
}

// sideViewSize is the view's size as the sidecar recorded it, when it has
// one within bounds (one out of them is refused: dropped, counted, logged).
func (n *Node) sideViewSize() (int64, bool) {
	s := n.tree.side
	if s == nil {
		return 0, false
	}
	k := n.sideViewKey()
	if k == "" {
		return 0, false
	}
	s.mu.Lock()
	e := s.entries[k]
	s.mu.Unlock()
	switch {
	case e == nil:
		return 0, false
	case !e.sized || e.corrupt || len(e.index) > 0:
		n.sideRefuse(k, e, "a view's entry with a decoded stream's fields")
		return 0, false
	case e.size > n.tree.maxLazyView():
		n.sideRefuse(k, e, fmt.Sprintf("a view of %d bytes, more than %d", e.size, n.tree.maxLazyView()))
		return 0, false
	}
	return e.size, true
}

// sideRecordView records a view's encoded size.
func (n *Node) sideRecordView(size int64) {
	s := n.tree.side
	if s == nil {
		return
	}
	k := n.sideViewKey()
	if k == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.entries[k]; e != nil && e.sized && e.size == size {
		return
	}
	if _, ok := s.entries[k]; !ok && len(s.entries) >= maxSidecarEntries {
		return
	}
	s.entries[k] = &sideEntry{sized: true, size: size}
	s.changed()
}

// sideCorrectView replaces a recorded size the encoder contradicted.
func (n *Node) sideCorrectView(recorded, got int64) {
	s := n.tree.side
	k := n.sideViewKey()
	if s == nil || k == "" {
		return
	}
	s.mu.Lock()
	var line string
	if e := s.entries[k]; e != nil && e.size == recorded {
		e.size = got
		line = s.refusedLocked(n.logPath(), fmt.Sprintf("a view of %d bytes; it encodes to %d", recorded, got))
	}
	s.mu.Unlock()
	s.log(line)
}
