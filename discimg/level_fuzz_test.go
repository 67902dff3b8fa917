package discimg

import (
	"encoding/binary"
	"testing"
)

// FuzzLevelHeader feeds arbitrary LEVEL<n>.WAD headers (the first word is
// forced to the LEVEL header size, so every input takes the level reading)
// in containers of arbitrary size, and checks what every shown lump must
// satisfy.
func FuzzLevelHeader(f *testing.F) {
	f.Add(levelHeader(0, 0, map[int][2]int32{0: {1, 570}, 1: {571, 5724}, 2: {6295, 219}, 3: {6514, 10}}), int64(13359328))
	f.Add(levelHeader(30, 2, map[int][2]int32{0: {571, 5724}, 1: {1, 570}, 9: {1, 1}}), int64(6600*SectorSize))
	f.Add(levelHeader(1, 0, map[int][2]int32{0: {-1, 5}, 1: {0x7fffffff, 0x7fffffff}, 2: {0, 3}}), int64(1<<20))
	f.Add(levelHeader(-7, -1, map[int][2]int32{0: {1, 4}, 1: {2, 4}}), int64(5*SectorSize+100))
	f.Add(make([]byte, 4), int64(LevelHeaderSize))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		hdr := make([]byte, LevelHeaderSize)
		copy(hdr, data)
		binary.LittleEndian.PutUint32(hdr, LevelHeaderSize)
		if size < 0 {
			size = -size
		}
		c, err := ReadContainer("LEVEL0.WAD", sparseContainer{hdr, size}, size)
		if size < LevelHeaderSize {
			if err == nil {
				t.Fatalf("a %d-byte container read as a level", size)
			}
			return
		}
		if err != nil {
			if _, ok := err.(*ContainerError); !ok {
				t.Fatalf("error %T %v is not a *ContainerError", err, err)
			}
			return
		}
		if c.Level == nil || c.Reading != ReadingLevel || c.HeaderSize != LevelHeaderSize {
			t.Fatalf("reading %s, level %v, header %d", c.Reading, c.Level, c.HeaderSize)
		}
		if c.Level.ID != int32(binary.LittleEndian.Uint32(hdr[8:])) {
			t.Fatalf("level id %d from %x", c.Level.ID, hdr[8:12])
		}
		if len(c.Extents)+c.Skipped != len(c.Level.Lumps) {
			t.Fatalf("%d extents + %d skipped != %d slots", len(c.Extents), c.Skipped, len(c.Level.Lumps))
		}
		prev := -1
		for _, e := range c.Extents {
			if e.Index <= prev || e.Index >= len(c.Level.Lumps) {
				t.Fatalf("slot %d after %d", e.Index, prev)
			}
			prev = e.Index
			if e.Size <= 0 || e.Offset < c.HeaderSize || e.Offset+e.Size > size || e.Offset+e.Size < e.Offset {
				t.Fatalf("lump %+v outside the %d-byte container", e, size)
			}
			l := c.Level.Lumps[e.Index]
			if l.OffsetSectors < 0 || l.SizeSectors <= 0 || int64(l.OffsetSectors)*SectorSize != e.Offset {
				t.Fatalf("lump %+v shown from slot %+v", e, l)
			}
			if e.Name == "" {
				t.Fatalf("slot %d has no name", e.Index)
			}
		}
	})
}
