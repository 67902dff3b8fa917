package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"gcfs/fsnode"
)

func lsCommand() *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the tree (or PATH in it) without FUSE, one entry a line",
		ArgsUsage: "IMAGE [PATH]",
		Description: "PATH is relative to the root (G/LEVEL0.WAD). A directory lists its entries; " +
			"-R lists everything below it with paths relative to the root.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "long", Aliases: []string{"l"}, Usage: "show mode and exact size"},
			&cli.BoolFlag{Name: "recursive", Aliases: []string{"R"}, Usage: "list every entry below PATH, by full path"},
			&cli.BoolFlag{Name: "json", Usage: "print a JSON array of entries"},
			maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(),
			parentFlag(),
		},
		Action: runLs,
	}
}

// lsEntry is one entry of `ls --json`.
type lsEntry struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Type  string `json:"type"` // dir, file, decoded
	Mode  string `json:"mode"`
	Size  int64  `json:"size"`
	Ino   uint64 `json:"ino"`
	Error string `json:"error,omitempty"`
}

func runLs(c *cli.Context) error {
	if c.NArg() < 1 || c.NArg() > 2 {
		return usageErr(c, "IMAGE [PATH]")
	}
	o, n, err := openNode(c)
	if err != nil {
		return err
	}
	defer o.Close()
	var list []*fsnode.Node
	switch {
	case !n.IsDir():
		list = []*fsnode.Node{n}
	case c.Bool("recursive"):
		_ = fsnode.WalkListing(n, func(x *fsnode.Node) error {
			if x != n {
				list = append(list, x)
			}
			return nil
		})
	default:
		list = n.List()
	}
	full := c.Bool("recursive") || !n.IsDir()
	long, asJSON := c.Bool("long"), c.Bool("json")
	warmSizes(list, long || asJSON)
	if !asJSON {
		// A view that does not encode has no file: the mount answers ENOENT
		// for it and leaves it out of its listings, and so does ls (its
		// error is on stderr, once). --json keeps it, with the error.
		if !n.IsDir() && n.ViewFailed() {
			return exitErr(1, "%s: %s: %v", o.path, n.Path(), n.Err())
		}
		kept := list[:0]
		for _, x := range list {
			if !x.ViewFailed() {
				kept = append(kept, x)
			}
		}
		list = kept
	}
	w := bufio.NewWriterSize(outWriter(c), 64<<10)
	defer w.Flush()
	name := func(x *fsnode.Node) string {
		if full {
			return x.Path()
		}
		return x.Name
	}
	if asJSON {
		out := make([]lsEntry, 0, len(list))
		for _, x := range list {
			e := lsEntry{Path: x.Path(), Name: x.Name, Type: typeName(x), Mode: modeString(x), Size: x.Size(), Ino: x.Ino}
			if err := x.Err(); err != nil && !x.IsDir() {
				e.Error = err.Error()
			} else if err := x.LostEntries(); err != nil {
				e.Error = err.Error()
			}
			out = append(out, e)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	for _, x := range list {
		if long {
			fmt.Fprintf(w, "%s %12d %s\n", modeString(x), x.Size(), name(x))
		} else {
			fmt.Fprintln(w, name(x))
		}
	}
	return nil
}

func catCommand() *cli.Command {
	return &cli.Command{
		Name:      "cat",
		Usage:     "write one file of the tree to stdout (decoded files decoded)",
		ArgsUsage: "IMAGE PATH",
		Flags:     []cli.Flag{maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(), parentFlag()},
		Action:    runCat,
	}
}

func runCat(c *cli.Context) error {
	if c.NArg() != 2 {
		return usageErr(c, "IMAGE PATH")
	}
	o, n, err := openNode(c)
	if err != nil {
		return err
	}
	defer o.Close()
	if n.IsDir() {
		return exitErr(1, "%s: %s is a directory; `gcfs ls %s %s` lists it", o.path, displayPath(n.Path()), o.path, displayPath(n.Path()))
	}
	r, err := n.Open()
	if err != nil {
		return exitErr(1, "%s: %v", o.path, fileErr(n, err))
	}
	buf := make([]byte, 1<<20)
	if _, err := io.CopyBuffer(onlyWriter{outWriter(c)}, io.NewSectionReader(r, 0, r.Size()), buf); err != nil {
		return exitErr(1, "%s: %v", o.path, fileErr(n, err))
	}
	return nil
}

// onlyWriter hides ReadFrom so that CopyBuffer uses our large buffer.
type onlyWriter struct{ io.Writer }

// displayPath names a tree path as the commands take it: "/" for the root.
func displayPath(p string) string {
	if p == "" {
		return "/"
	}
	return p
}
