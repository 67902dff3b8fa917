// Package discimg owns access to a disc image: ISO 9660, disc identification,
// the G/*.WAD container tables and level headers. It knows nothing of FUSE.
//
// API CONTRACT (written before the implementation; other packages code against
// these signatures — change them only together with their callers).
package discimg

import (
	"errors"
	"io"
)

// Reading names how a container's table was read (DISC-FACTS "Size units").
type Reading string

const (
	ReadingPairsBytes   Reading = "pairs-bytes"
	ReadingPairsSectors Reading = "pairs-sectors"
	ReadingStartList    Reading = "start-list"
	ReadingLevel        Reading = "level-header" // the typed LEVEL header
)

// Extent is one entry of a container's table that is shown in the tree.
type Extent struct {
	Index  int    // table index
	Name   string // name in the tree: "gameplay", "armor0_mesh", "000", "scene00/05"
	Offset int64  // byte offset relative to the container's first byte
	Size   int64  // bytes (clamped to the container for the tail overrun)
}

// LevelHeader is the typed 0x60 header of LEVEL<n>.WAD.
type LevelHeader struct {
	ID     int32
	Reverb int32
	Name   string                                         // level name by id ("Insomniac Museum"), "" if unknown
	Lumps  [10]struct{ OffsetSectors, SizeSectors int32 } // slots as in the levels TSV
}

// Container is a G/*.WAD whose table could be read.
type Container struct {
	Family     string // "LEVEL", "AUDIO", "SCENE", "MISC", ... by header size
	HeaderSize int64
	Reading    Reading
	Coverage   int64 // sectors touched by the valid extents of the winning reading
	Extents    []Extent
	Skipped    int // entries left out: past the container, overlapping, ...
	Level      *LevelHeader
}

// ReadContainer reads the table of a container of size bytes whose bytes are r
// (offset 0 = container's first byte). name is the file name ("LEVEL21.WAD"),
// used for messages and family hints. An error means the file stays plain.
func ReadContainer(name string, r io.ReaderAt, size int64) (*Container, error) {
	return nil, errors.New("TODO")
}

// LevelName returns the level name for an id, "" when unknown.
func LevelName(id int32) string { return "" }
