package levelcore

import (
	"strings"
	"testing"
)

// TestClip: a core_data that decodes short (to the fx bank's offset): every
// block, class block, ratchet sequence and core_data texture ending past
// it is left out with a reason naming both sizes; what lies before it, and
// the gs textures, stay; PastEnd says the same without changing the core.
func TestClip(t *testing.T) {
	b, err := Build(testDesc())
	if err != nil {
		t.Fatal(err)
	}
	end := int64(b.Header.FxBank) + 8 // the first fx palette cut
	c := read(t, b)
	whole := read(t, b)
	pe := c.PastEnd(end)
	if len(c.Skipped) != 0 || len(c.Blocks) != len(whole.Blocks) {
		t.Fatal("PastEnd changed the core")
	}
	n := c.Clip(end)
	if n == 0 || n != len(c.Skipped) || len(pe) != n {
		t.Fatalf("Clip left out %d, skipped %d, PastEnd %d", n, len(c.Skipped), len(pe))
	}
	for _, s := range c.Skipped {
		if !strings.Contains(s.Reason, "decodes to") || s.Offset != 0x8c {
			t.Errorf("skip %v", s)
		}
	}
	in := func(l Loc) bool { return l.In != InData || l.Offset+l.Size <= end }
	for _, bl := range append(append([]Block(nil), c.Blocks...), c.RatchetSeqs...) {
		if bl.Offset+bl.Size > end {
			t.Errorf("block %+v kept", bl)
		}
	}
	if len(c.Blocks) != 4 || len(c.TfragTextures) != len(whole.TfragTextures) || len(c.RatchetSeqs) != 0 || len(c.Fx) != 0 {
		t.Errorf("kept %d blocks, %d tfrag textures, %d seqs, %d fx", len(c.Blocks), len(c.TfragTextures), len(c.RatchetSeqs), len(c.Fx))
	}
	frames := 0
	for _, p := range c.Particles {
		frames += len(p.Frames)
		for _, f := range p.Frames {
			if !in(f.Pixels) || !in(f.Palette) {
				t.Errorf("particle frame %+v kept", f)
			}
		}
	}
	if frames == 0 {
		t.Error("the particle bank (before the fx bank) was left out")
	}
	for _, cs := range [][]Class{c.Mobies, c.Ties, c.Shrubs} {
		for _, cl := range cs {
			if cl.Block != nil {
				t.Errorf("%s class %d: block %+v kept past %#x", cl.Kind, cl.OClass, cl.Block, end)
			}
			for _, s := range cl.Slots {
				if !in(s.Texture.Pixels) {
					t.Errorf("slot %+v kept", s)
				}
			}
		}
	}
	if c.Mobies[1].Slots == nil || !c.Mobies[1].Slots[0].Texture.Stashed {
		t.Error("the stashed moby texture (in gs) was left out")
	}
	if c.Clip(c.DataSize) != 0 || c.Clip(-1) != 0 {
		t.Error("clipping at or past the end left something out")
	}
}
