package fsnode

import (
	"errors"
	"strings"

	"gcfs/discimg"
)

// How problems reach the user: the tree logs each problem once through its
// Limiter (Options.Logf), and the front ends ask the model for what they
// must act on (LostEntries for a directory whose listing is lost, Err and
// Open for a file).

// logImageProblems logs, once each, the damage the ISO walk found: every
// directory whose entries are missing from the tree (a damaged record, a
// loop, an extent past the image's end), and every problem no listed entry
// carries (bad records, unsafe or duplicate names left out). A file's own
// Err is reported where it is used (open, read, xattr).
func (t *Tree) logImageProblems() {
	img := t.Image
	onEntries := map[string]bool{} // by text: an error value need not be comparable
	var dirs []*discimg.Entry
	var collect func(e *discimg.Entry, depth int)
	collect = func(e *discimg.Entry, depth int) {
		if e == nil || depth > maxDepth {
			return
		}
		if e.Err != nil {
			onEntries[e.Err.Error()] = true
			if e.IsDir {
				dirs = append(dirs, e)
			}
		}
		for _, c := range e.Children {
			collect(c, depth+1)
		}
	}
	collect(img.Root, 0)
	for _, e := range dirs {
		err := dirErrText(e)
		t.logf("%v%s", err, lossSuffix(err))
	}
	for _, p := range img.Problems {
		if !onEntries[p.Error()] {
			t.logf("%v", p)
		}
	}
	if img.MoreProblems > 0 {
		t.logf("and %d more problems in the ISO directories, counted, not kept", img.MoreProblems)
	}
}

// dirErrText is a directory entry's error, naming the directory when the
// error does not.
func dirErrText(e *discimg.Entry) error {
	msg := e.Err.Error()
	if e.Path == "" {
		if strings.Contains(msg, "root directory") || strings.Contains(msg, "directory / ") {
			return e.Err
		}
		return &pathError{path: "root directory", err: e.Err}
	}
	if strings.Contains(msg, "/"+e.Path+" ") {
		return e.Err
	}
	return &pathError{path: "/" + e.Path, err: e.Err}
}

// ImageDirErrors lists the errors of the directories whose entries are
// missing from a tree built on img (root first, then in walk order), each
// naming its directory. A front end that does not build the tree (the mount's
// parent process) reports them with it.
func ImageDirErrors(img *discimg.Image) []error {
	var out []error
	var rec func(e *discimg.Entry, depth int)
	rec = func(e *discimg.Entry, depth int) {
		if e == nil || depth > maxDepth {
			return
		}
		if e.IsDir && e.Err != nil {
			out = append(out, dirErrText(e))
		}
		for _, c := range e.Children {
			rec(c, depth+1)
		}
	}
	if img != nil {
		rec(img.Root, 0)
	}
	return out
}

// DirLoss is the line that reports a directory error of ImageDirErrors or
// LostEntries: the error, and what of the directory is missing.
func DirLoss(err error) string { return err.Error() + lossSuffix(err) }

func lossSuffix(err error) string {
	var part *discimg.EntriesLostError
	if errors.As(err, &part) {
		return "" // it says which entries are missing
	}
	return "; what it lists is missing from the tree"
}

// LostEntries says why entries of directory n are missing from the tree (its
// ISO record is damaged, it loops, its extent lies past the image's end), or
// nil. The tree logged it when it was built.
func (n *Node) LostEntries() error {
	if n.Kind != Dir || n.entry == nil || n.entry.Err == nil {
		return nil
	}
	return dirErrText(n.entry)
}

// Logf logs one line through the tree's limiter (a front end's own problems,
// so that they are summarised with the model's).
func (t *Tree) Logf(format string, args ...any) { t.logf(format, args...) }

// FlushLog writes the counts of the log lines held back since the last flush
// (Build flushes once at its end; a mount flushes as it ends).
func (t *Tree) FlushLog() { t.lim.Flush() }

// logFile logs a file's error once, unless the front end reports file errors
// itself (Options.QuietFileErrors) or the error is another file's, logged
// with it (reported).
func (n *Node) logFile(err error) {
	if n.tree.opt.QuietFileErrors || AlreadyLogged(err) {
		return
	}
	if n.shortLogged.CompareAndSwap(false, true) {
		n.tree.logf("%v", err)
	}
}

// pathError puts a path in front of an error that does not start with it.
type pathError struct {
	path string
	err  error
}

func (e *pathError) Error() string { return e.path + ": " + e.err.Error() }
func (e *pathError) Unwrap() error { return e.err }

// WithPath makes err name the file at path once: as it is when it starts
// with "path: " or names "/path " (as the ISO walk's errors do), else with
// "path: " in front. Every error a file's Open, Err and ReadAt return names
// its file, so front ends print them as they are; they pass their own errors
// about a file through WithPath.
func WithPath(path string, err error) error { return withPath(path, err) }

func withPath(path string, err error) error {
	if err == nil || path == "" {
		return err
	}
	if msg := err.Error(); strings.HasPrefix(msg, path+": ") || strings.Contains(msg, "/"+path+" ") {
		return err
	}
	var pe *pathError
	if errors.As(err, &pe) && pe.path == path {
		return err
	}
	return &pathError{path: path, err: err}
}
