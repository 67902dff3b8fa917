// Image, Entry and Volume: the ISO 9660 view of a disc image (Open in iso.go,
// identification in identify.go).

package discimg

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// SectorSize is the ISO 9660 logical block size used by PS2 discs.
const SectorSize = 2048

// ErrNotISO: the image has no ISO 9660 primary volume descriptor at sector 16.
var ErrNotISO = errors.New("not an ISO 9660 image")

// ErrFormat is wrapped by every FormatError.
var ErrFormat = errors.New("malformed image")

// FormatError says what is wrong with a structure and where (byte offset in the image).
type FormatError struct {
	What   string // e.g. "directory record of /G", "container G/LEVEL0.WAD table"
	Offset int64  // byte offset in the image
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s at image offset %#x: %s", e.What, e.Offset, e.Reason)
}
func (e *FormatError) Unwrap() error { return ErrFormat }

// Volume is the primary volume descriptor's content.
type Volume struct {
	SystemID, VolumeID string
	Blocks             int64 // volume space size in blocks
	BlockSize          int64
	RootLBA            int64
}

// Entry is one directory record, resolved. Paths use '/' and no leading slash
// ("G/LEVEL0.WAD"); names have the ";1" suffix stripped.
type Entry struct {
	Name     string
	Path     string
	IsDir    bool
	LBA      int64
	Size     int64    // bytes recorded in the directory record
	Children []*Entry // directories only, in directory-record order
	// Err, when not nil, says why this entry cannot be read whole (extent outside
	// the image, a directory that loops, a record that overruns its sector, ...).
	// The entry is still listed where possible. A directory with an Err lists
	// no children, except when the Err is an *EntriesLostError: then only
	// some of its records were lost (an unreadable sector, a record that
	// names nothing) and the rest are its Children.
	Err error
}

// Offset is the byte offset of the entry's first byte in the image.
func (e *Entry) Offset() int64 { return e.LBA * SectorSize }

// Image is an opened disc image.
type Image struct {
	R    io.ReaderAt
	Size int64 // bytes in the image (may be less than the volume says)
	Vol  Volume
	Root *Entry
	// Problems lists every per-entry error found while walking (also in Entry.Err).
	Problems []error
	// MoreProblems counts the problems found past the first 1,000, which
	// are not kept in Problems.
	MoreProblems int

	byPath map[string]*Entry // every listed entry by Path, built by Open
}

// Lookup finds an entry by path ("" is the root). A leading or trailing '/' is
// ignored; names match exactly as listed.
func (im *Image) Lookup(path string) (*Entry, bool) {
	path = strings.Trim(path, "/")
	if im.byPath != nil {
		e, ok := im.byPath[path]
		return e, ok
	}
	e := im.Root
	if e == nil {
		return nil, false
	}
	if path == "" {
		return e, true
	}
	for _, name := range strings.Split(path, "/") {
		var next *Entry
		for _, c := range e.Children {
			if c.Name == name {
				next = c
				break
			}
		}
		if next == nil {
			return nil, false
		}
		e = next
	}
	return e, true
}

// FileAt is the listed file whose extent holds image byte off, or nil (off
// lies between files).
func (im *Image) FileAt(off int64) *Entry {
	var found *Entry
	var walk func(e *Entry, depth int)
	walk = func(e *Entry, depth int) {
		if e == nil || depth > 64 || found != nil {
			return
		}
		for _, c := range e.Children {
			switch {
			case c == nil:
			case c.IsDir:
				walk(c, depth+1)
			case off >= c.Offset() && off < c.Offset()+c.Size:
				found = c
				return
			}
		}
	}
	walk(im.Root, 0)
	return found
}
