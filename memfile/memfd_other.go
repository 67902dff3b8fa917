//go:build !linux

package memfile

// Elsewhere there is no memfd (and no FUSE passthrough): New refuses.
func probe() error                               { return ErrUnsupported }
func create(int64) (int, error)                  { return -1, ErrUnsupported }
func dup(int) (int, error)                       { return -1, ErrUnsupported }
func closeFD(int)                                {}
func writeVec(int, [][]byte, int64) (int, error) { return 0, ErrUnsupported }
