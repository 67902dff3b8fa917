package discimg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Bounds on what a directory walk may read, whatever the records say. Retail
// has 2 directories and 99 records; real discs have at most tens of thousands.
//
// maxEntries bounds memory, not reading: every listed entry is held twice,
// here and in the tree built on it, about 700 bytes live (Entry, its path,
// the fsnode node and its path), so 1<<16 entries cost some 45 MB of heap
// and a command's peak stays near 100 MB whatever the records (64 MiB of
// records naming one file under as many names peaked at 264 MB RSS with
// 1<<18). Past it, records are counted as lost entries of their directory.
const (
	maxDescriptors = 64       // volume descriptors read before giving up on a terminator
	maxDirBytes    = 16 << 20 // one directory's extent
	maxTreeBytes   = 64 << 20 // all directory extents together
	maxEntries     = 1 << 16  // entries listed in the whole tree
	maxDepth       = 256      // directory nesting
)

// Open reads the volume descriptors and walks the whole directory tree. It fails
// only when the image is not ISO 9660 at all (ErrNotISO) or unreadable; damage
// below the root is reported per entry.
//
// Damage to the root directory record itself is reported on Root.Err (and in
// Problems), with an empty root. Multi-extent files (records with the "not
// final" flag) are joined when their extents are contiguous, as mastering tools
// write them; otherwise the file is listed with its first extent and an Err.
func Open(r io.ReaderAt, size int64) (*Image, error) {
	if size < 17*SectorSize {
		return nil, fmt.Errorf("%w: image is %d bytes, too short for the volume descriptor at sector 16", ErrNotISO, size)
	}
	im := &Image{R: r, Size: size, byPath: map[string]*Entry{}}
	pvd, err := im.readDescriptors()
	if err != nil {
		return nil, err
	}
	rootOff := int64(16*SectorSize + 156)
	if err := im.parseVolume(pvd); err != nil {
		return nil, err
	}
	rec, err := parseRecord(pvd[156:190], rootOff)
	root := &Entry{IsDir: true}
	im.Root = root
	im.byPath[""] = root
	if err != nil {
		im.fail(root, rootRecordErr(err))
		return im, nil
	}
	root.LBA, root.Size = rec.lba, rec.size
	im.Vol.RootLBA = rec.lba
	if rec.err != nil {
		im.fail(root, rootRecordErr(rec.err))
		return im, nil
	}
	w := walker{im: im, buf: make([]byte, SectorSize)}
	if err := w.walk(root, rootOff, nil); err != nil {
		return nil, err
	}
	return im, nil
}

// readDescriptors finds the primary volume descriptor: sector 16 must hold a
// volume descriptor; the set is walked to its terminator (bounded).
func (im *Image) readDescriptors() ([]byte, error) {
	var pvd []byte
	sector := make([]byte, SectorSize)
	terminated := false
	for i := int64(0); i < maxDescriptors; i++ {
		off := (16 + i) * SectorSize
		if off+SectorSize > im.Size {
			break
		}
		if err := readFull(im.R, sector, off); err != nil {
			return nil, fmt.Errorf("reading volume descriptor at image offset %#x: %w", off, err)
		}
		if string(sector[1:6]) != "CD001" {
			if i == 0 {
				return nil, fmt.Errorf("%w: no \"CD001\" volume descriptor at sector 16", ErrNotISO)
			}
			break // UDF's BEA01/NSR02 or garbage: the ISO set ended without a terminator
		}
		if sector[0] == 255 {
			terminated = true
			break
		}
		if sector[0] == 1 && pvd == nil {
			pvd = append([]byte(nil), sector...)
		}
	}
	if pvd == nil {
		return nil, fmt.Errorf("%w: no primary volume descriptor in the descriptor set at sector 16", ErrNotISO)
	}
	if !terminated {
		im.Problems = append(im.Problems, &FormatError{What: "volume descriptor set", Offset: 16 * SectorSize,
			Reason: fmt.Sprintf("no set terminator within %d descriptors", maxDescriptors)})
	}
	return pvd, nil
}

func (im *Image) parseVolume(pvd []byte) error {
	im.Vol.SystemID = trimID(pvd[8:40])
	im.Vol.VolumeID = trimID(pvd[40:72])
	base := int64(16 * SectorSize)
	blocks, ok := both32(pvd[80:88])
	if !ok {
		im.Problems = append(im.Problems, &FormatError{What: "primary volume descriptor", Offset: base + 80,
			Reason: fmt.Sprintf("volume space size little-endian %d differs from big-endian %d", binary.LittleEndian.Uint32(pvd[80:]), binary.BigEndian.Uint32(pvd[84:]))})
	}
	im.Vol.Blocks = int64(blocks)
	bs, ok := both16(pvd[128:132])
	if !ok || bs != SectorSize {
		return &FormatError{What: "primary volume descriptor", Offset: base + 128,
			Reason: fmt.Sprintf("logical block size %d (LE) / %d (BE), only 2048 is supported", binary.LittleEndian.Uint16(pvd[128:]), binary.BigEndian.Uint16(pvd[130:]))}
	}
	im.Vol.BlockSize = int64(bs)
	return nil
}

