// Package discimg owns access to a disc image: ISO 9660, disc identification,
// the G/*.WAD container tables and level headers. It knows nothing of FUSE.
package discimg

import (
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
)

// Reading names how a container's table was read (DISC-FACTS "Size units").
type Reading string

const (
	ReadingPairsBytes   Reading = "pairs-bytes"
	ReadingPairsSectors Reading = "pairs-sectors"
	ReadingStartList    Reading = "start-list"
	ReadingLevel        Reading = "level-header" // the typed LEVEL header
	// ReadingSceneRecords is a SCENE<n> start list read as 15 records of 83
	// words, words 3 and 13 of each sizes in sectors (DISC-FACTS).
	ReadingSceneRecords Reading = "scene-records"
)

// Shape is the form a reading gives a table, whatever the unit of its sizes:
// names follow the shape (SPEC "Named slots in every family"), since sources
// disagree on units (note 003 measured byte sizes in tables Wrench types in
// sectors).
type Shape string

const (
	ShapePairs        Shape = "pairs"         // {start sector, size} entries, sizes in bytes or sectors
	ShapeStartList    Shape = "start list"    // bare start sectors
	ShapeSceneRecords Shape = "scene records" // 83-word SCENE<n> records
	ShapeLevel        Shape = "level header"
)

// Shape is the reading's table shape.
func (r Reading) Shape() Shape {
	switch r {
	case ReadingPairsBytes, ReadingPairsSectors:
		return ShapePairs
	case ReadingStartList:
		return ShapeStartList
	case ReadingSceneRecords:
		return ShapeSceneRecords
	case ReadingLevel:
		return ShapeLevel
	}
	return Shape(r)
}

// Unit is what a pair reading's size fields count ("bytes", "sectors"); ""
// for the other readings.
func (r Reading) Unit() string {
	switch r {
	case ReadingPairsBytes:
		return "bytes"
	case ReadingPairsSectors:
		return "sectors"
	}
	return ""
}

// Extent is one entry of a container's table that is shown in the tree.
type Extent struct {
	Index  int    // table index
	Name   string // name in the tree: "gameplay", "armor0_mesh", "000", "scene00/05"
	Offset int64  // byte offset relative to the container's first byte
	Size   int64  // bytes (clamped to the container for the tail overrun)
	// Beyond: the extent lies past the container's file, in the gap-free run
	// of files behind it (ReadContainerIn's limit); it reads from the image.
	Beyond bool
	// Layout is what the extent's content holds (its NAME.d/ parts).
	Layout PartLayout
}

// Candidate is one way of reading a table, kept (winning or not) so that
// `gcfs info` can say which reading won and what the others covered.
type Candidate struct {
	Reading    Reading
	Consistent bool
	Reason     string // why the reading is not consistent; "" when it is
	Coverage   int64  // whole sectors touched by its valid extents
	Entries    int    // table entries in this reading
	Valid      int    // entries that would be shown
	Unused     int    // zero-size entries (zero values in a start list)
	Sentinels  int    // entries that run past the container's end (and past the run behind it)
	Invalid    int    // other non-zero entries left out (inside the header, negative length, ...)
	Beyond     int    // valid entries past the container's file, in the run behind it
}

// Container is a G/*.WAD whose table could be read.
type Container struct {
	Name       string // the name passed to ReadContainer
	Family     string // "LEVEL", "AUDIO", "SCENE", "MISC", ... by header size
	PerLevel   bool   // LEVEL<n>, AUDIO<n> (0x1018) and SCENE<n> (0x137c) families
	HeaderSize int64
	Size       int64 // container bytes, as given to ReadContainer
	Reading    Reading
	Coverage   int64 // sectors touched by the valid extents of the winning reading
	Extents    []Extent
	// Skipped counts the table entries left out of Extents: zero-size entries
	// (Unused), entries that run past the container (Sentinels) and other
	// invalid entries (negative fields, starting inside the header, ...).
	Skipped    int
	Unused     int
	Sentinels  int
	Candidates []Candidate // every reading tried, in preference order; the winner is among them
	Level      *LevelHeader
	// Documented is the family's published reading ("" when none is
	// published); Named says the winner has its shape (pairs in either unit,
	// a start list, scene records), so slots have their names.
	Documented Reading
	Named      bool
	Header     []byte // the container's own header bytes
	// Preferred says why a tiling pair reading was taken over a start list
	// that covers more ("" when coverage alone decided).
	Preferred string
	Beyond    int // extents shown past the container's file
}

