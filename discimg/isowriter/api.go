// Package isowriter writes ISO 9660 images the way mastering tools do (system
// area, primary volume descriptor, set terminator, both path tables, directory
// records with both-endian fields), with files placed at chosen LBAs and their
// contents written sparsely. It exists for mkdisc; the reader never uses it.
//
// API CONTRACT (written before the implementation).
package isowriter

import (
	"errors"
	"io"
)

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
}

// Write writes the image to w (an *os.File, so holes stay holes) and returns its
// size in bytes.
func Write(w io.WriterAt, files []File, opt Options) (int64, error) {
	return 0, errors.New("TODO")
}
