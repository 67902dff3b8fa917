package rebuild

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"gcfs/fsnode"
)

// An overlay is a directory of edits at the tree's paths (SPEC "Editing"):
// DIR/G/LEVEL1.WAD/gameplay is new bytes for that file of the tree. Files
// that are no file of the tree (an editor's temporary file, a typo) are
// named and left alone.

// OverlayFile is one file of an overlay as it was read.
type OverlayFile struct {
	Path    string // tree path, '/'-separated
	Size    int64
	ModTime time.Time
}

// Ignored is an overlay file that is no edit, and why.
type Ignored struct {
	Path   string
	Reason string
}

// maxEdit bounds one edit read from an overlay: no file of a single-layer
// DVD is larger.
const maxEdit = DVDLimit

// ReadOverlay reads every regular file under dir that names a file of the
// tree. Symlinks are never followed (they are ignored, named); a file larger
// than a DVD is refused.
func ReadOverlay(t *fsnode.Tree, dir string) ([]Edit, []OverlayFile, []Ignored, error) {
	var edits []Edit
	var files []OverlayFile
	var ignored []Ignored
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, rerr := filepath.Rel(dir, p)
		if rerr != nil {
			return rerr
		}
		rel = filepath.ToSlash(rel)
		if rel == "." {
			return nil
		}
		if d.IsDir() {
			if n, err := t.Lookup(rel); err != nil || !n.IsDir() {
				ignored = append(ignored, Ignored{rel + "/", "no directory of the disc's tree has this path"})
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			ignored = append(ignored, Ignored{rel, "not a regular file (" + d.Type().String() + ")"})
			return nil
		}
		n, err := t.Lookup(rel)
		if err != nil {
			ignored = append(ignored, Ignored{rel, "no file of the disc's tree has this path"})
			return nil
		}
		if n.IsDir() {
			ignored = append(ignored, Ignored{rel, "a directory in the disc's tree"})
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > maxEdit {
			return fmt.Errorf("%s: %d bytes, larger than a DVD", p, fi.Size())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		edits = append(edits, Edit{Path: rel, Data: b})
		files = append(files, OverlayFile{Path: rel, Size: fi.Size(), ModTime: fi.ModTime()})
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("overlay %s: %w", dir, err)
	}
	return edits, files, ignored, nil
}

// OverlayChanged says which edits of an overlay changed (or appeared, or
// went) since ReadOverlay read files from it, or "" when none did.
func OverlayChanged(t *fsnode.Tree, dir string, files []OverlayFile) (string, error) {
	now := map[string]OverlayFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() || !d.Type().IsRegular() {
			return nil
		}
		if n, err := t.Lookup(rel); err != nil || n.IsDir() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		now[rel] = OverlayFile{rel, fi.Size(), fi.ModTime()}
		return nil
	})
	if err != nil {
		return "", err
	}
	var diffs []string
	for _, f := range files {
		g, ok := now[f.Path]
		switch {
		case !ok:
			diffs = append(diffs, f.Path+" was removed")
		case g.Size != f.Size || !g.ModTime.Equal(f.ModTime):
			diffs = append(diffs, f.Path+" was written")
		}
		delete(now, f.Path)
	}
	for p := range now {
		diffs = append(diffs, p+" appeared")
	}
	sort.Strings(diffs)
	if len(diffs) == 0 {
		return "", nil
	}
	if len(diffs) > 5 {
		diffs = append(diffs[:5], "and "+strconv.Itoa(len(diffs)-5)+" more")
	}
	return strings.Join(diffs, ", "), nil
}
