// Package isowriter writes ISO 9660 images the way mastering tools do (system
// area, primary volume descriptor, set terminator, both path tables, directory
// records with both-endian fields), with files placed at chosen LBAs and their
// contents written sparsely. It exists for mkdisc; the reader never uses it.
package isowriter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// SectorSize is the ISO 9660 logical block size.
const SectorSize = 2048

// maxExtent is the largest data length a single directory record can carry.
const maxExtent = 1<<32 - 1

// firstFree is the first sector after the system area (0..15), the primary
// volume descriptor (16) and the set terminator (17).
const firstFree = 18

// Chunk is a run of non-zero content inside a file; everything not covered by a
// chunk reads as zero bytes (a hole in the image file).
type Chunk struct {
	Off  int64
	Data []byte
}

// File is one file of the image.
type File struct {
	Path   string // "SYSTEM.CNF", "G/LEVEL0.WAD" (directories are implied)
	LBA    int64  // 0: allocate after the previous file
	Size   int64
	Chunks []Chunk // sorted by Off, non-overlapping, inside Size
}

// Options describe the volume.
type Options struct {
	VolumeID, SystemID string
	// DirLBAs places directories ("" is the root, "G"); missing ones are allocated.
	DirLBAs map[string]int64
	// TotalBlocks is the volume size in blocks; 0 means just past the last file.
	TotalBlocks int64
	// Date is recorded in the volume descriptor and every directory record. The
	// zero value means DefaultDate, so images are deterministic.
	Date time.Time
}

// DefaultDate is the recording date used when Options.Date is zero (the
// game's North American release day).
var DefaultDate = time.Date(2003, time.November, 11, 12, 0, 0, 0, time.UTC)

// ErrLayout is wrapped by every error about the requested layout (bad names,
// overlapping extents, sizes that do not fit).
var ErrLayout = errors.New("isowriter: bad layout")

func layoutErr(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrLayout, fmt.Sprintf(format, a...))
}

type dir struct {
	path     string // "" root, "G", "G/SUB"
	name     string // identifier as recorded ("G"); "" for root
	parent   *dir
	dirs     []*dir
	files    []*file
	lba      int64
	size     int64 // bytes, a whole number of sectors
	number   int   // path table number, 1-based
	fixedLBA bool
}

type file struct {
	f    *File
	name string // identifier without ";1" ("SYSTEM.CNF")
	lba  int64
	idx  int // index in the caller's slice
}

// extent is a run of sectors claimed by something, for the overlap check.
type extent struct {
	start, n int64
	what     string
}