func trimID(b []byte) string {
	return strings.TrimRight(string(b), " \x00")
}

func both16(b []byte) (uint16, bool) {
	le, be := binary.LittleEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
	return le, le == be
}

func both32(b []byte) (uint32, bool) {
	le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
	return le, le == be
}

var zeroSector [SectorSize]byte

// firstNonZero is the index of b's first non-zero byte, -1 if none.
func firstNonZero(b []byte) int {
	if len(b) <= SectorSize && bytes.Equal(b, zeroSector[:len(b)]) {
		return -1 // the common case, without a byte loop
	}
	for i, c := range b {
		if c != 0 {
			return i
		}
	}
	return -1
}

// readFull reads len(buf) bytes at off; a short read is an error.
func readFull(r io.ReaderAt, buf []byte, off int64) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// record is one parsed directory record.
type record struct {
	length int
	lba    int64
	size   int64
	flags  byte
	id     []byte
	err    error // the record is usable but damaged (LE≠BE): listed with this Err
}

const (
	flagDir         = 1 << 1
	flagAssociated  = 1 << 2 // a companion file (Apple resource fork) of the same name
	flagMultiExtent = 1 << 7
)

// parseRecord reads the record at the start of b (b ends where the record's
// sector ends). An error with a nil record means the rest of the sector cannot
// be framed; with a record, only that record is unusable.
func parseRecord(b []byte, off int64) (*record, error) {
	n := int(b[0])
	if n < 34 {
		return nil, &FormatError{What: "directory record", Offset: off, Reason: fmt.Sprintf("record length %d is less than 34", n)}
	}
	if n > len(b) {
		return nil, &FormatError{What: "directory record", Offset: off, Reason: fmt.Sprintf("record of %d bytes overruns its sector by %d", n, n-len(b))}
	}
	idLen := int(b[32])
	if 33+idLen > n {
		// The record's length is sound, so the records after it still frame.
		return &record{length: n}, &FormatError{What: "directory record", Offset: off, Reason: fmt.Sprintf("name length %d runs past the %d-byte record", idLen, n)}
	}
	rec := &record{length: n, flags: b[25], id: b[33 : 33+idLen]}
	lba, ok1 := both32(b[2:10])
	size, ok2 := both32(b[10:18])
	// An extended attribute record of b[1] blocks precedes the data in the extent.
	rec.lba, rec.size = int64(lba)+int64(b[1]), int64(size)
	switch {
	case !ok1:
		rec.err = &FormatError{What: "directory record", Offset: off + 2, Reason: fmt.Sprintf("extent LBA little-endian %d differs from big-endian %d", lba, binary.BigEndian.Uint32(b[6:]))}
	case !ok2:
		rec.err = &FormatError{What: "directory record", Offset: off + 10, Reason: fmt.Sprintf("data length little-endian %d differs from big-endian %d", size, binary.BigEndian.Uint32(b[14:]))}
	case b[26] != 0 || b[27] != 0:
		rec.err = &FormatError{What: "directory record", Offset: off + 26, Reason: fmt.Sprintf("interleaved extent (unit size %d, gap %d) is not supported", b[26], b[27])}
	}
	return rec, nil
}

// recordName turns an identifier into the listed name: ";1" (any version)
// stripped, and the trailing '.' of a name without extension ("FOO." → "FOO").
func recordName(id []byte) (string, error) {
	s := string(id)
	if i := strings.LastIndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	switch {
	case s == "" || s == "." || s == "..":
		return "", fmt.Errorf("identifier %q names nothing", id)
	case strings.ContainsAny(s, "/\x00"):
		return "", fmt.Errorf("identifier %q holds '/' or NUL", id)
	}
	return s, nil
}

type walker struct {
	im        *Image
	buf       []byte
	treeBytes int64
	entries   int
	visited   map[int64]string // directory extent LBA -> path that listed it
}

func (w *walker) where(e *Entry) string {
	return "/" + e.Path
}

// fail records an entry's error.
func (im *Image) fail(e *Entry, err error) {
	e.Err = err
	im.problem(err)
}

// maxProblems bounds Problems: past it problems are counted in MoreProblems,
// so that an image of a million bad records costs a counter, not a million
// errors (an entry's own Err is kept whatever the count).
const maxProblems = 1000

