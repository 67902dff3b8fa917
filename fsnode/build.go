package fsnode

import (
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"sync"

	"gcfs/cache"
	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/mesh"
)

// maxDepth bounds the ISO walk; discimg already refuses loops, this is the
// model's own guard.
const maxDepth = 64

// Build makes the tree from an opened image: directory records, container
// headers, part tables and the assets' headers. The only streams it decodes
// are the beginnings of those whose content the tree must read to be built
// (decoded parents of NAME.d/ parts, BONUS textures for their PNG sizes).
func Build(img *discimg.Image, opt Options) (*Tree, error) {
	if img == nil || img.Root == nil {
		return nil, errors.New("fsnode: image has no root directory")
	}
	if opt.CacheSize <= 0 {
		opt.CacheSize = DefaultCacheSize
	}
	if opt.MaxDecoded <= 0 {
		opt.MaxDecoded = DefaultMaxDecoded
	}
	ixBudget := opt.CacheSize / 32
	if ixBudget < 1<<20 {
		ixBudget = 1 << 20
	}
	t := &Tree{Image: img, Cache: opt.Cache, opt: opt, indexes: newIndexLRU(ixBudget),
		meshes: newSizedLRU[meshKey, *mesh.Mesh](meshMemoBudget(opt.CacheSize)), buildCache: cache.New(min(opt.CacheSize, 32<<20))}
	if t.Cache == nil {
		t.Cache = cache.New(opt.CacheSize)
	}
	if opt.Logf != nil {
		t.lim = NewLimiter(opt.Logf, opt.LogBurst)
	}
	if opt.ReadAhead > 0 {
		t.raSem = make(chan struct{}, raWorkers)
	}
	t.bigSem = make(chan struct{}, max(2, cores))
	t.logImageProblems()
	b := &builder{t: t, prefixes: map[*Node][]byte{}}
	root := &Node{Kind: Dir, tree: t, entry: img.Root}
	t.Root = root
	b.iso(root, img.Root, 0)
	b.readTOC()
	b.containers()
	b.loadSidecar()
	// Streams and parts, one depth at a time: a leaf that begins with a WAD
	// stream becomes NAME (decoded) and NAME.wad; a leaf whose content is a
	// list of parts gets NAME.d/ whose parts are leaves of the next depth.
	for depth := 0; len(b.leaves) > 0; depth++ {
		leaves := b.leaves
		b.leaves = nil
		b.detectStreams(leaves)
		b.detectNested(leaves)
		if depth >= maxPartDepth {
			continue
		}
		for _, l := range leaves {
			if l.layout != "" {
				b.expand(l, depth)
			}
		}
	}
	b.views()
	b.levelCores()
	b.gameplays()
	b.levelScenes()
	b.finish(root)
	t.assignInos()
	t.orderFiles()
	t.buildCache = nil
	if spare := cores - 1; spare > 0 {
		t.scanSem = make(chan struct{}, spare)
	}
	t.ready.Store(true)
	t.lim.Flush()
	return t, nil
}

type builder struct {
	t       *Tree
	pending []*pendingContainer
	leaves  []*Node // extents and parts to probe for a WAD stream
	parts   int     // part nodes made, bounded by maxPartNodes
	// prefixes are the first bytes of image-backed leaves, read by the
	// stream probes in merged runs, for the views' sniffing
	prefixes map[*Node][]byte
	// partsCapped: the bound was hit (logged once)
	partsCapped bool
	toc         *discimg.TOC
}

// maxPartDepth bounds NAME.d/ nesting and maxPartNodes the part nodes of a
// tree, whatever the tables say (the retail layout has depth 2 and a few
// thousand parts).
const maxPartDepth = 8

// maxPartNodes is a variable so that a test can show the bound holds.
var maxPartNodes = 1 << 20

type pendingContainer struct {
	n   *Node          // the plain file node, turned into a directory when the table reads
	dir *discimg.Entry // the directory it is listed in (for the run behind it)
}

