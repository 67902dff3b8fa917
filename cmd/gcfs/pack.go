package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"gcfs/discimg"
	"gcfs/fsnode"
	"gcfs/fsnode/fusefs"
	"gcfs/rebuild"
)

func packCommand() *cli.Command {
	return &cli.Command{
		Name:      "pack",
		Usage:     "write the disc rebuilt with the edits an overlay directory holds",
		ArgsUsage: "IMAGE DIR OUT.iso | --serve MOUNTPOINT IMAGE DIR",
		Description: "DIR holds edits at the tree's paths (DIR/G/LEVEL1.WAD/gameplay: the decoded " +
			"gameplay's new bytes; DIR/G/MISC.WAD/irx.wad: a stream taken as stored). Every edited " +
			"file is rebuilt with everything that encloses it (part tables, container tables, level " +
			"headers, core_index's sizes, RC2.HDR, the ISO directory); every other file keeps its " +
			"bytes. A file that outgrows its sectors moves to the end of the volume. OUT is written " +
			"to a temporary file beside it, read back through the tree and checked (every file equals " +
			"the original with the edits applied), then renamed. IMAGE may be any image gcfs reads; " +
			"OUT is an ISO. With --serve nothing is written: MOUNTPOINT shows the rebuilt image as one " +
			"read-only file, NAME.iso, assembled on read from the image and the rebuilt bytes held in " +
			"memory (the same bytes pack writes), until gcfs umount MOUNTPOINT or an interrupt; it " +
			"shows DIR as it was when served.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would be rebuilt and which files move; write nothing"},
			&cli.BoolFlag{Name: "no-check", Usage: "do not read the written (or served) image back to check it"},
			&cli.BoolFlag{Name: "serve", Usage: "mount the rebuilt image at MOUNTPOINT instead of writing it (args: MOUNTPOINT IMAGE DIR)"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress bar, no summary"},
			maxDecodedFlag(), noIndexCacheFlag(), parentFlag(),
		},
		Action: runPack,
	}
}

