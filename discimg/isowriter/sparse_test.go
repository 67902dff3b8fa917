package isowriter

import (
	"os"
	"syscall"
)

// diskUsage is the bytes a file really occupies (st_blocks × 512).
func diskUsage(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, os.ErrInvalid
	}
	return sys.Blocks * 512, nil
}
