package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"gcfs/codec"
)

// wadCommand is `gcfs wad`: the WAD codec on single files.
func wadCommand() *cli.Command {
	return &cli.Command{
		Name:  "wad",
		Usage: "compress, decompress and inspect single WAD LZ streams",
		Subcommands: []*cli.Command{
			{
				Name:      "decompress",
				Usage:     "decode the WAD stream in IN to OUT (- for stdin/stdout)",
				ArgsUsage: "IN OUT",
				Flags: append(wadDecodeFlags(), &cli.IntFlag{Name: "workers",
					Usage: "decode on up to `N` cores (0: all the process may use when there are at least 4, else 1; 1: sequential)"}),
				Action: wadDecompress,
			},
			{
				Name:      "compress",
				Usage:     "encode IN as one WAD stream in OUT (- for stdin/stdout); prints the ratio",
				ArgsUsage: "IN OUT",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "tag", Usage: "header tag, up to 9 bytes (`TAG`)", Value: "gcfs"},
					&cli.BoolFlag{Name: "best", Usage: "slower, smaller (longer match search)"},
				},
				Action: wadCompress,
			},
			{
				Name:      "info",
				Usage:     "tag, declared and decoded size, packet counts of the WAD stream in IN",
				ArgsUsage: "IN",
				Flags:     wadDecodeFlags(),
				Action:    wadInfo,
			},
		},
	}
}

func wadDecodeFlags() []cli.Flag {
	return []cli.Flag{
		&cli.BoolFlag{Name: "strict", Usage: "also reject a literal packet right after a match with little literals"},
		&cli.BoolFlag{Name: "align-2000", Usage: "block markers skip to 0x2000 boundaries (default 0x1000)"},
		&cli.StringFlag{Name: "max-decoded", Usage: "largest decoded size (`SIZE`, e.g. 256MiB)", Value: "1GiB"},
	}
}

func wadFail(format string, args ...any) error { return cli.Exit(fmt.Sprintf(format, args...), 1) }

func wadUsage(c *cli.Context, want string) error {
	return cli.Exit(fmt.Sprintf("usage: gcfs wad %s %s (see gcfs wad %s --help)", c.Command.Name, want, c.Command.Name), 2)
}

func wadOptions(c *cli.Context) (codec.Options, error) {
	opt := codec.Options{Strict: c.Bool("strict")}
	if c.Bool("align-2000") {
		opt.Align = 0x2000
	}
	v, err := humanize.ParseBytes(c.String("max-decoded"))
	if err != nil || v == 0 || v > 1<<40 {
		return opt, cli.Exit(fmt.Sprintf("--max-decoded %q: not a size like 256MiB", c.String("max-decoded")), 2)
	}
	opt.MaxOutput = int64(v)
	return opt, nil
}

// wadReadInput reads IN whole ("-" is the app's stdin). The name returned is
// what error messages call it.
func wadReadInput(c *cli.Context, in string) ([]byte, string, error) {
	if in == "-" {
		r := c.App.Reader
		if r == nil {
			r = os.Stdin
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return nil, "stdin", wadFail("stdin: %v", err)
		}
		return b, "stdin", nil
	}
	b, err := os.ReadFile(in)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, in, wadFail("%s: %v", in, err)
	}
	return b, in, nil
}

// wadWriteOutput writes data to OUT ("-" is the app's stdout) through a
// temporary file beside OUT renamed into place, so OUT is whole or untouched.
func wadWriteOutput(c *cli.Context, out string, data []byte) error {
	if out == "-" {
		w := c.App.Writer
		if w == nil {
			w = os.Stdout
		}
		if _, err := w.Write(data); err != nil {
			return wadFail("stdout: %v", err)
		}
		return nil
	}
	return wadWriteFile(out, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// recordingWriter keeps the error of its writer, to tell it from a
// decoder's.
type recordingWriter struct {
	w   io.Writer
	err error
}

func (r *recordingWriter) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	if err != nil {
		r.err = err
	}
	return n, err
}

// wadWriteFile writes OUT with write through a temporary file beside OUT
// renamed into place, so OUT is whole or untouched. An error write returns
// that is a cli exit error is returned as it is (a stream's), others name
// OUT.
func wadWriteFile(out string, write func(f *os.File) error) error {
	if st, err := os.Stat(out); err == nil && st.IsDir() {
		return wadFail("%s: is a directory", out)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return wadFail("%s: %v", out, err)
	}
	werr := write(tmp)
	var ec cli.ExitCoder
	if errors.As(werr, &ec) {
		tmp.Close()
		os.Remove(tmp.Name())
		return werr
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), out)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return wadFail("%s: %v", out, werr)
	}
	return nil
}

// wadStreamError names the file, the offset and the rule of a codec error.
func wadStreamError(name string, err error, clean int64) error {
	var ce *codec.CorruptError
	if errors.As(err, &ce) {
		return wadFail("%s: %s at stream offset %#x (%d bytes decode cleanly)", name, ce.Rule, ce.Offset, clean)
	}
	return wadFail("%s: %v", name, err)
}

