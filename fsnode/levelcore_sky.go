package fsnode

import (
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
	b.addLazyView(src, "sky.glb", ViewGLB, func() (encodedView, error) {
		block, err := readWhole(src)
		if err != nil {
			return encodedView{}, err
		}
		out, shells, err := gltf.EncodeSky(src.Name, block, func(tex int32) ([]byte, error) {
			png := textures.Child(fmt.Sprintf("%02d.png", tex))
			if png == nil {
				return nil, fmt.Errorf("sky texture %d has no PNG in %s", tex, textures.path)
			}
			return readWhole(png)
		})
		if err != nil {
			return encodedView{}, err
		}
		nv, nt := 0, 0
		for _, m := range shells {
			nv, nt = nv+len(m.Positions), nt+len(m.Triangles)
		}
		return encodedView{data: out, attrs: []Attr{
			{"shells", strconv.Itoa(len(shells))},
			{"vertices", strconv.Itoa(nv)},
			{"triangles", strconv.Itoa(nt)},
		}}, nil
	})
}

// fill reads the sky header and texture defs and makes the textures' views.
func (ls *skyListing) fill(dir *Node, cd *Node, bl levelcore.Block) []*Node {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	skip := func(line string) {
		ls.skipped = append(ls.skipped, line)
		dir.tree.logf("%s: left out: %s", dir.path, line)
	}
	r, err := cd.Open()
	if err != nil {
		// counted, not logged: core_data's own error is reported with it
		ls.skipped = append(ls.skipped, fmt.Sprintf("sky texture table: core_data: %v", err))
		return nil
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
		skip(fmt.Sprintf("sky texture table: reading the sky header: %v", err))
		return nil
	}
	h, err := levelcore.ParseSkyHeader(hb, bl.Size)
	if err != nil {
		skip(fmt.Sprintf("sky texture table: %v", err))
		return nil
	}
	ls.count = int(h.TextureCount)
	off, n, err := h.DefsRange()
	if err != nil {
		skip(fmt.Sprintf("sky texture table: %v", err))
		return nil
	}
	defs, err := read(off, n)
	if err != nil {
		skip(fmt.Sprintf("sky texture table: reading its defs: %v", err))
		return nil
	}
	texs, skips := levelcore.SkyTextures(h, defs, bl.Offset)
	for _, s := range skips {
		skip(levelcore.SkySkipString(s))
	}
	kids := make([]*Node, 0, len(texs))
	for _, t := range texs {
		t := t
		kids = append(kids, &Node{Name: fmt.Sprintf("%02d.png", t.Index), Kind: View,
			size: assets.PNGSize(assets.Shape{Width: t.Width, Height: t.Height, Depth: 8}),
			vm:   &viewMeta{source: cd, kind: ViewPNG},
			lc:   &coreMeta{tex: &t, pixels: cd, palette: cd}})
	}
	return kids
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