// ErrNotContainer: the file's first word is no known header size (MPEG1.WAD,
// MPEG2.WAD, anything unknown); the file is plain data, not a damaged container.
var ErrNotContainer = errors.New("not an indexed container")

// ErrNoReading: the header size names a family but the table reads in no
// consistent way. It wraps ErrFormat.
var ErrNoReading = fmt.Errorf("%w: table reads in no consistent way", ErrFormat)

// ContainerError says why a container's table cannot be read. ReadContainer
// only sees the container's own bytes, so Offset is relative to the
// container's first byte; callers that know where the container lies in the
// image add that (see AtImage). Err is ErrNotContainer, ErrNoReading,
// ErrFormat or the error of the underlying reader.
type ContainerError struct {
	Container string // the container's name as given to ReadContainer
	Offset    int64  // byte offset relative to the container's first byte
	Reason    string
	Err       error
}

func (e *ContainerError) Error() string {
	return fmt.Sprintf("container %s at offset %#x: %s", e.Container, e.Offset, e.Reason)
}

func (e *ContainerError) Unwrap() error { return e.Err }

// AtImage restates the error with an image offset, given the byte offset of the
// container's first byte in the image.
func (e *ContainerError) AtImage(base int64) *FormatError {
	return &FormatError{What: "container " + e.Container + " table", Offset: base + e.Offset, Reason: e.Reason}
}

// OtherUnit says the slots are named though the table measured in the unit
// its family is not documented in (pairs in bytes where Wrench types sectors,
// or the reverse).
func (c *Container) OtherUnit() bool {
	return c.Named && c.Reading != c.Documented && c.Reading.Unit() != "" && c.Documented.Unit() != ""
}

// NamesReason says, for `gcfs info`, whether the slots have their documented
// names and why; "" for a family with no published layout.
func (c *Container) NamesReason() string {
	d := c.Documented
	switch {
	case d == "":
		return ""
	case c.Named && c.Reading == d:
		return "documented slot names (the " + string(d) + " reading won)"
	case c.OtherUnit():
		return "documented slot names: the table measured as " + string(c.Reading) + " (sizes in " + c.Reading.Unit() +
			"), not the documented " + string(d) + " (sizes in " + d.Unit() + "); names follow the table's shape, " +
			string(ShapePairs) + ", whatever the unit"
	case c.Named:
		return "documented slot names (the " + string(c.Reading) + " reading has the documented " + string(d.Shape()) + " shape)"
	}
	return "table indices: measurement chose " + string(c.Reading) + " (a " + string(c.Reading.Shape()) +
		" table), not the documented " + string(d) + " (a " + string(d.Shape()) + " table): the documented names do not apply to another shape"
}

// maxHeaderSize bounds the table read before anything is allocated; the largest
// known header (HUD) is 0x1870.
const maxHeaderSize = 64 << 10

// tailOverrun is how far past the file a last extent's sector-rounded end may
// run and still be shown (clamped to the file).
const tailOverrun = SectorSize - 1

// family is what a header size says about a container.
type family struct {
	name     string
	perLevel bool
	// layout is the documented table (nil: none published).
	layout *tableLayout
	// sceneStarts: a SCENE<n> table, read as scene records or grouped in 83s.
	sceneStarts bool
}

