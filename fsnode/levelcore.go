package fsnode

import (
	"fmt"
	"io"
	"strconv"

	"gcfs/assets"
	"gcfs/discimg"
	"gcfs/discimg/levelcore"
)

// The level core (SPEC "The tree, third edition: inside a level"): a data
// lump's data.d/ gets core/, composed from its core_index (read whole at
// build: it is small), core_data (decoded) and gs_ram parts by the
// FUSE-free levelcore model. Blocks are Nested nodes, ranges of the decoded
// core_data read through its index and cache like any part of decoded
// content; textures are PNG views whose pixels and palette are read from
// core_data or gs_ram when the view is first read. Listing decodes nothing.

// maxCoreIndex bounds the core_index read at build (retail's are tens of
// KiB).
const maxCoreIndex = 16 << 20

// coreMeta is what a level core node carries: the core directory its
// reading, a class directory its entry, a texture view its texture.
type coreMeta struct {
	core  *levelcore.Core // data.d/core/
	class *levelcore.Class
	tex   *levelcore.Texture
	// texture views: the parts its pixels and palette are in
	pixels, palette *Node
	// lazy: a directory listed on first look (sky.d/textures/, lazydir.go);
	// sky: what listing it found (levelcore_sky.go)
	lazy *lazyDir
	sky  *skyListing
	// skyOf: a sky texture's listing (its table proven before its pixels
	// are read, when it came from the index sidecar)
	skyOf *skyListing
}

// LevelTexture is a level texture's PNG view's texture (LEVEL-CORE §1.5)
// and the files its pixels and palette lie in (gs_ram or core_data: the
// texture's Loc offsets are theirs); tex nil for other nodes.
func (n *Node) LevelTexture() (tex *levelcore.Texture, pixels, palette *Node) {
	if n.lc == nil || n.lc.tex == nil {
		return nil, nil, nil
	}
	return n.lc.tex, n.lc.pixels, n.lc.palette
}

// LevelCore is the reading of a level core directory (data.d/core/), nil
// for other nodes.
func (n *Node) LevelCore() *levelcore.Core {
	if n.lc == nil {
		return nil
	}
	return n.lc.core
}

// nodesWhere lists, in tree order, every node below root that match
// accepts, descending into every directory: how the passes that add the
// third edition's nodes find their sources (data lumps, chunk lumps, a
// level's gameplay).
func nodesWhere(root *Node, match func(*Node) bool) []*Node {
	var found []*Node
	var walk func(d *Node)
	walk = func(d *Node) {
		for _, c := range d.Children {
			if match(c) {
				found = append(found, c)
			}
			if c.Kind == Dir {
				walk(c)
			}
		}
	}
	walk(root)
	return found
}

// partsDir matches the NAME.d/ directories of a part table of layout l.
func partsDir(l discimg.PartLayout) func(*Node) bool {
	return func(c *Node) bool { return c.Kind == Dir && c.parts != nil && c.parts.Layout == l }
}

// levelCores adds core/ to every data lump's data.d/.
func (b *builder) levelCores() {
	if b.t.opt.NoLevelCore {
		return
	}
	dirs := nodesWhere(b.t.Root, partsDir(discimg.PartsDataLump))
	for _, d := range dirs {
		b.levelCore(d)
	}
	b.chunkMeshViews() // meshviews.go
}

