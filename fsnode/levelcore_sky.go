package fsnode

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"sync"

	"gcfs/assets"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
)

// sky.d/ (SPEC "The tree, third edition"): beside a level core's sky block,
// present whenever the block is. Its textures/ is the one directory of the
// core whose listing reads core_data: the sky's texture table lies in the
// sky block (LEVEL-CORE §2.6), not in core_index. It is a lazy directory
// (lazydir.go): its first listing (or a lookup inside it) reads the sky
// header and then the texture defs, both through core_data's index and
// cache like any block read (no second decode), and makes a PNG view a
// def; listing anything else of the level still decodes nothing.

// skyListing is what the first listing of sky.d/textures/ found.
type skyListing struct {
	mu      sync.Mutex
	skipped []string // what was left out, and why (also logged, a line each)
	count   int      // texture defs the header declares (-1: header unread)
	// set by the listing: the directory, core_data and the sky block
	dir, cd *Node
	bl      levelcore.Block
	// fromSide: listed from kept, the sidecar's table, not yet proven
	// against core_data (verify)
	fromSide bool
	kept     skyTable

	vmu      sync.Mutex // verify's
	verified bool
	verr     error
}

// skyDir adds sky.d/textures/ beside the sky block, if there is one.
func (b *builder) skyDir(core *Node, c *levelcore.Core, cd *Node) {
	var sky *levelcore.Block
	for i := range c.Blocks {
		if c.Blocks[i].Name == "sky" {
			sky = &c.Blocks[i]
		}
	}
	if sky == nil {
		return
	}
	d := &Node{Name: "sky.d", Kind: Dir, Parent: core, tree: b.t}
	core.Children = append(core.Children, d)
	if b.t.opt.NoViews {
		return // the textures are views
	}
	bl := *sky
	ls := &skyListing{count: -1}
	tx := &Node{Name: "textures", Kind: Dir, Parent: d, tree: b.t, lc: &coreMeta{sky: ls}}
	tx.lc.lazy = &lazyDir{fill: func(dir *Node) []*Node { return ls.fill(dir, cd, bl) }}
	d.Children = append(d.Children, tx)
	if src := childNamed(core, "sky"); src != nil {
		b.skyMeshView(src, tx)
	}
}

// skyMeshView adds sky.glb beside the sky block: its shells (mesh.ReadSky)
// with the PNG views of sky.d/textures/ embedded, a lazily sized view
// (lazyview.go) like tfrags.glb.
func (b *builder) skyMeshView(src, textures *Node) {
	v := b.addLazyView(src, "sky.glb", ViewGLB, func(ec *encodeCtx) (encodedView, error) {
		block, done, err := ec.source(src)
		if err != nil {
			return encodedView{}, err
		}
		defer done()
		scene, shells, err := gltf.SkyScene(src.Name, block, func(tex int32, mat *gltf.Material) error {
			png := textures.Child(fmt.Sprintf("%02d.png", tex))
			if png == nil {
				return fmt.Errorf("sky texture %d has no PNG in %s", tex, textures.path)
			}
			return ec.png(mat, png)
		})
		if err != nil {
			return encodedView{}, err
		}
		nv, nt := 0, 0
		for _, m := range shells {
			nv, nt = nv+len(m.Positions), nt+len(m.Triangles)
		}
		return sceneView(scene, ec.sizeOnly, []Attr{
			{"shells", strconv.Itoa(len(shells))},
			{"vertices", strconv.Itoa(nv)},
			{"triangles", strconv.Itoa(nt)},
		})
	})
	if v != nil {
		v.vm.lazy.deps = func() []*Node { return append([]*Node(nil), textures.List()...) }
	}
}

// skyTable is the bytes a sky texture listing reads of the sky block: its
// header (the block's first SkyHeaderSize bytes, fewer when the block is
// shorter) and the texture defs the header places (none when it places
// none, or does not read). The listing is computed from them alone, so
// they are what the index sidecar keeps of it.
type skyTable struct {
	header, defs []byte
}

func (t *skyTable) bytes() int64 {
	if t == nil {
		return 0
	}
	return int64(len(t.header) + len(t.defs))
}

func (t skyTable) equal(o skyTable) bool {
	return bytes.Equal(t.header, o.header) && bytes.Equal(t.defs, o.defs)
}

// skyReadError is why a sky table could not be read from core_data: a
// skip line; quiet when it is core_data's own error (reported with
// core_data, not logged again).
type skyReadError struct {
	line  string
	quiet bool
}

func (e *skyReadError) Error() string { return e.line }

