package mesh

import (
	"encoding/binary"
	"testing"
)

func mobyBlock(t testing.TB) []byte {
	b, err := WriteMoby(testMoby())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func le32(b []byte, at int) int { return int(binary.LittleEndian.Uint32(b[at:])) }

// mobyEntry is the offset of high-LOD packet entry i.
func mobyEntry(b []byte, i int) int { return le32(b, 0) + 0x10*i }

func TestMobyBadInput(t *testing.T) {
	cases := []struct {
		name   string
		slots  int
		mutate func(b []byte)
		reason string
	}{
		{"packet table outside the block", 3, func(b []byte) { binary.LittleEndian.PutUint32(b, uint32(len(b)-0x10)) }, "packet table"},
		{"VIF list outside the block", 3, func(b []byte) { binary.LittleEndian.PutUint16(b[mobyEntry(b, 0)+4:], 0xffff) }, "runs outside the block"},
		{"UNPACK outside its list", 3, func(b []byte) { binary.LittleEndian.PutUint16(b[mobyEntry(b, 0)+4:], 1) }, "runs past its VIF list"},
		{"index past the packet's vertices", 3, func(b []byte) {
			e := mobyEntry(b, 0)
			l, _ := ReadVIFList("", b, int64(le32(b, e)), int64(binary.LittleEndian.Uint16(b[e+4:]))*16)
			l.Unpacks[1].Data[4] = 0x80 | 120
		}, "names vertex"},
		{"vertex-cache slot used before it is filled", 3, func(b []byte) {
			e := mobyEntry(b, int(b[4])-1)
			vo := le32(b, e+8)
			if binary.LittleEndian.Uint16(b[vo+8:]) == 0 {
				t.Fatal("the last packet has no duplicates")
			}
			binary.LittleEndian.PutUint16(b[vo+0x10:], 300<<7)
		}, "before it is filled"},
		{"texture slot past the class's slots", 2, func(b []byte) {}, "texture slot 2, the class has 2"},
		{"vertex counts past the table's bytes", 3, func(b []byte) {
			vo := le32(b, mobyEntry(b, 0)+8)
			binary.LittleEndian.PutUint16(b[vo+6:], 0xff00) // main count
			binary.LittleEndian.PutUint16(b[vo+0xa:], 0xff00+binary.LittleEndian.Uint16(b[vo+8:]))
		}, "disagree"},
		{"vertex array past its table", 3, func(b []byte) { b[mobyEntry(b, 0)+0xc] = 3 }, "runs outside the vertex table"},
		{"no end-of-packet marker", 3, func(b []byte) {
			e := mobyEntry(b, 0)
			l, _ := ReadVIFList("", b, int64(le32(b, e)), int64(binary.LittleEndian.Uint16(b[e+4:]))*16)
			d := l.Unpacks[1].Data
			for i := 4; i < len(d); i++ {
				if d[i] == 0 {
					d[i] = 1
				}
			}
			d[2] = 0
		}, "end-of-packet marker"},
		{"header cut", 3, func(b []byte) {}, "shorter than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := mobyBlock(t)
			if _, err := ReadMoby(b, High, 3); err != nil {
				t.Fatal(err)
			}
			c.mutate(b)
			if c.name == "header cut" {
				b = b[:0x40]
			}
			_, err := ReadMoby(b, High, c.slots)
			wantErr(t, err, c.reason)
		})
	}
}

