package discimg

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// RC2.HDR, the table of contents (DISC-FACTS "RC2.HDR"): copies of the global
// containers' headers back to back (MPEG, MISC, HUD, BONUS, AUDIO, SPACE,
// SCENE, GADGET, ARMOR; 0x4ff8 bytes), each with +4 the file's absolute LBA;
// at 0x4ff8 the level table, 27 × {level, audio, scene} S ranges (the LBA of
// the header copy inside RC2.HDR, the file's size in sectors); from 0x5800 a
// 0x3800-byte block per level holding the LEVEL (padded to 0x800), AUDIO<n>
// (to 0x1800) and SCENE<n> headers.

// TOCLevels is the number of levels the table of contents lists.
const TOCLevels = 27

var tocGlobalOrder = [...]struct {
	name string
	size int64
}{{"MPEG", 0x328}, {"MISC", 0x40}, {"HUD", 0x1870}, {"BONUS", 0xa48}, {"AUDIO", 0x1800},
	{"SPACE", 0xba8}, {"SCENE", 0x170}, {"GADGET", 0x3c8}, {"ARMOR", 0xf8}}

const (
	tocLevelTable  = 0x4ff8
	tocLevelBase   = 0x5800
	tocLevelStride = 0x3800
)

// TOCHeader is one header copy in RC2.HDR.
type TOCHeader struct {
	File   string // "MPEG.WAD", "LEVEL3.WAD", "AUDIO3.WAD", "SCENE3.WAD"
	Offset int64  // byte offset of the copy in RC2.HDR
	LBA    int64  // the copy's +4: the file's absolute LBA
	Header []byte // the copy (its +4 as in RC2.HDR)
	Err    string // why the copy cannot be read ("" when it can)
}

// TOCRange is one S range of the level table.
type TOCRange struct{ LBA, Sectors int64 }

// TOCLevel is one level's row of the level table.
type TOCLevel struct {
	Level, Audio, Scene TOCRange
}

// TOC is RC2.HDR read as a table of contents.
type TOC struct {
	Globals []TOCHeader          // in RC2.HDR's order
	Levels  []TOCLevel           // the level table, TOCLevels rows (fewer if RC2.HDR is short)
	Copies  [][3]TOCHeader       // per level: LEVEL, AUDIO, SCENE header copies
	Problem string               // what is wrong with RC2.HDR as a whole ("" when nothing)
	byLBA   map[int64]*TOCHeader // every readable copy by the LBA it names
}

// ReadTOC reads RC2.HDR's size bytes from r. It never fails: what cannot be
// read is reported in the TOC (Problem, each copy's Err), never trusted.
func ReadTOC(r io.ReaderAt, size int64) *TOC {
	t := &TOC{byLBA: map[int64]*TOCHeader{}}
	read := func(off, n int64) ([]byte, error) {
		if off < 0 || n < 0 || off+n > size {
			return nil, fmt.Errorf("%#x bytes at %#x run past RC2.HDR's %d bytes", n, off, size)
		}
		b := make([]byte, n) // n is at most 0x1870 (checked against size)
		if err := readFullAt(r, b, off); err != nil {
			return nil, err
		}
		return b, nil
	}
	copyAt := func(file string, off, want int64) TOCHeader {
		h := TOCHeader{File: file, Offset: off}
		b, err := read(off, want)
		if err != nil {
			h.Err = err.Error()
			return h
		}
		if got := int64(binary.LittleEndian.Uint32(b)); got != want {
			h.Err = fmt.Sprintf("header size %#x at %#x, want %#x", got, off, want)
			return h
		}
		h.Header = b
		h.LBA = int64(binary.LittleEndian.Uint32(b[4:]))
		return h
	}
	at := int64(0)
	for _, g := range tocGlobalOrder {
		h := copyAt(g.name+".WAD", at, g.size)
		t.Globals = append(t.Globals, h)
		at += g.size
	}
	if size < tocLevelTable+TOCLevels*24 {
		t.Problem = fmt.Sprintf("RC2.HDR is %d bytes, too short for the level table at %#x", size, tocLevelTable)
	} else if b, err := read(tocLevelTable, TOCLevels*24); err != nil {
		t.Problem = "level table: " + err.Error()
	} else {
		for n := range TOCLevels {
			rg := func(k int) TOCRange {
				o := n*24 + k*8
				return TOCRange{LBA: int64(int32(binary.LittleEndian.Uint32(b[o:]))), Sectors: int64(int32(binary.LittleEndian.Uint32(b[o+4:])))}
			}
			t.Levels = append(t.Levels, TOCLevel{Level: rg(0), Audio: rg(1), Scene: rg(2)})
		}
	}
	for n := range TOCLevels {
		base := int64(tocLevelBase + n*tocLevelStride)
		if base >= size {
			if t.Problem == "" {
				t.Problem = fmt.Sprintf("RC2.HDR is %d bytes: the level blocks stop before level %d", size, n)
			}
			break
		}
		t.Copies = append(t.Copies, [3]TOCHeader{
			copyAt(fmt.Sprintf("LEVEL%d.WAD", n), base, LevelHeaderSize),
			copyAt(fmt.Sprintf("AUDIO%d.WAD", n), base+0x800, 0x1018),
			copyAt(fmt.Sprintf("SCENE%d.WAD", n), base+0x2000, 0x137c),
		})
	}
	for i := range t.Globals {
		t.index(&t.Globals[i])
	}
	for n := range t.Copies {
		for k := range t.Copies[n] {
			t.index(&t.Copies[n][k])
		}
	}
	return t
}

