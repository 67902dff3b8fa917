package levelcore

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func fill(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
	}
	return b
}

// testDesc is a small core with every kind of entry: shared pixels and
// palettes, a stashed moby, a class without data, billboards, particles,
// a missing fx entry, ratchet sequences and a sound remap.
func testDesc() *Desc {
	d := &Desc{
		Tfrags:    fill(0x90, 1),
		Occlusion: fill(0x20, 2),
		Sky:       fill(0x50, 3),
		Collision: fill(0x70, 4),
		Pixels:    [][]byte{fill(16*16, 5), fill(32*8, 6), fill(8*8, 7), fill(4*4, 8)},
		Palettes:  [][]byte{fill(PaletteSize, 9), fill(PaletteSize, 10)},
	}
	d.TfragTextures = []TextureDesc{{16, 16, 0, 0}, {32, 8, 1, 1}}
	d.MobyTextures = []TextureDesc{{16, 16, 0, 1}, {8, 8, 2, 0}, {4, 4, 3, 1}}
	d.TieTextures = []TextureDesc{{32, 8, 1, 0}}
	d.ShrubTextures = []TextureDesc{{8, 8, 2, 1}}
	d.Mobies = []ClassDesc{
		{OClass: 7, Block: fill(0x123, 11), Slots: []int{0, 1}},
		{OClass: 300, Block: fill(0x80, 12), Slots: []int{2}, Stashed: true},
		{OClass: 9, Slots: []int{1}}, // listed, no class data
	}
	d.Ties = []ClassDesc{{OClass: 1000, Block: fill(0x41, 13), Slots: []int{0, 0}}}
	d.Shrubs = []ClassDesc{
		{OClass: 5000, Block: fill(0x30, 14), Slots: []int{0}, Billboard: &BillboardDesc{Width: 16, Height: 8, Pixels: fill(128, 15), Palette: fill(PaletteSize, 16)}},
		{OClass: 5001, Block: fill(0x31, 17)},
	}
	d.PartTextures = []PartTextureDesc{{Side: 8, Pixels: fill(64, 18), Palette: fill(PaletteSize, 19)}, {Side: 4, Pixels: fill(16, 20), Palette: fill(PaletteSize, 21)}}
	d.Particles = [][]int{{0, 1, 0}, nil, {1}}
	d.Fx = []FxDesc{{Width: 8, Height: 4, Pixels: fill(32, 22), Palette: fill(PaletteSize, 23)}, {}, {Width: 2, Height: 2, Pixels: fill(4, 24), Palette: fill(PaletteSize, 25)}}
	d.RatchetSeqs[3] = fill(0x44, 26)
	d.RatchetSeqs[200] = fill(0x10, 27)
	d.SoundRemap = SoundRemapBlob(3, func(i int) byte { return byte(i) })
	return d
}

