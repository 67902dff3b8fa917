package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"gcfs/fsnode"
)

func extractCommand() *cli.Command {
	return &cli.Command{
		Name:      "extract",
		Usage:     "write the tree (or the named parts of it) under OUTDIR",
		ArgsUsage: "IMAGE OUTDIR [PATH...]",
		Description: "Files are written in parallel (decoded files decoded, raw files copied " +
			"sparsely), with a progress bar on a terminal. Nothing is ever written outside OUTDIR: " +
			"unsafe names are refused and symlinks inside OUTDIR are never followed. Files that " +
			"fail are reported, the rest are still extracted, and the exit status is 1.",
		Flags: []cli.Flag{
			&cli.IntFlag{Name: "jobs", Aliases: []string{"j"}, Usage: "files written at once", Value: 4},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no summary"},
			maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(),
			parentFlag(),
		},
		Action: runExtract,
	}
}

// extractor writes nodes under one directory descriptor, never following a
// symlink and never leaving it.
type extractor struct {
	image  *os.File
	imgLen int64
	rootFD int

	mu  sync.Mutex
	fds map[*fsnode.Node]int // created directories
	bad map[*fsnode.Node]error

	bytes atomic.Int64
}

func runExtract(c *cli.Context) error {
	if c.NArg() < 2 {
		return usageErr(c, "IMAGE OUTDIR [PATH...]")
	}
	o, err := openTree(c, c.Args().Get(0))
	if err != nil {
		return err
	}
	defer o.Close()
	outdir := c.Args().Get(1)
	stderr := errWriter(c)

	var roots []*fsnode.Node
	failed := 0
	if c.NArg() == 2 {
		roots = []*fsnode.Node{o.tree.Root}
	}
	for _, p := range c.Args().Slice()[2:] {
		n, err := o.tree.Lookup(p)
		if err != nil {
			fmt.Fprintf(stderr, "gcfs: %s: %s: no such file or directory in the tree\n", o.path, p)
			failed++
			continue
		}
		roots = append(roots, n)
	}

	if err := os.MkdirAll(outdir, 0o755); err != nil {
		return exitErr(1, "%s: %v", outdir, err)
	}
	// OUTDIR itself is the user's choice (it may be a symlink); below it
	// nothing is followed.
	rootFD, err := unix.Open(outdir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return exitErr(1, "%s: %v", outdir, err)
	}
	x := &extractor{image: o.file, imgLen: o.img.Size, rootFD: rootFD,
		fds: map[*fsnode.Node]int{o.tree.Root: rootFD}, bad: map[*fsnode.Node]error{}}
	defer x.closeAll()

	// Directories first, sequentially in walk order; then files in parallel.
	seen := map[*fsnode.Node]bool{}
	var todo []*fsnode.Node
	for _, r := range roots {
		var anc []*fsnode.Node
		for a := r.Parent; a != nil && a.Parent != nil; a = a.Parent {
			anc = append(anc, a)
		}
		for i := len(anc) - 1; i >= 0; i-- {
			x.mkdir(anc[i])
		}
		_ = fsnode.WalkListing(r, func(n *fsnode.Node) error {
			if seen[n] {
				return nil
			}
			seen[n] = true
			if n.IsDir() {
				if n.Parent != nil {
					x.mkdir(n)
				}
				return nil
			}
			todo = append(todo, n)
			return nil
		})
	}
	var badDirs []*fsnode.Node
	for n, err := range x.bad {
		if !errors.Is(err, errDirFailed) {
			badDirs = append(badDirs, n)
		}
	}
	sort.Slice(badDirs, func(i, j int) bool { return badDirs[i].Path() < badDirs[j].Path() })
	for _, n := range badDirs {
		fmt.Fprintf(stderr, "gcfs: %s: %s: %v; nothing below it extracted\n", o.path, n.Path(), x.bad[n])
		failed++
	}

	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && !c.Bool("quiet") && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions(len(todo), progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("extracting"), progressbar.OptionShowCount(),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	errs := make([]error, len(todo))
	// Large files first, so that one long copy does not finish last alone.
	order := make([]int, len(todo))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return diskSize(todo[order[a]]) > diskSize(todo[order[b]]) })
	bufs := sync.Pool{New: func() any { b := make([]byte, 1<<20); return &b }}
	parallel(len(todo), c.Int("jobs"), func(i int) {
		n := todo[order[i]]
		buf := bufs.Get().(*[]byte)
		errs[order[i]] = x.file(n, *buf)
		bufs.Put(buf)
		if bar != nil {
			bar.Add(1)
		}
	})
	if bar != nil {
		bar.Finish()
	}
	// Directories whose entries are missing from the tree (logged when it
	// was built): what they list cannot be extracted.
	for _, r := range roots {
		failed += lostDirs(r)
	}
	files := 0
	errLog := fileErrorLog(c, o.path)
	for i, err := range errs {
		switch {
		case errors.Is(err, errDirFailed):
			failed++ // its directory was reported
		case err != nil:
			errLog.Logf("%v", fileErr(todo[i], err))
			failed++
		default:
			files++
		}
	}
	errLog.Flush()
	if !c.Bool("quiet") {
		fmt.Fprintf(outWriter(c), "extracted %d files, %d bytes, to %s\n", files, x.bytes.Load(), outdir)
	}
	if failed > 0 {
		return exitErr(1, "%s: %d entries could not be extracted", o.path, failed)
	}
	return nil
}