// Write writes the image to w (an *os.File, so holes stay holes) and returns its
// size in bytes.
//
// Only the structures and the chunks are written. When w has a Truncate method
// (an *os.File) it is truncated to 0 first and to the image size at the end, so
// every byte not written is a hole; otherwise the last sector is written as
// zeros to give the output its full length.
func Write(w io.WriterAt, files []File, opt Options) (int64, error) {
	date := opt.Date
	if date.IsZero() {
		date = DefaultDate
	}
	sysID, err := aString("system id", opt.SystemID, 32)
	if err != nil {
		return 0, err
	}
	volID, err := aString("volume id", opt.VolumeID, 32)
	if err != nil {
		return 0, err
	}

	root, dirs, err := buildTree(files)
	if err != nil {
		return 0, err
	}
	for p := range opt.DirLBAs {
		found := false
		for _, d := range dirs {
			if d.path == p {
				found = true
			}
		}
		if !found {
			return 0, layoutErr("DirLBAs names %q, which is not a directory of the image", p)
		}
	}

	// Sizes of directories and path tables.
	for _, d := range dirs {
		d.size = dirSize(d)
	}
	numberDirs(dirs)
	ptSize := pathTableSize(dirs)
	ptSectors := sectors(ptSize)

	var used []extent
	used = append(used,
		extent{0, 16, "system area"},
		extent{16, 1, "primary volume descriptor"},
		extent{17, 1, "volume descriptor set terminator"})
	lPT := int64(firstFree)
	mPT := lPT + ptSectors
	used = append(used,
		extent{lPT, ptSectors, "L path table"},
		extent{mPT, ptSectors, "M path table"})

	// Fixed placements first, then allocation into the gaps.
	for _, d := range dirs {
		if lba, ok := opt.DirLBAs[d.path]; ok {
			if lba <= 0 {
				return 0, layoutErr("directory %q: LBA %d", d.path, lba)
			}
			d.lba, d.fixedLBA = lba, true
			used = append(used, extent{lba, sectors(d.size), "directory /" + d.path})
		}
	}
	var all []*file
	for _, d := range dirs {
		all = append(all, d.files...)
	}
	// Keep the caller's order for allocation ("after the previous file").
	sort.SliceStable(all, func(i, j int) bool { return all[i].idx < all[j].idx })
	for _, fl := range all {
		if fl.f.LBA < 0 {
			return 0, layoutErr("file %q: LBA %d", fl.f.Path, fl.f.LBA)
		}
		if fl.f.LBA > 0 {
			fl.lba = fl.f.LBA
			if fl.f.Size > 0 {
				used = append(used, extent{fl.lba, sectors(fl.f.Size), "file " + fl.f.Path})
			}
		}
	}
	alloc := allocator{used: append([]extent(nil), used...), cursor: mPT + ptSectors}
	for _, d := range dirs {
		if !d.fixedLBA {
			d.lba = alloc.take(sectors(d.size))
			used = append(used, extent{d.lba, sectors(d.size), "directory /" + d.path})
		}
	}
	for _, fl := range all {
		if fl.f.LBA == 0 {
			if fl.f.Size == 0 {
				fl.lba = alloc.cursor
				continue
			}
			fl.lba = alloc.take(sectors(fl.f.Size))
			used = append(used, extent{fl.lba, sectors(fl.f.Size), "file " + fl.f.Path})
		}
	}
	if err := checkOverlaps(used); err != nil {
		return 0, err
	}
	var end int64
	for _, e := range used {
		end = max(end, e.start+e.n)
	}
	for _, fl := range all {
		end = max(end, fl.lba) // zero-size files still need their LBA inside the volume
	}
	total := opt.TotalBlocks
	if total == 0 {
		total = end
	}
	if total < end {
		return 0, layoutErr("TotalBlocks %d is less than the %d blocks the layout uses", total, end)
	}
	if total > maxExtent {
		return 0, layoutErr("TotalBlocks %d does not fit a 32-bit field", total)
	}
	imageSize := total * SectorSize

	if t, ok := w.(interface{ Truncate(int64) error }); ok {
		if err := t.Truncate(0); err != nil {
			return 0, err
		}
	}

	// Volume descriptors.
	pvd := make([]byte, SectorSize)
	pvd[0] = 1
	copy(pvd[1:6], "CD001")
	pvd[6] = 1
	copy(pvd[8:40], sysID)
	copy(pvd[40:72], volID)
	both32(pvd[80:], uint32(total))
	both16(pvd[120:], 1)
	both16(pvd[124:], 1)
	both16(pvd[128:], SectorSize)
	both32(pvd[132:], uint32(ptSize))
	binary.LittleEndian.PutUint32(pvd[140:], uint32(lPT))
	binary.BigEndian.PutUint32(pvd[148:], uint32(mPT))
	putRecord(pvd[156:190], root.lba, root.size, true, []byte{0}, date)
	for _, r := range [][2]int{{190, 128}, {318, 128}, {446, 128}, {574, 128}, {702, 37}, {739, 37}, {776, 37}} {
		fill(pvd[r[0]:r[0]+r[1]], ' ')
	}
	copy(pvd[574:702], "GCFS MKDISC")
	putLongDate(pvd[813:830], date)
	putLongDate(pvd[830:847], date)
	putLongDate(pvd[847:864], time.Time{})
	putLongDate(pvd[864:881], date)
	pvd[881] = 1
	if _, err := w.WriteAt(pvd, 16*SectorSize); err != nil {
		return 0, err
	}
	term := make([]byte, SectorSize)
	term[0] = 255
	copy(term[1:6], "CD001")
	term[6] = 1
	if _, err := w.WriteAt(term, 17*SectorSize); err != nil {
		return 0, err
	}

	// Path tables.
	lt, mt := pathTables(dirs)
	if _, err := w.WriteAt(lt, lPT*SectorSize); err != nil {
		return 0, err
	}
	if _, err := w.WriteAt(mt, mPT*SectorSize); err != nil {
		return 0, err
	}

	// Directories.
	for _, d := range dirs {
		if _, err := w.WriteAt(dirBytes(d, date), d.lba*SectorSize); err != nil {
			return 0, err
		}
	}

	// File contents: chunks only.
	for _, fl := range all {
		base := fl.lba * SectorSize
		for _, c := range fl.f.Chunks {
			if len(c.Data) == 0 {
				continue
			}
			if _, err := w.WriteAt(c.Data, base+c.Off); err != nil {
				return 0, err
			}
		}
	}

	if t, ok := w.(interface{ Truncate(int64) error }); ok {
		if err := t.Truncate(imageSize); err != nil {
			return 0, err
		}
	} else if _, err := w.WriteAt(make([]byte, SectorSize), imageSize-SectorSize); err != nil {
		return 0, err
	}
	return imageSize, nil
}

