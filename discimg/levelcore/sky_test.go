package levelcore

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

// testSky is a sky of three textures (the first an fx texture, the third
// sharing the second's palette) and two shells.
func testSky() *SkyDesc {
	return &SkyDesc{
		Colour: [4]byte{1, 2, 3, 0x80},
		Fx:     1,
		Textures: []SkyTextureDesc{
			{Width: 16, Height: 8, Pixels: fill(128, 40), Palette: fill(PaletteSize, 41), SharePalette: -1},
			{Width: 8, Height: 8, Pixels: fill(64, 42), Palette: fill(PaletteSize, 43), SharePalette: -1},
			{Width: 4, Height: 16, Pixels: fill(64, 44), SharePalette: 1},
		},
		Shells: []SkyShellDesc{
			{Clusters: []SkyClusterDesc{{
				Vertices: [][4]int16{{0, 0, 1024, 0x80}, {1024, 0, 0, 0x80}, {0, 1024, 0, 0x40}},
				STs:      [][2]int16{{0, 0}, {4096, 0}, {0, 4096}},
				Tris:     [][4]uint8{{0, 1, 2, 1}},
			}}},
			{Untextured: true, Clusters: []SkyClusterDesc{{
				Vertices: [][4]int16{{0, 0, -1024, 0x80}, {-1024, 0, 0, 0x80}, {0, -1024, 0, 0x80}},
				STs:      [][2]int16{{0, 0}, {0, 0}, {0, 0}},
				Tris:     [][4]uint8{{0, 1, 2, 0xff}},
			}}},
		},
	}
}

// readSky reads a sky block the way the tree does: the header, then the
// defs range, nothing else.
func readSky(t *testing.T, blk []byte, base int64) (SkyHeader, []Texture, []Skip) {
	t.Helper()
	h, err := ParseSkyHeader(blk[:SkyHeaderSize], int64(len(blk)))
	if err != nil {
		t.Fatal(err)
	}
	off, n, err := h.DefsRange()
	if err != nil {
		return h, nil, []Skip{{What: "defs", Reason: err.Error()}}
	}
	tx, sk := SkyTextures(h, blk[off:off+n], base)
	return h, tx, sk
}

// TestSkyRoundTrip: BuildSky's block reads back: header fields, every def's
// pixels and palette (the shared palette at one place), in def order.
func TestSkyRoundTrip(t *testing.T) {
	d := testSky()
	blk, err := BuildSky(d)
	if err != nil {
		t.Fatal(err)
	}
	const base = 0x1000
	h, tx, sk := readSky(t, blk, base)
	if len(sk) != 0 {
		t.Fatalf("skips %v", sk)
	}
	if h.ShellCount != 2 || h.TextureCount != 3 || h.FxCount != 1 || h.Colour != d.Colour || h.Shells[0] == 0 || h.Shells[2] != 0 {
		t.Errorf("header %+v", h)
	}
	if len(tx) != 3 {
		t.Fatalf("%d textures", len(tx))
	}
	for i, x := range tx {
		want := d.Textures[i]
		pal := want.Palette
		if want.SharePalette >= 0 {
			pal = d.Textures[want.SharePalette].Palette
		}
		if x.Index != i || x.Width != want.Width || x.Height != want.Height || x.Table != "sky" {
			t.Errorf("texture %d: %+v", i, x)
		}
		if !bytes.Equal(at(blk, Loc{InData, x.Pixels.Offset - base, x.Pixels.Size}), want.Pixels) ||
			!bytes.Equal(at(blk, Loc{InData, x.Palette.Offset - base, x.Palette.Size}), pal) {
			t.Errorf("texture %d: bytes differ", i)
		}
	}
	if tx[1].Palette != tx[2].Palette {
		t.Errorf("shared palette at %v and %v", tx[1].Palette, tx[2].Palette)
	}
	// the shell header and its cluster, as LEVEL-CORE §2.6 lays them out
	s := blk[h.Shells[1]:]
	if n, f := binary.LittleEndian.Uint32(s), binary.LittleEndian.Uint32(s[4:]); n != 1 || f != 1 {
		t.Errorf("shell 1: %d clusters, flags %d", n, f)
	}
	c := s[0x10:]
	data := int32(binary.LittleEndian.Uint32(c[0x10:]))
	if vc, tc := binary.LittleEndian.Uint16(c[0x14:]), binary.LittleEndian.Uint16(c[0x16:]); vc != 3 || tc != 1 {
		t.Errorf("cluster: %d vertices, %d tris", vc, tc)
	}
	tri := int32(binary.LittleEndian.Uint16(c[0x1c:]))
	if got := blk[data+tri : data+tri+4]; !bytes.Equal(got, []byte{0, 1, 2, 0xff}) {
		t.Errorf("triangle %v", got)
	}
}

