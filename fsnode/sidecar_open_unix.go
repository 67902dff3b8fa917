//go:build unix

package fsnode

import (
	"os"
	"syscall"
)

// openNoBlock opens path for reading without following a symbolic link at
// it and without waiting for a writer (a FIFO) or a device: the caller
// checks with fstat what it opened.
func openNoBlock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
}