var families = map[int64]family{
	0x40:   {name: "MISC", layout: miscLayout},
	0x60:   {name: "LEVEL", perLevel: true},
	0xf8:   {name: "ARMOR", layout: armorLayout},
	0x170:  {name: "SCENE"},
	0x328:  {name: "MPEG", layout: mpegLayout},
	0x3c8:  {name: "GADGET"},
	0xa48:  {name: "BONUS", layout: bonusLayout},
	0xba8:  {name: "SPACE"},
	0x1018: {name: "AUDIO", perLevel: true, layout: audioNLayout},
	0x137c: {name: "SCENE", perLevel: true, sceneStarts: true},
	0x1800: {name: "AUDIO", layout: audioLayout},
	0x1870: {name: "HUD", layout: hudLayout},
}

// ReadContainer reads the table of a container of size bytes whose bytes are r
// (offset 0 = container's first byte). name is the file name ("LEVEL21.WAD"),
// used for messages. An error means the file stays plain; it is a
// *ContainerError whose offsets are relative to the container (the caller adds
// the container's image offset), wrapping ErrNotContainer for a file with no
// known header size, ErrNoReading (an ErrFormat) for a table that reads in no
// consistent way, ErrFormat for a header past the end, or the reader's error.
//
// The family comes from the header size. LEVEL's typed header is read as is.
// Every other table is read by measurement (DISC-FACTS "G/*.WAD containers"),
// as pairs with byte sizes, as pairs with sector sizes (both only when the
// table is a whole number of pairs) and as a flat list of start sectors:
//   - zero-size entries (zero starts) are unused; an entry is shown when it
//     starts at or after the header's end and ends inside the file, or at most
//     2,047 bytes past it (then clamped); one past the file is a sentinel;
//   - a start runs to the next different start inside the file in table
//     order (the last to the file's end); equal starts are one extent, shown
//     under each index; a start whose next start lies before it is invalid;
//   - a reading is consistent when its shown extents inside the container do
//     not overlap (identical extents are one; extents past its end, in the
//     run behind it, are listed each on its own and never make a reading
//     inconsistent, even where they overlap), when, if it is a start list, at most 5% of its
//     non-zero values are not valid starts (sentinels after its last start in
//     the file, the trailing sentinels the notes report, are not counted), and
//     when it shows something, unless the container has no sector after its
//     header (the retail SCENE21.WAD is such a header alone);
//   - the consistent reading touching the most sectors wins, ties going to
//     pairs-bytes, then pairs-sectors, then the start list.
//
// Names: a reading of the shape the family is documented in (pairs in either
// unit for MISC, ARMOR, BONUS, HUD, MPEG and AUDIO<n>; a start list for the
// global AUDIO; scene records for SCENE<n>) uses SPEC's names (numeric past
// them), a SCENE<n> plain start list "sceneGG/EE" (83 per group), everything
// else the table index zero-padded to the widest index, at least 3 digits.
func ReadContainer(name string, r io.ReaderAt, size int64) (*Container, error) {
	return ReadContainerIn(name, r, size, size)
}

