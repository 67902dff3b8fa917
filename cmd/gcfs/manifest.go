package main

import (
	"bufio"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"

	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"gcfs/discimg/mkdisc"
	"gcfs/fsnode"
)

func manifestCommand() *cli.Command {
	return &cli.Command{
		Name:      "manifest",
		Usage:     "print path<TAB>size<TAB>sha1 of every file of the tree, sorted by path",
		ArgsUsage: "IMAGE",
		Flags:     []cli.Flag{maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(), parentFlag()},
		Action:    runManifest,
	}
}

func verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check the tree against a manifest TSV; exit 1 on any mismatch",
		ArgsUsage: "IMAGE TABLE",
		Flags:     []cli.Flag{maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(), parentFlag()},
		Action:    runVerify,
	}
}

// hashed is one file's manifest line, or why it could not be read.
type hashed struct {
	path string
	size int64
	sha1 string
	err  error
}

// hashTree hashes every file under root in parallel; the result is sorted by
// path (byte order).
//
// Raw files of an image file are read sparsely: holes (SEEK_HOLE) are hashed
// as zeros without reading them, which matters on the 3.8 GB retail layout.
func hashTree(root *fsnode.Node, img *os.File, imgSize int64) []hashed {
	fs := files(root)
	out := make([]hashed, len(fs))
	bufs := make(chan []byte, runtime.GOMAXPROCS(0)+1)
	parallel(len(fs), runtime.GOMAXPROCS(0), func(i int) {
		var buf []byte
		select {
		case buf = <-bufs:
		default:
			buf = make([]byte, 1<<20)
		}
		out[i] = hashNode(fs[i], buf, img, imgSize)
		select {
		case bufs <- buf:
		default:
		}
	})
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

func hashNode(n *fsnode.Node, buf []byte, img *os.File, imgSize int64) hashed {
	h := hashed{path: n.Path()}
	r, err := n.Open() // before Size: opening a decoded file gives its size too
	if err != nil {
		h.size = n.Size()
		h.err = fileErr(n, err)
		return h
	}
	h.size = n.Size()
	d := sha1.New()
	var got int64
	if off, size, _ := n.ImageRange(); n.Kind == fsnode.Raw && img != nil && n.Err() == nil && off+size <= imgSize {
		got, err = hashRawSparse(d, img, off, size, buf)
	} else {
		got, err = io.CopyBuffer(d, io.NewSectionReader(r, 0, r.Size()), buf)
	}
	if err != nil {
		h.err = fileErr(n, err)
		return h
	}
	if got != h.size {
		h.err = fileErr(n, fmt.Errorf("read %d bytes, size says %d", got, h.size))
		return h
	}
	h.sha1 = hex.EncodeToString(d.Sum(nil))
	return h
}

var zeros = make([]byte, 1<<20)

// hashRawSparse hashes image bytes [off, off+size): data segments are read,
// holes are hashed as zeros.
func hashRawSparse(d io.Writer, img *os.File, off, size int64, buf []byte) (int64, error) {
	zero := func(from, to int64) error {
		for n := to - from; n > 0; {
			c := min(n, int64(len(zeros)))
			d.Write(zeros[:c])
			n -= c
		}
		return nil
	}
	data := func(from, to int64) error {
		got, err := io.CopyBuffer(d, io.NewSectionReader(img, from, to-from), buf)
		if err == nil && got < to-from {
			// The image shrank under the read.
			return shortImage(img, from+got, to)
		}
		return err
	}
	if err := sparseWalk(img, off, off+size, zero, data); err != nil {
		return 0, err
	}
	return size, nil
}

// sparseWalk splits image bytes [off, end) into the holes and data segments
// SEEK_DATA/SEEK_HOLE report, in order, and calls hole (when not nil) or data
// for each. Where the image's filesystem cannot tell, the rest is data. A
// hole is only a hole inside the image's current size: bytes [off, end)
// past it (the image shrank) are a *fsnode.ShortImageError, never zeros.
func sparseWalk(img *os.File, off, end int64, hole, data func(from, to int64) error) error {
	fd := int(img.Fd())
	for pos := off; pos < end; {
		start, err := unix.Seek(fd, pos, unix.SEEK_DATA)
		switch {
		case err == unix.ENXIO:
			// No data from pos to the file's end, or pos is past its end.
			if size := fileSize(img); size < end {
				return shortImage(img, max(pos, size), end)
			}
			start = end // the rest is a hole
		case err != nil:
			return data(pos, end)
		}
		start = min(start, end)
		if start > pos && hole != nil {
			if err := hole(pos, start); err != nil {
				return err
			}
		}
		if start >= end {
			return nil
		}
		stop, err := unix.Seek(fd, start, unix.SEEK_HOLE)
		if err != nil || stop <= start || stop > end {
			stop = end
		}
		if err := data(start, stop); err != nil {
			return err
		}
		pos = stop
	}
	return nil
}

// fileSize is the file's size now, -1 when fstat fails.
func fileSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil {
		return -1
	}
	return st.Size()
}