// buildTree checks every path and returns the root and all directories in
// breadth-first order (root first), each directory's children sorted as ISO
// 9660 requires.
func buildTree(files []File) (*dir, []*dir, error) {
	root := &dir{}
	byPath := map[string]*dir{"": root}
	names := map[string]string{} // full recorded path -> what it is, for duplicates
	for i := range files {
		f := &files[i]
		if f.Size < 0 || f.Size > maxExtent {
			return nil, nil, layoutErr("file %q: size %d does not fit one extent", f.Path, f.Size)
		}
		var prev int64
		for j, c := range f.Chunks {
			if c.Off < prev || c.Off+int64(len(c.Data)) > f.Size {
				return nil, nil, layoutErr("file %q: chunk %d at %d (+%d) is out of order or past the size %d", f.Path, j, c.Off, len(c.Data), f.Size)
			}
			prev = c.Off + int64(len(c.Data))
		}
		parts := strings.Split(strings.TrimPrefix(f.Path, "/"), "/")
		parent := root
		for k, part := range parts {
			last := k == len(parts)-1
			id, err := identifier(part, !last)
			if err != nil {
				return nil, nil, layoutErr("path %q: %v", f.Path, err)
			}
			full := id
			if parent.path != "" {
				full = parent.path + "/" + id
			}
			if last {
				if what, dup := names[full]; dup {
					return nil, nil, layoutErr("path %q: %s already exists", f.Path, what)
				}
				names[full] = "file"
				parent.files = append(parent.files, &file{f: f, name: id, idx: i})
				continue
			}
			d, ok := byPath[full]
			if !ok {
				if what, dup := names[full]; dup {
					return nil, nil, layoutErr("path %q: %s %q already exists", f.Path, what, full)
				}
				names[full] = "directory"
				d = &dir{path: full, name: id, parent: parent}
				byPath[full] = d
				parent.dirs = append(parent.dirs, d)
			}
			parent = d
		}
	}
	var all []*dir
	queue := []*dir{root}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		all = append(all, d)
		sort.Slice(d.dirs, func(i, j int) bool { return isoLess(d.dirs[i].name, d.dirs[j].name) })
		sort.Slice(d.files, func(i, j int) bool { return isoLess(d.files[i].name, d.files[j].name) })
		queue = append(queue, d.dirs...)
	}
	if len(all) > 65535 {
		return nil, nil, layoutErr("%d directories: path table parent numbers are 16-bit", len(all))
	}
	return root, all, nil
}

