package levelcore

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Desc describes a level core for Build: block contents, textures, classes
// and the rest, without offsets (Build lays them out as Wrench's packer does,
// LEVEL-CORE §1.2).
type Desc struct {
	// Tfrags must be non-empty; Occlusion and Sky may be nil (absent);
	// Collision must be non-empty.
	Tfrags, Occlusion, Sky, Collision []byte
	// Pixels is the pool of level texture pixels (width × height bytes
	// each) and Palettes the pool of gs palettes (PaletteSize bytes each,
	// as stored: swizzled, PS2 alpha); texture entries name them by index,
	// so several entries may share one image or one palette.
	Pixels                                                  [][]byte
	Palettes                                                [][]byte
	TfragTextures, MobyTextures, TieTextures, ShrubTextures []TextureDesc
	Mobies, Ties, Shrubs                                    []ClassDesc
	PartTextures                                            []PartTextureDesc
	// Particles lists each particle definition's frames (indices into
	// PartTextures); nil is a definition with no frames (offset 0).
	Particles   [][]int
	Fx          []FxDesc
	RatchetSeqs [ratchetSeqSlots][]byte // nil: slot 0
	// SoundRemap is the remap blob, written as given (see SoundRemapBlob).
	SoundRemap []byte
	// Unknown80 and the other fields Wrench does not read are written as 0.
}

// TextureDesc is a level texture table entry.
type TextureDesc struct {
	Width, Height int
	Pixels        int // index into Desc.Pixels
	Palette       int // index into Desc.Palettes
}

// ClassDesc is a class table entry.
type ClassDesc struct {
	OClass int32
	Block  []byte // nil: the level lists the class but holds no class data
	Slots  []int  // texture table indices, at most 15
	// Stashed (mobies): the class's textures live in the gs stash.
	Stashed   bool
	Billboard *BillboardDesc // shrubs
}

// BillboardDesc is a shrub's billboard image, kept in gs.
type BillboardDesc struct {
	Width, Height int
	Pixels        []byte
	Palette       []byte
}

// PartTextureDesc is a particle texture: side × side pixels and a palette,
// both in core_data's particle bank.
type PartTextureDesc struct {
	Side    int
	Pixels  []byte
	Palette []byte
}

// FxDesc is an fx texture in core_data's fx bank; Width 0 is a missing
// entry ({-1, -1, -1, -1}).
type FxDesc struct {
	Width, Height int
	Pixels        []byte
	Palette       []byte
}

// Built is a laid-out core: the three parts, and its header.
type Built struct {
	Index, Data, GS []byte
	Header          Header
	// Where Build put the class blocks (0: none) and the ratchet
	// sequences, by entry and slot.
	MobyAt, TieAt, ShrubAt []int32
	SeqAt                  [ratchetSeqSlots]int32
}

// SetCompressedSize records core_data's stream size at core_index+0x88.
func (b *Built) SetCompressedSize(n int) {
	b.Header.CompressedSize = int32(n)
	binary.LittleEndian.PutUint32(b.Index[0x88:], uint32(n))
}

// SoundRemapBlob makes a GC sound remap blob of first first-part elements
// and second second-part bytes (after the header), in the form Wrench sizes
// it by (LEVEL-CORE §1.10): {s16 second_part_ofs, s16 second_part_size,
// s16 third_part_ofs, s16 third_part_count}, the elements {s16 offset,
// s16 size} from +8, the last one ending the blob. fill gives element and
// payload bytes their values.
func SoundRemapBlob(first int, fill func(i int) byte) []byte {
	if first < 1 {
		first = 1
	}
	second := soundRemapHeader + 4*first // second part right after the elements
	payload := 4 * first                 // each element's size counts u32s
	size := second + payload
	b := make([]byte, size)
	binary.LittleEndian.PutUint16(b[0:], uint16(second))
	binary.LittleEndian.PutUint16(b[2:], uint16(payload))
	binary.LittleEndian.PutUint16(b[4:], uint16(size))
	binary.LittleEndian.PutUint16(b[6:], 0)
	for i := 0; i < first; i++ {
		e := soundRemapHeader + 4*i
		binary.LittleEndian.PutUint16(b[e:], uint16(second+4*i))
		binary.LittleEndian.PutUint16(b[e+2:], 1)
	}
	for i := second; i < size; i++ {
		b[i] = fill(i)
	}
	// The last element ends the blob: offset + size*4 = size.
	last := soundRemapHeader + 4*(first-1)
	binary.LittleEndian.PutUint16(b[last:], uint16(size-4))
	binary.LittleEndian.PutUint16(b[last+2:], 1)
	return b
}

type out struct{ b []byte }

