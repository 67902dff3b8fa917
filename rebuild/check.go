package rebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"gcfs/fsnode"
)

// Check reads the rebuilt disc back through its tree and compares it with the
// original: every edited node reads as its edit (with the zeros its table's
// unit adds), every file no edit encloses reads as before, the tree has the
// same files (but under an edited file, whose parts are the edit's), and
// every container RC2.HDR matched still matches it. It returns every problem
// found (the first few named).
func Check(orig, rebuilt *fsnode.Tree, l *Layout) error {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	seen := map[string]bool{}
	// underEdit: n's bytes come from inside an edited file (its parts,
	// its views), so they are whatever the edit holds.
	underEdit := func(n *fsnode.Node) bool {
		for m := canon(n); ; {
			e, err := encloser(m)
			if err != nil || e == nil {
				return false
			}
			if l.edited[e.Path()] {
				return true
			}
			m = e
		}
	}
	viewOfEdit := func(n *fsnode.Node) bool {
		_, src := n.View()
		return src != nil && (l.changed[canon(src).Path()] || underEdit(src))
	}
	// reencoded: a decoded encloser of n was encoded again, so n's decoded
	// bytes are not proven by the stored bytes beside them.
	reencoded := func(n *fsnode.Node) bool {
		for m := canon(n); ; {
			e, err := encloser(m)
			if err != nil || e == nil {
				return false
			}
			if e.Kind != fsnode.Raw && l.changed[e.Path()] {
				return true
			}
			m = e
		}
	}
	err := orig.Walk(func(n *fsnode.Node) error {
		p := n.Path()
		seen[p] = true
		if n.Kind == fsnode.View || underEdit(n) {
			return nil
		}
		if parts, of := n.Parts(); parts != nil && of != nil && (l.edited[canon(of).Path()] || underEdit(of)) {
			return nil // the NAME.d/ of an edited file: its parts are the edit's
		}
		m, err := rebuilt.Lookup(p)
		if err != nil {
			add("%s: missing from the rebuilt disc", p)
			return nil
		}
		if n.IsDir() != m.IsDir() {
			add("%s: a directory in one disc and a file in the other", p)
			return nil
		}
		if n.IsDir() {
			if n.Container() != nil && n.TOCStatus() == "matches" && m.TOCStatus() != "matches" {
				add("%s: RC2.HDR: %s", p, m.TOCStatus())
			}
			return nil
		}
		want, expected := l.Expect[p]
		switch {
		case expected:
			if err := sameAs(m, bytes.NewReader(want), int64(len(want))); err != nil {
				add("%s: not the edit: %v", p, err)
			}
		case l.changed[canon(n).Path()]:
			// Rebuilt around an edit: its parts are checked one by one.
		case n.Kind == fsnode.Raw || reencoded(n):
			if err := n.Err(); err != nil {
				if m.Err() == nil {
					add("%s: reads in the rebuilt disc, not in the original (%v)", p, err)
				}
				return nil
			}
			r, err := n.Open()
			if err != nil {
				add("%s: %v", p, err)
				return nil
			}
			if err := sameAs(m, r, r.Size()); err != nil {
				add("%s: differs from the original: %v", p, err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	_ = rebuilt.Walk(func(m *fsnode.Node) error {
		if !seen[m.Path()] && m.Kind != fsnode.View && !underEdit(m) && !viewOfEdit(m) {
			add("%s: in the rebuilt disc only", m.Path())
		}
		return nil
	})
	for _, f := range [...]struct {
		name string
		lba  int64
	}{{"SYSTEM.CNF", systemCNFLBA}, {"RC2.HDR", rc2HdrLBA}} {
		if n := orig.Root.Child(f.name); n != nil && n.Entry() != nil && n.Entry().LBA == f.lba {
			if m := rebuilt.Root.Child(f.name); m == nil || m.Entry() == nil || m.Entry().LBA != f.lba {
				add("%s: no longer at LBA %d", f.name, f.lba)
			}
		}
	}
	if len(problems) == 0 {
		return nil
	}
	const show = 8
	msg := strings.Join(problems[:min(show, len(problems))], "; ")
	if len(problems) > show {
		msg += fmt.Sprintf("; and %d more", len(problems)-show)
	}
	return &CheckError{Problems: problems, msg: msg}
}

// CheckError lists what the read-back check found.
type CheckError struct {
	Problems []string
	msg      string
}

func (e *CheckError) Error() string {
	return "the rebuilt disc does not read back as it should: " + e.msg
}

var bufPool = sync.Pool{New: func() any { return &[2][]byte{make([]byte, 1<<20), make([]byte, 1<<20)} }}

// sameAs compares a rebuilt node's bytes with want (size bytes).
func sameAs(m *fsnode.Node, want io.ReaderAt, size int64) error {
	bufs := bufPool.Get().(*[2][]byte)
	defer bufPool.Put(bufs)
	a, b := bufs[0], bufs[1]
	if err := m.Err(); err != nil {
		return err
	}
	if m.Size() != size {
		return fmt.Errorf("%d bytes, want %d", m.Size(), size)
	}
	r, err := m.Open()
	if err != nil {
		return err
	}
	for off := int64(0); off < size; {
		n := min(int64(len(a)), size-off)
		if _, err := r.ReadAt(a[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if _, err := want.ReadAt(b[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		if !bytes.Equal(a[:n], b[:n]) {
			for i := range n {
				if a[i] != b[i] {
					return fmt.Errorf("first difference at byte %d", off+i)
				}
			}
		}
		off += n
	}
	return nil
}