// identifier upper-cases a name and checks it holds only d-characters (and one
// dot for files), at most 30 characters as ISO 9660 level 2 allows.
func identifier(s string, isDir bool) (string, error) {
	if s == "" || s == "." || s == ".." {
		return "", fmt.Errorf("empty or relative name component %q", s)
	}
	u := strings.ToUpper(s)
	if len(u) > 30 {
		return "", fmt.Errorf("name %q is longer than 30 characters", s)
	}
	dots := 0
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
		case c == '.' && !isDir:
			dots++
		default:
			return "", fmt.Errorf("name %q: character %q is not an ISO 9660 d-character", s, c)
		}
	}
	if dots > 1 {
		return "", fmt.Errorf("name %q has more than one dot", s)
	}
	return u, nil
}

// isoLess orders identifiers as ISO 9660 section 9.3 does: by name, then by
// extension, each padded with spaces.
func isoLess(a, b string) bool {
	an, ae, _ := strings.Cut(a, ".")
	bn, be, _ := strings.Cut(b, ".")
	if c := padCompare(an, bn); c != 0 {
		return c < 0
	}
	return padCompare(ae, be) < 0
}

func padCompare(a, b string) int {
	n := max(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := byte(' '), byte(' ')
		if i < len(a) {
			ca = a[i]
		}
		if i < len(b) {
			cb = b[i]
		}
		if ca != cb {
			return int(ca) - int(cb)
		}
	}
	return 0
}

func recordLen(idLen int) int {
	n := 33 + idLen
	return n + n%2
}

// children returns a directory's records after "." and "..", in order:
// directories and files merged by name.
type child struct {
	id    []byte
	lba   int64
	size  int64
	isDir bool
}

func children(d *dir) []child {
	var cs []child
	for _, s := range d.dirs {
		cs = append(cs, child{[]byte(s.name), s.lba, s.size, true})
	}
	for _, f := range d.files {
		cs = append(cs, child{[]byte(f.name + ";1"), f.lba, f.f.Size, false})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		return isoLess(strings.TrimSuffix(string(cs[i].id), ";1"), strings.TrimSuffix(string(cs[j].id), ";1"))
	})
	return cs
}

func dirSize(d *dir) int64 {
	var secs int64 = 1
	used := 2 * recordLen(1)
	for _, c := range children(d) {
		n := recordLen(len(c.id))
		if used+n > SectorSize {
			secs++
			used = 0
		}
		used += n
	}
	return secs * SectorSize
}

func dirBytes(d *dir, date time.Time) []byte {
	buf := make([]byte, d.size)
	parent := d.parent
	if parent == nil {
		parent = d
	}
	pos := 0
	pos += putRecord(buf[pos:], d.lba, d.size, true, []byte{0}, date)
	pos += putRecord(buf[pos:], parent.lba, parent.size, true, []byte{1}, date)
	for _, c := range children(d) {
		n := recordLen(len(c.id))
		if pos%SectorSize+n > SectorSize {
			pos = (pos/SectorSize + 1) * SectorSize
		}
		pos += putRecord(buf[pos:], c.lba, c.size, c.isDir, c.id, date)
	}
	return buf
}

// putRecord writes one directory record and returns its length.
func putRecord(b []byte, lba, size int64, isDir bool, id []byte, date time.Time) int {
	n := recordLen(len(id))
	b[0] = byte(n)
	b[1] = 0
	both32(b[2:], uint32(lba))
	both32(b[10:], uint32(size))
	putShortDate(b[18:25], date)
	if isDir {
		b[25] = 2
	}
	both16(b[28:], 1)
	b[32] = byte(len(id))
	copy(b[33:], id)
	return n
}

func numberDirs(dirs []*dir) {
	// Path table order: by level, then parent number, then name. Breadth-first
	// order with sorted children gives exactly that.
	for i, d := range dirs {
		d.number = i + 1
	}
}

func pathTableSize(dirs []*dir) int64 {
	var n int64
	for _, d := range dirs {
		idLen := max(len(d.name), 1)
		n += int64(8 + idLen + idLen%2)
	}
	return n
}