func tieBlock(t testing.TB) []byte {
	b, err := WriteTie(&TieClass{Scale: 0.5, Slots: 3, Strips: testStrips(false, 6)})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTieBadInput(t *testing.T) {
	entry := func(b []byte, i int) int { return le32(b, 0) + 0x10*i }
	data := func(b []byte, i int) int { return le32(b, 0) + le32(b, entry(b, i)) }
	cases := []struct {
		name   string
		slots  int
		mutate func(b []byte)
		reason string
	}{
		{"packet table outside the block", 3, func(b []byte) { b[0xc] = 255; binary.LittleEndian.PutUint32(b, uint32(len(b)-0x20)) }, "packet table"},
		{"vertices outside the block", 3, func(b []byte) { b[entry(b, 0)+9] = 255; b[entry(b, 0)+8] = 255 }, "run outside the block"},
		{"strip records outside the block", 3, func(b []byte) {
			d := data(b, int(b[0xc])-1)
			binary.LittleEndian.PutUint32(b[entry(b, int(b[0xc])-1):], uint32(len(b)-0x30-le32(b, 0)))
			_ = d
			b[len(b)-0x30+0x23] = 255
		}, "strip records run outside"},
		{"texture slot past the class's slots", 2, func(b []byte) {}, "texture record 2"},
		{"a vertex off the GS packet", 3, func(b []byte) {
			d := data(b, 0)
			vo := d + int(b[entry(b, 0)+8])*16
			binary.LittleEndian.PutUint16(b[vo+6:], 1000)
		}, "nothing of the GS packet"},
		{"dinky size past the vertices", 3, func(b []byte) { b[data(b, 0)+0x28] = 250 }, "dinky vertex size"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := tieBlock(t)
			if _, err := ReadTie(b, 3); err != nil {
				t.Fatal(err)
			}
			c.mutate(b)
			_, err := ReadTie(b, c.slots)
			wantErr(t, err, c.reason)
		})
	}
}

func shrubBlock(t testing.TB) []byte {
	b, err := WriteShrub(&ShrubClass{Scale: 2, Slots: 3, Strips: ForShrub(testStrips(true, 4))})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestShrubBadInput(t *testing.T) {
	list := func(b []byte, i int) *VIFList {
		l, err := ReadVIFList("", b, int64(le32(b, 0x40+8*i)), int64(le32(b, 0x44+8*i)))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	cases := []struct {
		name   string
		slots  int
		mutate func(b []byte)
		reason string
	}{
		{"packet entries outside the block", 3, func(b []byte) { binary.LittleEndian.PutUint16(b[0x28:], 0x7fff) }, "packet entries"},
		{"VIF list outside the block", 3, func(b []byte) { binary.LittleEndian.PutUint32(b[0x44:], uint32(len(b))) }, "runs outside the block"},
		{"normals outside the block", 3, func(b []byte) { binary.LittleEndian.PutUint32(b[0x2c:], uint32(len(b)-8)) }, "normals"},
		{"GIF tags past the header UNPACK", 3, func(b []byte) { binary.LittleEndian.PutUint32(list(b, 0).Unpacks[0].Data[4:], 1000) }, "GIF tags"},
		{"vertices past their UNPACKs", 3, func(b []byte) { binary.LittleEndian.PutUint32(list(b, 0).Unpacks[0].Data[8:], 1000) }, "vertices run outside"},
		{"texture slot past the class's slots", 2, func(b []byte) {}, "texture slot 2, the class has 2"},
		{"normal index past the 24", 3, func(b []byte) { binary.LittleEndian.PutUint16(list(b, 0).Unpacks[2].Data[6:], 30) }, "normal 30"},
		{"a vertex off the GS packet", 3, func(b []byte) { binary.LittleEndian.PutUint16(list(b, 0).Unpacks[1].Data[6:], 999) }, "nothing of the GS packet"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := shrubBlock(t)
			if _, err := ReadShrub(b, 3); err != nil {
				t.Fatal(err)
			}
			c.mutate(b)
			_, err := ReadShrub(b, c.slots)
			wantErr(t, err, c.reason)
		})
	}
}

// The fuzz targets: whatever the bytes, a reader returns a mesh that
// passes Check, or an error; it never panics.
func fuzzReader(f *testing.F, seed []byte, read func(b []byte) (*Mesh, error)) {
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := read(b)
		if err != nil {
			return
		}
		if err := m.Check(); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzReadMoby(f *testing.F) {
	fuzzReader(f, mobyBlock(f), func(b []byte) (*Mesh, error) {
		if _, err := ReadMoby(b, Low, 3); err != nil {
			return nil, err
		}
		return ReadMoby(b, High, 3)
	})
}

func FuzzReadTie(f *testing.F) {
	fuzzReader(f, tieBlock(f), func(b []byte) (*Mesh, error) { return ReadTie(b, 3) })
}

func FuzzReadShrub(f *testing.F) {
	fuzzReader(f, shrubBlock(f), func(b []byte) (*Mesh, error) { return ReadShrub(b, 3) })
}