// problem records one problem of the walk.
func (im *Image) problem(err error) {
	if len(im.Problems) >= maxProblems {
		im.MoreProblems++
		return
	}
	im.Problems = append(im.Problems, err)
}

// rootRecordErr names the root directory in an error about its record.
func rootRecordErr(err error) error {
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.What = "root directory record (in the primary volume descriptor)"
	}
	return err
}

// walk reads directory d's records and its subdirectories. ancestors holds the
// extent LBAs of the directories above d. Records that cannot be listed (a
// sector that cannot be read or framed, a record that names nothing, past
// the entries bound) make d a directory with lost entries (its Err); the
// rest of d, and of the tree, is listed. No error is returned today; the
// signature keeps room for one that must stop the walk.
func (w *walker) walk(d *Entry, recOff int64, ancestors []int64) error {
	im := w.im
	what := "directory " + w.where(d)
	if w.visited == nil {
		w.visited = map[int64]string{}
	}
	for _, a := range ancestors {
		if a == d.LBA {
			im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("directory loop: extent at LBA %d is an ancestor's", d.LBA)})
			return nil
		}
	}
	if p, ok := w.visited[d.LBA]; ok {
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("extent at LBA %d is already listed as %s", d.LBA, p)})
		return nil
	}
	switch {
	case len(ancestors) >= maxDepth:
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("nested deeper than %d directories", maxDepth)})
		return nil
	case d.Size < 2*34:
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("directory of %d bytes cannot hold its \".\" and \"..\" records", d.Size)})
		return nil
	case d.Size > maxDirBytes:
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("directory of %d bytes exceeds the %d-byte bound", d.Size, maxDirBytes)})
		return nil
	case d.Offset()+d.Size > im.Size:
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("extent %#x..%#x ends past the image's end at offset %#x", d.Offset(), d.Offset()+d.Size, im.Size)})
		return nil
	case w.treeBytes+d.Size > maxTreeBytes:
		im.fail(d, &FormatError{What: what, Offset: recOff, Reason: fmt.Sprintf("directories total more than %d bytes; not listed", maxTreeBytes)})
		return nil
	}
	w.visited[d.LBA] = w.where(d)
	w.treeBytes += d.Size

	var subdirs []*Entry
	var subOffs []int64
	names := map[string]bool{}
	lost := lostRecords{im: im}
	nrec := 0          // records framed so far
	var pending *Entry // a multi-extent file still collecting extents
	var pendingEnd, pendingOff int64
	for sec := int64(0); sec*SectorSize < d.Size; sec++ {
		secOff := d.Offset() + sec*SectorSize
		n := min(SectorSize, d.Size-sec*SectorSize)
		b := w.buf[:n]
		if err := readFull(im.R, b, secOff); err != nil {
			// A bad block (a CSO or CHD hunk that fails) loses the records
			// of this sector only; the directory's other sectors, and
			// everything outside it, still list.
			lost.add(&FormatError{What: what, Offset: secOff, Reason: fmt.Sprintf("sector could not be read (%v)", err)})
			continue
		}
		for pos := 0; pos < len(b); {
			off := secOff + int64(pos)
			if b[pos] == 0 {
				// Zero padding to the sector's end; anything after it would be damage.
				if i := firstNonZero(b[pos:]); i >= 0 {
					im.problem(&FormatError{What: what, Offset: off + int64(i), Reason: "non-zero bytes after the sector's zero padding ignored"})
				}
				break
			}
			rec, err := parseRecord(b[pos:], off)
			if err != nil {
				var fe *FormatError
				if errors.As(err, &fe) {
					fe.What = "directory record in " + w.where(d)
				}
				lost.add(err)
				if rec != nil {
					pos += rec.length
					continue
				}
				break // the rest of this sector cannot be framed
			}
			pos += rec.length
			nrec++
			if len(rec.id) == 1 && (rec.id[0] == 0 || rec.id[0] == 1) {
				if nrec <= 2 {
					continue // "." and ".."
				}
				// Past the first two records, a self or parent record
				// names nothing: what it points at is not listed.
				lost.add(&FormatError{What: "directory record in " + w.where(d), Offset: off, Reason: fmt.Sprintf("identifier %#x past the directory's \".\" and \"..\" names nothing; not listed", rec.id[0])})
				continue
			}
			if rec.flags&flagAssociated != 0 {
				continue // not part of the tree; it would collide with its main file's name
			}
			name, nerr := recordName(rec.id)
			if nerr != nil {
				lost.add(&FormatError{What: "directory record in " + w.where(d), Offset: off, Reason: nerr.Error() + "; not listed"})
				continue
			}
			// A continuation of a multi-extent file carries the same name.
			if pending != nil && name == pending.Name && rec.flags&flagDir == 0 {
				if rec.err == nil && pending.Err == nil && rec.lba*SectorSize == pendingEnd {
					pending.Size += rec.size
					pendingEnd = rec.lba*SectorSize + rec.size
				} else if pending.Err == nil {
					im.fail(pending, &FormatError{What: "file /" + pending.Path, Offset: off, Reason: "multi-extent file whose extents are not contiguous; it is listed with its first extent and not served"})
				}
				if rec.flags&flagMultiExtent == 0 {
					w.finishFile(pending, pendingOff)
					pending = nil
				}
				continue
			}
			if pending != nil {
				im.fail(pending, &FormatError{What: "file /" + pending.Path, Offset: off, Reason: "multi-extent file has no final extent"})
				pending = nil
			}
			path := name
			if d.Path != "" {
				path = d.Path + "/" + name
			}
			if names[name] {
				im.problem(&FormatError{What: "directory record of /" + path, Offset: off, Reason: "duplicate name in its directory; not listed"})
				continue
			}
			if w.entries >= maxEntries {
				lost.add(&FormatError{What: "directory record of /" + path, Offset: off, Reason: fmt.Sprintf("tree holds more than %d entries; not listed", maxEntries)})
				continue
			}
			names[name] = true
			w.entries++
			e := &Entry{Name: name, Path: path, IsDir: rec.flags&flagDir != 0, LBA: rec.lba, Size: rec.size}
			d.Children = append(d.Children, e)
			im.byPath[path] = e
			if rec.err != nil {
				var fe *FormatError
				if errors.As(rec.err, &fe) {
					fe.What = "directory record of /" + path
				}
				im.fail(e, rec.err)
				continue
			}
			if e.IsDir {
				subdirs = append(subdirs, e)
				subOffs = append(subOffs, off)
				continue
			}
			if rec.flags&flagMultiExtent != 0 {
				pending, pendingEnd, pendingOff = e, e.Offset()+e.Size, off
				continue
			}
			w.finishFile(e, off)
		}
	}
	if pending != nil {
		im.fail(pending, &FormatError{What: "file /" + pending.Path, Offset: d.Offset(), Reason: "multi-extent file has no final extent"})
	}
	if err := lost.err(what); err != nil {
		im.fail(d, err)
	}
	anc := append(ancestors[:len(ancestors):len(ancestors)], d.LBA)
	for i, s := range subdirs {
		if err := w.walk(s, subOffs[i], anc); err != nil {
			return err
		}
	}
	return nil
}

