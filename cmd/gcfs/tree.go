package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"

	"gcfs/discimg"
	"gcfs/fsnode"
)

// treeCommands are the commands that show the tree without FUSE.
func treeCommands() []*cli.Command {
	return []*cli.Command{
		identifyCommand(),
		lsCommand(),
		catCommand(),
		extractCommand(),
		infoCommand(),
		manifestCommand(),
		verifyCommand(),
	}
}

// maxDecodedFlag bounds decoded streams for every tree command (a new flag
// each time: urfave/cli flags keep parse state).
func maxDecodedFlag() cli.Flag {
	return &cli.StringFlag{
		Name:  "max-decoded",
		Usage: "largest decoded stream (`SIZE`, e.g. 256MiB); larger ones are errors",
		Value: "256MiB",
	}
}

// noViewsFlag hides the views (PNG, WAV, SRT) for scripts that want only
// disc bytes.
func noViewsFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-views", Usage: "hide the views (NAME.png, NAME.wav, NAME.d/*.srt): only the disc's bytes"}
}

// noIndexCacheFlag turns off the persisted index (the sidecar of decoded
// sizes in $XDG_CACHE_HOME/gcfs/).
func noIndexCacheFlag() cli.Flag {
	return &cli.BoolFlag{Name: "no-index-cache", Usage: "neither read nor write the index sidecar in $XDG_CACHE_HOME/gcfs/ (decoded sizes remembered between runs)"}
}

// indexCacheOptions sets the tree's sidecar options for an image file,
// unless --no-index-cache (or no cache directory) says otherwise.
func indexCacheOptions(noCache bool, f *os.File, opt *fsnode.Options) {
	if noCache {
		return
	}
	dir, err := fsnode.DefaultIndexCacheDir()
	if err != nil {
		return
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return
	}
	opt.IndexCacheDir, opt.ImageFile = dir, fi
}

// openedTree is an image file, its ISO tree and the fsnode model over it.
type openedTree struct {
	path   string
	file   *os.File // the image file when its bytes are the image's (plain ISO or device), else nil
	img    *discimg.Image
	tree   *fsnode.Tree
	opened *openedImage
}

// Close saves what the command learned in the index sidecar (sizes
// scanned), says how many warnings were held back since the tree was built
// (the limiter's counts) and closes the image.
func (o *openedTree) Close() error {
	o.tree.Quiesce()
	if err := o.tree.SaveIndex(); err != nil {
		o.tree.Logf("%v", err)
	}
	o.tree.FlushLog()
	return o.opened.Close()
}

// openTree opens IMAGE and builds the tree. Problems found while building are
// printed to stderr as warnings, prefixed with the image's name.
func openTree(c *cli.Context, path string) (*openedTree, error) {
	maxDec := int64(fsnode.DefaultMaxDecoded)
	if c.String("max-decoded") != "" {
		v, err := humanize.ParseBytes(c.String("max-decoded"))
		if err != nil || v == 0 || v > 1<<40 {
			return nil, exitErr(2, "--max-decoded %q: not a size like 256MiB", c.String("max-decoded"))
		}
		maxDec = int64(v)
	}
	oi, err := openImage(path, c.String("parent"), 64<<20)
	if err != nil {
		return nil, cli.Exit(err.Error(), 1)
	}
	stderr := errWriter(c)
	var mu sync.Mutex
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "gcfs: %s: warning: %s\n", path, fmt.Sprintf(format, args...))
	}
	opt := fsnode.Options{
		MaxDecoded: maxDec,
		NoViews:    c.Bool("no-views"),
		CacheSize:  64 << 20,
		// These commands report each failing file themselves, once.
		QuietFileErrors: reportsFiles[c.Command.Name],
		Cache:           oi.cache,
		Logf:            logf,
	}
	indexCacheOptions(c.Bool("no-index-cache"), oi.file, &opt)
	tree, err := fsnode.Build(oi.img, opt)
	if err != nil {
		oi.Close()
		return nil, cli.Exit(fmt.Sprintf("%s: %v", path, err), 1)
	}
	return &openedTree{path: path, file: oi.spliceFile(), img: oi.img, tree: tree, opened: oi}, nil
}

// fileErrorLog prints the errors of the files a command cannot read, one
// line each, through the same Limiter as the tree's warnings: of each kind
// the first few, then (at Flush) one line with the count of the rest.
func fileErrorLog(c *cli.Context, path string) *fsnode.Limiter {
	stderr := errWriter(c)
	var mu sync.Mutex
	return fsnode.NewLimiter(func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "gcfs: %s: %s\n", path, fmt.Sprintf(format, args...))
	}, 0)
}

// reportsFiles: the commands that print an error line for every file they
// cannot read (the tree need not log them too).
var reportsFiles = map[string]bool{"cat": true, "manifest": true, "verify": true, "extract": true}

// lookup finds PATH in the tree, with an error naming the image.
// openNode opens the tree of the image named by the first argument and
// finds the node the second names (the root when there is none). The caller
// closes the tree.
func openNode(c *cli.Context) (*openedTree, *fsnode.Node, error) {
	o, err := openTree(c, c.Args().Get(0))
	if err != nil {
		return nil, nil, err
	}
	n, err := o.lookup(c.Args().Get(1))
	if err != nil {
		o.Close()
		return nil, nil, err
	}
	return o, n, nil
}

func (o *openedTree) lookup(p string) (*fsnode.Node, error) {
	n, err := o.tree.Lookup(p)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s: %s: no such file or directory in the tree", o.path, p), 1)
	}
	return n, nil
}

func exitErr(code int, format string, args ...any) error {
	return cli.Exit(fmt.Sprintf(format, args...), code)
}

// usageErr is the error for wrong arguments.
func usageErr(c *cli.Context, want string) error {
	return exitErr(2, "usage: gcfs %s %s (see gcfs %s --help)", c.Command.Name, want, c.Command.Name)
}

func outWriter(c *cli.Context) io.Writer {
	if c.App.Writer != nil {
		return c.App.Writer
	}
	return os.Stdout
}

// errWriter is where the commands' warnings and errors go: stderr (or the
// app's ErrWriter), through escapeLines, so that a name or message from the
// disc or the index cache cannot move the cursor or forge a line.
func errWriter(c *cli.Context) io.Writer {
	w := c.App.ErrWriter
	if w == nil {
		w = os.Stderr
	}
	return escapeLines{w}
}

// escapeLines writes each Write (one message: fmt.Fprintf writes once) with
// its control characters escaped (fsnode.EscapeControl), all but a final
// newline, which ends the line.
type escapeLines struct{ w io.Writer }

func (e escapeLines) Write(p []byte) (int, error) {
	s := string(p)
	nl := strings.HasSuffix(s, "\n")
	s = fsnode.EscapeControl(strings.TrimSuffix(s, "\n"))
	if nl {
		s += "\n"
	}
	if _, err := io.WriteString(e.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// modeString is what ls -l shows: directories r-x, files r-- for everyone.
func modeString(n *fsnode.Node) string {
	if n.IsDir() {
		return "dr-xr-xr-x"
	}
	return "-r--r--r--"
}

// typeName is the JSON "type" of a node.
func typeName(n *fsnode.Node) string {
	switch n.Kind {
	case fsnode.Dir:
		return "dir"
	case fsnode.Decoded:
		return "decoded"
	case fsnode.View:
		return "view"
	}
	return "file"
}

// warmSizes runs the sizing of every view (a lazily sized one encodes unless
// the sidecar has it) and, with decoded, the size scan of every decoded node
// in parallel, so that a listing does not scan or encode one at a time.
func warmSizes(nodes []*fsnode.Node, decoded bool) {
	var todo []*fsnode.Node
	for _, n := range nodes {
		if n.Kind == fsnode.View || decoded && n.Kind == fsnode.Decoded {
			todo = append(todo, n)
		}
	}
	parallel(len(todo), runtime.GOMAXPROCS(0), func(i int) { todo[i].Size() })
}

// parallel runs fn(0..n-1) on up to workers goroutines.
func parallel(n, workers int, fn func(i int)) {
	if workers < 1 {
		workers = 1
	}
	if workers > n {
		workers = n
	}
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// files lists the file nodes under n (n itself when it is a file), walk order.
func files(n *fsnode.Node) []*fsnode.Node {
	var out []*fsnode.Node
	_ = fsnode.WalkListing(n, func(x *fsnode.Node) error {
		if !x.IsDir() {
			out = append(out, x)
		}
		return nil
	})
	return out
}
