package levelcore

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// Read reads a level core from index (the whole core_index part) for a
// gs_ram of gsSize bytes. core_data's decoded size is the header's +0x8c.
// The only error is an index too short for its header; everything that
// does not fit is in Core.Skipped.
func Read(index []byte, gsSize int64) (*Core, error) {
	h, err := ParseHeader(index)
	if err != nil {
		return nil, err
	}
	c := &Core{Header: h, IndexSize: int64(len(index)), DataSize: int64(h.DecompressedSize), GSSize: gsSize}
	if c.DataSize < 0 {
		c.skip("core_data", 0x8c, "decoded size %d is negative: nothing in core_data is read", h.DecompressedSize)
		c.DataSize = 0
	}
	if c.GSSize < 0 {
		c.GSSize = 0
	}
	r := &reader{c: c, ix: index}
	r.read()
	return c, nil
}

type reader struct {
	c  *Core
	ix []byte

	mobyTex, tieTex, shrubTex []rawTexture
	texOK                     [3]bool // the moby, tie and shrub tables read
	bounds                    []int64
	claimed                   map[int64]string // block offsets taken, by whom
	stash                     map[int32]bool
	stashBase                 int64
	stashOK                   bool   // stash base known
	stashWhy                  string // why not, when MobyStashCount > 0
}

// rawTexture is a TextureEntry as stored.
type rawTexture struct {
	at            int64 // its offset in core_index
	dataOffset    int32
	width, height int16
	palette       int16
}

func (r *reader) s32(off int64) int32 { return int32(binary.LittleEndian.Uint32(r.ix[off:])) }
func (r *reader) s16(off int64) int16 { return int16(binary.LittleEndian.Uint16(r.ix[off:])) }

// fits reports whether [off, off+n) lies in core_index.
func (r *reader) fits(off, n int64) bool {
	return off >= 0 && n >= 0 && off <= r.c.IndexSize && n <= r.c.IndexSize-off
}

// table checks a header range of entries of size bytes; it returns the
// entries' count (0 when the range is left out).
func (r *reader) table(what string, field int64, rg Range, size int64) int {
	if rg.Count == 0 {
		return 0
	}
	if rg.Count < 0 {
		r.c.skip(what, field, "count %d is negative", rg.Count)
		return 0
	}
	if !r.fits(int64(rg.Offset), int64(rg.Count)*size) {
		r.c.skip(what, field, "%d entries of %#x bytes at %#x run past core_index's %#x bytes", rg.Count, size, rg.Offset, r.c.IndexSize)
		return 0
	}
	return int(rg.Count)
}

