// Package overlay is the writable side of a mount with --overlay (SPEC
// "Editing: an overlay, and the disc rebuilt"), FUSE-free: the disc stays
// read-only and every change lives in a directory, DIR, at the tree's paths.
// A file of the tree opened for writing is copied up into DIR (exactly its
// bytes: a view's, a NAME.wad's); reads of an edited file read DIR's copy;
// new names (an editor's temporary file) live only in DIR and may be renamed
// over a file of the tree, which makes them its edit. Each edit is checked as
// it is closed (rebuild.Plan on it alone); one that cannot be rebuilt is kept
// as written, marked user.gcfs.edit_error, and logged once.
//
// Writes go straight to DIR's file (no buffering in the server), so what a
// writer has written is in DIR even if the server is killed.
package overlay

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"gcfs/fsnode"
	"gcfs/rebuild"
)

// EditErrorAttr is the extended attribute an edit that cannot be rebuilt
// carries (on the mount's file and, where DIR's filesystem takes user
// attributes, on DIR's copy).
const EditErrorAttr = "user.gcfs.edit_error"

// ErrNotPermitted is returned for changes the overlay refuses (deleting or
// renaming a file of the disc); the FUSE layer answers EPERM.
var ErrNotPermitted = errors.New("not permitted on a file of the disc")

// ErrConflict is wrapped by the error for an edit of a node that DIR holds
// an edit of in another form already (X.png while X is edited, X while
// X.wad is, a part while its lump is): pack would refuse the two, so the
// mount refuses the second (EBUSY), with a log line naming both.
var ErrConflict = errors.New("is edited in another form already")

// conflict refuses a first edit of tree path p that conflicts with an edit
// DIR holds.
func (o *Overlay) conflict(p string) error {
	var found error
	_ = filepath.WalkDir(o.dir, func(f string, d fs.DirEntry, err error) error {
		if err != nil || found != nil {
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		rel, rerr := filepath.Rel(o.dir, f)
		if rerr != nil {
			return nil
		}
		q := filepath.ToSlash(rel)
		if q == p || !o.IsDisc(q) {
			return nil
		}
		if why := rebuild.Conflict(o.tree, q, p); why != "" {
			found = fmt.Errorf("%s: %w: %s (pack would refuse both): keep %s, or remove %s from %s first", p, ErrConflict, why, q, q, o.dir)
		}
		return nil
	})
	if found != nil {
		o.logf("gcfs: %s", oneLine(found.Error()))
	}
	return found
}

// Overlay is one mount's edits.
type Overlay struct {
	tree *fsnode.Tree
	dir  string
	logf func(format string, args ...any)

	// checkMu orders Checks: each reads DIR's copy and sets the mark under
	// it, so the mark is that of the last copy read. RELEASEs run
	// concurrently, and one check of an older write can read a later
	// write's partial bytes and finish after the later write's check.
	checkMu sync.Mutex

	mu     sync.Mutex
	errs   map[string]string // tree path -> why its edit cannot be rebuilt
	logged map[string]string // the error last logged for a path

	derived      map[string]*derivedEntry // tree path -> its bytes computed from edits
	derivedBytes int64
}

// New opens the overlay directory dir (which must exist) for tree.
func New(tree *fsnode.Tree, dir string, logf func(format string, args ...any)) (*Overlay, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if logf == nil {
		logf = func(string, ...any) {}
	}
	return &Overlay{tree: tree, dir: abs, logf: logf, errs: map[string]string{}, logged: map[string]string{}}, nil
}

// Tree is the tree the overlay edits.
func (o *Overlay) Tree() *fsnode.Tree { return o.tree }

// Dir is the overlay directory.
func (o *Overlay) Dir() string { return o.dir }

// file is DIR's path for a tree path ('/'-separated, no leading slash).
func (o *Overlay) file(p string) (string, error) {
	clean := path.Clean("/" + p)[1:]
	if clean == "" || clean != p || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("overlay: %q is no path inside the tree", p)
	}
	return filepath.Join(o.dir, filepath.FromSlash(p)), nil
}

// Edited says whether p has a copy in DIR (an edit or a new file), and its
// size.
func (o *Overlay) Edited(p string) (int64, bool) {
	f, err := o.file(p)
	if err != nil {
		return 0, false
	}
	st, err := os.Lstat(f)
	if err != nil || !st.Mode().IsRegular() {
		return 0, false
	}
	return st.Size(), true
}

