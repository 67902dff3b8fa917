package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"gcfs/cache"
	"gcfs/discimg"
	"gcfs/discimg/imagefile"
)

// parentFlag is --parent, taken wherever an IMAGE is: the parent of a child CHD.
func parentFlag() cli.Flag {
	return &cli.StringFlag{Name: "parent", Usage: "parent CHD of a child CHD IMAGE"}
}

// openedImage is an image file opened through imagefile and read as ISO 9660.
type openedImage struct {
	img    *discimg.Image
	file   *os.File         // the image file (or device)
	ifile  *imagefile.Image // its container
	cache  *cache.Cache     // decoded hunks; share it with the tree
	parent *os.File
}

// Close closes the image and its parent.
func (o *openedImage) Close() error {
	if o == nil {
		return nil
	}
	if o.parent != nil {
		o.parent.Close()
	}
	return o.file.Close()
}

// spliceFile is the file raw reads may splice from: only a plain ISO file or
// a device, whose bytes are the image's bytes; nil for a decoded container.
func (o *openedImage) spliceFile() *os.File {
	if o.ifile.Plain() {
		return o.file
	}
	return nil
}

// openImage opens a disc image file (ISO, block device, CHD, CSO, ZSO; the
// kind from its magic) and reads its ISO 9660 tree. parent names a child
// CHD's parent ("" for none); cacheSize is the decoded-hunk budget, shared
// with the tree built on top. The error is one line naming the image and what
// is wrong.
func openImage(path, parent string, cacheSize int64) (*openedImage, error) {
	f, err := openImageFile(path)
	if err != nil {
		return nil, err
	}
	o := &openedImage{file: f, cache: cache.New(cacheSize)}
	// No Logf: a bad hunk's error (image, hunk, codec, reason) reaches the
	// reader that touched it, which reports it once (fusefs: EIO and one
	// log line per file; the CLI commands: their error output).
	opt := imagefile.Options{Name: path, Cache: o.cache}
	if parent != "" {
		pf, err := openImageFile(parent)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("--parent %w", err)
		}
		o.parent = pf
		psize, _, err := imagefile.FileSize(pf)
		if err == nil {
			opt.Parent, err = imagefile.Open(pf, psize, imagefile.Options{Name: parent, Cache: o.cache})
		}
		if err != nil {
			o.Close()
			return nil, fmt.Errorf("--parent %s: %w", parent, err)
		}
		if k := opt.Parent.Kind(); k != imagefile.KindCHD {
			o.Close()
			return nil, fmt.Errorf("--parent %s: not a CHD (%s image): a child CHD's parent is a CHD", parent, kindName(k))
		}
	}
	size, dev, err := imagefile.FileSize(f)
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	opt.Device = dev
	o.ifile, err = imagefile.Open(f, size, opt)
	if err != nil {
		o.Close()
		return nil, err // imagefile errors name the image
	}

	// A plain image is read straight from the file, so the tree (and FUSE)
	// may splice from it; a container is read decoded.
	var r interface {
		ReadAt([]byte, int64) (int, error)
	} = o.ifile
	if o.ifile.Plain() {
		r = f
	}
	o.img, err = discimg.Open(r, o.ifile.Size())
	if err != nil {
		o.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// openImageFile opens a file or block device for reading, refusing anything
// else before opening it (opening a FIFO would block until someone writes).
func openImageFile(path string) (*os.File, error) {
	if st, err := os.Stat(path); err == nil {
		if m := st.Mode(); !m.IsRegular() && !m.IsDir() && m&os.ModeDevice == 0 {
			return nil, fmt.Errorf("%s: not a regular file or block device (%v)", path, m.Type())
		}
		if st.IsDir() {
			return nil, fmt.Errorf("%s: is a directory, not a disc image", path)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPathError(err))
	}
	return f, nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// kindName names a container kind for a message: "ISO", "CSO", ...
func kindName(k imagefile.Kind) string {
	if k == imagefile.KindDevice {
		return "block device"
	}
	return strings.ToUpper(k.String())
}