func (r *reader) read() {
	c, h := r.c, &r.c.Header
	r.claimed = map[int64]string{}
	// Class entries first: their offsets are block boundaries.
	type classTable struct {
		kind  ClassKind
		field int64
		rg    Range
		size  int64
		out   *[]Class
	}
	tables := []classTable{
		{Moby, 0x18, h.MobyClasses, classEntrySize, &c.Mobies},
		{Tie, 0x20, h.TieClasses, classEntrySize, &c.Ties},
		{Shrub, 0x28, h.ShrubClasses, shrubEntrySize, &c.Shrubs},
	}
	counts := make([]int, len(tables))
	for i, t := range tables {
		counts[i] = r.table(string(t.kind)+" class table", t.field, t.rg, t.size)
	}
	var seqs [ratchetSeqSlots]int32
	haveSeqs := false
	if h.RatchetSeqs != 0 {
		if r.fits(int64(h.RatchetSeqs), 4*ratchetSeqSlots) {
			for i := range seqs {
				seqs[i] = r.s32(int64(h.RatchetSeqs) + 4*int64(i))
			}
			haveSeqs = true
		} else {
			c.skip("ratchet_seqs", 0x78, "256 offsets at %#x run past core_index's %#x bytes", h.RatchetSeqs, c.IndexSize)
		}
	}
	// The boundary set (LEVEL-CORE §1.3).
	bset := map[int64]bool{int64(h.Tfrags): true, int64(h.Occlusion): true, int64(h.Sky): true,
		int64(h.Collision): true, int64(h.TexturesBase): true, c.DataSize: true}
	if h.MobySoundRemap != 0 {
		bset[int64(h.MobySoundRemap)] = true
	}
	for i, t := range tables {
		for k := 0; k < counts[i]; k++ {
			bset[int64(r.s32(int64(t.rg.Offset)+int64(k)*t.size))] = true
		}
	}
	for _, s := range seqs {
		if s != 0 {
			bset[int64(s)] = true
		}
	}
	for b := range bset {
		if b > 0 && b <= c.DataSize {
			r.bounds = append(r.bounds, b)
		}
	}
	sort.Slice(r.bounds, func(i, j int) bool { return r.bounds[i] < r.bounds[j] })

	r.headerBlocks()
	r.readStash()
	r.mobyTex, r.texOK[0] = r.textureTable("moby texture table", 0x38, h.MobyTextures)
	r.tieTex, r.texOK[1] = r.textureTable("tie texture table", 0x40, h.TieTextures)
	r.shrubTex, r.texOK[2] = r.textureTable("shrub texture table", 0x48, h.ShrubTextures)
	if tf, ok := r.textureTable("tfrag texture table", 0x30, h.TfragTextures); ok {
		for i, t := range tf {
			if tex, ok := r.locate("tfrag", i, t, false); ok {
				c.TfragTextures = append(c.TfragTextures, tex)
			}
		}
	}
	for i, t := range tables {
		for k := 0; k < counts[i]; k++ {
			*t.out = append(*t.out, r.class(t.kind, k, int64(t.rg.Offset)+int64(k)*t.size))
		}
	}
	r.particles()
	r.fx()
	if haveSeqs {
		for i, s := range seqs {
			if s == 0 {
				continue
			}
			name := fmt.Sprintf("%03d", i)
			if b, ok := r.block("ratchet_seqs/"+name, int64(h.RatchetSeqs)+4*int64(i), int64(s)); ok {
				b.Name = name
				c.RatchetSeqs = append(c.RatchetSeqs, b)
			}
		}
	}
	r.soundRemap()
}

// boundaryAfter is the smallest boundary strictly greater than o, or -1.
func (r *reader) boundaryAfter(o int64) int64 {
	i := sort.Search(len(r.bounds), func(i int) bool { return r.bounds[i] > o })
	if i == len(r.bounds) {
		return -1
	}
	return r.bounds[i]
}

// block sizes the block at data offset o by the boundary rule; field is
// where its offset is stored.
func (r *reader) block(what string, field, o int64) (Block, bool) {
	if o <= 0 || o >= r.c.DataSize {
		r.c.skip(what, field, "offset %#x is outside core_data's %#x decoded bytes", o, r.c.DataSize)
		return Block{}, false
	}
	if by, ok := r.claimed[o]; ok {
		r.c.skip(what, field, "offset %#x is also %s's: equal block offsets", o, by)
		return Block{}, false
	}
	end := r.boundaryAfter(o) // DataSize is a boundary, so there is one
	r.claimed[o] = what
	return Block{Name: what, Offset: o, Size: end - o}, true
}

func (r *reader) headerBlocks() {
	c, h := r.c, &r.c.Header
	// tfrags: [tfrags, next) with next the first non-zero of occlusion,
	// sky, collision (the §1.3 exception); offset 0 is valid.
	next, nextName := int64(0), ""
	for _, f := range []struct {
		v    int32
		name string
	}{{h.Occlusion, "occlusion"}, {h.Sky, "sky"}, {h.Collision, "collision"}} {
		if f.v != 0 {
			next, nextName = int64(f.v), f.name
			break
		}
	}
	t := int64(h.Tfrags)
	switch {
	case nextName == "":
		c.skip("tfrags", 0x08, "occlusion, sky and collision are all 0: nothing ends the tfrag block")
	case t < 0 || t >= c.DataSize:
		c.skip("tfrags", 0x08, "offset %#x is outside core_data's %#x decoded bytes", t, c.DataSize)
	case next <= t:
		c.skip("tfrags", 0x08, "block offsets out of order: tfrags at %#x, %s (which ends it) at %#x", t, nextName, next)
	case next > c.DataSize:
		c.skip("tfrags", 0x08, "ends at %s's %#x, past core_data's %#x decoded bytes", nextName, next, c.DataSize)
	default:
		c.Blocks = append(c.Blocks, Block{Name: "tfrags", Offset: t, Size: next - t})
		r.claimed[t] = "tfrags"
		if t != 0 {
			c.Notes = append(c.Notes, fmt.Sprintf("tfrags at %#x: Wrench reads [tfrags, tfrags+%s) = [%#x, %#x), this reading [%#x, %#x)", t, nextName, t, t+next, t, next))
		}
	}
	for _, f := range []struct {
		v     int32
		name  string
		field int64
	}{{h.Occlusion, "occlusion", 0x0c}, {h.Sky, "sky", 0x10}, {h.Collision, "collision", 0x14}} {
		if f.v == 0 {
			continue
		}
		if b, ok := r.block(f.name, f.field, int64(f.v)); ok {
			c.Blocks = append(c.Blocks, b)
		}
	}
}