// TestSkyBadInput: a header past the block, a negative count, defs past
// the block, a def with bad dimensions, pixels or a palette past the block:
// the def (or the table) is left out with its offset; the rest is read.
func TestSkyBadInput(t *testing.T) {
	good, err := BuildSky(testSky())
	if err != nil {
		t.Fatal(err)
	}
	h0, _ := ParseSkyHeader(good, int64(len(good)))
	if _, err := ParseSkyHeader(good[:0x20], 0x20); err == nil {
		t.Error("a 0x20-byte sky block read")
	}
	if _, err := ParseSkyHeader(good, 0x3f); err == nil {
		t.Error("a header past a 0x3f-byte block read")
	}
	cases := []struct {
		name   string
		mutate func(b []byte)
		served int
		want   string
	}{
		{"negative count", func(b []byte) { binary.LittleEndian.PutUint16(b[0xc:], 0xffff) }, 0, "negative"},
		{"defs past the block", func(b []byte) { binary.LittleEndian.PutUint32(b[0x10:], uint32(len(b)-0x10)) }, 0, "run past"},
		{"count past the block", func(b []byte) { binary.LittleEndian.PutUint16(b[0xc:], 0x7fff) }, 0, "run past"},
		{"width 0", func(b []byte) { binary.LittleEndian.PutUint32(b[h0.TextureDefs+8:], 0) }, 2, "outside 1.."},
		{"huge height", func(b []byte) { binary.LittleEndian.PutUint32(b[h0.TextureDefs+0x1c:], 1<<30) }, 2, "outside 1.."},
		{"pixels past the block", func(b []byte) { binary.LittleEndian.PutUint32(b[h0.TextureDefs+0x24:], uint32(len(b))) }, 2, "pixels at sky"},
		{"negative pixel offset", func(b []byte) { binary.LittleEndian.PutUint32(b[h0.TextureDefs+0x24:], 0x80000000) }, 2, "pixels at sky"},
		{"palette past the block", func(b []byte) { binary.LittleEndian.PutUint32(b[h0.TextureDefs:], uint32(len(b)-0x100)) }, 2, "palette at sky"},
	}
	for _, c := range cases {
		b := bytes.Clone(good)
		c.mutate(b)
		_, tx, sk := readSky(t, b, 0)
		if len(tx) != c.served || len(sk) != 1 || !strings.Contains(sk[0].Reason, c.want) {
			t.Errorf("%s: %d served, skips %v", c.name, len(tx), sk)
		}
	}
	// defs shorter than DefsRange says: the table is left out, no panic
	h, _ := ParseSkyHeader(good, int64(len(good)))
	if tx, sk := SkyTextures(h, good[h.TextureDefs:h.TextureDefs+0x10], 0); len(tx) != 0 || len(sk) != 1 {
		t.Errorf("short defs: %d served, %v", len(tx), sk)
	}
}

// FuzzSky feeds arbitrary sky blocks to the header and texture readers: no
// panic, and every texture served lies inside the block.
func FuzzSky(f *testing.F) {
	good, err := BuildSky(testSky())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:SkyHeaderSize])
	f.Add(make([]byte, SkyHeaderSize))
	f.Fuzz(func(t *testing.T, blk []byte) {
		h, err := ParseSkyHeader(blk, int64(len(blk)))
		if err != nil {
			if len(blk) >= SkyHeaderSize {
				t.Fatalf("a %d-byte block failed: %v", len(blk), err)
			}
			return
		}
		off, n, err := h.DefsRange()
		if err != nil {
			return
		}
		if off < 0 || n < 0 || off+n > int64(len(blk)) {
			t.Fatalf("defs range %#x+%#x outside %#x", off, n, len(blk))
		}
		tx, _ := SkyTextures(h, blk[off:off+n], 0)
		for _, x := range tx {
			for _, l := range []Loc{x.Pixels, x.Palette} {
				if l.Offset < 0 || l.Size < 0 || l.Offset+l.Size > int64(len(blk)) {
					t.Fatalf("texture %d: %+v outside %#x", x.Index, l, len(blk))
				}
			}
			if x.Pixels.Size != int64(x.Width*x.Height) {
				t.Fatalf("texture %+v", x)
			}
		}
	})
}