func read(t *testing.T, b *Built) *Core {
	t.Helper()
	c, err := Read(b.Index, int64(len(b.GS)))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func at(part []byte, l Loc) []byte { return part[l.Offset : l.Offset+l.Size] }

func TestRoundTrip(t *testing.T) {
	d := testDesc()
	b, err := Build(d)
	if err != nil {
		t.Fatal(err)
	}
	c := read(t, b)
	if len(c.Skipped) != 0 || len(c.Notes) != 1 || !strings.Contains(c.Notes[0], "fx texture 1: no texture") {
		t.Fatalf("skipped %v, notes %q: want only a note of the missing fx entry", c.Skipped, c.Notes)
	}
	if c.DataSize != int64(len(b.Data)) {
		t.Fatalf("data size %d, built %d", c.DataSize, len(b.Data))
	}
	blocks := map[string]Block{}
	for _, bl := range c.Blocks {
		blocks[bl.Name] = bl
	}
	for name, want := range map[string][]byte{"tfrags": d.Tfrags, "occlusion": d.Occlusion, "sky": d.Sky, "collision": d.Collision} {
		bl, ok := blocks[name]
		if !ok || bl.Size < int64(len(want)) || !bytes.Equal(b.Data[bl.Offset:bl.Offset+int64(len(want))], want) {
			t.Fatalf("block %s: %+v", name, bl)
		}
	}
	// Blocks end where the next begins.
	if blocks["tfrags"].Offset+blocks["tfrags"].Size != blocks["occlusion"].Offset || blocks["sky"].Offset+blocks["sky"].Size != blocks["collision"].Offset {
		t.Fatalf("blocks %+v", c.Blocks)
	}
	if blocks["collision"].Offset+blocks["collision"].Size != int64(c.Header.TexturesBase) {
		t.Fatalf("collision does not end at the textures base: %+v, base %#x", blocks["collision"], c.Header.TexturesBase)
	}
	checkTex := func(what string, tex Texture, td TextureDesc, pal []byte) {
		t.Helper()
		part := b.Data
		if tex.Pixels.In == InGS {
			part = b.GS
		}
		if tex.Width != td.Width || tex.Height != td.Height || !bytes.Equal(at(part, tex.Pixels), d.Pixels[td.Pixels]) ||
			tex.Palette.In != InGS || !bytes.Equal(at(b.GS, tex.Palette), pal) {
			t.Fatalf("%s: %+v", what, tex)
		}
	}
	if len(c.TfragTextures) != 2 {
		t.Fatalf("tfrag textures %+v", c.TfragTextures)
	}
	for i, tex := range c.TfragTextures {
		checkTex("tfrag", tex, d.TfragTextures[i], d.Palettes[d.TfragTextures[i].Palette])
	}
	classes := [][]Class{c.Mobies, c.Ties, c.Shrubs}
	descs := [][]ClassDesc{d.Mobies, d.Ties, d.Shrubs}
	tabs := [][]TextureDesc{d.MobyTextures, d.TieTextures, d.ShrubTextures}
	for k := range classes {
		if len(classes[k]) != len(descs[k]) {
			t.Fatalf("table %d: %d classes, want %d", k, len(classes[k]), len(descs[k]))
		}
		for i, cl := range classes[k] {
			cd := descs[k][i]
			if cl.OClass != cd.OClass || cl.Stashed != cd.Stashed || len(cl.Slots) != len(cd.Slots) || cl.SlotCount != len(cd.Slots) {
				t.Fatalf("class %d/%d: %+v", k, i, cl)
			}
			if cd.Block == nil {
				if cl.Block != nil {
					t.Fatalf("class %d/%d has a block", k, i)
				}
			} else if cl.Block == nil || cl.Block.Size < int64(len(cd.Block)) || cl.Block.Size >= int64(len(cd.Block))+0x40 ||
				!bytes.Equal(b.Data[cl.Block.Offset:cl.Block.Offset+int64(len(cd.Block))], cd.Block) {
				t.Fatalf("class %d/%d block %+v", k, i, cl.Block)
			}
			for s, sl := range cl.Slots {
				td := tabs[k][cd.Slots[s]]
				if sl.Slot != s || sl.TableIndex != cd.Slots[s] || sl.Texture.Stashed != cd.Stashed {
					t.Fatalf("class %d/%d slot %d: %+v", k, i, s, sl)
				}
				checkTex("slot", sl.Texture, td, d.Palettes[td.Palette])
			}
		}
	}
	if c.Mobies[1].Slots[0].Texture.Pixels.In != InGS {
		t.Fatal("stashed moby texture not in gs")
	}
	bb := c.Shrubs[0].Billboard
	if bb == nil || c.Shrubs[1].Billboard != nil || !bytes.Equal(at(b.GS, bb.Pixels), d.Shrubs[0].Billboard.Pixels) || !bytes.Equal(at(b.GS, bb.Palette), d.Shrubs[0].Billboard.Palette) {
		t.Fatalf("billboards %+v %+v", bb, c.Shrubs[1].Billboard)
	}
	if len(c.Particles) != 2 || len(c.Particles[0].Frames) != 3 || c.Particles[1].Index != 2 || len(c.Particles[1].Frames) != 1 {
		t.Fatalf("particles %+v", c.Particles)
	}
	for _, p := range c.Particles {
		for f, fr := range p.Frames {
			pd := d.PartTextures[d.Particles[p.Index][f]]
			if !bytes.Equal(at(b.Data, fr.Pixels), pd.Pixels) || !bytes.Equal(at(b.Data, fr.Palette), pd.Palette) || fr.Width != pd.Side {
				t.Fatalf("particle %d frame %d: %+v", p.Index, f, fr)
			}
		}
	}
	if len(c.Fx) != 2 || c.Fx[1].Index != 2 || c.Fx[0].Name != "lame_shadow" || !bytes.Equal(at(b.Data, c.Fx[1].Pixels), d.Fx[2].Pixels) {
		t.Fatalf("fx %+v", c.Fx)
	}
	if len(c.RatchetSeqs) != 2 || c.RatchetSeqs[0].Name != "003" || c.RatchetSeqs[1].Name != "200" ||
		!bytes.Equal(b.Data[c.RatchetSeqs[1].Offset:c.RatchetSeqs[1].Offset+0x10], d.RatchetSeqs[200]) ||
		c.RatchetSeqs[1].Offset+c.RatchetSeqs[1].Size != c.DataSize {
		t.Fatalf("ratchet seqs %+v (data %#x)", c.RatchetSeqs, c.DataSize)
	}
	if c.SoundRemap == nil || !bytes.Equal(at(b.Index, *c.SoundRemap), d.SoundRemap) {
		t.Fatalf("sound remap %+v", c.SoundRemap)
	}
	if len(c.StashList) != 1 || c.StashList[0] != 300 {
		t.Fatalf("stash list %v", c.StashList)
	}
	h2, _ := ParseHeader(b.Index)
	if h2 != b.Header || !bytes.Equal(h2.Bytes(), b.Index[:HeaderSize]) {
		t.Fatal("header does not round-trip")
	}
}

// bad builds the test core, lets mutate change the index, and returns the
// reading and the skip whose What contains what (failing if none).
func bad(t *testing.T, what string, mutate func(b *Built, put func(off int64, v int32), put16 func(off int64, v int16))) (*Core, Skip) {
	t.Helper()
	b, err := Build(testDesc())
	if err != nil {
		t.Fatal(err)
	}
	put := func(off int64, v int32) { binary.LittleEndian.PutUint32(b.Index[off:], uint32(v)) }
	put16 := func(off int64, v int16) { binary.LittleEndian.PutUint16(b.Index[off:], uint16(v)) }
	mutate(b, put, put16)
	c := read(t, b)
	for _, s := range c.Skipped {
		if strings.Contains(s.What, what) {
			return c, s
		}
	}
	t.Fatalf("no skip of %q in %v", what, c.Skipped)
	return nil, Skip{}
}

func TestBadInput(t *testing.T) {
	t.Run("short index", func(t *testing.T) {
		if _, err := Read(make([]byte, HeaderSize-1), 0); err == nil {
			t.Fatal("a short index read")
		} else if _, ok := err.(*Error); !ok {
			t.Fatalf("%T", err)
		}
	})
	t.Run("table outside index", func(t *testing.T) {
		c, s := bad(t, "tie class table", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x24, int32(len(b.Index)-0x10)) })
		if len(c.Ties) != 0 || len(c.Mobies) != 3 || s.Offset != 0x20 {
			t.Fatalf("%d ties, %d mobies, skip %v", len(c.Ties), len(c.Mobies), s)
		}
	})
	t.Run("huge count", func(t *testing.T) {
		c, _ := bad(t, "moby texture table", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x38, 0x7fffffff) })
		for _, cl := range c.Mobies {
			if len(cl.Slots) != 0 {
				t.Fatal("slots of a left-out table")
			}
		}
		if len(c.TfragTextures) != 2 {
			t.Fatal("tfrag textures lost")
		}
	})
	t.Run("block outside data", func(t *testing.T) {
		c, s := bad(t, "moby class 0", func(b *Built, put func(int64, int32), _ func(int64, int16)) {
			put(int64(b.Header.MobyClasses.Offset), int32(len(b.Data)+0x40))
		})
		if c.Mobies[0].Block != nil || len(c.Mobies[0].Slots) != 2 || !strings.Contains(s.Reason, "outside core_data") {
			t.Fatalf("%+v %v", c.Mobies[0], s)
		}
	})
	t.Run("texture outside data", func(t *testing.T) {
		c, s := bad(t, "tfrag texture 1", func(b *Built, put func(int64, int32), _ func(int64, int16)) {
			put(int64(b.Header.TfragTextures.Offset)+0x10, int32(len(b.Data)))
		})
		if len(c.TfragTextures) != 1 || s.Offset != int64(c.Header.TfragTextures.Offset)+0x10 {
			t.Fatalf("%v %v", c.TfragTextures, s)
		}
	})
	t.Run("palette outside gs", func(t *testing.T) {
		bad(t, "tfrag texture 0", func(b *Built, _ func(int64, int32), put16 func(int64, int16)) {
			put16(int64(b.Header.TfragTextures.Offset)+0xa, int16(len(b.GS)/0x100))
		})
	})
	t.Run("billboard outside gs", func(t *testing.T) {
		c, _ := bad(t, "billboard", func(b *Built, _ func(int64, int32), put16 func(int64, int16)) {
			put16(int64(b.Header.ShrubClasses.Offset)+0x28, 0x7fff)
		})
		if c.Shrubs[0].Billboard != nil || c.Shrubs[0].Block == nil {
			t.Fatal("billboard served or class lost")
		}
	})
	t.Run("slot past table", func(t *testing.T) {
		c, s := bad(t, "moby class 0 (o_class 7) slot 1", func(b *Built, _ func(int64, int32), _ func(int64, int16)) {
			b.Index[int64(b.Header.MobyClasses.Offset)+0x11] = 3
		})
		if len(c.Mobies[0].Slots) != 1 || !strings.Contains(s.Reason, "past its table of 3") {
			t.Fatalf("%+v %v", c.Mobies[0].Slots, s)
		}
		// the slot left out still counts: its triangles read, plain
		if c.Mobies[0].SlotCount != 2 || c.Mobies[0].TextureSlots() != 2 {
			t.Errorf("slot count %d (mesh readers take %d), want 2 with slot 1 left out", c.Mobies[0].SlotCount, c.Mobies[0].TextureSlots())
		}
	})
	t.Run("no terminator", func(t *testing.T) {
		c, _ := bad(t, "tie class 0 (o_class 1000) texture slots", func(b *Built, _ func(int64, int32), _ func(int64, int16)) {
			copy(b.Index[int64(b.Header.TieClasses.Offset)+0x10:], make([]byte, 16))
		})
		if len(c.Ties[0].Slots) != 0 || c.Ties[0].Block == nil {
			t.Fatal("slots served from an unterminated list")
		}
	})
	t.Run("equal offsets", func(t *testing.T) {
		c, s := bad(t, "moby class 1", func(b *Built, put func(int64, int32), _ func(int64, int16)) {
			put(int64(b.Header.MobyClasses.Offset)+0x20, int32(b.Header.Sky))
		})
		if c.Mobies[1].Block != nil || !strings.Contains(s.Reason, "equal") {
			t.Fatalf("%v", s)
		}
		if len(c.Blocks) != 4 {
			t.Fatal("sky lost")
		}
	})
	t.Run("out of order", func(t *testing.T) {
		c, s := bad(t, "tfrags", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x08, b.Header.Occlusion+0x10) })
		if !strings.Contains(s.Reason, "out of order") || len(c.Blocks) != 3 {
			t.Fatalf("%v %v", s, c.Blocks)
		}
	})
	t.Run("stash count without entry", func(t *testing.T) {
		c, _ := bad(t, "moby stash", func(b *Built, put func(int64, int32), _ func(int64, int16)) {
			put(0x00, int32((len(b.Index)-int(b.Header.GsRAM.Offset))/0x10)) // gs_ram.count past the table
		})
		if len(c.Mobies[1].Slots) != 0 || len(c.Mobies[0].Slots) != 2 {
			t.Fatalf("stashed slots %v", c.Mobies[1].Slots)
		}
	})
	t.Run("stash list unterminated", func(t *testing.T) {
		bad(t, "moby stash list", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0xac, int32(len(b.Index)-2)) })
	})
	t.Run("particle frame past table", func(t *testing.T) {
		c, _ := bad(t, "particle 0 frame 1", func(b *Built, _ func(int64, int32), _ func(int64, int16)) {
			d := int64(b.Header.PartDefs)
			io := int64(binary.LittleEndian.Uint32(b.Index[d+8:]))
			b.Index[d+io+1] = 9
		})
		if len(c.Particles[0].Frames) != 2 {
			t.Fatal("frames")
		}
	})
	t.Run("sound remap outside", func(t *testing.T) {
		c, _ := bad(t, "sound_remap", func(b *Built, _ func(int64, int32), put16 func(int64, int16)) {
			put16(int64(b.Header.SoundRemap), 0x7ff0)
		})
		if c.SoundRemap != nil {
			t.Fatal("served")
		}
	})
	t.Run("ratchet_seqs outside index", func(t *testing.T) {
		c, s := bad(t, "ratchet_seqs", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x78, int32(len(b.Index)-0x100)) })
		if len(c.RatchetSeqs) != 0 || s.Offset != 0x78 || len(c.Mobies) != 3 {
			t.Fatalf("%v %v", c.RatchetSeqs, s)
		}
	})
	t.Run("part defs outside index", func(t *testing.T) {
		c, s := bad(t, "particle definitions", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x6c, -0x10) })
		if len(c.Particles) != 0 || s.Offset != 0x6c || len(c.Fx) != 2 {
			t.Fatalf("%v %v", c.Particles, s)
		}
	})
	t.Run("stashed pixels outside gs", func(t *testing.T) {
		c, s := bad(t, "moby texture 2", func(b *Built, put func(int64, int32), _ func(int64, int16)) {
			put(int64(b.Header.MobyTextures.Offset)+2*0x10, int32(len(b.GS)))
		})
		if len(c.Mobies[1].Slots) != 0 || !strings.Contains(s.Reason, "stashed pixels") || len(c.Mobies[0].Slots) != 2 {
			t.Fatalf("%v %v", c.Mobies[1].Slots, s)
		}
	})
	t.Run("class offset out of order", func(t *testing.T) {
		// a class block at a boundary below another's: sized by the rule
		// to the next boundary, never past core_data
		c := func() *Core {
			b, _ := Build(testDesc())
			binary.LittleEndian.PutUint32(b.Index[b.Header.TieClasses.Offset:], uint32(b.Header.Occlusion+4))
			return read(t, b)
		}()
		if bl := c.Ties[0].Block; bl == nil || bl.Offset != int64(c.Header.Occlusion)+4 || bl.Offset+bl.Size > int64(c.Header.Sky) {
			t.Fatalf("tie block %+v (sky at %#x)", bl, c.Header.Sky)
		}
	})
	t.Run("negative data size", func(t *testing.T) {
		c, _ := bad(t, "core_data", func(b *Built, put func(int64, int32), _ func(int64, int16)) { put(0x8c, -5) })
		if len(c.Blocks) != 0 || len(c.TfragTextures) != 0 {
			t.Fatal("blocks read")
		}
	})
}

func TestFxNames(t *testing.T) {
	if FxName(0) != "lame_shadow" || FxName(58) != "radialblur_sniper" || FxName(6) != "" || FxName(62) != "" || FxName(63) != "" || FxName(-1) != "" {
		t.Fatal("fx names")
	}
}