func (r *reader) readStash() {
	c, h := r.c, &r.c.Header
	if h.MobyStashList != 0 {
		off := int64(h.MobyStashList)
		list := []int32{}
		ended := false
		for i := int64(0); i < maxStashListEntries && r.fits(off+2*i, 2); i++ {
			v := r.s16(off + 2*i)
			if v < 0 {
				ended = true
				break
			}
			list = append(list, int32(v))
		}
		if !ended {
			c.skip("moby stash list", 0xac, "the s16 list at %#x has no negative terminator inside core_index (or within %d entries): no class is stashed", off, maxStashListEntries)
		} else {
			c.StashList = list
			r.stash = map[int32]bool{}
			for _, v := range list {
				r.stash[v] = true
			}
		}
	}
	if h.MobyStashCount > 0 {
		if h.GsRAM.Count < 0 {
			r.stashWhy = fmt.Sprintf("the gs_ram table's count %d is negative: no stash entry", h.GsRAM.Count)
		} else if e := int64(h.GsRAM.Offset) + int64(h.GsRAM.Count)*gsRAMEntrySize; !r.fits(e, gsRAMEntrySize) {
			r.stashWhy = fmt.Sprintf("moby_gs_stash_count %d, but gs_ram table entry %d (at %#x) lies outside core_index", h.MobyStashCount, h.GsRAM.Count, e)
		} else {
			r.stashBase = int64(r.s32(e + 8))
			r.stashOK = true
		}
		if r.stashWhy != "" {
			c.skip("moby stash", 0x84, "%s", r.stashWhy)
		}
	}
}

func (r *reader) textureTable(what string, field int64, rg Range) ([]rawTexture, bool) {
	n := r.table(what, field, rg, textureEntrySize)
	if n == 0 {
		return nil, rg.Count == 0
	}
	out := make([]rawTexture, n) // bounded: n entries fit in core_index
	for i := range out {
		at := int64(rg.Offset) + int64(i)*textureEntrySize
		out[i] = rawTexture{at: at, dataOffset: r.s32(at), width: r.s16(at + 4), height: r.s16(at + 6), palette: r.s16(at + 0xa)}
	}
	return out, true
}

// inPart checks [off, off+n) against a part of size bytes.
func inPart(off, n, size int64) bool { return off >= 0 && n >= 0 && off <= size && n <= size-off }

func dimsOK(w, h int64) bool { return w >= 1 && w <= MaxDimension && h >= 1 && h <= MaxDimension }