func wadDecompress(c *cli.Context) error {
	if c.NArg() != 2 {
		return wadUsage(c, "IN OUT")
	}
	opt, err := wadOptions(c)
	if err != nil {
		return err
	}
	name, dst := c.Args().Get(0), c.Args().Get(1)
	if dst != "-" && wadWorkers(c.Int("workers")) == 1 {
		return wadDecompressTo(c, name, dst, opt)
	}
	var src []byte
	if big, unmap, ok := wadReadBig(name); ok {
		defer unmap()
		src = big
	} else if src, name, err = wadReadInput(c, name); err != nil {
		return err
	}
	out, release, err := wadDecode(src, opt, c.Int("workers"))
	defer release()
	if err != nil {
		return wadStreamError(name, err, int64(len(out)))
	}
	return wadWriteOutput(c, dst, out)
}

// wadDecompressTo is the sequential decompress into a file: the input file
// mapped (wadMapFile), the output written as it decodes (codec.DecodeTo),
// with no whole-output buffer to fault in page by page. The heap holds one
// 560 KiB buffer: nothing for a collection to do. On any error OUT is left
// as it was (wadWriteFile): a partial decode is never renamed into place.
func wadDecompressTo(c *cli.Context, name, dst string, opt codec.Options) error {
	debug.SetGCPercent(-1)
	src, unmap, mapped := wadMapFile(name)
	if mapped {
		defer unmap()
	} else {
		var err error
		if src, name, err = wadReadInput(c, name); err != nil {
			return err
		}
	}
	return wadWriteFile(dst, func(f *os.File) error {
		return wadFaultsAsErrors(name, func() error {
			wb := newWritebackWriter(f)
			w := &recordingWriter{w: wb}
			clean, err := codec.DecodeTo(w, src, opt)
			wb.finish()
			if err != nil && w.err == nil {
				return wadStreamError(name, err, clean) // the stream's, not OUT's
			}
			return err
		})
	})
}

func wadCompress(c *cli.Context) error {
	if c.NArg() != 2 {
		return wadUsage(c, "IN OUT")
	}
	tag := c.String("tag")
	if len(tag) > 9 {
		return cli.Exit(fmt.Sprintf("--tag %q: longer than 9 bytes", tag), 2)
	}
	src, name, err := wadReadInput(c, c.Args().Get(0))
	if err != nil {
		return err
	}
	if len(src) >= 1<<31 {
		return wadFail("%s: %d bytes: the encoder takes less than 2 GiB", name, len(src))
	}
	enc := codec.Encode(src, codec.EncodeOptions{Tag: tag, Best: c.Bool("best")})
	if len(enc) > 1<<32-1 {
		return wadFail("%s: compressed stream would exceed 4 GiB", name)
	}
	if err := wadWriteOutput(c, c.Args().Get(1), enc); err != nil {
		return err
	}
	ratio := 0.0
	if len(enc) > 0 {
		ratio = float64(len(src)) / float64(len(enc))
	}
	fmt.Fprintf(wadErrWriter(c), "%s: %d -> %d bytes, ratio %.3f\n", name, len(src), len(enc), ratio)
	return nil
}

func wadErrWriter(c *cli.Context) io.Writer {
	if c.App.ErrWriter != nil {
		return c.App.ErrWriter
	}
	return os.Stderr
}

func wadInfo(c *cli.Context) error {
	if c.NArg() != 1 {
		return wadUsage(c, "IN")
	}
	opt, err := wadOptions(c)
	if err != nil {
		return err
	}
	var r io.ReaderAt
	var size int64
	name := c.Args().Get(0)
	if name == "-" {
		src, n, err := wadReadInput(c, name)
		if err != nil {
			return err
		}
		r, size, name = bytes.NewReader(src), int64(len(src)), n
	} else {
		f, err := os.Open(name)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return wadFail("%s: %v", name, err)
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return wadFail("%s: %v", name, err)
		}
		if st.IsDir() {
			return wadFail("%s: is a directory", name)
		}
		r, size = f, st.Size()
	}
	st, err := codec.Scan(r, size, opt)
	w := c.App.Writer
	if w == nil {
		w = os.Stdout
	}
	if st.Header.Size > 0 {
		fmt.Fprintf(w, "file:           %s\n", name)
		fmt.Fprintf(w, "tag:            %q\n", st.Header.Tag)
		fmt.Fprintf(w, "declared size:  %d\n", st.Header.Size)
		if err == nil {
			fmt.Fprintf(w, "decoded size:   %d\n", st.DecodedSize)
			if st.Header.Size > 0 {
				fmt.Fprintf(w, "ratio:          %.3f\n", float64(st.DecodedSize)/float64(st.Header.Size))
			}
		} else {
			fmt.Fprintf(w, "decoded size:   %d (decodes cleanly up to the error)\n", st.DecodedSize)
		}
		fmt.Fprintf(w, "literals:       %d (%d long, %d short)\n", st.Literals, st.LongLiterals, st.Literals-st.LongLiterals)
		fmt.Fprintf(w, "short matches:  %d\n", st.ShortMatches)
		fmt.Fprintf(w, "matches:        %d\n", st.Matches)
		fmt.Fprintf(w, "far matches:    %d\n", st.FarMatches)
		fmt.Fprintf(w, "dummies:        %d\n", st.Dummies)
		fmt.Fprintf(w, "block markers:  %d\n", st.BlockMarkers)
	}
	if err != nil {
		return wadStreamError(name, err, st.DecodedSize)
	}
	return nil
}