// logf logs one problem through the tree's Limiter.
func (t *Tree) logf(format string, args ...any) { t.lim.Logf(format, args...) }

// iso mirrors one ISO directory.
func (b *builder) iso(dir *Node, e *discimg.Entry, depth int) {
	if e.IsDir {
		dir.hasRange, dir.off, dir.size = true, e.Offset(), e.Size
	}
	if depth >= maxDepth {
		b.t.logf("%s: directory nesting deeper than %d, not descended", e.Path, maxDepth)
		return
	}
	for _, c := range e.Children {
		if c == nil {
			continue
		}
		n := &Node{Name: c.Name, Parent: dir, tree: b.t, entry: c}
		if c.IsDir {
			n.Kind = Dir
			dir.Children = append(dir.Children, n)
			b.iso(n, c, depth+1)
			continue
		}
		n.Kind = Raw
		n.hasRange, n.off, n.size = true, c.Offset(), c.Size
		n.staticErr = b.rangeErr(n, c.Err)
		dir.Children = append(dir.Children, n)
		if dir.Parent != nil && dir.Parent.Parent == nil && strings.EqualFold(dir.Name, "G") &&
			len(c.Name) > 4 && strings.EqualFold(c.Name[len(c.Name)-4:], ".WAD") &&
			(c.Err == nil || errors.Is(n.staticErr, ErrShortImage)) {
			b.pending = append(b.pending, &pendingContainer{n: n, dir: e})
		}
	}
}

// rangeErr says why the bytes of an image range cannot all be read.
func (b *builder) rangeErr(n *Node, recorded error) error {
	if n.size < 0 || n.off < 0 {
		return fmt.Errorf("extent at image offset %d, %d bytes: invalid", n.off, n.size)
	}
	if end := n.off + n.size; end > b.t.Image.Size || end < n.off {
		first := n.off
		if b.t.Image.Size > first {
			first = b.t.Image.Size
		}
		return &ShortImageError{Path: n.path, Offset: first, End: end, ImageSize: b.t.Image.Size}
	}
	return recorded
}

// containers reads the table of every G/*.WAD and turns the readable ones into
// directories of their extents.
func (b *builder) containers() {
	// The tables are read in parallel (a header read each); the nodes are
	// made in order afterwards.
	type result struct {
		c     *discimg.Container
		limit int64 // how far its table may address (the run behind it)
		err   error
	}
	results := make([]result, len(b.pending))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				n := b.pending[i].n
				if n.staticErr != nil && !errors.Is(n.staticErr, ErrShortImage) {
					results[i].err = n.staticErr
					continue
				}
				limit := b.t.Image.RunLimit(n.Entry(), b.pending[i].dir)
				results[i].limit = limit
				r := &imageRange{r: b.t.Image.R, imgSize: b.t.Image.Size, base: n.off, size: max(limit, n.size), path: n.Entry().Path}
				results[i].c, results[i].err = discimg.ReadContainerIn(n.Name, r, n.size, limit)
			}
		}()
	}
	for i := range b.pending {
		next <- i
	}
	close(next)
	wg.Wait()
	for i, pc := range b.pending {
		n := pc.n
		c, err := results[i].c, results[i].err
		if n.staticErr != nil && !errors.Is(n.staticErr, ErrShortImage) {
			n.rareOf().tableErr = n.staticErr
			b.t.logf("%s: stays a plain file: %v", n.Entry().Path, n.staticErr)
			continue
		}
		if err != nil || c == nil {
			if err == nil {
				err = errors.New("no table")
			}
			n.rareOf().tableErr = err
			if !errors.Is(err, discimg.ErrNotContainer) && !errors.Is(err, discimg.ErrFormat) && !errors.Is(err, ErrShortImage) {
				// The header could not be read: not a plain file, whose
				// bytes would be served as if that were what it is, but
				// an error.
				n.staticErr = err
			}
			// A file with no table at all (MPEG1.WAD's raw video) is expected
			// plain data, not a problem worth a log line.
			if !errors.Is(err, discimg.ErrNotContainer) {
				b.t.logf("%s: stays a plain file: %v", n.Entry().Path, err)
			}
			continue
		}
		n.Kind = Dir
		n.rareOf().cont = c
		n.rare.toc = "no table of contents (RC2.HDR missing or unreadable)"
		if b.toc != nil {
			n.rare.toc = b.toc.Check(n.Name, n.entry.LBA, n.size, c.Header)
		}
		limit := results[i].limit
		groups := map[string]*Node{}
		for i := range c.Extents {
			x := &c.Extents[i]
			if x.Size < 0 || x.Offset < 0 || x.Offset+x.Size > max(n.size, limit) {
				b.t.logf("%s: extent %d (%q) outside the container, left out", n.Entry().Path, x.Index, x.Name)
				continue
			}
			parent := n
			parts := strings.Split(x.Name, "/")
			for j, part := range parts[:len(parts)-1] {
				key := strings.Join(parts[:j+1], "/")
				g := groups[key]
				if g == nil {
					g = &Node{Name: part, Kind: Dir, Parent: parent, tree: b.t}
					groups[key] = g
					parent.Children = append(parent.Children, g)
				}
				parent = g
			}
			leaf := &Node{Name: parts[len(parts)-1], Kind: Raw, Parent: parent, tree: b.t, extent: x,
				hasRange: true, off: n.off + x.Offset, size: x.Size, layout: x.Layout}
			if x.Beyond {
				if e := b.t.Image.FileAt(n.off + x.Offset); e != nil {
					leaf.inFile = e.Path
				}
			}
			leaf.staticErr = b.rangeErr(leaf, nil)
			parent.Children = append(parent.Children, leaf)
			b.leaves = append(b.leaves, leaf)
		}
	}
}