// shortImage is the error for image bytes [from, end) that the image file
// does not have (any more).
func shortImage(img *os.File, from, end int64) error {
	return &fsnode.ShortImageError{Offset: from, End: end, ImageSize: fileSize(img)}
}

// fileErr is a file's error as the CLI prints it: starting with the file's
// path, once (model errors start with it already).
func fileErr(n *fsnode.Node, err error) error { return fsnode.WithPath(n.Path(), err) }

// lostDirs reports the directories under root whose entries are missing
// from the tree (the tree logged each when it was built) and counts them.
func lostDirs(root *fsnode.Node) int {
	lost := 0
	_ = fsnode.WalkFrom(root, func(n *fsnode.Node) error {
		if n.LostEntries() != nil {
			lost++
		}
		return nil
	})
	return lost
}

func runManifest(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr(c, "IMAGE")
	}
	o, err := openTree(c, c.Args().Get(0))
	if err != nil {
		return err
	}
	defer o.Close()
	w := bufio.NewWriterSize(outWriter(c), 64<<10)
	failed := 0
	errs := fileErrorLog(c, o.path)
	for _, h := range hashTree(o.tree.Root, o.file, o.img.Size) {
		if h.err != nil {
			failed++
			errs.Logf("%v", h.err)
			continue
		}
		fmt.Fprintf(w, "%s\t%d\t%s\n", h.path, h.size, h.sha1)
	}
	errs.Flush()
	if err := w.Flush(); err != nil {
		return exitErr(1, "%s: writing the manifest: %v", o.path, err)
	}
	lost := lostDirs(o.tree.Root)
	switch {
	case failed > 0 && lost > 0:
		return exitErr(1, "%s: %d files could not be read, and %d directories could not be listed (their files are missing from the manifest)", o.path, failed, lost)
	case failed > 0:
		return exitErr(1, "%s: %d files could not be read", o.path, failed)
	case lost > 0:
		return exitErr(1, "%s: %d directories could not be listed (their files are missing from the manifest)", o.path, lost)
	}
	return nil
}

func runVerify(c *cli.Context) error {
	if c.NArg() != 2 {
		return usageErr(c, "IMAGE TABLE")
	}
	tablePath := c.Args().Get(1)
	tf, err := os.Open(tablePath)
	if err != nil {
		return exitErr(1, "%s: %v", tablePath, unwrapPathError(err))
	}
	table, err := mkdisc.ReadManifest(tf)
	tf.Close()
	if err != nil {
		return exitErr(1, "%s: %v", tablePath, err)
	}
	o, err := openTree(c, c.Args().Get(0))
	if err != nil {
		return err
	}
	defer o.Close()
	got := hashTree(o.tree.Root, o.file, o.img.Size)
	byPath := make(map[string]*hashed, len(got))
	for i := range got {
		byPath[got[i].path] = &got[i]
	}
	w := bufio.NewWriter(outWriter(c))
	defer w.Flush()
	bad, ok := 0, 0
	want := make(map[string]bool, len(table))
	mkdisc.SortManifest(table)
	for _, e := range table {
		if want[e.Path] {
			fmt.Fprintf(w, "DUPLICATE %s: listed twice in %s\n", e.Path, tablePath)
			bad++
			continue
		}
		want[e.Path] = true
		h := byPath[e.Path]
		switch {
		case h == nil:
			fmt.Fprintf(w, "MISSING %s\n", e.Path)
			bad++
		case h.err != nil:
			// Model errors usually start with the path already.
			msg := strings.TrimPrefix(h.err.Error(), e.Path+": ")
			fmt.Fprintf(w, "ERROR %s: %s\n", e.Path, msg)
			bad++
		case h.size != e.Size || h.sha1 != e.SHA1:
			fmt.Fprintf(w, "MISMATCH %s: size %d sha1 %s, table says size %d sha1 %s\n", e.Path, h.size, h.sha1, e.Size, e.SHA1)
			bad++
		default:
			ok++
		}
	}
	for _, h := range got {
		if !want[h.path] {
			fmt.Fprintf(w, "EXTRA %s: not in %s\n", h.path, tablePath)
			bad++
		}
	}
	if bad > 0 {
		fmt.Fprintf(w, "FAILED: %d problems, %d files match\n", bad, ok)
		w.Flush()
		return exitErr(1, "%s: %d problems against %s", o.path, bad, tablePath)
	}
	fmt.Fprintf(w, "OK: %d files match\n", ok)
	return nil
}
