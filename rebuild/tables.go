package rebuild

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"gcfs/discimg"
	"gcfs/discimg/gameplay"
)

// A table is a file's table of slots in the form it was read: where each
// slot's offset and size fields are, in which unit, and how to read the
// rebuilt file's table again to check that it still reads as it did.
type table struct {
	what string // for messages: "G/LEVEL1.WAD (level-header table)"
	hs   int64  // the table's bytes at the file's start
	// unit: offsets are multiples of it (a sector for containers; for part
	// tables the largest power of two, at most a sector, dividing them all),
	// and a rebuilt slot's room is its bytes rounded up to it.
	unit  int64
	slots []tslot
	// put writes a slot's new offset (and, when sized, its new size) into
	// hdr, or says why a field cannot hold it.
	put func(hdr []byte, index int, off, size int64, sized bool) error
	// reread reads the table of rebuilt content: each shown slot's offset
	// and size by table index.
	reread func(r io.ReaderAt, size int64) (map[int][2]int64, error)
}

type tslot struct {
	index     int
	name      string
	off, size int64
	beyond    bool // a container extent past its file (MPEG's videos in MPEG1.WAD)
}

// Scene records: words 3 and 13 of each 83-word record are the sizes in
// sectors of the extents that start at words 2 (subtitles) and 12
// (moby_load) (DISC-FACTS "What Wrench's unpacker reads").
const (
	sceneSubtitlesStart = 2
	sceneMobyLoadStart  = 12
)

func putU32(hdr []byte, at int, v int64, what string) error {
	if at < 0 || at+4 > len(hdr) {
		return fmt.Errorf("%s: field at %#x lies outside the %#x-byte table", what, at, len(hdr))
	}
	if v < 0 || v > math.MaxInt32 {
		return fmt.Errorf("%s: %d does not fit the field at %#x (a 32-bit signed value)", what, v, at)
	}
	binary.LittleEndian.PutUint32(hdr[at:], uint32(v))
	return nil
}

func sectorsOf(n int64) int64 { return (n + discimg.SectorSize - 1) / discimg.SectorSize }

// containerTable is a G/*.WAD's table as it was read.
func containerTable(path string, c *discimg.Container) (*table, error) {
	tb := &table{what: fmt.Sprintf("%s (%s table)", path, c.Reading), hs: c.HeaderSize, unit: discimg.SectorSize}
	for _, x := range c.Extents {
		tb.slots = append(tb.slots, tslot{index: x.Index, name: x.Name, off: x.Offset, size: x.Size, beyond: x.Beyond})
	}
	sec := func(off int64) (int64, error) {
		if off%discimg.SectorSize != 0 {
			return 0, fmt.Errorf("%s: offset %#x is not on a sector", tb.what, off)
		}
		return off / discimg.SectorSize, nil
	}
	var put func(hdr []byte, i int, off, size int64, sized bool) error
	switch c.Reading {
	case discimg.ReadingPairsBytes, discimg.ReadingPairsSectors:
		put = func(hdr []byte, i int, off, size int64, sized bool) error {
			s, err := sec(off)
			if err != nil {
				return err
			}
			if err := putU32(hdr, 8+8*i, s, tb.what+" entry "+fmt.Sprint(i)+" start"); err != nil {
				return err
			}
			if !sized {
				return nil
			}
			if c.Reading == discimg.ReadingPairsSectors {
				size = sectorsOf(size)
			}
			return putU32(hdr, 8+8*i+4, size, tb.what+" entry "+fmt.Sprint(i)+" size")
		}
	case discimg.ReadingStartList, discimg.ReadingSceneRecords:
		put = func(hdr []byte, i int, off, size int64, sized bool) error {
			s, err := sec(off)
			if err != nil {
				return err
			}
			if err := putU32(hdr, 8+4*i, s, tb.what+" word "+fmt.Sprint(i)); err != nil {
				return err
			}
			w := i % discimg.SceneStartsPerScene
			if sized && c.Reading == discimg.ReadingSceneRecords && (w == sceneSubtitlesStart || w == sceneMobyLoadStart) {
				return putU32(hdr, 8+4*(i+1), sectorsOf(size), tb.what+" size word "+fmt.Sprint(i+1))
			}
			return nil
		}
	case discimg.ReadingLevel:
		put = func(hdr []byte, i int, off, size int64, sized bool) error {
			s, err := sec(off)
			if err != nil {
				return err
			}
			if err := putU32(hdr, 0x10+8*i, s, tb.what+" "+discimg.LevelLumpName(i)+" offset"); err != nil {
				return err
			}
			if !sized {
				return nil
			}
			return putU32(hdr, 0x14+8*i, sectorsOf(size), tb.what+" "+discimg.LevelLumpName(i)+" size")
		}
	default:
		return nil, fmt.Errorf("%s: no writer for a %q table", path, c.Reading)
	}
	tb.put = put
	name := c.Name
	tb.reread = func(r io.ReaderAt, size int64) (map[int][2]int64, error) {
		c2, err := discimg.ReadContainer(name, r, size)
		if err != nil {
			return nil, err
		}
		if c2.Reading != c.Reading {
			return nil, fmt.Errorf("the rebuilt table reads as %s, not %s", c2.Reading, c.Reading)
		}
		m := map[int][2]int64{}
		for _, x := range c2.Extents {
			m[x.Index] = [2]int64{x.Offset, x.Size}
		}
		return m, nil
	}
	return tb, nil
}

