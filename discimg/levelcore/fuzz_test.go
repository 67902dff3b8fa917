package levelcore

import "testing"

// FuzzRead feeds arbitrary core_index bytes and gs sizes to Read and checks
// what every reading must satisfy: every location lies inside its part,
// every block inside core_data, every dimension in range.
func FuzzRead(f *testing.F) {
	b, err := Build(testDesc())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b.Index, int64(len(b.GS)))
	f.Add(b.Index[:HeaderSize], int64(0))
	f.Add(make([]byte, HeaderSize+0x40), int64(-1))
	f.Fuzz(func(t *testing.T, index []byte, gs int64) {
		c, err := Read(index, gs)
		if err != nil {
			if len(index) >= HeaderSize {
				t.Fatalf("a %d-byte index failed: %v", len(index), err)
			}
			return
		}
		size := func(w Where) int64 {
			switch w {
			case InData:
				return c.DataSize
			case InGS:
				return c.GSSize
			}
			return c.IndexSize
		}
		loc := func(what string, l Loc) {
			if l.Offset < 0 || l.Size < 0 || l.Offset+l.Size > size(l.In) {
				t.Fatalf("%s: %+v outside %s of %d", what, l, l.In, size(l.In))
			}
		}
		tex := func(tx Texture) {
			if tx.Width < 1 || tx.Height < 1 || tx.Width > MaxDimension || tx.Height > MaxDimension ||
				tx.Pixels.Size != int64(tx.Width*tx.Height) || tx.Palette.Size != PaletteSize {
				t.Fatalf("texture %+v", tx)
			}
			loc("pixels", tx.Pixels)
			loc("palette", tx.Palette)
		}
		block := func(b Block) {
			if b.Size <= 0 || b.Offset < 0 || b.Offset+b.Size > c.DataSize {
				t.Fatalf("block %+v outside %d", b, c.DataSize)
			}
		}
		for _, b := range c.Blocks {
			block(b)
		}
		for _, b := range c.RatchetSeqs {
			block(b)
		}
		for _, tx := range c.TfragTextures {
			tex(tx)
		}
		for _, tx := range c.Fx {
			tex(tx)
		}
		for _, p := range c.Particles {
			for _, tx := range p.Frames {
				tex(tx)
			}
		}
		for _, cs := range [][]Class{c.Mobies, c.Ties, c.Shrubs} {
			for _, cl := range cs {
				if cl.Block != nil {
					block(*cl.Block)
				}
				if len(cl.Slots) > 15 {
					t.Fatalf("%d slots", len(cl.Slots))
				}
				for _, s := range cl.Slots {
					tex(s.Texture)
				}
				if cl.Billboard != nil {
					tex(*cl.Billboard)
				}
			}
		}
		if c.SoundRemap != nil {
			loc("sound remap", *c.SoundRemap)
		}
	})
}