// Entry is the node's ISO directory record, or nil for nodes inside a container.
func (n *Node) Entry() *discimg.Entry { return n.entry }

// probeGap: prefixes closer than this are fetched with one read; a wider gap
// costs more to copy than a separate pread.
const probeGap = 8 << 10

// probeSpan bounds one merged prefix read.
const probeSpan = 256 << 10

// detectStreams reads the first 16 bytes of every extent (merging nearby ones
// into one read, in parallel) and splits each WAD stream into NAME (decoded)
// and NAME.wad (raw).
func (b *builder) detectStreams(leaves []*Node) {
	type probe struct {
		leaf   *Node
		n      int64 // prefix bytes wanted: enough for a WAD header and a view's
		prefix [viewPrefix]byte
		ok     bool
		err    error // the probe's own read failed: the leaf is an error, of no kind
	}
	var probes []*probe
	for _, l := range leaves {
		if n := min(l.size, viewPrefix); l.Kind == Raw && n > 0 && l.off+n <= b.t.Image.Size {
			probes = append(probes, &probe{leaf: l, n: n})
		}
	}
	sort.Slice(probes, func(i, j int) bool { return probes[i].leaf.off < probes[j].leaf.off })
	type run struct{ lo, hi int } // probes[lo:hi], one read
	var runs []run
	for i := 0; i < len(probes); {
		j := i + 1
		start := probes[i].leaf.off
		end := start + probes[i].n
		for j < len(probes) {
			o := probes[j].leaf.off
			if o-end > probeGap || o+probes[j].n-start > probeSpan {
				break
			}
			if e := o + probes[j].n; e > end {
				end = e
			}
			j++
		}
		runs = append(runs, run{i, j})
		i = j
	}
	img := b.t.Image
	var wg sync.WaitGroup
	const workers = 4
	next := make(chan run)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for r := range next {
				start := probes[r.lo].leaf.off
				end := start
				for _, p := range probes[r.lo:r.hi] {
					if e := p.leaf.off + p.n; e > end {
						end = e
					}
				}
				if end > img.Size {
					end = img.Size
				}
				if end <= start {
					continue
				}
				if int64(cap(buf)) < end-start {
					buf = make([]byte, end-start)
				}
				got, _ := img.R.ReadAt(buf[:end-start], start)
				for _, p := range probes[r.lo:r.hi] {
					rel := p.leaf.off - start
					if rel+p.n <= int64(got) {
						copy(p.prefix[:], buf[rel:rel+p.n])
						p.ok = true
						continue
					}
					// The merged read failed before this probe (a bad
					// hunk or block somewhere in the run): that decides
					// nothing of this leaf, so it is read alone.
					p.ok, p.err = probeAlone(img.R, p.prefix[:p.n], p.leaf.off)
				}
			}
		}()
	}
	for _, r := range runs {
		next <- r
	}
	close(next)
	wg.Wait()
	for _, p := range probes {
		if p.err != nil {
			// Whether it is a stream, a container of parts or an asset is
			// not known: the leaf is an error (EIO), never a file of
			// another kind.
			if l := p.leaf; l.staticErr == nil || errors.Is(l.staticErr, ErrShortImage) {
				l.staticErr = p.err
			}
			continue
		}
		if p.ok {
			b.prefixes[p.leaf] = append([]byte(nil), p.prefix[:p.n]...) // for views
		}
		if !p.ok || p.n < codec.HeaderSize || !codec.IsStream(p.prefix[:], p.leaf.size) {
			continue
		}
		h, err := codec.ParseHeader(p.prefix[:])
		if err != nil {
			continue
		}
		l := p.leaf
		raw := &Node{Name: l.Name + ".wad", Kind: Raw, Parent: l.Parent, tree: b.t, extent: l.extent,
			hasRange: true, off: l.off, size: l.size, staticErr: l.staticErr, inFile: l.inFile, wadOf: l}
		l.becomeDecoded(h)
		if l.staticErr != nil && l.off+h.Size <= img.Size {
			// The stream itself is inside the image; only its padding is not.
			l.staticErr = nil
		}
		l.Parent.Children = append(l.Parent.Children, raw)
	}
}