// OpenRead opens DIR's copy of p for reading.
func (o *Overlay) OpenRead(p string) (*os.File, error) {
	f, err := o.file(p)
	if err != nil {
		return nil, err
	}
	return os.OpenFile(f, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// OpenWrite opens p for writing, copying the tree's file n up into DIR
// first unless DIR has it already (or trunc says its bytes are not wanted).
func (o *Overlay) OpenWrite(p string, n *fsnode.Node, trunc bool) (*os.File, error) {
	f, err := o.file(p)
	if err != nil {
		return nil, err
	}
	if _, ok := o.Edited(p); !ok {
		if err := o.conflict(p); err != nil {
			return nil, err
		}
		if err := o.copyUp(f, n, trunc); err != nil {
			return nil, fmt.Errorf("copying %s up into %s: %w", p, o.dir, err)
		}
	}
	flags := os.O_RDWR | syscall.O_NOFOLLOW
	if trunc {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(f, flags, 0)
}

// copyUp writes n's bytes (none when empty) to f through a temporary file
// renamed into place, so DIR never holds half a copy.
func (o *Overlay) copyUp(f string, n *fsnode.Node, empty bool) error {
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(f), ".gcfs-copyup-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if !empty && n != nil {
		r, err := n.Open()
		if err != nil {
			tmp.Close()
			return err
		}
		if _, err := io.Copy(tmp, io.NewSectionReader(r, 0, r.Size())); err != nil {
			tmp.Close()
			return err
		}
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f)
}

// Truncate sets p's edited size, copying it up first.
func (o *Overlay) Truncate(p string, n *fsnode.Node, size int64) error {
	f, err := o.OpenWrite(p, n, size == 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Truncate(size)
}

// Create makes a new file at p, a name the tree does not have.
func (o *Overlay) Create(p string) (*os.File, error) {
	f, err := o.file(p)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		return nil, err
	}
	return os.OpenFile(f, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o644)
}

// IsDisc says whether p is a file of the disc's tree.
func (o *Overlay) IsDisc(p string) bool {
	n, err := o.tree.Lookup(p)
	return err == nil && n != nil && n.Path() == p
}

// Remove deletes a new file (never a file of the disc, nor its edit).
func (o *Overlay) Remove(p string) error {
	if o.IsDisc(p) {
		return ErrNotPermitted
	}
	f, err := o.file(p)
	if err != nil {
		return err
	}
	return os.Remove(f)
}

// Rename moves a new file to another name: a new one, or a file of the disc
// (an editor's save), whose edit it then is and is checked as one.
func (o *Overlay) Rename(from, to string) error {
	if o.IsDisc(from) {
		return ErrNotPermitted
	}
	src, err := o.file(from)
	if err != nil {
		return err
	}
	dst, err := o.file(to)
	if err != nil {
		return err
	}
	if _, edited := o.Edited(to); !edited && o.IsDisc(to) {
		if err := o.conflict(to); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := os.Rename(src, dst); err != nil {
		return err
	}
	// (from, never a disc path, has no mark: Check marks only those.)
	if o.IsDisc(to) {
		o.Check(to)
	}
	return nil
}

// Check checks the edit at p (a file of the disc with a copy in DIR) as pack
// would rebuild it alone, and marks it: an edit that cannot be rebuilt gets
// EditErrorAttr and one log line (again only when the reason changes).
func (o *Overlay) Check(p string) {
	if !o.IsDisc(p) {
		return
	}
	f, err := o.file(p)
	if err != nil {
		return
	}
	o.checkMu.Lock()
	defer o.checkMu.Unlock()
	b, err := os.ReadFile(f)
	if checkRead != nil {
		checkRead(p)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			o.setErr(p, f, "")
		}
		return
	}
	why := ""
	if _, err := rebuild.Plan(o.tree, []rebuild.Edit{{Path: p, Data: b}}, rebuild.Options{}); err != nil {
		why = err.Error()
		var ee *rebuild.EditError
		if errors.As(err, &ee) {
			why = ee.Err.Error()
		}
	}
	o.setErr(p, f, why)
}

// checkRead, when a test sets it, runs in Check between reading the edit
// and marking it.
var checkRead func(p string)

func (o *Overlay) setErr(p, f, why string) {
	// Log before the mark is visible: whoever sees the mark (a getxattr
	// through the mount) may look for the log line next.
	o.mu.Lock()
	log := why != "" && o.logged[p] != why
	if log {
		o.logged[p] = why
	}
	o.mu.Unlock()
	if log {
		o.logf("gcfs: %s: edit kept in %s but cannot be rebuilt: %s", p, o.dir, oneLine(why))
	}
	o.mu.Lock()
	if why == "" {
		delete(o.errs, p)
	} else {
		o.errs[p] = why
	}
	o.mu.Unlock()
	if why == "" {
		_ = unix.Removexattr(f, EditErrorAttr)
		return
	}
	// Best effort: DIR's filesystem may not take user attributes; the
	// mount answers from memory either way.
	_ = unix.Setxattr(f, EditErrorAttr, []byte(why), 0)
}

// EditError is why p's edit cannot be rebuilt, if it cannot.
func (o *Overlay) EditError(p string) (string, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	why, ok := o.errs[p]
	return why, ok
}

func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}

// Views and decoded files computed from an edit (SPEC "Editing": the PNG of
// an edited PIF shows the edit at once). fsnode computes them from the
// current bytes of what they are computed from (Node.Derived); the overlay
// gives those bytes (DIR's copies) and keeps the last results, each with
// the size and time of every DIR file it came from, so a node is computed
// again only when one of them changes.

// maxDerivedCache bounds the bytes of the computed files kept.
const maxDerivedCache = 128 << 20

// stamp is one source's file in DIR as it was when a result was computed.
type stamp struct {
	path  string
	size  int64
	mtime int64
	ok    bool
}

type derivedEntry struct {
	stamps []stamp
	data   []byte
	err    error
}

func (o *Overlay) stamps(srcs []*fsnode.Node) ([]stamp, bool) {
	out := make([]stamp, 0, len(srcs))
	any := false
	for _, s := range srcs {
		st := stamp{path: s.Path()}
		if f, err := o.file(st.path); err == nil {
			if fi, err := os.Lstat(f); err == nil && fi.Mode().IsRegular() {
				st.size, st.mtime, st.ok = fi.Size(), fi.ModTime().UnixNano(), true
				any = true
			}
		}
		out = append(out, st)
	}
	return out, any
}

func sameStamps(a, b []stamp) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Derived is the current bytes of n (at tree path p), a node without an
// edit of its own that is computed from one that has (a view of an edited
// PIF, the decoded file of an edited NAME.wad); ok false when nothing n is
// computed from is edited. err: the edit cannot give n (a PIF edit that is
// no PIF); the edit itself is marked by Check.
func (o *Overlay) Derived(p string, n *fsnode.Node) ([]byte, bool, error) {
	if n == nil {
		return nil, false, nil
	}
	srcs := n.Sources()
	if len(srcs) == 0 {
		return nil, false, nil
	}
	st, any := o.stamps(srcs)
	if !any {
		return nil, false, nil
	}
	o.mu.Lock()
	if e, hit := o.derived[p]; hit && sameStamps(e.stamps, st) {
		o.mu.Unlock()
		return e.data, true, e.err
	}
	o.mu.Unlock()
	b, ok, err := n.Derived(func(m *fsnode.Node) ([]byte, bool, error) {
		f, ferr := o.file(m.Path())
		if ferr != nil {
			return nil, false, nil
		}
		fi, serr := os.Lstat(f)
		if serr != nil || !fi.Mode().IsRegular() {
			return nil, false, nil
		}
		if fi.Size() > maxEditRead {
			return nil, true, fmt.Errorf("%s: %d bytes, larger than a DVD", m.Path(), fi.Size())
		}
		r, rerr := os.ReadFile(f)
		return r, true, rerr
	})
	if !ok {
		return nil, false, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.derived == nil {
		o.derived = map[string]*derivedEntry{}
	}
	if old, hit := o.derived[p]; hit {
		o.derivedBytes -= int64(len(old.data))
		delete(o.derived, p)
	}
	if int64(len(b)) <= maxDerivedCache {
		for k, e := range o.derived {
			if o.derivedBytes+int64(len(b)) <= maxDerivedCache {
				break
			}
			o.derivedBytes -= int64(len(e.data))
			delete(o.derived, k)
		}
		o.derived[p] = &derivedEntry{stamps: st, data: b, err: err}
		o.derivedBytes += int64(len(b))
	}
	return b, true, err
}

// maxEditRead bounds one edit read whole: no file of a single-layer DVD is
// larger.
const maxEditRead = rebuild.DVDLimit