func (t *TOC) index(h *TOCHeader) {
	if h.Err == "" && h.LBA > 0 {
		if _, dup := t.byLBA[h.LBA]; !dup {
			t.byLBA[h.LBA] = h
		}
	}
}

// Check compares a container with what the table of contents says of it: the
// header copy that names its LBA must equal its own header except at +4, and
// a level's files must have the sizes the level table gives. It returns
// "matches", or where they differ, or "not listed".
func (t *TOC) Check(name string, lba, size int64, header []byte) string {
	if t == nil {
		return "no table of contents"
	}
	h := t.byLBA[lba]
	if h == nil {
		return fmt.Sprintf("not listed (no header copy names LBA %d)", lba)
	}
	var diffs []string
	if !strings.EqualFold(h.File, name) {
		diffs = append(diffs, fmt.Sprintf("the copy naming LBA %d is %s's", lba, h.File))
	}
	if len(h.Header) != len(header) {
		diffs = append(diffs, fmt.Sprintf("copy is %d bytes, header %d", len(h.Header), len(header)))
	} else {
		own := append([]byte(nil), header...)
		cp := append([]byte(nil), h.Header...)
		copy(own[4:8], []byte{0, 0, 0, 0})
		copy(cp[4:8], []byte{0, 0, 0, 0})
		if !bytes.Equal(own, cp) {
			for i := range own {
				if own[i] != cp[i] {
					diffs = append(diffs, fmt.Sprintf("header differs from its RC2.HDR copy (at %#x) first at +%#x", h.Offset, i))
					break
				}
			}
		}
	}
	if n, k, ok := t.levelOf(h); ok && n < len(t.Levels) {
		rg := [3]TOCRange{t.Levels[n].Level, t.Levels[n].Audio, t.Levels[n].Scene}[k]
		if want := (size + SectorSize - 1) / SectorSize; rg.Sectors != want {
			diffs = append(diffs, fmt.Sprintf("level table gives %d sectors, the file has %d", rg.Sectors, want))
		}
	}
	if len(diffs) == 0 {
		return "matches"
	}
	return strings.Join(diffs, "; ")
}

// levelOf finds a per-level copy: level n, part k (0 LEVEL, 1 AUDIO, 2 SCENE).
func (t *TOC) levelOf(h *TOCHeader) (n, k int, ok bool) {
	for n := range t.Copies {
		for k := range t.Copies[n] {
			if &t.Copies[n][k] == h {
				return n, k, true
			}
		}
	}
	return 0, 0, false
}

// LevelTableProblems checks the level table's LBAs, given RC2.HDR's own LBA:
// each row's three ranges must point at that level's header copies inside
// RC2.HDR. It lists every one that does not.
func (t *TOC) LevelTableProblems(hdrLBA int64) []string {
	var out []string
	for n, row := range t.Levels {
		for k, rg := range [3]TOCRange{row.Level, row.Audio, row.Scene} {
			want := hdrLBA + (tocLevelBase+int64(n)*tocLevelStride+[3]int64{0, 0x800, 0x2000}[k])/SectorSize
			if rg.LBA != want {
				out = append(out, fmt.Sprintf("level %d %s: table says LBA %d, its copy lies at LBA %d",
					n, [3]string{"level", "audio", "scene"}[k], rg.LBA, want))
			}
		}
	}
	return out
}