// readSkyTable reads the sky table of block bl from core_data cd: the
// header, then the defs it places. A header that does not parse or place
// its defs is returned without defs (list says why); an error is a read
// that failed.
func readSkyTable(cd *Node, bl levelcore.Block) (skyTable, error) {
	r, err := cd.openForModelBefore(bl.Offset + bl.Size)
	if err != nil {
		return skyTable{}, &skyReadError{line: fmt.Sprintf("sky texture table: core_data: %v", err), quiet: true}
	}
	read := func(off, n int64) ([]byte, error) {
		buf := make([]byte, n) // bounded by the sky block's size (checked by the caller)
		got, err := r.ReadAt(buf, bl.Offset+off)
		if int64(got) != n {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("core_data ends at %d, before the sky block's bytes %d..%d", bl.Offset+off+int64(got), bl.Offset+off, bl.Offset+off+n)
			}
			return nil, err
		}
		return buf, nil
	}
	hb, err := read(0, min(levelcore.SkyHeaderSize, bl.Size))
	if err != nil {
		return skyTable{}, &skyReadError{line: fmt.Sprintf("sky texture table: reading the sky header: %v", err)}
	}
	h, err := levelcore.ParseSkyHeader(hb, bl.Size)
	if err != nil {
		return skyTable{header: hb}, nil
	}
	off, n, err := h.DefsRange()
	if err != nil {
		return skyTable{header: hb}, nil
	}
	defs, err := read(off, n)
	if err != nil {
		return skyTable{}, &skyReadError{line: fmt.Sprintf("sky texture table: reading its defs: %v", err)}
	}
	return skyTable{header: hb, defs: defs}, nil
}

// skyTableRefused says why a sky table kept in the sidecar is not one
// readSkyTable can have read of a sky block of blockSize bytes, or "": a
// header of the block's header length, and exactly the defs that header
// places (checked by the parser that reads them from core_data).
func skyTableRefused(t skyTable, blockSize int64) string {
	if want := min(levelcore.SkyHeaderSize, blockSize); int64(len(t.header)) != want {
		return fmt.Sprintf("a sky header of %d bytes, the %d-byte sky block's has %d", len(t.header), blockSize, want)
	}
	var want int64
	if h, err := levelcore.ParseSkyHeader(t.header, blockSize); err == nil {
		if _, n, err := h.DefsRange(); err == nil {
			want = n
		}
	}
	if int64(len(t.defs)) != want {
		return fmt.Sprintf("%d bytes of sky texture defs, its header places %d", len(t.defs), want)
	}
	return ""
}

// fill lists sky.d/textures/: from the sidecar's sky table when it has one
// that checks, else from core_data (recording what it read).
func (ls *skyListing) fill(dir *Node, cd *Node, bl levelcore.Block) []*Node {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.dir, ls.cd, ls.bl = dir, cd, bl
	if t, ok := ls.sideTable(); ok {
		ls.fromSide, ls.kept = true, t
		return ls.list(t)
	}
	t, err := readSkyTable(cd, bl)
	if err != nil {
		re := err.(*skyReadError)
		if re.quiet {
			ls.skipped = append(ls.skipped, re.line) // counted, not logged
		} else {
			ls.skip(re.line)
		}
		return nil
	}
	ls.record(t)
	return ls.list(t)
}

// skip leaves something out: counted, and logged a line each. ls.mu held.
func (ls *skyListing) skip(line string) {
	ls.skipped = append(ls.skipped, line)
	ls.dir.tree.logf("%s: left out: %s", ls.dir.path, line)
}

// list makes the textures' views from the sky table t (ls.mu held).
func (ls *skyListing) list(t skyTable) []*Node {
	bl, cd := ls.bl, ls.cd
	h, err := levelcore.ParseSkyHeader(t.header, bl.Size)
	if err != nil {
		ls.skip(fmt.Sprintf("sky texture table: %v", err))
		return nil
	}
	ls.count = int(h.TextureCount)
	if _, _, err := h.DefsRange(); err != nil {
		ls.skip(fmt.Sprintf("sky texture table: %v", err))
		return nil
	}
	texs, skips := levelcore.SkyTextures(h, t.defs, bl.Offset)
	for _, s := range skips {
		ls.skip(levelcore.SkySkipString(s))
	}
	kids := make([]*Node, 0, len(texs))
	for _, t := range texs {
		t := t
		kids = append(kids, &Node{Name: fmt.Sprintf("%02d.png", t.Index), Kind: View,
			size: assets.PNGSize(assets.Shape{Width: t.Width, Height: t.Height, Depth: 8}),
			vm:   &viewMeta{source: cd, kind: ViewPNG},
			lc:   &coreMeta{tex: &t, pixels: cd, palette: cd, skyOf: ls}})
	}
	return kids
}