// locate finds a level texture's pixels (data, or the gs stash) and palette.
func (r *reader) locate(table string, i int, t rawTexture, stashed bool) (Texture, bool) {
	c := r.c
	what := fmt.Sprintf("%s texture %d", table, i)
	w, hh := int64(t.width), int64(t.height)
	if !dimsOK(w, hh) {
		c.skip(what, t.at, "%dx%d is outside 1..%d", w, hh, MaxDimension)
		return Texture{}, false
	}
	tex := Texture{Table: table, Index: i, Width: int(w), Height: int(hh), PaletteUnit: int(t.palette), Stashed: stashed}
	if stashed {
		off := r.stashBase + int64(t.dataOffset)
		if !inPart(off, w*hh, c.GSSize) {
			c.skip(what, t.at, "stashed pixels at gs %#x (stash %#x + %#x), %dx%d, outside gs_ram's %#x bytes", off, r.stashBase, t.dataOffset, w, hh, c.GSSize)
			return Texture{}, false
		}
		tex.Pixels = Loc{InGS, off, w * hh}
	} else {
		base := int64(c.Header.TexturesBase)
		off := base + int64(t.dataOffset)
		if base < 0 || !inPart(off, w*hh, c.DataSize) {
			c.skip(what, t.at, "pixels at core_data %#x (textures base %#x + %#x), %dx%d, outside core_data's %#x decoded bytes", off, base, t.dataOffset, w, hh, c.DataSize)
			return Texture{}, false
		}
		tex.Pixels = Loc{InData, off, w * hh}
	}
	p := int64(t.palette) * gsUnit
	if !inPart(p, PaletteSize, c.GSSize) {
		c.skip(what, t.at, "palette at gs %#x (%d × 0x100) outside gs_ram's %#x bytes", p, t.palette, c.GSSize)
		return Texture{}, false
	}
	tex.Palette = Loc{InGS, p, PaletteSize}
	return tex, true
}

func (r *reader) class(kind ClassKind, k int, at int64) Class {
	c := r.c
	cl := Class{Kind: kind, Index: k, OClass: r.s32(at + 4)}
	what := fmt.Sprintf("%s class %d (o_class %d)", kind, k, cl.OClass)
	if o := int64(r.s32(at)); o != 0 {
		if b, ok := r.block(what, at, o); ok {
			b.Name = "class"
			cl.Block = &b
		}
	}
	var tab []rawTexture
	var tabOK bool
	switch kind {
	case Moby:
		tab, tabOK = r.mobyTex, r.texOK[0]
		if r.stash[cl.OClass] && c.Header.MobyStashCount > 0 {
			cl.Stashed = true
		}
	case Tie:
		tab, tabOK = r.tieTex, r.texOK[1]
	case Shrub:
		tab, tabOK = r.shrubTex, r.texOK[2]
	}
	slots := r.ix[at+0x10 : at+0x10+slotBytes]
	n := -1
	for i, v := range slots {
		if v == slotEnd {
			n = i
			break
		}
	}
	if n < 0 {
		c.skip(what+" texture slots", at+0x10, "no 0xff terminator in its %d texture indices: no slot is served", slotBytes)
		n = 0
	}
	cl.SlotCount = n
	for s := 0; s < n; s++ {
		ti := int(slots[s])
		sw := fmt.Sprintf("%s slot %d", what, s)
		switch {
		case !tabOK:
			c.skip(sw, at+0x10+int64(s), "the %s texture table was left out", kind)
			continue
		case ti >= len(tab):
			c.skip(sw, at+0x10+int64(s), "names %s texture %d, past its table of %d", kind, ti, len(tab))
			continue
		case cl.Stashed && !r.stashOK:
			c.skip(sw, at+0x10+int64(s), "stashed, but %s", r.stashWhy)
			continue
		}
		tex, ok := r.locate(string(kind), ti, tab[ti], cl.Stashed)
		if !ok {
			continue
		}
		cl.Slots = append(cl.Slots, Slot{Slot: s, TableIndex: ti, Texture: tex})
	}
	if kind == Shrub {
		b := at + 0x20
		w, hh := int64(r.s16(b)), int64(r.s16(b+2))
		if w != 0 {
			pal, tx := int64(r.s16(b+6))*gsUnit, int64(r.s16(b+8))*gsUnit
			bw := what + " billboard"
			switch {
			case !dimsOK(w, hh):
				c.skip(bw, b, "%dx%d is outside 1..%d", w, hh, MaxDimension)
			case !inPart(tx, w*hh, c.GSSize):
				c.skip(bw, b+8, "pixels at gs %#x, %dx%d, outside gs_ram's %#x bytes", tx, w, hh, c.GSSize)
			case !inPart(pal, PaletteSize, c.GSSize):
				c.skip(bw, b+6, "palette at gs %#x outside gs_ram's %#x bytes", pal, c.GSSize)
			default:
				cl.Billboard = &Texture{Table: "billboard", Index: k, Width: int(w), Height: int(hh),
					Pixels: Loc{InGS, tx, w * hh}, Palette: Loc{InGS, pal, PaletteSize}, PaletteUnit: int(r.s16(b + 6))}
			}
		}
	}
	return cl
}

