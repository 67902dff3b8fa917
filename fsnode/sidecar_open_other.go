//go:build !unix

package fsnode

import "os"

// openNoBlock opens path for reading (the caller has checked with Lstat
// that it is a regular file, and checks again with fstat).
func openNoBlock(path string) (*os.File, error) { return os.Open(path) }
