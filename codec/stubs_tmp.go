package codec

import (
	"errors"
	"io"
)

// Temporary: replaced by scan.go, index.go and validate.go within the hour.

func Scan(r io.ReaderAt, size int64, opt Options) (Stats, error) {
	return Stats{}, errors.New("TODO")
}

type Index struct{}

func NewIndex(r io.ReaderAt, size int64, opt Options) (*Index, error) {
	return nil, errors.New("TODO")
}
func (ix *Index) Size() int64                    { return 0 }
func (ix *Index) NumBlocks() int                 { return 0 }
func (ix *Index) Block(i int) (off int64, n int) { return 0, 0 }
func (ix *Index) BlockAt(off int64) int          { return 0 }
func (ix *Index) MemSize() int64                 { return 0 }
func (ix *Index) DecodeBlock(r io.ReaderAt, i int, prev []byte) ([]byte, error) {
	return nil, errors.New("TODO")
}
func (ix *Index) ReadAt(r io.ReaderAt, p []byte, off int64) (int, error) {
	return 0, errors.New("TODO")
}
func Validate(stream []byte) error { return errors.New("TODO") }