func diskSize(n *fsnode.Node) int64 {
	_, size, _ := n.ImageRange()
	return size
}

func (x *extractor) closeAll() {
	for _, fd := range x.fds {
		unix.Close(fd)
	}
}

// errUnsafeName: a name that could leave its directory. Built trees never
// hold one (fsnode makes names safe); this is the writer's own guard.
var errUnsafeName = errors.New("unsafe file name, not written")

// errDirFailed: the entry's directory could not be created (reported once,
// for the directory).
var errDirFailed = errors.New("directory not created")

// parentFD returns the descriptor of n's parent directory.
func (x *extractor) parentFD(n *fsnode.Node) (int, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if n.Parent == nil {
		return -1, errors.New("no parent")
	}
	if _, bad := x.bad[n.Parent]; bad {
		return -1, fmt.Errorf("%w: %s", errDirFailed, n.Parent.Path())
	}
	fd, ok := x.fds[n.Parent]
	if !ok {
		return -1, fmt.Errorf("%w: %s", errDirFailed, n.Parent.Path())
	}
	return fd, nil
}

// mkdir creates directory n inside its parent and opens it, refusing to
// follow a symlink that stands in its place.
func (x *extractor) mkdir(n *fsnode.Node) {
	x.mu.Lock()
	_, done := x.fds[n]
	_, bad := x.bad[n]
	x.mu.Unlock()
	if done || bad {
		return
	}
	fail := func(err error) {
		x.mu.Lock()
		x.bad[n] = err
		x.mu.Unlock()
	}
	if !fsnode.SafeName(n.Name) {
		fail(errUnsafeName)
		return
	}
	pfd, err := x.parentFD(n)
	if err != nil {
		fail(err)
		return
	}
	if err := unix.Mkdirat(pfd, n.Name, 0o755); err != nil && err != unix.EEXIST {
		fail(fmt.Errorf("mkdir: %v", err))
		return
	}
	fd, err := unix.Openat(pfd, n.Name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			err = errors.New("a symlink or non-directory is in the way, not followed")
		}
		fail(err)
		return
	}
	x.mu.Lock()
	x.fds[n] = fd
	x.mu.Unlock()
}

// create makes a fresh regular file for n: whatever stood at its name (a
// symlink, a hard link to something outside) is unlinked, never written through.
func (x *extractor) create(n *fsnode.Node) (*os.File, error) {
	if !fsnode.SafeName(n.Name) {
		return nil, errUnsafeName
	}
	pfd, err := x.parentFD(n)
	if err != nil {
		return nil, err
	}
	flags := unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
	fd, err := unix.Openat(pfd, n.Name, flags, 0o644)
	if err == unix.EEXIST {
		if uerr := unix.Unlinkat(pfd, n.Name, 0); uerr != nil {
			return nil, fmt.Errorf("replacing the existing entry: %v", uerr)
		}
		fd, err = unix.Openat(pfd, n.Name, flags, 0o644)
	}
	if err != nil {
		return nil, fmt.Errorf("create: %v", err)
	}
	return os.NewFile(uintptr(fd), n.Path()), nil
}