// lostRecords collects what a directory's walk could not list: the first
// problem becomes the directory's Err (with the count of the others, which
// are Problems of their own), so that every front end names the directory
// whose entries are missing.
type lostRecords struct {
	im    *Image
	n     int
	first *FormatError
}

func (l *lostRecords) add(err error) {
	l.n++
	var fe *FormatError
	if l.first == nil && errors.As(err, &fe) {
		l.first = fe
		return
	}
	l.im.problem(err)
}

// err is the directory's error for what was lost, nil if nothing was.
func (l *lostRecords) err(what string) error {
	if l.n == 0 || l.first == nil {
		return nil
	}
	reason := l.first.What + ": " + l.first.Reason
	if l.first.What == what {
		reason = l.first.Reason
	}
	if l.n > 1 {
		reason += fmt.Sprintf(" (and %d more records or sectors not listed)", l.n-1)
	}
	return &EntriesLostError{FormatError: FormatError{What: what, Offset: l.first.Offset,
		Reason: reason + "; the entries they hold are missing from the tree, the rest is listed"}, Lost: l.n}
}

// EntriesLostError is the Err of a directory some of whose records could not
// be listed (Lost of them: records or whole sectors); unlike a directory's
// other errors, the directory still lists the rest. It wraps ErrFormat.
type EntriesLostError struct {
	FormatError
	Lost int
}

// finishFile checks that a file's extent lies inside the image.
func (w *walker) finishFile(e *Entry, recOff int64) {
	if e.Size == 0 {
		return // an empty file's LBA means nothing
	}
	start, end := e.Offset(), e.Offset()+e.Size
	switch {
	case start >= w.im.Size:
		w.im.fail(e, &FormatError{What: "file /" + e.Path, Offset: recOff, Reason: fmt.Sprintf("extent %#x..%#x starts past the image's end at offset %#x", start, end, w.im.Size)})
	case end > w.im.Size:
		w.im.fail(e, &FormatError{What: "file /" + e.Path, Offset: recOff, Reason: fmt.Sprintf("extent %#x..%#x ends past the image's end at offset %#x", start, end, w.im.Size)})
	}
}
