package fsnode

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"gcfs/discimg"
	"gcfs/fsnode/testdisc"
)

func TestLimiterSummarises(t *testing.T) {
	lr := &testdisc.Log{}
	l := NewLimiter(lr.Logf, 3)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				l.Logf("%v", &discimg.FormatError{What: fmt.Sprintf("directory record of /D/F%d", i), Offset: int64(i * 34),
					Reason: "duplicate name in its directory; not listed"})
			}
		}(g)
	}
	wg.Wait()
	l.Logf("%v", &discimg.FormatError{What: "directory /G", Offset: 9, Reason: "directory loop: extent at LBA 22 is an ancestor's"})
	l.Logf("%s: stays a plain file: %v", "G/A.WAD", fmt.Errorf("no table"))
	l.Flush()
	if n := lr.Count("duplicate name"); n != 4 { // 3 shown + the summary's example
		t.Errorf("%d lines about duplicates, want 3 and a summary: %q", n, lr.Lines())
	}
	if lr.Count("97 more problems") != 1 {
		t.Errorf("no summary of the 97 not shown: %q", lr.Lines())
	}
	if lr.Count("directory loop") != 1 || lr.Count("stays a plain file") != 1 {
		t.Errorf("other kinds held back: %q", lr.Lines())
	}
	before := len(lr.Lines())
	l.Flush()
	if len(lr.Lines()) != before {
		t.Errorf("a second Flush logged again: %q", lr.Lines()[before:])
	}
	var nilLim *Limiter
	nilLim.Logf("x")
	nilLim.Flush()
}

// Issue 10 case 8: a read of an image that shrank after it was opened says
// the image's size now, not the end it wanted.
func TestShortImageSaysImageSize(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	n := mustLookup(t, tree, "ZTAIL.DUP")
	off, size, _ := n.ImageRange()
	cut := off + 10
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	if err := truncate(d.Path, cut); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, size)
	_, err = r.ReadAt(buf, 0)
	se, ok := err.(*ShortImageError)
	if !ok || se.ImageSize != cut || se.Offset != cut || se.End != off+size {
		t.Fatalf("read after the image shrank to %d: %v", cut, err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("image has %d", cut)) || !strings.HasPrefix(err.Error(), "ZTAIL.DUP: ") {
		t.Errorf("message %q", err)
	}
}

// Issue 10 cases 2 and 8: Build logs a damaged directory once, naming it,
// and LostEntries says it.
func TestLostEntries(t *testing.T) {
	d := writeDisc(t)
	if err := testdisc.PatchRecord(d.Path, "G", func(rec []byte) { testdisc.Both32(rec[2:], 1<<22) }); err != nil {
		t.Fatal(err)
	}
	tree, logs := openDisc(t, d.Path, -1, Options{})
	g := mustLookup(t, tree, "G")
	if err := g.LostEntries(); err == nil || !strings.Contains(err.Error(), "/G") {
		t.Errorf("G.LostEntries() = %v", err)
	}
	if tree.Root.LostEntries() != nil {
		t.Errorf("root.LostEntries() = %v", tree.Root.LostEntries())
	}
	if logs.Count("/G") != 1 {
		t.Errorf("want one line naming /G: %q", logs.Lines())
	}
}

func truncate(path string, size int64) error { return os.Truncate(path, size) }