// file writes one file; on failure the partial file is removed.
func (x *extractor) file(n *fsnode.Node, buf []byte) error {
	if err := n.Err(); err != nil {
		return err
	}
	r, err := n.Open()
	if err != nil {
		return err
	}
	f, err := x.create(n)
	if err != nil {
		return err
	}
	var werr error
	off, size, _ := n.ImageRange()
	written := r.Size() // copyRawSparse and copySparse may leave a hole at the end
	switch {
	case n.Kind == fsnode.Raw && x.image != nil && off+size <= x.imgLen && size <= smallFile:
		// One in-kernel copy; looking for holes costs more than it saves.
		werr = copyRangeKernel(int(f.Fd()), int(x.image.Fd()), f, x.image, off, off+size, off, buf)
	case n.Kind == fsnode.Raw && x.image != nil && off+size <= x.imgLen:
		werr = copyRawSparse(f, x.image, off, size, buf)
		written = -1
	default:
		written, werr = copySparse(f, r, buf)
	}
	if werr == nil && written != r.Size() {
		werr = f.Truncate(r.Size())
	}
	if cerr := f.Close(); werr == nil && cerr != nil {
		werr = cerr
	}
	if werr != nil {
		if pfd, err := x.parentFD(n); err == nil {
			unix.Unlinkat(pfd, n.Name, 0)
		}
		return werr
	}
	x.bytes.Add(r.Size())
	return nil
}

// smallFile: raw files up to this size are copied without looking for holes.
const smallFile = 1 << 20

// copySparse copies r into f, leaving all-zero chunks as holes; it returns
// the end of the last chunk written.
func copySparse(f *os.File, r fsnode.Reader, buf []byte) (int64, error) {
	size := r.Size()
	var written int64
	for off := int64(0); off < size; {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		got, err := r.ReadAt(buf[:n], off)
		if int64(got) < n {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return written, err
		}
		if !allZero(buf[:n]) {
			if _, err := f.WriteAt(buf[:n], off); err != nil {
				return written, err
			}
			written = off + n
		}
		off += n
	}
	return written, nil
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if b[0]|b[1]|b[2]|b[3]|b[4]|b[5]|b[6]|b[7] != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// copyRawSparse copies image bytes [off, off+size) into f at 0: only the
// image's data segments (SEEK_DATA/SEEK_HOLE), in-kernel with copy_file_range
// where the filesystems allow, with pread/pwrite otherwise.
func copyRawSparse(f, img *os.File, off, size int64, buf []byte) error {
	ifd, ofd := int(img.Fd()), int(f.Fd())
	return sparseWalk(img, off, off+size, nil, func(from, to int64) error {
		return copyRangeKernel(ofd, ifd, f, img, from, to, off, buf)
	})
}

// copyRangeKernel copies image [from, to) to f at from-base with copy_file_range,
// falling back to pread/pwrite.
func copyRangeKernel(ofd, ifd int, f, img *os.File, from, to, base int64, buf []byte) error {
	in, out := from, from-base
	for in < to {
		n, err := unix.CopyFileRange(ifd, &in, ofd, &out, int(min(to-in, 1<<30)), 0)
		if err != nil {
			if err == unix.EINTR || err == unix.EAGAIN {
				continue
			}
			return copyRange(f, img, in, to, base, buf)
		}
		if n == 0 {
			return copyRange(f, img, in, to, base, buf)
		}
	}
	return nil
}

func copyRange(f, img *os.File, from, to, base int64, buf []byte) error {
	for pos := from; pos < to; {
		n := int64(len(buf))
		if to-pos < n {
			n = to - pos
		}
		got, err := img.ReadAt(buf[:n], pos)
		if int64(got) < n {
			if err == nil || err == io.EOF {
				return shortImage(img, pos+int64(got), to)
			}
			return fmt.Errorf("reading image offset %#x: %w", pos+int64(got), err)
		}
		if _, err := f.WriteAt(buf[:n], pos-base); err != nil {
			return err
		}
		pos += n
	}
	return nil
}
