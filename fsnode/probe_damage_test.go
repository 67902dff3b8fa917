package fsnode

import (
	"errors"
	"io"
	"os"
	"sort"
	"strings"
	"testing"

	"gcfs/discimg"
)

// badBlockReader is an image with one unreadable range, as a CSO block or a
// CHD hunk whose codec fails: a read that reaches it returns the bytes before
// it and an error; every other read is untouched.
type badBlockReader struct {
	r      io.ReaderAt
	lo, hi int64
}

var errBadBlock = errors.New("bad block (test)")

func (b *badBlockReader) ReadAt(p []byte, off int64) (int, error) {
	end := off + int64(len(p))
	if end <= b.lo || off >= b.hi {
		return b.r.ReadAt(p, off)
	}
	if off >= b.lo {
		return 0, errBadBlock
	}
	n, err := b.r.ReadAt(p[:b.lo-off], off)
	if err == nil {
		err = errBadBlock
	}
	return n, err
}

func openWith(t *testing.T, r io.ReaderAt, size int64) *Tree {
	t.Helper()
	img, err := discimg.Open(r, size)
	if err != nil {
		t.Fatalf("discimg.Open: %v", err)
	}
	tree, err := Build(img, Options{Logf: func(string, ...any) {}})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// Issue 18 item 4: one bad block changed the kind of readable files beside
// it (the build's probes are read in merged runs, and a run that failed made
// every probe after the failure "not a stream", "not a VAG"). Now a failed
// run decides nothing: files whose own first bytes read keep their kind and
// names; the file whose first bytes lie in the bad block is an error.
func TestBadBlockChangesNoNeighbour(t *testing.T) {
	path, _ := small(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	ref := openWith(t, f, st.Size())

	// Image-backed files, by offset; and the extents of the tables the
	// build reads (containers, part tables), which the bad block must miss
	// so that what this test shows is the probes alone.
	type leaf struct {
		n    *Node
		kind Kind
		path string
	}
	var leaves []leaf
	var tables [][2]int64
	_ = ref.Walk(func(n *Node) error {
		switch {
		case n.Container() != nil:
			tables = append(tables, [2]int64{n.off, n.off + int64(len(n.Container().Header))})
		case n.partsOf != nil && n.partsOf.hasRange:
			tables = append(tables, [2]int64{n.partsOf.off, n.partsOf.off + n.partsOf.size})
		case n.hasRange && n.Kind != Dir && n.wadOf == nil && (n.extent != nil || n.Parent.partsOf != nil):
			leaves = append(leaves, leaf{n, n.Kind, n.Path()})
		}
		return nil
	})
	sort.Slice(leaves, func(i, j int) bool { return leaves[i].n.off < leaves[j].n.off })
	touches := func(lo, hi int64, r [2]int64) bool { return lo < r[1] && r[0] < hi }
	special := func(l leaf) bool { return l.kind == Decoded || strings.HasSuffix(l.path, ".vag") }
	// The victim: a VAG or a stream whose sector holds no table, followed
	// within the merge gap by files whose kind a lost probe would change.
	victim := -1
	var lo, hi int64
	for i, l := range leaves {
		if !special(l) {
			continue
		}
		lo = l.n.off &^ (discimg.SectorSize - 1)
		hi = lo + discimg.SectorSize
		clean := true
		for _, tb := range tables {
			clean = clean && !touches(lo, hi, tb)
		}
		after := 0
		for _, m := range leaves[i+1:] {
			if m.n.off >= l.n.off+probeGap {
				break
			}
			if m.n.off >= hi && special(m) {
				after++
			}
		}
		if clean && after >= 2 {
			victim = i
			break
		}
	}
	if victim < 0 {
		t.Fatal("the small disc has no file with special neighbours in its probe run")
	}
	v := leaves[victim]
	damaged := openWith(t, &badBlockReader{r: f, lo: lo, hi: hi}, st.Size())

	kept := 0
	for _, l := range leaves {
		probeEnd := l.n.off + min(l.n.size, viewPrefix)
		if touches(l.n.off, probeEnd, [2]int64{lo, hi}) {
			continue
		}
		got, err := damaged.Lookup(l.path)
		if err != nil {
			t.Errorf("%s (%v, first bytes readable) is gone from the damaged tree: %v", l.path, l.kind, err)
			continue
		}
		if got.Kind != l.kind {
			t.Errorf("%s: %v in the damaged tree, %v in the good one", l.path, got.Kind, l.kind)
		}
		if l.kind == Decoded {
			if _, err := damaged.Lookup(l.path + ".wad"); err != nil {
				t.Errorf("%s.wad is gone from the damaged tree", l.path)
			}
		}
		kept++
	}
	// The victim: under its stored name, an error saying why, no view.
	name := strings.TrimSuffix(v.path, ".vag")
	got, err := damaged.Lookup(name)
	if err != nil {
		t.Fatalf("%s (first bytes in the bad block) is gone: %v", name, err)
	}
	var pe *ProbeError
	if err := got.Err(); !errors.As(err, &pe) || !errors.Is(err, errBadBlock) || !strings.Contains(err.Error(), name) {
		t.Errorf("%s: Err %v, want the probe's read error naming it", name, err)
	}
	if _, err := got.Open(); err == nil {
		t.Errorf("%s opens", name)
	}
	if got.Kind == Decoded {
		t.Errorf("%s is decoded though its header could not be read", name)
	}
	for _, ext := range []string{".wav", ".wad", ".png"} {
		if _, err := damaged.Lookup(name + ext); err == nil {
			t.Errorf("%s%s is listed though %s could not be read", name, ext, name)
		}
	}
	t.Logf("bad block %#x..%#x: victim %s, %d other files checked", lo, hi, v.path, kept)
	if kept < 10 {
		t.Errorf("only %d files checked", kept)
	}
}

// A container whose header lies in a bad block: its table cannot be read,
// which says nothing of what it is, so it is an error (EIO), not a plain
// file served as if its bytes were all there is; the other containers are
// directories as before.
func TestBadBlockAtContainerHeader(t *testing.T) {
	path, _ := small(t)
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	ref := openWith(t, f, st.Size())
	hud, err := ref.Lookup("G/HUD.WAD")
	if err != nil || hud.Kind != Dir {
		t.Fatalf("G/HUD.WAD: %v %v", hud, err)
	}
	lo := hud.off
	damaged := openWith(t, &badBlockReader{r: f, lo: lo, hi: lo + discimg.SectorSize}, st.Size())
	got, err := damaged.Lookup("G/HUD.WAD")
	if err != nil {
		t.Fatal(err)
	}
	if got.Kind == Dir || !errors.Is(got.Err(), errBadBlock) {
		t.Errorf("G/HUD.WAD with its header unreadable: %v, Err %v; want an error", got.Kind, got.Err())
	}
	if _, err := got.Open(); !errors.Is(err, errBadBlock) {
		t.Errorf("G/HUD.WAD opens: %v", err)
	}
	for _, c := range ref.Root.Child("G").Children {
		if c.Kind == Dir && c.Name != "HUD.WAD" {
			if d := damaged.Root.Child("G").Child(c.Name); d == nil || d.Kind != Dir {
				t.Errorf("G/%s is no longer a directory", c.Name)
			}
		}
	}
}