// The sidecar's sky entries: key "s" + core_data's stream key + "@" and
// the sky block's offset and size in core_data.
func (ls *skyListing) sideKey() string {
	p := ls.cd.sideKey()
	if p == "" {
		return ""
	}
	k := "s" + p + "@" + strconv.FormatInt(ls.bl.Offset, 10) + "+" + strconv.FormatInt(ls.bl.Size, 10)
	if len(k) > maxSideKey {
		return ""
	}
	return k
}

// sideTable is the sky table the sidecar kept, when it has one that a read
// of this sky block can have given (another is refused: dropped, counted,
// logged, and the table read from core_data).
func (ls *skyListing) sideTable() (skyTable, bool) {
	s := ls.dir.tree.side
	if s == nil {
		return skyTable{}, false
	}
	k := ls.sideKey()
	if k == "" {
		return skyTable{}, false
	}
	s.mu.Lock()
	e := s.entries[k]
	s.mu.Unlock()
	switch {
	case e == nil:
		return skyTable{}, false
	case e.sky == nil:
		ls.dir.sideRefuse(k, e, "a sky table's entry with a decoded stream's fields")
		return skyTable{}, false
	}
	if why := skyTableRefused(*e.sky, ls.bl.Size); why != "" {
		ls.dir.sideRefuse(k, e, why)
		return skyTable{}, false
	}
	return *e.sky, true
}

// record keeps the sky table read from core_data in the sidecar (bounded
// per tree; an entry that says otherwise is replaced and counted refused).
func (ls *skyListing) record(t skyTable) {
	s := ls.dir.tree.side
	if s == nil {
		return
	}
	k := ls.sideKey()
	if k == "" {
		return
	}
	s.mu.Lock()
	var line string
	e := s.entries[k]
	var old int64
	if e != nil {
		old = e.sky.bytes()
	}
	switch {
	case e != nil && e.sky != nil && e.sky.equal(t):
		s.mu.Unlock()
		return
	case e == nil && len(s.entries) >= maxSidecarEntries, s.sbytes-old+t.bytes() > maxSkyTotal:
		s.mu.Unlock()
		return
	case e != nil:
		line = s.refusedLocked(ls.dir.logPath(), "its sky texture table differs from core_data's")
		s.ibytes -= int64(len(e.index))
		s.sbytes -= old
	default:
		s.changed()
	}
	s.entries[k] = &sideEntry{sky: &t}
	s.sbytes += t.bytes()
	s.mu.Unlock()
	s.log(line)
}

// verify proves a sky table that came from the sidecar, before a sky
// texture's pixels are read (they decode core_data anyway): the table is
// read from core_data once and compared. One that differs fails every sky
// texture read of this tree (its listing was made from it) and is
// corrected in the sidecar; a read that fails is retried at the next.
func (ls *skyListing) verify() error {
	ls.vmu.Lock()
	defer ls.vmu.Unlock()
	if !ls.fromSide || ls.verified {
		return ls.verr
	}
	t, err := readSkyTable(ls.cd, ls.bl)
	if err != nil {
		return err
	}
	ls.verified = true
	if !t.equal(ls.kept) {
		ls.record(t)
		ls.verr = fmt.Errorf("the sky texture table in core_data differs from the one the index sidecar %s recorded, which listed %s (the next tree has it right)",
			ls.dir.tree.side.file, ls.dir.path)
	}
	return ls.verr
}

// SkyTextures says what the listing of a sky.d/textures/ directory found:
// whether it was listed yet, the texture count its header declares, and
// what was left out. listed is false for other nodes too.
func (n *Node) SkyTextures() (listed bool, declared int, skipped []string) {
	if n.lc == nil || n.lc.sky == nil {
		return false, 0, nil
	}
	if !n.Listed() {
		return false, 0, nil
	}
	ls := n.lc.sky
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return true, ls.count, append([]string(nil), ls.skipped...)
}

// skyXattrs: sky.d/textures/ counts what its listing left out (0 before
// it is listed: reading an attribute lists nothing) and says whether it
// has been listed.
func (m *coreMeta) skyXattrs(add func(name, value string)) {
	ls := m.sky
	if ls == nil {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	add("skipped", strconv.Itoa(len(ls.skipped)))
	add("lists_core_data", "true")
	add("listed", strconv.FormatBool(m.lazy != nil && m.lazy.done.Load()))
}