// partsTable is a part table (data lump, chunk lump, irx bundle, texlist)
// as it was read.
func partsTable(path string, p *discimg.Parts) (*table, error) {
	tb := &table{what: fmt.Sprintf("%s (%s table)", path, p.Layout), hs: p.HeaderSize, unit: discimg.SectorSize}
	for _, x := range p.Parts {
		tb.slots = append(tb.slots, tslot{index: x.Index, name: x.Name, off: x.Offset, size: x.Size})
		for tb.unit > 1 && x.Offset%tb.unit != 0 {
			tb.unit /= 2
		}
	}
	switch p.Layout {
	case discimg.PartsDataLump, discimg.PartsIRX:
		tb.put = func(hdr []byte, i int, off, size int64, sized bool) error {
			if err := putU32(hdr, 8*i, off, tb.what+" "+partName(p, i)+" offset"); err != nil {
				return err
			}
			if !sized {
				return nil
			}
			return putU32(hdr, 8*i+4, size, tb.what+" "+partName(p, i)+" size")
		}
	case discimg.PartsChunk:
		tb.put = func(hdr []byte, i int, off, size int64, sized bool) error {
			return putU32(hdr, 4*i, off, tb.what+" "+partName(p, i)+" offset")
		}
	case discimg.PartsItemList:
		tb.put = func(hdr []byte, i int, off, size int64, sized bool) error {
			return putU32(hdr, 4+4*i, off, tb.what+" item "+fmt.Sprint(i)+" offset")
		}
	case discimg.PartsGameplay:
		// 39 offsets, each block running to the next greater one (LEVEL-CORE
		// §3.1): only offsets are written, and package gameplay reads them
		// back as gameplay.d/ was made.
		tb.put = func(hdr []byte, i int, off, size int64, sized bool) error {
			return putU32(hdr, 4*i, off, tb.what+" "+partName(p, i)+" offset")
		}
		tb.reread = func(r io.ReaderAt, size int64) (map[int][2]int64, error) {
			var hdr [gameplay.HeaderSize]byte
			if size >= gameplay.HeaderSize {
				if _, err := r.ReadAt(hdr[:], 0); err != nil && !errors.Is(err, io.EOF) {
					return nil, err
				}
			}
			_, blocks, _, err := gameplay.HeaderBlocks(hdr[:], size)
			if err != nil {
				return nil, err
			}
			m := map[int][2]int64{}
			for _, b := range blocks {
				m[b.Slot] = [2]int64{b.Offset, b.Size}
			}
			return m, nil
		}
		return tb, nil
	default:
		return nil, fmt.Errorf("%s: no writer for a %q part table", path, p.Layout)
	}
	layout := p.Layout
	tb.reread = func(r io.ReaderAt, size int64) (map[int][2]int64, error) {
		p2, err := discimg.ReadParts(layout, r, size)
		if err != nil {
			return nil, err
		}
		m := map[int][2]int64{}
		for _, x := range p2.Parts {
			m[x.Index] = [2]int64{x.Offset, x.Size}
		}
		return m, nil
	}
	return tb, nil
}

