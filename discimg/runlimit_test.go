package discimg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

type failingAt struct {
	r   *bytes.Reader
	bad int64 // the sector that cannot be read
}

func (f failingAt) ReadAt(p []byte, off int64) (int, error) {
	if off < (f.bad+1)*SectorSize && off+int64(len(p)) > f.bad*SectorSize {
		return 0, errors.New("bad block (test)")
	}
	return f.r.ReadAt(p, off)
}

// The run behind a container takes in a following file only when its first
// word says it is no container: a word that cannot be read ends the run
// (it was taken for "not a container" and the run went on into the file).
func TestRunLimitStopsAtUnreadableFile(t *testing.T) {
	img := make([]byte, 8*SectorSize)
	binary.LittleEndian.PutUint32(img[0:], 0x40) // A: a MISC header size
	a := &Entry{Name: "A.WAD", LBA: 0, Size: SectorSize}
	b := &Entry{Name: "B.DAT", LBA: 1, Size: SectorSize}
	c := &Entry{Name: "C.DAT", LBA: 2, Size: SectorSize}
	dir := &Entry{IsDir: true, Children: []*Entry{a, b, c}}
	good := &Image{R: bytes.NewReader(img), Size: int64(len(img))}
	if got := good.RunLimit(a, dir); got != 3*SectorSize {
		t.Fatalf("readable run: %d, want %d", got, 3*SectorSize)
	}
	bad := &Image{R: failingAt{bytes.NewReader(img), 1}, Size: int64(len(img))}
	if got := bad.RunLimit(a, dir); got != SectorSize {
		t.Errorf("B's first word unreadable: run of %d bytes, want A's own %d", got, SectorSize)
	}
}
