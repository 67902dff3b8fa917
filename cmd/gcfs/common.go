package main

import (
	"errors"
	"fmt"
	"os"

	"gcfs/discimg"
)

// openImage opens a disc image file and reads its ISO 9660 tree. The error is
// one line naming the image and what is wrong.
func openImage(path string) (*discimg.Image, *os.File, error) {
	// Refuse what is neither a file nor a device before opening it: opening a
	// FIFO would block until someone writes to it.
	if st, err := os.Stat(path); err == nil {
		if m := st.Mode(); !m.IsRegular() && !m.IsDir() && m&os.ModeDevice == 0 {
			return nil, nil, fmt.Errorf("%s: not a regular file or block device (%v)", path, m.Type())
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if st.IsDir() {
		f.Close()
		return nil, nil, fmt.Errorf("%s: is a directory, not a disc image", path)
	}
	img, err := discimg.Open(f, st.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return img, f, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
