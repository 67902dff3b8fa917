package discimg

import "encoding/binary"

// LevelHeaderSize is the size of the typed LEVEL<n>.WAD header.
const LevelHeaderSize = 0x60

// LevelHeader is the typed 0x60 header of LEVEL<n>.WAD.
type LevelHeader struct {
	ID     int32
	Reverb int32
	Name   string                                         // level name by id ("Insomniac Museum"), "" if unknown
	Lumps  [10]struct{ OffsetSectors, SizeSectors int32 } // slots as in the levels TSV
}

// readLevel fills c from a LEVEL header (hdr is LevelHeaderSize bytes). Every
// lump whose size is not zero is shown unless its fields are negative, it
// starts inside the header or it lies past the container; the last lump's
// sector-rounded end may overrun the file by up to 2,047 bytes and is clamped.
// The fields are read as they are: lumps that overlap are still shown (they are
// read-only views), and the Candidate says so.
func readLevel(c *Container, hdr []byte) {
	h := &LevelHeader{
		ID:     int32(binary.LittleEndian.Uint32(hdr[0x08:])),
		Reverb: int32(binary.LittleEndian.Uint32(hdr[0x0c:])),
	}
	h.Name = LevelName(h.ID)
	k := reading{Candidate: Candidate{Reading: ReadingLevel, Entries: len(h.Lumps)}, slots: make([]slot, len(h.Lumps))}
	for s := range h.Lumps {
		off := int32(binary.LittleEndian.Uint32(hdr[0x10+8*s:]))
		n := int32(binary.LittleEndian.Uint32(hdr[0x14+8*s:]))
		h.Lumps[s].OffsetSectors, h.Lumps[s].SizeSectors = off, n
		switch {
		case n == 0:
			k.slots[s] = slot{state: slotUnused}
		case off < 0 || n < 0:
			k.slots[s] = slot{state: slotInvalid}
		default:
			// int32 × 2048 stays below 2^42: no overflow in int64.
			k.slots[s] = classify(int64(off)*SectorSize, int64(n)*SectorSize, c.HeaderSize, c.Size)
		}
	}
	k.evaluate(c.Size, roomy(c.HeaderSize, c.Size))
	c.Level = h
	c.Reading = ReadingLevel
	c.Documented, c.Named = ReadingLevel, true
	c.Candidates = []Candidate{k.Candidate}
	c.Coverage = k.Coverage
	c.Unused, c.Sentinels = k.Unused, k.Sentinels
	c.Skipped = k.Unused + k.Sentinels + k.Invalid
	c.Extents = make([]Extent, 0, k.Valid)
	for s, sl := range k.slots {
		if sl.state == slotShown {
			c.Extents = append(c.Extents, Extent{Index: s, Name: levelLumpNames[s], Offset: sl.off, Size: sl.end - sl.off, Layout: levelLumpLayouts[s]})
		}
	}
}