func childNamed(d *Node, name string) *Node {
	for _, c := range d.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func (b *builder) levelCore(d *Node) {
	ci, cd, gs := childNamed(d, "core_index"), childNamed(d, "core_data"), childNamed(d, "gs_ram")
	where := d.logPath() + "/core"
	switch {
	case ci == nil || cd == nil || gs == nil:
		return // no core in this lump; the part table's own skips say why
	case ci.Kind != Raw || gs.Kind != Raw || cd.Kind != Decoded:
		b.t.logf("%s: no level core: core_index and gs_ram must be raw and core_data a WAD stream", where)
		return
	case ci.staticErr != nil:
		b.t.logf("%s: no level core: core_index: %v", where, ci.staticErr)
		return
	case ci.size > maxCoreIndex:
		b.t.logf("%s: no level core: core_index has %d bytes, more than %d", where, ci.size, maxCoreIndex)
		return
	}
	index := make([]byte, ci.size) // bounded by maxCoreIndex
	if _, err := b.rawReader(ci).ReadAt(index, 0); err != nil && err != io.EOF {
		b.t.logf("%s: no level core: reading core_index: %v", where, err)
		return
	}
	c, err := levelcore.Read(index, gs.size)
	if err != nil {
		b.t.logf("%s: no level core: %v", where, err)
		return
	}
	core := &Node{Name: "core", Kind: Dir, Parent: d, tree: b.t, lc: &coreMeta{core: c}}
	d.Children = append(d.Children, core)
	for _, s := range c.Skipped {
		b.t.logf("%s: left out: %s", where, s)
	}
	b.clipShortCore(c, cd, where) // after: one line for all it leaves out
	dir := func(parent *Node, name string) *Node {
		if n := childNamed(parent, name); n != nil {
			return n
		}
		n := &Node{Name: name, Kind: Dir, Parent: parent, tree: b.t}
		parent.Children = append(parent.Children, n)
		return n
	}
	block := func(parent *Node, name string, bl levelcore.Block) {
		parent.Children = append(parent.Children, &Node{Name: name, Kind: Nested, Parent: parent, tree: b.t, within: cd, woff: bl.Offset, size: bl.Size})
	}
	part := func(l levelcore.Loc) *Node {
		if l.In == levelcore.InGS {
			return gs
		}
		return cd
	}
	png := func(parent *Node, name string, t levelcore.Texture) {
		if b.t.opt.NoViews {
			return
		}
		t2 := t
		src := part(t.Pixels)
		parent.Children = append(parent.Children, &Node{Name: name, Kind: View, Parent: parent, tree: b.t,
			size: assets.PNGSize(assets.Shape{Width: t.Width, Height: t.Height, Depth: 8}),
			vm:   &viewMeta{source: src, kind: ViewPNG},
			lc:   &coreMeta{tex: &t2, pixels: src, palette: part(t.Palette)}})
	}
	for _, bl := range c.Blocks {
		block(core, bl.Name, bl)
	}
	b.skyDir(core, c, cd)
	b.coreMeshViews(core) // tfrags.glb, collision.glb (meshviews.go)
	classes := []struct {
		dir string
		cs  []levelcore.Class
	}{{"mobies", c.Mobies}, {"ties", c.Ties}, {"shrubs", c.Shrubs}}
	for _, k := range classes {
		if len(k.cs) == 0 {
			continue
		}
		kd := dir(core, k.dir)
		for i := range k.cs {
			cl := &k.cs[i]
			cdir := &Node{Name: fmt.Sprintf("%04d", cl.OClass), Kind: Dir, Parent: kd, tree: b.t, lc: &coreMeta{class: cl}}
			kd.Children = append(kd.Children, cdir)
			if cl.Block != nil {
				block(cdir, "class", *cl.Block)
			}
			for _, s := range cl.Slots {
				png(cdir, fmt.Sprintf("%02d.png", s.Slot), s.Texture)
			}
			if cl.Billboard != nil {
				png(cdir, "billboard.png", *cl.Billboard)
			}
			b.classMeshViews(cdir, cl)
		}
	}
	if len(c.TfragTextures) > 0 && !b.t.opt.NoViews {
		td := dir(dir(core, "textures"), "tfrag")
		for _, t := range c.TfragTextures {
			png(td, fmt.Sprintf("%03d.png", t.Index), t)
		}
	}
	if len(c.Particles) > 0 && !b.t.opt.NoViews {
		pd := dir(core, "particles")
		for _, p := range c.Particles {
			if len(p.Frames) == 0 {
				continue
			}
			fd := dir(pd, fmt.Sprintf("%03d", p.Index))
			for f, t := range p.Frames {
				png(fd, fmt.Sprintf("%02d.png", f), t)
			}
		}
	}
	if len(c.Fx) > 0 && !b.t.opt.NoViews {
		fd := dir(core, "fx")
		for _, t := range c.Fx {
			name := fmt.Sprintf("%02d", t.Index)
			if t.Name != "" {
				name += "_" + t.Name
			}
			png(fd, name+".png", t)
		}
	}
	if len(c.RatchetSeqs) > 0 {
		rd := dir(core, "ratchet_seqs")
		for _, s := range c.RatchetSeqs {
			block(rd, s.Name, s)
		}
	}
	if r := c.SoundRemap; r != nil {
		core.Children = append(core.Children, &Node{Name: "sound_remap", Kind: Raw, Parent: core, tree: b.t,
			hasRange: true, off: ci.off + r.Offset, size: r.Size})
	}
}

// openLevelTexture reads a level texture's pixels and palette from their
// parts and decodes them (LEVEL-CORE §1.5: 8-bit indices, a swizzled
// palette in PS2 alpha).
func (m *coreMeta) openLevelTexture() (io.ReaderAt, error) {
	t := m.tex
	if m.skyOf != nil {
		if err := m.skyOf.verify(); err != nil {
			return nil, err
		}
	}
	read := func(n *Node, l levelcore.Loc, what string) ([]byte, error) {
		r, err := n.openForModelBefore(l.Offset + l.Size)
		if err != nil {
			return nil, err
		}
		buf := make([]byte, l.Size) // bounded: width × height ≤ MaxDimension², or a palette
		got, err := r.ReadAt(buf, l.Offset)
		if int64(got) != l.Size {
			if err == nil || err == io.EOF {
				err = fmt.Errorf("%s ends at %d, before the %s's %d bytes at %d", n.path, l.Offset+int64(got), what, l.Size, l.Offset)
			}
			return nil, err
		}
		return buf, nil
	}
	pix, err := read(m.pixels, t.Pixels, "pixels")
	if err != nil {
		return nil, err
	}
	pal, err := read(m.palette, t.Palette, "palette")
	if err != nil {
		return nil, err
	}
	tex, err := assets.DecodeIndexed8(t.Width, t.Height, pix, pal)
	if err != nil {
		return nil, err
	}
	return assets.NewPNGView(tex)
}

// coreXattrs are a level core node's own attributes.
func (n *Node) coreXattrs(add func(name, value string)) {
	m := n.lc
	if m == nil {
		return
	}
	if m.core != nil {
		add("skipped", strconv.Itoa(len(m.core.Skipped)))
	}
	m.skyXattrs(add)
	if m.class != nil {
		add("o_class", strconv.Itoa(int(m.class.OClass)))
		add("class_index", strconv.Itoa(m.class.Index))
		if m.class.Kind == levelcore.Moby {
			add("stashed", strconv.FormatBool(m.class.Stashed))
		}
	}
	if t := m.tex; t != nil {
		add("width", strconv.Itoa(t.Width))
		add("height", strconv.Itoa(t.Height))
		add("texture_table", t.Table)
		add("table_index", strconv.Itoa(t.Index))
		if t.PaletteUnit >= 0 {
			add("palette", strconv.Itoa(t.PaletteUnit))
		}
		add("palette_offset", strconv.FormatInt(t.Palette.Offset, 10))
		add("palette_in", t.Palette.In.String())
		add("pixels_offset", strconv.FormatInt(t.Pixels.Offset, 10))
		add("stashed", strconv.FormatBool(t.Stashed))
	}
}