// probeAlone reads one probe's bytes at off; ok false with an error says its
// own bytes cannot be read.
func probeAlone(r io.ReaderAt, buf []byte, off int64) (ok bool, err error) {
	got, err := r.ReadAt(buf, off)
	if got == len(buf) {
		return true, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return false, &ProbeError{Offset: off, Len: len(buf), Err: err}
}

// ProbeError says why the build could not read the first bytes of a file,
// those that say what it is (a WAD stream, a part table, an asset): the file
// is served as an error, not as bytes of a guessed kind.
type ProbeError struct {
	Offset int64  // image offset, or offset in Within
	Within string // the decoded file whose content holds the bytes ("": the image)
	Len    int
	Err    error
}

func (e *ProbeError) Error() string {
	where := fmt.Sprintf("image offset %#x", e.Offset)
	if e.Within != "" {
		where = fmt.Sprintf("offset %#x of decoded %s", e.Offset, e.Within)
	}
	return fmt.Sprintf("its first %d bytes, at %s, could not be read, so what it is is not known: %v", e.Len, where, e.Err)
}

func (e *ProbeError) Unwrap() error { return e.Err }

// finish sets paths, makes every name safe and unique, and sorts children.
func (b *builder) finish(root *Node) {
	var rec func(d *Node)
	rec = func(d *Node) {
		b.t.nodes++
		if d.Kind != Dir {
			return
		}
		// Every name as recorded keeps its place; only the second and later
		// of equal names get a suffix, one no recorded name uses.
		taken := make(map[string]bool, len(d.Children))
		for _, c := range d.Children {
			taken[safeName(c.Name)] = true
		}
		seen := make(map[string]bool, len(d.Children))
		for _, c := range d.Children {
			name := safeName(c.Name)
			if name != c.Name {
				b.t.logf("%s: name %q is not a safe file name, shown as %q", pathJoin(d.path, name), c.Name, name)
			}
			if seen[name] {
				base := name
				for k := 2; taken[name]; k++ {
					name = base + "~" + strconv.Itoa(k)
				}
				taken[name] = true
				b.t.logf("%s: duplicate name %q, shown as %q", d.path, base, name)
			}
			seen[name] = true
			c.Name = name
			c.path = pathJoin(d.path, name)
			c.staticErr = withPath(c.path, c.staticErr)
		}
		sort.Slice(d.Children, func(i, j int) bool { return d.Children[i].Name < d.Children[j].Name })
		for _, c := range d.Children {
			rec(c)
		}
	}
	rec(root)
}

func pathJoin(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// safeName turns a recorded name into one a filesystem (and a TSV manifest)
// can show: no '/', NUL or other control characters, not empty, not "." or "..".
func safeName(s string) string {
	if strings.IndexFunc(s, unsafeRune) >= 0 {
		s = strings.Map(func(r rune) rune {
			if unsafeRune(r) {
				return '_'
			}
			return r
		}, s)
	}
	switch s {
	case "":
		return "_"
	case ".", "..":
		return "_" + s
	}
	return s
}

func unsafeRune(r rune) bool { return r == '/' || r < 0x20 || r == 0x7f }

// SafeName reports whether name can be a file name in a directory: not empty,
// not "." or "..", no '/' or NUL. Every name in a built tree is safe.
func SafeName(name string) bool { return name != "" && safeName(name) == name }

// assignInos gives every node an inode number derived from its path (FNV-64a),
// collisions resolved in walk order by rehashing with a counter; root is 1.
func (t *Tree) assignInos() {
	used := make(map[uint64]bool, t.nodes)
	used[0], used[1] = true, true
	t.Root.Ino = 1
	_ = t.Walk(func(n *Node) error {
		if n == t.Root {
			return nil
		}
		ino := inoHash(n.path, 0)
		for k := 1; used[ino]; k++ {
			ino = inoHash(n.path, k)
		}
		used[ino] = true
		n.Ino = ino
		return nil
	})
}

// inoHash is pathHash; tests swap it to force collisions.
var inoHash = pathHash

func pathHash(p string, k int) uint64 {
	h := fnv.New64a()
	io.WriteString(h, p)
	if k > 0 {
		h.Write([]byte{0})
		io.WriteString(h, strconv.Itoa(k))
	}
	return h.Sum64()
}

// Lookup finds a node by path relative to the root ("G/LEVEL0.WAD/gameplay").
// A leading or trailing '/' and "." components are ignored.
func (t *Tree) Lookup(path string) (*Node, error) {
	n := t.Root
	for _, part := range strings.Split(path, "/") {
		if part == "" || part == "." {
			continue
		}
		if n.Kind != Dir {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fmt.Errorf("%s is not a directory: %w", n.path, fs.ErrNotExist)}
		}
		c := n.Child(part)
		if c == nil {
			return nil, &fs.PathError{Op: "lookup", Path: path, Err: fs.ErrNotExist}
		}
		n = c
	}
	return n, nil
}

// Walk calls fn for every node in depth-first, name order (root first). When
// fn returns fs.SkipDir for a directory its children are skipped; any other
// error stops the walk and is returned. A lazy directory not yet listed is
// visited without children (WalkListing lists it).
func (t *Tree) Walk(fn func(n *Node) error) error {
	return walk(t.Root, fn)
}

// WalkFrom is Walk starting at n.
func WalkFrom(n *Node, fn func(n *Node) error) error { return walk(n, fn) }

func walk(n *Node, fn func(n *Node) error) error {
	if err := fn(n); err != nil {
		if errors.Is(err, fs.SkipDir) {
			return nil
		}
		return err
	}
	for _, c := range n.listed() {
		if err := walk(c, fn); err != nil {
			return err
		}
	}
	return nil
}

// Nodes is the number of nodes in the tree.
func (t *Tree) Nodes() int { return t.nodes }