// ReadContainerIn is ReadContainer for a container followed on the disc by a
// gap-free run of plain files: r holds limit bytes (the container and the
// run), and a table entry past the container's file but inside the run is a
// real extent (Beyond), not a sentinel (SPEC "Extents beyond a container's
// end").
func ReadContainerIn(name string, r io.ReaderAt, size, limit int64) (*Container, error) {
	limit = max(limit, size)
	fail := func(off int64, err error, format string, args ...any) (*Container, error) {
		return nil, &ContainerError{Container: name, Offset: off, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	if size < 8 {
		return fail(0, ErrNotContainer, "%d bytes, shorter than a container header", size)
	}
	var word [8]byte
	if err := readFullAt(r, word[:], 0); err != nil {
		return fail(0, err, "reading the header: %v", err)
	}
	hs := int64(binary.LittleEndian.Uint32(word[0:]))
	fam, ok := families[hs]
	if !ok || hs > maxHeaderSize {
		return fail(0, ErrNotContainer, "first word %#x is no known header size", hs)
	}
	if hs > size {
		return fail(0, ErrFormat, "header size %#x runs past the container's end (%d bytes)", hs, size)
	}
	hdr := make([]byte, hs) // hs is one of the family sizes, at most maxHeaderSize
	if err := readFullAt(r, hdr, 0); err != nil {
		return fail(0, err, "reading the %#x-byte header: %v", hs, err)
	}
	c := &Container{Name: name, Family: fam.name, PerLevel: fam.perLevel, HeaderSize: hs, Size: size, Header: hdr, Documented: fam.documented()}
	if fam.name == "LEVEL" {
		readLevel(c, hdr)
		return c, nil
	}

	table := hdr[8:]
	var cands []reading
	if len(table)%8 == 0 {
		cands = append(cands, readPairs(table, hs, size, limit, 1, ReadingPairsBytes))
		cands = append(cands, readPairs(table, hs, size, limit, SectorSize, ReadingPairsSectors))
	}
	if len(table)%4 == 0 {
		if fam.sceneStarts && len(table) == 4*SceneStarts {
			cands = append(cands, readSceneRecords(table, hs, size))
		}
		cands = append(cands, readStarts(table, hs, size, nil))
	}
	best := -1
	for i := range cands {
		cands[i].evaluate(size, roomy(hs, size))
		c.Candidates = append(c.Candidates, cands[i].Candidate)
		if cands[i].Consistent && (best < 0 || cands[i].Coverage > cands[best].Coverage) {
			best = i
		}
	}
	// A start list sized by the next greater start never overlaps and covers
	// everything after its first start, so a table of sector pairs whose
	// sizes are small sector numbers also reads as a consistent start list
	// covering as much or more: its coverage proves nothing against pairs.
	// A consistent pair reading whose extents tile the file from the header
	// on (each starting in the sector where the one before it ends) is
	// structure no start list shows by chance: it wins over a start list.
	if best >= 0 && cands[best].startList {
		for i := range cands {
			if !cands[i].startList && cands[i].Consistent && cands[i].tiled {
				c.Preferred = fmt.Sprintf("%s covers %d sectors, %s %d; %s tiles the file, which no start list does by chance: it is taken",
					cands[best].Reading, cands[best].Coverage, cands[i].Reading, cands[i].Coverage, cands[i].Reading)
				best = i
				break
			}
		}
	}
	if best < 0 {
		why := "no candidate reading"
		if len(cands) > 0 {
			why = ""
			for _, k := range cands {
				why += fmt.Sprintf("%s: %s; ", k.Reading, k.Reason)
			}
			why = why[:len(why)-2]
		}
		return nil, &ContainerError{Container: name, Offset: 8, Reason: "no consistent reading of the " + fam.name + " table (" + why + ")", Err: ErrNoReading}
	}
	w := &cands[best]
	c.Reading = w.Reading
	c.Coverage = w.Coverage
	c.Unused = w.Unused
	c.Sentinels = w.Sentinels
	c.Skipped = w.Unused + w.Sentinels + w.Invalid
	c.Named = c.Documented != "" && w.Reading.Shape() == c.Documented.Shape()
	// All names go into one buffer, then one string: a 1,534-entry table
	// costs one allocation for its names, not 1,534.
	width := numericWidth(len(w.slots))
	buf := make([]byte, 0, w.Valid*(width+1))
	bounds := make([]int, 0, w.Valid+1)
	bounds = append(bounds, 0)
	layouts := make([]PartLayout, 0, w.Valid)
	for i, s := range w.slots {
		if s.state == slotShown {
			var l PartLayout
			buf, l = fam.appendName(buf, w.Reading, i, width)
			bounds = append(bounds, len(buf))
			layouts = append(layouts, l)
		}
	}
	all := string(buf)
	c.Extents = make([]Extent, 0, w.Valid)
	for i, s := range w.slots {
		if s.state == slotShown {
			j := len(c.Extents)
			beyond := s.end > size
			if beyond {
				c.Beyond++
			}
			c.Extents = append(c.Extents, Extent{Index: i, Name: all[bounds[j]:bounds[j+1]], Offset: s.off, Size: s.end - s.off,
				Beyond: beyond, Layout: layouts[j]})
		}
	}
	return c, nil
}

// roomy says a container of size bytes has a sector after its hs-byte header.
func roomy(hs, size int64) bool {
	return size > (hs+SectorSize-1)/SectorSize*SectorSize
}

// readFullAt fills buf from r at off; a short read is io.ErrUnexpectedEOF.
func readFullAt(r io.ReaderAt, buf []byte, off int64) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

type slotState uint8

const (
	slotShown slotState = iota
	slotUnused
	slotSentinel
	slotInvalid
	slotSizeWord // a size word of a scene record: no entry of its own
)

// slot is one table entry under one reading: its byte range (end clamped to
// the container) and whether it is shown.
type slot struct {
	off, end int64
	state    slotState
}

// reading is a Candidate with its entries.
type reading struct {
	Candidate
	slots []slot
	// startList: the share of non-zero values that are not valid starts is bounded.
	startList bool
	// trailing counts the start list's sentinels that come after its last
	// start inside the file (in table order): the trailing sentinels the notes
	// report, which say nothing against the reading.
	trailing int
	// inconsistent: the reading was found inconsistent before evaluate
	// (Reason says why).
	inconsistent bool
	// tiled: the shown extents tile the file from the header's end, each
	// starting in the sector where the one before it ends.
	tiled bool
	hs    int64 // the container's header size
}

// classify decides a pair entry's fate: unused, inside the header, past the
// container (the tail overrun allowed and clamped), or shown.
func classify(off, length, hs, size int64) slot { return classifyIn(off, length, hs, size, size) }

// classifyIn is classify for a container followed by a run of plain files up
// to limit: an entry that runs past the file (beyond the tail overrun) but
// ends inside the run is shown as it is, reading the run's bytes.
func classifyIn(off, length, hs, size, limit int64) slot {
	if length == 0 {
		return slot{state: slotUnused}
	}
	end := off + length // both below 2^44: no overflow
	switch {
	case off < hs:
		return slot{state: slotInvalid}
	case end <= min(size, math.MaxInt64-tailOverrun)+tailOverrun && off < size:
		return slot{off: off, end: min(end, size), state: slotShown}
	case limit > size && end <= limit:
		return slot{off: off, end: end, state: slotShown}
	}
	return slot{state: slotSentinel}
}

// readPairs reads table as {u32 sector, u32 size} entries, size in unit bytes.
func readPairs(table []byte, hs, size, limit, unit int64, rd Reading) reading {
	n := len(table) / 8
	k := reading{Candidate: Candidate{Reading: rd, Entries: n}, slots: make([]slot, n), hs: hs}
	for i := range n {
		sec := int64(binary.LittleEndian.Uint32(table[8*i:]))
		length := int64(binary.LittleEndian.Uint32(table[8*i+4:]))
		k.slots[i] = classifyIn(sec*SectorSize, length*unit, hs, size, limit)
	}
	return k
}

// readStarts reads table as a flat list of u32 start sectors, as Wrench sizes
// them: zero is unused, a start past the file is a sentinel, a start inside
// the header is invalid; every other start runs to the next greater start
// among all the valid starts of the table (in any order), the greatest to
// the file's end, so equal starts share one extent. Words for which skip
// returns true take no part (a scene record's size words).
func readStarts(table []byte, hs, size int64, skip func(i int) bool) reading {
	n := len(table) / 4
	k := reading{Candidate: Candidate{Reading: ReadingStartList, Entries: n}, slots: make([]slot, n), startList: true, hs: hs}
	starts := make([]int64, 0, n)
	lastIn := -1 // table index of the last valid start
	for i := range n {
		if skip != nil && skip(i) {
			k.slots[i] = slot{state: slotSizeWord}
			k.Entries--
			continue
		}
		v := int64(binary.LittleEndian.Uint32(table[4*i:]))
		off := v * SectorSize
		switch {
		case v == 0:
			k.slots[i] = slot{state: slotUnused}
		case off >= size:
			k.slots[i] = slot{state: slotSentinel}
		case off < hs:
			k.slots[i] = slot{state: slotInvalid}
		default:
			k.slots[i] = slot{off: off, state: slotShown}
			starts = append(starts, off)
			lastIn = i
		}
	}
	for i := lastIn + 1; i < n; i++ {
		if k.slots[i].state == slotSentinel {
			k.trailing++
		}
	}
	slices.Sort(starts)
	starts = slices.Compact(starts)
	for i := range k.slots {
		s := &k.slots[i]
		if s.state != slotShown {
			continue
		}
		j, _ := slices.BinarySearch(starts, s.off)
		s.end = size
		if j+1 < len(starts) {
			s.end = starts[j+1]
		}
	}
	return k
}

// readSceneRecords reads a SCENE<n> table as 15 records of 83 words: words 3
// and 13 of each record are the sizes in sectors of the extents starting at
// words 2 (subtitles) and 12 (moby_load); every other word is a start, sized
// as in a start list by the starts alone. The reading is consistent only when
// every record reads so: a size is non-zero exactly when its start is, and
// its extent ends inside the file (the tail overrun allowed) without running
// into the next start.
func readSceneRecords(table []byte, hs, size int64) reading {
	k := readStarts(table, hs, size, isSceneSizeWord)
	k.Reading = ReadingSceneRecords
	word := func(i int) int64 { return int64(binary.LittleEndian.Uint32(table[4*i:])) }
	for rec := 0; rec < SceneStarts/SceneStartsPerScene && k.Reason == ""; rec++ {
		for _, pair := range [2][2]int{{2, sceneSubtitlesSize}, {12, sceneMobyLoadSize}} {
			si, zi := rec*SceneStartsPerScene+pair[0], rec*SceneStartsPerScene+pair[1]
			start, n := word(si), word(zi)
			s := &k.slots[si]
			switch {
			case start == 0 && n == 0:
				continue
			case start == 0 || n == 0:
				k.Reason = fmt.Sprintf("scene %d: word %d is %d but word %d is %d", rec, pair[0], start, pair[1], n)
			case s.state != slotShown:
				// a sentinel or invalid start: counted by the 5% rule
				continue
			case n > (size+SectorSize-1)/SectorSize:
				k.Reason = fmt.Sprintf("scene %d: size word %d (%d sectors) is no size inside the file", rec, pair[1], n)
			default:
				end := s.off + n*SectorSize
				switch {
				case end > s.end && !(s.end == size && end <= size+tailOverrun):
					k.Reason = fmt.Sprintf("scene %d: %d sectors from word %d run past the next start", rec, n, pair[0])
				default:
					s.end = min(end, size)
				}
			}
		}
	}
	if k.Reason != "" {
		k.Consistent = false
		k.inconsistent = true
	}
	return k
}

// evaluate counts the reading's entries, checks that its valid extents inside
// the container (of size bytes) do not overlap (identical extents are one
// extent named twice) and measures the sectors they touch. Extents past the
// container's end, in the run of files behind it, are listed each on its own:
// note 003 calls some of them descriptors of sectors in the adjacent file, and
// they may overlap each other or share bytes, so they take no part in
// deciding whether the reading is consistent (nor whether it tiles the file);
// their sectors still count in its coverage. roomy says the container has at
// least one sector after its header, so that a table can point inside it.
func (k *reading) evaluate(size int64, roomy bool) {
	shown := make([]slot, 0, len(k.slots))  // every shown extent, for coverage
	inside := make([]slot, 0, len(k.slots)) // those inside the container, for consistency
	for _, s := range k.slots {
		switch s.state {
		case slotShown:
			k.Valid++
			shown = append(shown, s)
			if s.end > size {
				k.Beyond++
			} else {
				inside = append(inside, s)
			}
		case slotUnused:
			k.Unused++
		case slotSentinel:
			k.Sentinels++
		case slotInvalid:
			k.Invalid++
		}
	}
	bySpan := func(a, b slot) int { return cmp.Or(cmp.Compare(a.off, b.off), cmp.Compare(a.end, b.end)) }
	same := func(a, b slot) bool { return a.off == b.off && a.end == b.end }
	slices.SortFunc(shown, bySpan)
	shown = slices.CompactFunc(shown, same)
	slices.SortFunc(inside, bySpan)
	inside = slices.CompactFunc(inside, same)
	k.Consistent = !k.inconsistent
	if len(inside) == 0 && k.Entries > k.Unused && roomy && k.Consistent {
		// Every non-zero entry falls outside a container that has room for
		// extents: the reading explains nothing. (An all-zero table reads as
		// an empty one, and so does any table of a header-only container such
		// as the retail SCENE21.WAD, whose one value is a sentinel.)
		k.Consistent = false
		k.Reason = "no entry lies inside the container"
	}
	k.tiled = len(inside) > 0
	for i, s := range inside {
		want := (k.hs + SectorSize - 1) / SectorSize
		if i > 0 {
			want = (inside[i-1].end + SectorSize - 1) / SectorSize
		}
		if s.off/SectorSize != want {
			k.tiled = false
		}
		if i > 0 && s.off < inside[i-1].end && k.Consistent {
			k.Consistent = false
			k.Reason = fmt.Sprintf("extents at %#x and %#x overlap", inside[i-1].off, s.off)
		}
	}
	var coveredTo int64 // end of the sectors counted so far
	for _, s := range shown {
		first, last := s.off/SectorSize, (s.end+SectorSize-1)/SectorSize
		first = max(first, coveredTo)
		if last > first {
			k.Coverage += last - first
			coveredTo = last
		}
	}
	if k.Consistent && k.startList {
		nonZero := k.Entries - k.Unused
		bad := k.Sentinels - k.trailing + k.Invalid
		if bad*20 > nonZero {
			k.Consistent = false
			k.Reason = fmt.Sprintf("%d of %d non-zero values are not valid starts (more than 5%%)", bad, nonZero)
		}
	}
}

// RunLimit is how far past the start of the container file e the bytes its
// table may address reach (SPEC "Extents beyond a container's end"): to the
// end of the gap-free run of plain files behind it in the same directory
// (a file continues the run when it starts at most one padding sector after
// the previous one ends), up to the next indexed container (a file whose first
// word is a known header size), which it never enters; e's own size when no
// plain file follows it. The limit never passes the image's end.
func (im *Image) RunLimit(e *Entry, dir *Entry) int64 {
	if e == nil || dir == nil {
		return 0
	}
	files := make([]*Entry, 0, len(dir.Children))
	for _, c := range dir.Children {
		if c != nil && !c.IsDir && c.Err == nil && c.Size >= 0 {
			files = append(files, c)
		}
	}
	slices.SortFunc(files, func(a, b *Entry) int { return cmp.Compare(a.LBA, b.LBA) })
	limit := e.Size
	end := e.LBA + (e.Size+SectorSize-1)/SectorSize // next free sector
	i := slices.Index(files, e)
	if i < 0 {
		return limit
	}
	for _, f := range files[i+1:] {
		if f.LBA < end || f.LBA > end+1 {
			break // overlapping or a gap: the run ends
		}
		var w [4]byte
		if readFullAt(im.R, w[:], f.Offset()) != nil {
			// A word that cannot be read says nothing of what the file
			// is: the run ends before it rather than taking it in.
			break
		}
		if _, ok := families[int64(binary.LittleEndian.Uint32(w[:]))]; ok && f.Size >= 8 {
			limit = (f.LBA - e.LBA) * SectorSize // up to the next container
			break
		}
		limit = (f.LBA-e.LBA)*SectorSize + f.Size
		end = f.LBA + (f.Size+SectorSize-1)/SectorSize
	}
	return min(limit, max(im.Size-e.Offset(), e.Size))
}