func partName(p *discimg.Parts, i int) string {
	for _, x := range p.Parts {
		if x.Index == i {
			return x.Name
		}
	}
	return fmt.Sprint("slot ", i)
}

// ceilTo rounds d up to a multiple of u (toward +inf for negative d too).
func ceilTo(d, u int64) int64 {
	q := d / u
	if q*u < d {
		q++
	}
	return q * u
}

// span is one distinct range of a table: slots with equal ranges (a start
// list's equal starts) are one range shown under each index.
type span struct {
	off, size int64
	slots     []tslot
	edit      *rope
	newOff    int64
}

// relayout rebuilds a file of a table: every edited slot takes its new
// bytes, rounded up to the table's unit with zeros; what follows it moves by
// the change (so a start list's extents keep their neighbours and a pair
// table's extents keep their order); every other byte (the header's
// untouched fields, the gaps between slots, unedited slots) is copied. The
// table is patched in its own form and read again: it must show every slot
// it showed, at its new place, unedited ones at their old size and edited
// ones at their new one (plus at most the unit's padding). It returns the
// new content, the header it wrote and each edited slot's shown size.
//
// roomUnit (a multiple of the table's unit) is what every move is a multiple
// of: a sector for a lump of whole sectors inside a container, so that the
// lump grows by whole sectors and the part that runs to its end keeps its
// size (the container shows the lump in whole sectors).
func relayout(tb *table, orig *rope, img io.ReaderAt, edits map[int]*rope, roomUnit int64) (*rope, []byte, map[int]int64, error) {
	if roomUnit < tb.unit || roomUnit%tb.unit != 0 {
		roomUnit = tb.unit
	}
	size := orig.Len()
	byRange := map[[2]int64]*span{}
	var spans []*span
	for _, s := range tb.slots {
		if s.beyond {
			if edits[s.index] != nil {
				return nil, nil, nil, fmt.Errorf("%s: %s lies past the container, in the file behind it: editing it is not supported", tb.what, s.name)
			}
			continue
		}
		k := [2]int64{s.off, s.size}
		sp := byRange[k]
		if sp == nil {
			sp = &span{off: s.off, size: s.size}
			byRange[k] = sp
			spans = append(spans, sp)
		}
		sp.slots = append(sp.slots, s)
	}
	for _, sp := range spans {
		var by string
		for _, s := range sp.slots {
			if e := edits[s.index]; e != nil {
				if sp.edit != nil {
					return nil, nil, nil, fmt.Errorf("%s: %s and %s are the same bytes, edited twice: keep one", tb.what, by, s.name)
				}
				sp.edit, by = e, s.name
			}
		}
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].off < spans[j].off })
	for i, sp := range spans {
		if sp.off < tb.hs {
			return nil, nil, nil, fmt.Errorf("%s: %s starts inside the table", tb.what, sp.slots[0].name)
		}
		if i > 0 && sp.off < spans[i-1].off+spans[i-1].size {
			return nil, nil, nil, fmt.Errorf("%s: %s and %s overlap: a file whose parts overlap cannot be rebuilt", tb.what, spans[i-1].slots[0].name, sp.slots[0].name)
		}
		if sp.off%tb.unit != 0 {
			return nil, nil, nil, fmt.Errorf("%s: %s at %#x is not on the table's %d-byte unit", tb.what, sp.slots[0].name, sp.off, tb.unit)
		}
	}
	hdrRope := &rope{}
	hdrRope.sub(orig, 0, tb.hs)
	hdr, err := hdrRope.materialize(img)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", tb.what, err)
	}
	hdr = append([]byte(nil), hdr...)
	out := &rope{}
	out.bytes(hdr) // patched in place below
	first := size
	if len(spans) > 0 {
		first = spans[0].off
	}
	out.sub(orig, tb.hs, first-tb.hs)
	var shift int64
	for i, sp := range spans {
		sp.newOff = sp.off + shift
		gapEnd := size
		if i+1 < len(spans) {
			gapEnd = spans[i+1].off
		}
		if sp.edit == nil {
			out.sub(orig, sp.off, gapEnd-sp.off)
			continue
		}
		n := sp.edit.Len()
		out.append(sp.edit)
		end := sp.off + sp.size
		if i+1 == len(spans) && end >= size {
			// The last slot runs to the file's end: so does the new one.
			shift += n - (size - sp.off)
			continue
		}
		room := min((end+tb.unit-1)/tb.unit*tb.unit, gapEnd) // the slot and its padding
		oldRoom := room - sp.off
		newRoom := oldRoom + ceilTo((n+tb.unit-1)/tb.unit*tb.unit-oldRoom, roomUnit)
		out.zeros(newRoom - n)
		out.sub(orig, room, gapEnd-room)
		shift += newRoom - oldRoom
	}
	newSize := out.Len()
	for _, sp := range spans {
		for _, s := range sp.slots {
			sized := sp.edit != nil
			sz := s.size
			if sized {
				sz = sp.edit.Len()
			}
			if sp.newOff == sp.off && !sized {
				continue
			}
			if err := tb.put(hdr, s.index, sp.newOff, sz, sized); err != nil {
				return nil, nil, nil, err
			}
		}
	}
	got, err := tb.reread(newRopeReader(out, img), newSize)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s: the rebuilt table does not read: %w", tb.what, err)
	}
	shown := map[int]int64{}
	want := 0
	for _, sp := range spans {
		for _, s := range sp.slots {
			want++
			g, ok := got[s.index]
			switch {
			case !ok:
				return nil, nil, nil, fmt.Errorf("%s: rebuilt, the table no longer shows %s", tb.what, s.name)
			case g[0] != sp.newOff:
				return nil, nil, nil, fmt.Errorf("%s: rebuilt, %s reads at %#x, not %#x", tb.what, s.name, g[0], sp.newOff)
			case sp.edit == nil && g[1] != s.size:
				return nil, nil, nil, fmt.Errorf("%s: rebuilt, %s reads as %d bytes, not %d", tb.what, s.name, g[1], s.size)
			case sp.edit != nil && (g[1] < sp.edit.Len() || g[1] >= sp.edit.Len()+roomUnit):
				return nil, nil, nil, fmt.Errorf("%s: rebuilt, %s reads as %d bytes, not its new %d", tb.what, s.name, g[1], sp.edit.Len())
			}
			if sp.edit != nil {
				shown[s.index] = g[1]
			}
		}
	}
	for _, s := range tb.slots {
		if s.beyond {
			delete(got, s.index)
		}
	}
	if len(got) > want {
		var extra []string
		for i := range got {
			found := false
			for _, s := range tb.slots {
				found = found || s.index == i
			}
			if !found {
				extra = append(extra, fmt.Sprint(i))
			}
		}
		sort.Strings(extra)
		return nil, nil, nil, fmt.Errorf("%s: rebuilt, the table shows entries it did not (%s): a value that was past the file now lies inside it", tb.what, strings.Join(extra, ", "))
	}
	return out, hdr, shown, nil
}