func pathTables(dirs []*dir) (l, m []byte) {
	for _, d := range dirs {
		id := []byte(d.name)
		if d.parent == nil {
			id = []byte{0}
		}
		parentNum := 1
		if d.parent != nil {
			parentNum = d.parent.number
		}
		rec := make([]byte, 8+len(id)+len(id)%2)
		rec[0] = byte(len(id))
		copy(rec[8:], id)
		lr := append([]byte(nil), rec...)
		binary.LittleEndian.PutUint32(lr[2:], uint32(d.lba))
		binary.LittleEndian.PutUint16(lr[6:], uint16(parentNum))
		binary.BigEndian.PutUint32(rec[2:], uint32(d.lba))
		binary.BigEndian.PutUint16(rec[6:], uint16(parentNum))
		l = append(l, lr...)
		m = append(m, rec...)
	}
	return l, m
}

type allocator struct {
	used   []extent
	cursor int64
}

// take returns the lowest start at or after the cursor where n sectors fit
// without touching anything already used, and moves the cursor past them.
func (a *allocator) take(n int64) int64 {
	sort.Slice(a.used, func(i, j int) bool { return a.used[i].start < a.used[j].start })
	start := a.cursor
	for _, e := range a.used {
		if e.n == 0 {
			continue
		}
		if e.start+e.n <= start {
			continue
		}
		if e.start >= start+n {
			break
		}
		start = e.start + e.n
	}
	a.used = append(a.used, extent{start, n, ""})
	a.cursor = start + n
	return start
}

func checkOverlaps(used []extent) error {
	var es []extent
	for _, e := range used {
		if e.n > 0 {
			es = append(es, e)
		}
	}
	sort.Slice(es, func(i, j int) bool { return es[i].start < es[j].start })
	// furthest is the earlier extent reaching furthest: any overlap shows against it.
	furthest := 0
	for i := 1; i < len(es); i++ {
		f := es[furthest]
		if f.start+f.n > es[i].start {
			return layoutErr("%s (sectors %d..%d) overlaps %s (sectors %d..%d)",
				es[i].what, es[i].start, es[i].start+es[i].n-1, f.what, f.start, f.start+f.n-1)
		}
		if es[i].start+es[i].n > f.start+f.n {
			furthest = i
		}
	}
	return nil
}

func sectors(n int64) int64 { return (n + SectorSize - 1) / SectorSize }

func both16(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}

func both32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

func fill(b []byte, c byte) {
	for i := range b {
		b[i] = c
	}
}

// aString upper-cases an identifier field and pads it with spaces.
func aString(what, s string, n int) ([]byte, error) {
	u := strings.ToUpper(s)
	if len(u) > n {
		return nil, layoutErr("%s %q is longer than %d characters", what, s, n)
	}
	b := make([]byte, n)
	fill(b, ' ')
	for i := 0; i < len(u); i++ {
		if u[i] < 0x20 || u[i] > 0x7e {
			return nil, layoutErr("%s %q: character %q is not printable ASCII", what, s, u[i])
		}
		b[i] = u[i]
	}
	return b, nil
}

func putShortDate(b []byte, t time.Time) {
	t = t.UTC()
	b[0] = byte(t.Year() - 1900)
	b[1] = byte(t.Month())
	b[2] = byte(t.Day())
	b[3] = byte(t.Hour())
	b[4] = byte(t.Minute())
	b[5] = byte(t.Second())
	b[6] = 0 // GMT offset
}

// putLongDate writes the 17-byte descriptor date; the zero time is "not specified".
func putLongDate(b []byte, t time.Time) {
	if t.IsZero() {
		copy(b, "0000000000000000")
		b[16] = 0
		return
	}
	t = t.UTC()
	copy(b, fmt.Sprintf("%04d%02d%02d%02d%02d%02d%02d", t.Year(), int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond()/10000000))
	b[16] = 0
}