func runPack(c *cli.Context) error {
	if c.NArg() != 3 {
		return usageErr(c, "IMAGE DIR OUT.iso")
	}
	image, dir, out := c.Args().Get(0), c.Args().Get(1), c.Args().Get(2)
	serveAt := ""
	if c.Bool("serve") {
		serveAt, image, dir = c.Args().Get(0), c.Args().Get(1), c.Args().Get(2)
		if err := checkMountpoint(serveAt); err != nil {
			return exitErr(1, "gcfs pack --serve: %v", err)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return exitErr(2, "gcfs pack: %s: not a directory of edits", dir)
	}
	o, err := openTree(c, image)
	if err != nil {
		return err
	}
	defer o.Close()
	stdout, stderr := outWriter(c), errWriter(c)
	edits, files, ignored, err := rebuild.ReadOverlay(o.tree, dir)
	if err != nil {
		return exitErr(1, "gcfs pack: %v", err)
	}
	for _, ig := range ignored {
		fmt.Fprintf(stderr, "gcfs: %s: %s: ignored\n", filepath.Join(dir, ig.Path), ig.Reason)
	}
	maxDec := int64(fsnode.DefaultMaxDecoded)
	if v, err := humanize.ParseBytes(c.String("max-decoded")); err == nil && v > 0 {
		maxDec = int64(v) // openTree refused a bad value
	}
	l, err := rebuild.Plan(o.tree, edits, rebuild.Options{MaxDecoded: maxDec, Logf: func(f string, a ...any) {
		fmt.Fprintf(stderr, "gcfs: pack: %s\n", fmt.Sprintf(f, a...))
	}})
	if err != nil {
		var ee *rebuild.EditError
		if errors.As(err, &ee) {
			return exitErr(1, "gcfs pack: %s: %v (change or remove it in %s)", filepath.Join(dir, ee.Path), ee.Err, dir)
		}
		return exitErr(1, "gcfs pack: %v", err)
	}
	if c.Bool("dry-run") {
		printPlan(stdout, o, l)
		return nil
	}
	if serveAt != "" {
		return servePacked(c, o, l, serveAt)
	}
	if len(l.Rebuilt) == 0 && !c.Bool("quiet") {
		fmt.Fprintf(stderr, "gcfs: pack: no edit changes the disc: %s will be a copy of %s\n", out, o.path)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*.tmp")
	if err != nil {
		return exitErr(1, "gcfs pack: %v", err)
	}
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && !c.Bool("quiet") && term.IsTerminal(int(f.Fd())) {
		bar = progressbar.NewOptions64(l.Size, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("packing"), progressbar.OptionShowBytes(true),
			progressbar.OptionThrottle(100*time.Millisecond), progressbar.OptionClearOnFinish())
	}
	progress := func(done int64) {
		if bar != nil {
			bar.Set64(done)
		}
	}
	if err := l.Write(tmp, o.img.R, progress); err != nil {
		return exitErr(1, "gcfs pack: writing %s: %v", out, err)
	}
	if err := tmp.Truncate(l.Size); err != nil {
		return exitErr(1, "gcfs pack: %s: %v", out, err)
	}
	if bar != nil {
		bar.Finish()
	}
	if err := tmp.Sync(); err != nil {
		return exitErr(1, "gcfs pack: %s: %v", out, err)
	}
	if !c.Bool("no-check") {
		if err := checkPacked(o, tmp, l); err != nil {
			return exitErr(1, "gcfs pack: %s: %v; nothing written", out, err)
		}
	}
	packWritten(dir)
	if what, err := rebuild.OverlayChanged(o.tree, dir, files); err != nil || what != "" {
		if err == nil {
			err = fmt.Errorf("%s", what)
		}
		return exitErr(1, "gcfs pack: %s changed while pack ran (%v): nothing written; run pack again", dir, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		return exitErr(1, "gcfs pack: %s: %v", out, err)
	}
	if err := tmp.Close(); err != nil {
		return exitErr(1, "gcfs pack: %s: %v", out, err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return exitErr(1, "gcfs pack: %v", err)
	}
	keep = true
	if !c.Bool("quiet") {
		fmt.Fprintf(stderr, "gcfs: pack: wrote %s (%d bytes): %d files rebuilt, %d moved, %d bytes rebuilt\n",
			out, l.Size, len(l.Rebuilt), len(l.Moved), l.NewBytes())
	}
	return nil
}

// packWritten is called once OUT's temporary file is written and checked,
// before DIR is looked at again; a test changes DIR there.
var packWritten = func(dir string) {}

// servePacked mounts the rebuilt image as MOUNTPOINT/NAME.iso and serves it
// until it is unmounted or the command is interrupted.
func servePacked(c *cli.Context, o *openedTree, l *rebuild.Layout, mnt string) error {
	stderr := errWriter(c)
	r := l.NewReader(o.img.R)
	if !c.Bool("no-check") {
		img, err := discimg.Open(r, l.Size)
		if err != nil {
			return exitErr(1, "gcfs pack --serve: the rebuilt image does not open: %v", err)
		}
		t, err := fsnode.Build(img, fsnode.Options{CacheSize: 64 << 20})
		if err != nil {
			return exitErr(1, "gcfs pack --serve: %v", err)
		}
		if err := rebuild.Check(o.tree, t, l); err != nil {
			return exitErr(1, "gcfs pack --serve: %v; nothing served", err)
		}
	}
	base := filepath.Base(o.path)
	name := strings.TrimSuffix(base, filepath.Ext(base)) + ".iso"
	opt := fusefs.Options{UID: uint32(os.Getuid()), GID: uint32(os.Getgid()), Logf: func(f string, a ...any) {
		fmt.Fprintf(stderr, f+"\n", a...)
	}}
	opt.FsName, _ = filepath.Abs(o.path)
	if st, err := os.Stat(o.path); err == nil {
		opt.Mtime = st.ModTime()
	}
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	srv, err := fusefs.MountFile(mnt, name, r, l.Size, opt)
	if err != nil {
		return exitErr(1, "gcfs pack --serve: mount at %s: %v", mnt, err)
	}
	if !c.Bool("quiet") {
		fmt.Fprintf(stderr, "gcfs: pack: serving %s (%d bytes, %d rebuilt bytes in memory); gcfs umount %s to stop\n",
			filepath.Join(mnt, name), l.Size, l.NewBytes(), mnt)
	}
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	select {
	case <-done:
	case <-sigs:
		if err := srv.Unmount(); err != nil {
			return exitErr(1, "gcfs pack --serve: unmounting %s: %v", mnt, err)
		}
		<-done
	}
	return nil
}

// checkPacked reads the written image back through a tree of its own.
func checkPacked(o *openedTree, f *os.File, l *rebuild.Layout) error {
	img, err := discimg.Open(f, l.Size)
	if err != nil {
		return fmt.Errorf("the written image does not open: %w", err)
	}
	t, err := fsnode.Build(img, fsnode.Options{CacheSize: 64 << 20})
	if err != nil {
		return err
	}
	return rebuild.Check(o.tree, t, l)
}

func printPlan(w io.Writer, o *openedTree, l *rebuild.Layout) {
	for _, p := range l.Unchanged {
		fmt.Fprintf(w, "unchanged\t%s\t(the disc's own bytes)\n", p)
	}
	for _, p := range l.Rebuilt {
		fmt.Fprintf(w, "rebuilt\t%s\n", p)
	}
	for _, m := range l.Moved {
		fmt.Fprintf(w, "moves\t%s\tLBA %d -> %d (%d sectors)\n", m.Path, m.FromLBA, m.ToLBA, m.Sectors)
	}
	fmt.Fprintf(w, "image\t%d bytes (now %d), %d bytes rebuilt\n", l.Size, o.img.Size, l.NewBytes())
}
