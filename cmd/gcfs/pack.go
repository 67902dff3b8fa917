package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"gcfs/discimg"
	"gcfs/fsnode"
	"gcfs/rebuild"
)

func packCommand() *cli.Command {
	return &cli.Command{
		Name:      "pack",
		Usage:     "write the disc rebuilt with the edits an overlay directory holds",
		ArgsUsage: "IMAGE DIR OUT.iso",
		Description: "DIR holds edits at the tree's paths (DIR/G/LEVEL1.WAD/gameplay: the decoded " +
			"gameplay's new bytes; DIR/G/MISC.WAD/irx.wad: a stream taken as stored). Every edited " +
			"file is rebuilt with everything that encloses it (part tables, container tables, level " +
			"headers, core_index's sizes, RC2.HDR, the ISO directory); every other file keeps its " +
			"bytes. A file that outgrows its sectors moves to the end of the volume. OUT is written " +
			"to a temporary file beside it, read back through the tree and checked (every file equals " +
			"the original with the edits applied), then renamed. IMAGE may be any image gcfs reads; " +
			"OUT is an ISO.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "dry-run", Aliases: []string{"n"}, Usage: "list what would be rebuilt and which files move; write nothing"},
			&cli.BoolFlag{Name: "no-check", Usage: "do not read the written image back to check it"},
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
	dir, out := c.Args().Get(1), c.Args().Get(2)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return exitErr(2, "gcfs pack: %s: not a directory of edits", dir)
	}
	o, err := openTree(c, c.Args().Get(0))
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