// partTexture locates particle texture table entry i.
func (r *reader) partTexture(i int) (Texture, error) {
	c, h := r.c, &r.c.Header
	at := int64(h.PartTextures.Offset) + int64(i)*partTextureSize
	bank := int64(h.PartBank)
	pal, tx, side := bank+int64(r.s32(at)), bank+int64(r.s32(at+8)), int64(r.s32(at+0xc))
	switch {
	case !dimsOK(side, side):
		return Texture{}, fmt.Errorf("side %d is outside 1..%d", side, MaxDimension)
	case bank < 0 || !inPart(tx, side*side, c.DataSize):
		return Texture{}, fmt.Errorf("pixels at core_data %#x (bank %#x), %dx%d, outside core_data's %#x decoded bytes", tx, bank, side, side, c.DataSize)
	case !inPart(pal, PaletteSize, c.DataSize):
		return Texture{}, fmt.Errorf("palette at core_data %#x outside core_data's %#x decoded bytes", pal, c.DataSize)
	}
	return Texture{Table: "particle", Index: i, Width: int(side), Height: int(side), Pixels: Loc{InData, tx, side * side},
		Palette: Loc{InData, pal, PaletteSize}, PaletteUnit: -1}, nil
}

func (r *reader) particles() {
	c, h := r.c, &r.c.Header
	nTex := r.table("particle texture table", 0x50, h.PartTextures, partTextureSize)
	if h.PartDefs == 0 {
		return
	}
	d := int64(h.PartDefs)
	if !r.fits(d, partDefsHeaderSize) {
		c.skip("particle definitions", 0x6c, "header at %#x runs past core_index's %#x bytes", d, c.IndexSize)
		return
	}
	count, io, isz := int64(r.s32(d)), int64(r.s32(d+8)), int64(r.s32(d+0xc))
	switch {
	case count < 0 || !r.fits(d+partDefsHeaderSize, 4*count):
		c.skip("particle definitions", d, "%d offsets at %#x run past core_index's %#x bytes", count, d+partDefsHeaderSize, c.IndexSize)
		return
	case io < 0 || isz < 0 || !r.fits(d+io, isz):
		c.skip("particle definitions", d+8, "%d frame indices at %#x run past core_index's %#x bytes", isz, d+io, c.IndexSize)
		return
	}
	offs := func(p int64) int64 { return int64(r.s32(d + partDefsHeaderSize + 4*p)) }
	cache := map[int]Texture{}
	bad := map[int]bool{}
	for p := int64(0); p < count; p++ {
		o := offs(p)
		if o == 0 {
			continue
		}
		what := fmt.Sprintf("particle %d", p)
		at := d + partDefsHeaderSize + 4*p
		start := o - io
		if start < 0 || start > isz {
			c.skip(what, at, "frames at %#x outside the %#x indices at %#x", o, isz, io)
			continue
		}
		end := isz
		for q := p + 1; q < count; q++ {
			if n := offs(q); n != 0 {
				end = n - io
				break
			}
		}
		if end < start || end > isz {
			c.skip(what, at, "frames [%#x, %#x) out of order or past the %#x indices", start, end, isz)
			continue
		}
		pt := Particle{Index: int(p)}
		for f := start; f < end; f++ {
			ti := int(r.ix[d+io+f])
			fw := fmt.Sprintf("%s frame %d", what, f-start)
			if ti >= nTex {
				c.skip(fw, d+io+f, "names particle texture %d, past its table of %d", ti, nTex)
				continue
			}
			tex, ok := cache[ti]
			if !ok && !bad[ti] {
				var err error
				tex, err = r.partTexture(ti)
				if err != nil {
					c.skip(fmt.Sprintf("particle texture %d", ti), int64(h.PartTextures.Offset)+int64(ti)*partTextureSize, "%v", err)
					bad[ti] = true
				} else {
					cache[ti], ok = tex, true
				}
			}
			if !ok {
				continue
			}
			pt.Frames = append(pt.Frames, tex)
		}
		c.Particles = append(c.Particles, pt)
	}
}

