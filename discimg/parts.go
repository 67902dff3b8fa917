package discimg

import (
	"encoding/binary"
	"fmt"
	"io"
	"sort"
	"strconv"
)

// PartLayout names a structure whose parts the tree shows as NAME.d/ (SPEC
// "Parts of a file"): a level's data lump, a chunk lump, the decoded MISC irx
// bundle, a texlist or matlist. "" is no parts.
type PartLayout string

const (
	PartsDataLump PartLayout = "data-lump"
	PartsChunk    PartLayout = "chunk-lump"
	PartsIRX      PartLayout = "irx-bundle"
	PartsItemList PartLayout = "item-list" // texlist / matlist
	// PartsGameplay: a level's decoded gameplay, its blocks by the 39-offset
	// header (package gameplay reads it; fsnode makes gameplay.d/).
	PartsGameplay PartLayout = "gameplay"
)

// MaxParts bounds the parts of one list, whatever its count says: a list's
// count is checked against its bytes too, this is the model's own guard.
const MaxParts = 1 << 16

// Part is one part of a file: a byte range relative to the file's first byte.
type Part struct {
	Index  int
	Name   string
	Offset int64
	Size   int64
	// Layout is what the part's content holds (decoded content when the part
	// is a WAD stream).
	Layout PartLayout
	// Expected is the decoded size another table records for the part (the
	// data lump's core_data: core_index+0x8c), -1 when none.
	Expected int64
}

// Skip is one table slot left out, and why.
type Skip struct {
	Index  int
	Name   string
	Reason string
}

// Parts is what a file's part table says.
type Parts struct {
	Layout     PartLayout
	HeaderSize int64 // bytes of the part table at the file's start
	Parts      []Part
	Skipped    []Skip // absent, outside the file or overlapping its header
}

// PartsError says why a file's part table cannot be read at all; Offset is
// relative to the file's first byte.
type PartsError struct {
	Layout PartLayout
	Offset int64
	Reason string
	Err    error
}

func (e *PartsError) Error() string {
	return fmt.Sprintf("%s table at offset %#x: %s", e.Layout, e.Offset, e.Reason)
}

func (e *PartsError) Unwrap() error { return e.Err }

// dataLumpNames: the data lump's 0x58-byte header of {s32 offset, s32 size}.
var dataLumpNames = [...]string{"overlay", "core_index", "gs_ram", "hud_header",
	"hud_bank0", "hud_bank1", "hud_bank2", "hud_bank3", "hud_bank4", "core_data", "transition_textures"}

const (
	dataCoreIndex  = 1
	dataCoreData   = 9
	dataTransTex   = 10
	coreIndexSize  = 0x8c // core_index+0x8c: core_data's decoded size
	irxBundleBytes = 0x60
)

// irxNames: the decoded MISC irx's 0x60 bytes of {s32 offset, s32 size};
// slots 1 and 2 are unused.
var irxNames = [...]string{"image", "", "", "sio2man", "mcman", "mcserv", "dbcman", "sio2d", "ds2u", "stash", "libsd", "989snd"}