func (o *out) pad(a int) {
	for len(o.b)%a != 0 {
		o.b = append(o.b, 0)
	}
}
func (o *out) at() int32    { return int32(len(o.b)) }
func (o *out) put(p []byte) { o.b = append(o.b, p...) }
func (o *out) u32(v int32)  { o.b = binary.LittleEndian.AppendUint32(o.b, uint32(v)) }
func (o *out) u16(v int16)  { o.b = binary.LittleEndian.AppendUint16(o.b, uint16(v)) }
func (o *out) place(p []byte) int32 {
	at := o.at()
	o.put(p)
	return at
}

// Build lays out a core from d.
func Build(d *Desc) (*Built, error) {
	if len(d.Tfrags) == 0 || len(d.Collision) == 0 {
		return nil, errors.New("levelcore: tfrags and collision must not be empty")
	}
	var h Header
	var data, gs, ix out
	// Data: tfrags at 0, occlusion, sky, collision (0x40-aligned).
	h.Tfrags = data.place(d.Tfrags)
	data.pad(0x40)
	if d.Occlusion != nil {
		h.Occlusion = data.place(d.Occlusion)
		data.pad(0x40)
	}
	if d.Sky != nil {
		h.Sky = data.place(d.Sky)
		data.pad(0x40)
	}
	h.Collision = data.place(d.Collision)
	data.pad(0x40)
	// gs: palettes, 0x100-aligned, each with a psm-0 gs_ram entry.
	type gsEntry struct{ psm, w, h, addr, off int32 }
	var gsTable, stashEntries []gsEntry
	palUnit := make([]int16, len(d.Palettes))
	for i, p := range d.Palettes {
		if len(p) != PaletteSize {
			return nil, fmt.Errorf("levelcore: palette %d has %d bytes, not %d", i, len(p), PaletteSize)
		}
		gs.pad(gsUnit)
		a := gs.place(p)
		palUnit[i] = int16(a / gsUnit)
		gsTable = append(gsTable, gsEntry{0, 0, 0, a, a})
	}
	// Which moby textures are stashed: those a stashed class uses.
	stashedTex := map[int]bool{}
	plainTex := map[int]bool{}
	for _, c := range d.Mobies {
		for _, s := range c.Slots {
			if c.Stashed {
				stashedTex[s] = true
			} else {
				plainTex[s] = true
			}
		}
	}
	for t := range stashedTex {
		if plainTex[t] {
			return nil, fmt.Errorf("levelcore: moby texture %d is used by stashed and unstashed classes", t)
		}
	}
	// Shared texture pixels at textures_base; stashed ones in the gs stash.
	data.pad(0x40)
	h.TexturesBase = data.at()
	pixOff := map[int]int32{} // pool index → offset from textures_base
	gs.pad(gsUnit)
	stashBase := gs.at()
	stashOff := map[int]int32{} // pool index → offset from the stash
	check := func(t TextureDesc, what string) error {
		if t.Pixels < 0 || t.Pixels >= len(d.Pixels) || t.Palette < 0 || t.Palette >= len(d.Palettes) {
			return fmt.Errorf("levelcore: %s names pixels %d / palette %d outside the pools", what, t.Pixels, t.Palette)
		}
		if len(d.Pixels[t.Pixels]) != t.Width*t.Height || !dimsOK(int64(t.Width), int64(t.Height)) {
			return fmt.Errorf("levelcore: %s is %dx%d with %d pixel bytes", what, t.Width, t.Height, len(d.Pixels[t.Pixels]))
		}
		return nil
	}
	for i, t := range d.MobyTextures {
		if !stashedTex[i] {
			continue
		}
		if err := check(t, fmt.Sprintf("moby texture %d", i)); err != nil {
			return nil, err
		}
		if _, ok := stashOff[t.Pixels]; !ok {
			gs.pad(0x10)
			a := gs.place(d.Pixels[t.Pixels])
			stashOff[t.Pixels] = a - stashBase
			stashEntries = append(stashEntries, gsEntry{0x13, int32(t.Width), int32(t.Height), a, a - stashBase})
		}
	}
	tables := [][]TextureDesc{d.TfragTextures, d.MobyTextures, d.TieTextures, d.ShrubTextures}
	for k, tab := range tables {
		for i, t := range tab {
			if k == 1 && stashedTex[i] {
				continue
			}
			if err := check(t, fmt.Sprintf("texture %d of table %d", i, k)); err != nil {
				return nil, err
			}
			if _, ok := pixOff[t.Pixels]; !ok {
				data.pad(0x10)
				pixOff[t.Pixels] = data.place(d.Pixels[t.Pixels]) - h.TexturesBase
			}
		}
	}
	// Particle bank: palettes and pixels, offsets from part_bank_offset.
	data.pad(0x40)
	h.PartBank = data.at()
	type pair struct{ pal, tex int32 }
	partAt := make([]pair, len(d.PartTextures))
	for i, p := range d.PartTextures {
		if len(p.Palette) != PaletteSize || len(p.Pixels) != p.Side*p.Side || !dimsOK(int64(p.Side), int64(p.Side)) {
			return nil, fmt.Errorf("levelcore: particle texture %d: side %d, %d pixel bytes, %d palette bytes", i, p.Side, len(p.Pixels), len(p.Palette))
		}
		data.pad(0x10)
		partAt[i].pal = data.place(p.Palette) - h.PartBank
		partAt[i].tex = data.place(p.Pixels) - h.PartBank
	}
	data.pad(0x40)
	h.FxBank = data.at()
	fxAt := make([]pair, len(d.Fx))
	for i, f := range d.Fx {
		if f.Width == 0 {
			continue
		}
		if len(f.Palette) != PaletteSize || len(f.Pixels) != f.Width*f.Height || !dimsOK(int64(f.Width), int64(f.Height)) {
			return nil, fmt.Errorf("levelcore: fx texture %d: %dx%d, %d pixel bytes, %d palette bytes", i, f.Width, f.Height, len(f.Pixels), len(f.Palette))
		}
		data.pad(0x10)
		fxAt[i].pal = data.place(f.Palette) - h.FxBank
		fxAt[i].tex = data.place(f.Pixels) - h.FxBank
	}
	// Class blocks, 0x40-aligned each.
	classAt := func(cs []ClassDesc, kind string) ([]int32, error) {
		offs := make([]int32, len(cs))
		for i, c := range cs {
			if c.Block == nil {
				continue
			}
			if len(c.Block) == 0 {
				return nil, fmt.Errorf("levelcore: %s class %d has an empty block (use nil for none)", kind, i)
			}
			data.pad(0x40)
			offs[i] = data.place(c.Block)
		}
		return offs, nil
	}
	mobyAt, err := classAt(d.Mobies, "moby")
	if err != nil {
		return nil, err
	}
	tieAt, err := classAt(d.Ties, "tie")
	if err != nil {
		return nil, err
	}
	shrubAt, err := classAt(d.Shrubs, "shrub")
	if err != nil {
		return nil, err
	}
	data.pad(0x10)
	h.SceneViewSize = data.at()
	var seqAt [ratchetSeqSlots]int32
	for i, s := range d.RatchetSeqs {
		if s == nil {
			continue
		}
		if len(s) == 0 {
			return nil, fmt.Errorf("levelcore: ratchet sequence %d is empty (use nil for none)", i)
		}
		data.pad(0x10)
		seqAt[i] = data.place(s)
	}
	data.pad(0x10)
	// Billboards in gs, after the stash.
	type bbAt struct{ pal, tex int16 }
	bbs := make([]bbAt, len(d.Shrubs))
	for i, c := range d.Shrubs {
		bb := c.Billboard
		if bb == nil {
			continue
		}
		if len(bb.Palette) != PaletteSize || len(bb.Pixels) != bb.Width*bb.Height || !dimsOK(int64(bb.Width), int64(bb.Height)) {
			return nil, fmt.Errorf("levelcore: shrub %d billboard: %dx%d, %d pixel bytes", i, bb.Width, bb.Height, len(bb.Pixels))
		}
		gs.pad(gsUnit)
		bbs[i].tex = int16(gs.place(bb.Pixels) / gsUnit)
		gs.pad(gsUnit)
		bbs[i].pal = int16(gs.place(bb.Palette) / gsUnit)
	}
	gs.pad(gsUnit)
	if gs.at()/gsUnit > 0x7fff {
		return nil, fmt.Errorf("levelcore: gs_ram of %#x bytes: its 0x100-unit offsets pass an s16", gs.at())
	}

	// The index: header, class tables, texture tables, gs_ram table, part
	// defs, sound remap, stash list, ratchet sequences.
	ix.put(make([]byte, HeaderSize))
	ix.pad(0x10)
	writeClasses := func(cs []ClassDesc, offs []int32, shrub bool) (Range, error) {
		rg := Range{Count: int32(len(cs)), Offset: ix.at()}
		for i, c := range cs {
			if len(c.Slots) > slotBytes-1 {
				return rg, fmt.Errorf("levelcore: class %d has %d slots, at most %d", i, len(c.Slots), slotBytes-1)
			}
			ix.u32(offs[i])
			ix.u32(c.OClass)
			ix.u32(0)
			ix.u32(0)
			var s [slotBytes]byte
			for k := range s {
				s[k] = slotEnd
			}
			for k, t := range c.Slots {
				if t < 0 || t >= slotEnd {
					return rg, fmt.Errorf("levelcore: class %d slot %d names texture %d", i, k, t)
				}
				s[k] = byte(t)
			}
			ix.put(s[:])
			if shrub {
				if bb := c.Billboard; bb != nil {
					for _, v := range []int16{int16(bb.Width), int16(bb.Height), 0, bbs[i].pal, bbs[i].tex, 0, 0, 0} {
						ix.u16(v)
					}
				} else {
					ix.put(make([]byte, 0x10))
				}
			}
		}
		return rg, nil
	}
	if h.MobyClasses, err = writeClasses(d.Mobies, mobyAt, false); err != nil {
		return nil, err
	}
	if h.TieClasses, err = writeClasses(d.Ties, tieAt, false); err != nil {
		return nil, err
	}
	if h.ShrubClasses, err = writeClasses(d.Shrubs, shrubAt, true); err != nil {
		return nil, err
	}
	writeTextures := func(tab []TextureDesc, moby bool) Range {
		rg := Range{Count: int32(len(tab)), Offset: ix.at()}
		for i, t := range tab {
			if moby && stashedTex[i] {
				ix.u32(stashOff[t.Pixels])
				ix.u16(int16(t.Width))
				ix.u16(int16(t.Height))
				ix.u16(0)
			} else {
				ix.u32(pixOff[t.Pixels])
				ix.u16(int16(t.Width))
				ix.u16(int16(t.Height))
				ix.u16(3)
			}
			ix.u16(palUnit[t.Palette])
			ix.u16(-1)
			ix.u16(-1)
		}
		return rg
	}
	h.TfragTextures = writeTextures(d.TfragTextures, false)
	h.MobyTextures = writeTextures(d.MobyTextures, true)
	h.TieTextures = writeTextures(d.TieTextures, false)
	h.ShrubTextures = writeTextures(d.ShrubTextures, false)
	h.PartTextures = Range{Count: int32(len(d.PartTextures)), Offset: ix.at()}
	for i, p := range partAt {
		ix.u32(p.pal)
		ix.u32(0)
		ix.u32(p.tex)
		ix.u32(int32(d.PartTextures[i].Side))
	}
	h.FxTextures = Range{Count: int32(len(d.Fx)), Offset: ix.at()}
	for i, f := range d.Fx {
		if f.Width == 0 {
			ix.u32(-1)
			ix.u32(-1)
			ix.u32(-1)
			ix.u32(-1)
			continue
		}
		ix.u32(fxAt[i].pal)
		ix.u32(fxAt[i].tex)
		ix.u32(int32(f.Width))
		ix.u32(int32(f.Height))
	}
	ix.pad(0x10)
	h.GsRAM = Range{Count: int32(len(gsTable)), Offset: ix.at()}
	h.MobyStashCount = int32(len(stashEntries))
	for _, e := range append(gsTable, stashEntries...) {
		ix.u32(e.psm)
		ix.u16(int16(e.w))
		ix.u16(int16(e.h))
		ix.u32(e.addr)
		ix.u32(e.off)
	}
	if len(d.Particles) > 0 {
		ix.pad(0x10)
		h.PartDefs = ix.at()
		count := len(d.Particles)
		io := (partDefsHeaderSize + 4*count + 0xf) &^ 0xf
		var idx []byte
		offs := make([]int32, count)
		for p, frames := range d.Particles {
			if len(frames) == 0 {
				continue
			}
			offs[p] = int32(io + len(idx))
			for _, f := range frames {
				if f < 0 || f >= len(d.PartTextures) || f > 0xff {
					return nil, fmt.Errorf("levelcore: particle %d names texture %d of %d", p, f, len(d.PartTextures))
				}
				idx = append(idx, byte(f))
			}
		}
		ix.u32(int32(count))
		ix.u32(0)
		ix.u32(int32(io))
		ix.u32(int32(len(idx)))
		for _, o := range offs {
			ix.u32(o)
		}
		for int(ix.at()-h.PartDefs) < io {
			ix.put([]byte{0})
		}
		ix.put(idx)
	}
	if d.SoundRemap != nil {
		ix.pad(0x10)
		h.SoundRemap = ix.place(d.SoundRemap)
	}
	ix.pad(0x10)
	h.MobyStashList = ix.at()
	for _, c := range d.Mobies {
		if c.Stashed {
			ix.u16(int16(c.OClass))
		}
	}
	ix.u16(-1)
	any := false
	for _, s := range seqAt {
		any = any || s != 0
	}
	if any {
		ix.pad(0x10)
		h.RatchetSeqs = ix.at()
		for _, s := range seqAt {
			ix.u32(s)
		}
	}
	ix.pad(0x10)
	h.DecompressedSize = data.at()
	h.GlassMapTexture, h.GlassMapPalette = 0x4000, 0x400
	copy(ix.b, h.Bytes())
	return &Built{Index: ix.b, Data: data.b, GS: gs.b, Header: h, MobyAt: mobyAt, TieAt: tieAt, ShrubAt: shrubAt, SeqAt: seqAt}, nil
}
