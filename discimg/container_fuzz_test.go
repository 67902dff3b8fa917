package discimg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// FuzzReadContainer feeds arbitrary headers, in containers of arbitrary size
// (bytes past the data read as zeros), and checks what every accepted table
// must satisfy.
func FuzzReadContainer(f *testing.F) {
	rng := rand.New(rand.NewPCG(21, 21))
	pairs, end := chainBytes(1, randSizes(rng, 30, 100, 40000))
	f.Add(header(0xf8, pairWords(pairs)), end)
	pairs, end = chainSectors(1, randSizes(rng, 7, 1, 50))
	f.Add(header(0x40, pairWords(pairs)), end-100)
	pairs, end = chainBytes(3, randSizes(rng, 514, 100, 9000))
	f.Add(header(0x1018, pairWords(pairs)), end)
	hdr, size, _ := globalAudioStarts(3)
	f.Add(hdr, size)
	f.Add(header(0x137c, []uint32{3, 5, 5, 9, 0, 12, 1 << 20}), int64(20*SectorSize))
	f.Add(header(0x328, pairWords([][2]uint32{{1, 5000}, {4, 3000}, {900, 10}})), int64(100*SectorSize))
	f.Add(levelHeader(30, 0, map[int][2]int32{0: {571, 5724}, 1: {1, 570}, 2: {6295, 219}, 3: {6514, 10}}), int64(13359328))
	f.Add(levelHeader(1, 0, map[int][2]int32{0: {-1, 5}, 1: {0x7fffffff, 0x7fffffff}}), int64(1<<20))
	f.Add([]byte{0, 0, 0x78, 0, 0, 0, 0, 0}, int64(1<<30))
	f.Fuzz(func(t *testing.T, data []byte, size int64) {
		if size < 0 {
			size = int64(len(data))
		}
		c, err := ReadContainer("FUZZ.WAD", sparseContainer{data, size}, size)
		if err != nil {
			if _, ok := err.(*ContainerError); !ok {
				t.Fatalf("error %T %v is not a *ContainerError", err, err)
			}
			return
		}
		if c.HeaderSize < 8 || c.HeaderSize > size {
			t.Fatalf("header size %d, container %d", c.HeaderSize, size)
		}
		var winner *Candidate
		for i := range c.Candidates {
			if c.Candidates[i].Reading == c.Reading {
				winner = &c.Candidates[i]
			}
		}
		if winner == nil || (c.Reading != ReadingLevel && !winner.Consistent) {
			t.Fatalf("winning reading %s not among consistent candidates %+v", c.Reading, c.Candidates)
		}
		if len(c.Extents)+c.Skipped != winner.Entries || c.Coverage != winner.Coverage {
			t.Fatalf("%d extents + %d skipped != %d entries", len(c.Extents), c.Skipped, winner.Entries)
		}
		if c.Coverage < 0 || c.Coverage > size/SectorSize+1 {
			t.Fatalf("coverage %d sectors in %d bytes", c.Coverage, size)
		}
		names := map[string]bool{}
		prev := -1
		for _, e := range c.Extents {
			if e.Index <= prev || e.Index >= winner.Entries {
				t.Fatalf("index %d after %d", e.Index, prev)
			}
			prev = e.Index
			if e.Size <= 0 || e.Offset < c.HeaderSize || e.Offset+e.Size > size {
				t.Fatalf("extent %+v outside the container (%d bytes, header %d)", e, size, c.HeaderSize)
			}
			if e.Name == "" || names[e.Name] {
				t.Fatalf("name %q empty or repeated", e.Name)
			}
			names[e.Name] = true
		}
		if c.Reading != ReadingLevel {
			for i, a := range c.Extents {
				for _, b := range c.Extents[i+1:] {
					same := a.Offset == b.Offset && a.Size == b.Size
					if !same && a.Offset < b.Offset+b.Size && b.Offset < a.Offset+a.Size {
						t.Fatalf("extents %+v and %+v overlap", a, b)
					}
				}
			}
		}
	})
}

// FuzzReadParts: any part table either fails with a PartsError or yields
// parts inside the file after the table, never a panic or an allocation
// sized by an unchecked count.
func FuzzReadParts(f *testing.F) {
	f.Add(0, []byte{0x58, 0, 0, 0, 0x10, 0, 0, 0})
	f.Add(2, append([]byte{3, 0, 0, 0, 16, 0, 0, 0, 32, 0, 0, 0, 48, 0, 0, 0}, make([]byte, 64)...))
	f.Add(3, []byte{8, 0, 0, 0, 0x20, 0, 0, 0})
	layouts := []PartLayout{PartsDataLump, PartsIRX, PartsItemList, PartsChunk, "bogus"}
	f.Fuzz(func(t *testing.T, which int, data []byte) {
		if which < 0 {
			which = -which
		}
		l := layouts[which%len(layouts)]
		p, err := ReadParts(l, bytes.NewReader(data), int64(len(data)))
		if err != nil {
			var pe *PartsError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is no PartsError", err)
			}
			return
		}
		for _, x := range p.Parts {
			if x.Offset < p.HeaderSize || x.Size <= 0 || x.Offset+x.Size > int64(len(data)) {
				t.Fatalf("part %+v outside the file (%d bytes, table %d)", x, len(data), p.HeaderSize)
			}
		}
		if len(p.Parts)+len(p.Skipped) > MaxParts {
			t.Fatalf("%d parts", len(p.Parts)+len(p.Skipped))
		}
	})
}

// FuzzReadTOC: RC2.HDR of any bytes reads without panicking; every copy it
// keeps has the header size its place says.
func FuzzReadTOC(f *testing.F) {
	f.Add(make([]byte, 0x5800+27*0x3800))
	f.Add([]byte{0x28, 3, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		toc := ReadTOC(bytes.NewReader(data), int64(len(data)))
		for _, h := range toc.Globals {
			if h.Err == "" && (len(h.Header) < 8 || int64(binary.LittleEndian.Uint32(h.Header)) != int64(len(h.Header))) {
				t.Fatalf("copy %s kept with header size %d", h.File, len(h.Header))
			}
		}
		_ = toc.Check("MISC.WAD", 5, 1<<20, make([]byte, 0x40))
		_ = toc.LevelTableProblems(1001)
	})
}