// ReadParts reads the part table of a file of size bytes whose bytes r holds
// (offset 0 = the file's first byte). It never allocates by a count it has
// not checked against size.
func ReadParts(layout PartLayout, r io.ReaderAt, size int64) (*Parts, error) {
	fail := func(off int64, err error, format string, args ...any) (*Parts, error) {
		return nil, &PartsError{Layout: layout, Offset: off, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	switch layout {
	case PartsDataLump, PartsIRX:
		names := dataLumpNames[:]
		if layout == PartsIRX {
			names = irxNames[:]
		}
		hs := int64(8 * len(names))
		if size < hs {
			return fail(0, ErrFormat, "%d bytes, shorter than the %#x-byte table", size, hs)
		}
		hdr := make([]byte, hs)
		if err := readFullAt(r, hdr, 0); err != nil {
			return fail(0, err, "reading the table: %v", err)
		}
		p := &Parts{Layout: layout, HeaderSize: hs}
		for i, name := range names {
			if name == "" {
				continue
			}
			off := int64(int32(binary.LittleEndian.Uint32(hdr[8*i:])))
			n := int64(int32(binary.LittleEndian.Uint32(hdr[8*i+4:])))
			part := Part{Index: i, Name: name, Offset: off, Size: n, Expected: -1}
			if layout == PartsDataLump && i == dataTransTex {
				part.Layout = PartsItemList
			}
			p.add(part, hs, size)
		}
		if layout == PartsDataLump {
			p.coreDataExpected(r)
		}
		return p, nil
	case PartsChunk:
		if size < 8 {
			return fail(0, ErrFormat, "%d bytes, shorter than the 8-byte chunk table", size)
		}
		var hdr [8]byte
		if err := readFullAt(r, hdr[:], 0); err != nil {
			return fail(0, err, "reading the table: %v", err)
		}
		offs := [2]int64{int64(int32(binary.LittleEndian.Uint32(hdr[0:]))), int64(int32(binary.LittleEndian.Uint32(hdr[4:])))}
		p := &Parts{Layout: layout, HeaderSize: 8}
		for i, name := range [2]string{"tfrags", "collision"} {
			// A chunk stream runs to the other's start when that lies after
			// it, else to the lump's end (its declared size ends it).
			end := size
			if o := offs[1-i]; o > offs[i] && o < end {
				end = o
			}
			n := end - offs[i]
			if offs[i] <= 0 {
				n = 0
			}
			p.add(Part{Index: i, Name: name, Offset: offs[i], Size: n, Expected: -1}, 8, size)
		}
		return p, nil
	case PartsItemList:
		if size < 4 {
			return fail(0, ErrFormat, "%d bytes, shorter than a list count", size)
		}
		var w [4]byte
		if err := readFullAt(r, w[:], 0); err != nil {
			return fail(0, err, "reading the count: %v", err)
		}
		count := int64(int32(binary.LittleEndian.Uint32(w[:])))
		if count < 0 || 4+4*count > size || count > MaxParts {
			return fail(0, ErrFormat, "count %d does not fit the list's %d bytes", count, size)
		}
		hs := 4 + 4*count
		tbl := make([]byte, 4*count) // count checked against size and MaxParts
		if err := readFullAt(r, tbl, 4); err != nil {
			return fail(4, err, "reading the offsets: %v", err)
		}
		p := &Parts{Layout: layout, HeaderSize: hs}
		width := max(2, len(strconv.FormatInt(max(count-1, 0), 10)))
		for i := range int(count) {
			off := int64(int32(binary.LittleEndian.Uint32(tbl[4*i:])))
			end := size
			if i+1 < int(count) {
				end = int64(int32(binary.LittleEndian.Uint32(tbl[4*i+4:])))
			}
			p.add(Part{Index: i, Name: string(appendPadded(nil, i, width)), Offset: off, Size: end - off, Expected: -1}, hs, size)
		}
		return p, nil
	}
	return fail(0, ErrFormat, "unknown part layout")
}

// add keeps a part that lies inside the file after its table, else records
// why it is left out.
func (p *Parts) add(part Part, hs, size int64) {
	why := ""
	switch {
	case part.Offset == -1 && part.Size == 0, part.Offset == 0 && part.Size == 0:
		why = "absent"
	case part.Size == 0:
		why = "empty"
	case part.Offset == 0:
		why = "absent (offset 0)"
	case part.Size < 0:
		why = fmt.Sprintf("negative size %d", part.Size)
	case part.Offset < 0 || part.Offset >= size:
		why = fmt.Sprintf("offset %#x outside the file's %d bytes", part.Offset, size)
	case part.Offset < hs:
		why = fmt.Sprintf("offset %#x overlaps the %#x-byte table", part.Offset, hs)
	case part.Offset+part.Size > size:
		why = fmt.Sprintf("%#x+%#x runs past the file's %d bytes", part.Offset, part.Size, size)
	}
	if why != "" {
		p.Skipped = append(p.Skipped, Skip{Index: part.Index, Name: part.Name, Reason: why})
		return
	}
	p.Parts = append(p.Parts, part)
}

// coreDataExpected reads core_data's decoded size from core_index+0x8c.
func (p *Parts) coreDataExpected(r io.ReaderAt) {
	var ci, cd *Part
	for i := range p.Parts {
		switch p.Parts[i].Index {
		case dataCoreIndex:
			ci = &p.Parts[i]
		case dataCoreData:
			cd = &p.Parts[i]
		}
	}
	if ci == nil || cd == nil || ci.Size < coreIndexSize+4 {
		return
	}
	var w [4]byte
	if readFullAt(r, w[:], ci.Offset+coreIndexSize) == nil {
		cd.Expected = int64(binary.LittleEndian.Uint32(w[:]))
	}
}

// Overlaps lists pairs of parts whose ranges overlap (they are still shown:
// read-only views of the same bytes), as "a and b" strings for info.
func (p *Parts) Overlaps() []string {
	idx := make([]int, len(p.Parts))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return p.Parts[idx[a]].Offset < p.Parts[idx[b]].Offset })
	var out []string
	for k := 1; k < len(idx); k++ {
		a, b := p.Parts[idx[k-1]], p.Parts[idx[k]]
		if b.Offset < a.Offset+a.Size {
			out = append(out, a.Name+" and "+b.Name)
		}
	}
	return out
}
