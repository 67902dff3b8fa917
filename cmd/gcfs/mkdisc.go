package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"gcfs/discimg/mkdisc"
)

func mkdiscCommand() *cli.Command {
	return &cli.Command{
		Name:      "mkdisc",
		Usage:     "write a synthetic disc image with the retail structure, and OUT.manifest.tsv beside it",
		ArgsUsage: "OUT",
		Description: "The small layout (the default) keeps every name and structure of the retail disc in a\n" +
			"few tens of MB; the retail layout puts every file at its retail LBA and size in a sparse\n" +
			"3,828,350,976-byte image. The same layout and seed always give the same bytes.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "layout", Value: string(mkdisc.Small), Usage: "retail or small"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of the generated contents"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "print nothing on success"},
			&cli.BoolFlag{Name: "tree", Usage: "write the image's files to the directory OUT instead of an image (to master with other tools)"},
		},
		Action: runMkdisc,
	}
}

func runMkdisc(c *cli.Context) error {
	// SPEC writes the flags after OUT; urfave/cli stops at the first
	// argument, so the rest is parsed here with the same flags.
	args := c.Args().Slice()
	if len(args) == 0 {
		return errors.New("mkdisc: want one argument, OUT (see gcfs mkdisc --help)")
	}
	out := args[0]
	fs := flag.NewFlagSet("mkdisc", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	layoutName := fs.String("layout", c.String("layout"), "")
	seed := fs.Int64("seed", c.Int64("seed"), "")
	quiet := fs.Bool("quiet", c.Bool("quiet"), "")
	fs.BoolVar(quiet, "q", c.Bool("quiet"), "")
	tree := fs.Bool("tree", c.Bool("tree"), "")
	if err := fs.Parse(args[1:]); err != nil {
		return fmt.Errorf("mkdisc: %v (see gcfs mkdisc --help)", err)
	}
	if fs.NArg() != 0 {
		return fmt.Errorf("mkdisc: want one argument, OUT; got %d (see gcfs mkdisc --help)", 1+fs.NArg())
	}
	layout := mkdisc.Layout(*layoutName)
	if layout != mkdisc.Retail && layout != mkdisc.Small {
		return fmt.Errorf("mkdisc: unknown layout %q (want retail or small)", *layoutName)
	}
	st, statErr := os.Stat(out)
	if !*tree && statErr == nil && st.IsDir() {
		return fmt.Errorf("mkdisc: %s is a directory", out)
	}
	start := time.Now()
	var res *mkdisc.Result
	var err error
	if *tree {
		if statErr == nil {
			if ents, _ := os.ReadDir(out); !st.IsDir() || len(ents) > 0 {
				return fmt.Errorf("mkdisc: --tree: %s exists and is not an empty directory", out)
			}
		}
		res, err = mkdisc.WriteTree(out, layout, *seed)
	} else {
		res, err = mkdisc.Generate(out, layout, *seed)
	}
	if err != nil {
		return fmt.Errorf("mkdisc: %s: %s", out, strings.TrimPrefix(unwrapPathError(err).Error(), "mkdisc: "))
	}
	mpath := out + ".manifest.tsv"
	if err := writeManifestFile(mpath, res.Manifest); err != nil {
		if !*tree {
			os.Remove(out) // an image without its manifest is no use to anyone
		}
		return fmt.Errorf("mkdisc: %s: %w", mpath, unwrapPathError(err))
	}
	if !*quiet {
		what := fmt.Sprintf("%d bytes", res.ImageSize)
		if *tree {
			what = "written as a directory"
		}
		fmt.Fprintf(c.App.Writer, "%s: %s layout, seed %d, %s, %d files in the tree (%s); manifest %s\n",
			out, layout, *seed, what, len(res.Manifest), time.Since(start).Round(time.Millisecond), mpath)
	}
	return nil
}

func writeManifestFile(path string, m []mkdisc.ManifestEntry) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := mkdisc.WriteManifest(f, m); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}