func (r *reader) fx() {
	c, h := r.c, &r.c.Header
	n := r.table("fx texture table", 0x58, h.FxTextures, fxTextureSize)
	bank := int64(h.FxBank)
	for i := 0; i < n; i++ {
		at := int64(h.FxTextures.Offset) + int64(i)*fxTextureSize
		pal, tx, w, hh := r.s32(at), r.s32(at+4), int64(r.s32(at+8)), int64(r.s32(at+0xc))
		what := fmt.Sprintf("fx texture %d", i)
		if pal == -1 && tx == -1 && w == -1 && hh == -1 {
			// what Wrench's packer writes for a missing entry: not damage
			c.Notes = append(c.Notes, fmt.Sprintf("%s: no texture ({-1, -1, -1, -1})", what))
			continue
		}
		po, to := bank+int64(pal), bank+int64(tx)
		switch {
		case !dimsOK(w, hh):
			c.skip(what, at+8, "%dx%d is outside 1..%d", w, hh, MaxDimension)
		case bank < 0 || !inPart(to, w*hh, c.DataSize):
			c.skip(what, at+4, "pixels at core_data %#x (bank %#x), %dx%d, outside core_data's %#x decoded bytes", to, bank, w, hh, c.DataSize)
		case !inPart(po, PaletteSize, c.DataSize):
			c.skip(what, at, "palette at core_data %#x outside core_data's %#x decoded bytes", po, c.DataSize)
		default:
			c.Fx = append(c.Fx, Texture{Table: "fx", Index: i, Width: int(w), Height: int(hh), Pixels: Loc{InData, to, w * hh},
				Palette: Loc{InData, po, PaletteSize}, PaletteUnit: -1, Name: FxName(i)})
		}
	}
}

func (r *reader) soundRemap() {
	c, h := r.c, &r.c.Header
	if h.SoundRemap == 0 {
		return
	}
	o := int64(h.SoundRemap)
	if !r.fits(o, soundRemapHeader) {
		c.skip("sound_remap", 0x70, "header at %#x runs past core_index's %#x bytes", o, c.IndexSize)
		return
	}
	second := int64(r.s16(o))
	el := o + second - 4
	if second < 4 || !r.fits(el, 4) {
		c.skip("sound_remap", o, "second_part_ofs %#x: its last first-part element at %#x is outside the blob or core_index", second, el)
		return
	}
	size := int64(r.s16(el)) + 4*int64(r.s16(el+2))
	if size < soundRemapHeader || !r.fits(o, size) {
		c.skip("sound_remap", el, "size %#x (from the element at %#x) runs past core_index's %#x bytes or is shorter than its header", size, el, c.IndexSize)
		return
	}
	c.SoundRemap = &Loc{InIndex, o, size}
}

// fxNames are GC's fx texture names by table index (LEVEL-CORE §1.7); ""
// is unnamed.
var fxNames = [...]string{0: "lame_shadow", 1: "font_1", 2: "font_2", 3: "font_3", 4: "gadgetron", 5: "engine",
	9: "ship_shadow", 10: "jp_thrust_fire", 11: "jp_thrust_glow", 12: "jp_thrust_highlight", 13: "target_reticule",
	14: "lightning1", 16: "glow_pill", 19: "sparkle", 20: "wrench_blur", 21: "suck_tornado", 22: "white",
	23: "alpha_spark", 25: "tv_highlight", 26: "tv_smallscan", 27: "halo", 28: "tv_scanlines", 29: "tv_shine",
	30: "tv_noise", 35: "ryno_reticule", 36: "swingshot_reticule", 37: "static", 38: "blaster_reticule",
	39: "devastator_reticule", 41: "plasma_ball_core", 42: "plasma_ball_aura", 43: "plasma_lightning_bolt",
	45: "plasma_ball_glow_ring", 46: "steam_smoke_gas", 47: "fork_lightning", 48: "fork_lightning_glow_core",
	49: "starry_flash", 50: "lava_glob", 51: "main_ret1", 52: "main_ret2", 53: "main_ret3", 56: "shockwave",
	57: "explosion", 58: "radialblur_sniper", 62: ""}

// FxName is fx texture i's GC name, "" when unnamed.
func FxName(i int) string {
	if i >= 0 && i < len(fxNames) {
		return fxNames[i]
	}
	return ""
}
