package levelcore

import "fmt"

// Clip leaves out of c everything whose core_data bytes end past decoded,
// the size core_data really decodes to when that is less than the +0x8c
// the header records (a stream that decodes short): blocks, class blocks,
// ratchet sequences, and the textures whose pixels or palette lie in
// core_data. Each is added to c.Skipped (the reason names both sizes) and
// the count is returned; everything before decoded is kept. Textures in
// gs_ram are kept, as is a class whose block is left out (its slots still
// serve). decoded ≥ c.DataSize changes nothing.
func (c *Core) Clip(decoded int64) int {
	if decoded >= c.DataSize || decoded < 0 {
		return 0
	}
	n0 := len(c.Skipped)
	why := fmt.Sprintf("core_data decodes to %#x bytes, core_index+0x8c records %#x", decoded, c.DataSize)
	past := func(l Loc) bool { return l.In == InData && l.Offset+l.Size > decoded }
	texPast := func(t *Texture) bool { return past(t.Pixels) || past(t.Palette) }
	blockPast := func(b *Block) bool { return b.Offset+b.Size > decoded }
	keepBlocks := func(bs []Block, prefix string) []Block {
		out := bs[:0]
		for _, b := range bs {
			if blockPast(&b) {
				c.skip(prefix+b.Name, 0x8c, "[%#x, %#x) lies past the decoded end: %s", b.Offset, b.Offset+b.Size, why)
				continue
			}
			out = append(out, b)
		}
		return out
	}
	keepTex := func(ts []Texture) []Texture {
		out := ts[:0]
		for _, t := range ts {
			if texPast(&t) {
				c.skip(fmt.Sprintf("%s texture %d", t.Table, t.Index), 0x8c, "its pixels or palette lie past the decoded end: %s", why)
				continue
			}
			out = append(out, t)
		}
		return out
	}
	c.Blocks = keepBlocks(c.Blocks, "")
	c.RatchetSeqs = keepBlocks(c.RatchetSeqs, "ratchet_seqs/")
	c.TfragTextures = keepTex(c.TfragTextures)
	c.Fx = keepTex(c.Fx)
	for i := range c.Particles {
		p := &c.Particles[i]
		out := p.Frames[:0]
		for f, t := range p.Frames {
			if texPast(&t) {
				c.skip(fmt.Sprintf("particle %d frame %d", p.Index, f), 0x8c, "particle texture %d lies past the decoded end: %s", t.Index, why)
				continue
			}
			out = append(out, t)
		}
		p.Frames = out
	}
	for _, cs := range [][]Class{c.Mobies, c.Ties, c.Shrubs} {
		for i := range cs {
			cl := &cs[i]
			what := fmt.Sprintf("%s class %d (o_class %d)", cl.Kind, cl.Index, cl.OClass)
			if cl.Block != nil && blockPast(cl.Block) {
				c.skip(what, 0x8c, "class block [%#x, %#x) lies past the decoded end: %s", cl.Block.Offset, cl.Block.Offset+cl.Block.Size, why)
				cl.Block = nil
			}
			out := cl.Slots[:0]
			for _, s := range cl.Slots {
				if texPast(&s.Texture) {
					c.skip(fmt.Sprintf("%s slot %d", what, s.Slot), 0x8c, "%s texture %d lies past the decoded end: %s", cl.Kind, s.TableIndex, why)
					continue
				}
				out = append(out, s)
			}
			cl.Slots = out
		}
	}
	return len(c.Skipped) - n0
}

// PastEnd is what Clip(decoded) would leave out, without changing c (for
// a core_data found short after the tree was built: those entries' reads
// fail, and info names them).
func (c *Core) PastEnd(decoded int64) []Skip {
	cp := *c
	cp.Skipped = nil
	cp.Blocks = append([]Block(nil), c.Blocks...)
	cp.RatchetSeqs = append([]Block(nil), c.RatchetSeqs...)
	cp.TfragTextures = append([]Texture(nil), c.TfragTextures...)
	cp.Fx = append([]Texture(nil), c.Fx...)
	cp.Particles = make([]Particle, len(c.Particles))
	for i, p := range c.Particles {
		cp.Particles[i] = Particle{Index: p.Index, Frames: append([]Texture(nil), p.Frames...)}
	}
	dup := func(cs []Class) []Class {
		out := make([]Class, len(cs))
		for i, cl := range cs {
			out[i] = cl
			out[i].Slots = append([]Slot(nil), cl.Slots...)
		}
		return out
	}
	cp.Mobies, cp.Ties, cp.Shrubs = dup(c.Mobies), dup(c.Ties), dup(c.Shrubs)
	cp.Clip(decoded)
	return cp.Skipped
}
