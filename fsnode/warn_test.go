package fsnode

import (
	"errors"
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

// TestEscapeControl: control characters, non-printing runes and bytes that
// are not UTF-8 come out as Go escapes; printable text (backslashes, %q
// output, non-ASCII letters) as it is.
func TestEscapeControl(t *testing.T) {
	cases := map[string]string{
		"plain /G/LEVEL1.WAD":   "plain /G/LEVEL1.WAD",
		"a\x1b[2Jb\nforged":     `a\x1b[2Jb\nforged`,
		"tab\there\r":           `tab\there\r`,
		"del\x7f nul\x00":       `del\x7f nul\x00`,
		"c1\u0085 rlo\u202e":    `c1\u0085 rlo\u202e`,
		"bad\xff\xfe utf8":      `bad\xff\xfe utf8`,
		`quoted "a\x1b" é 漢字 \`: `quoted "a\x1b" é 漢字 \`,
	}
	for in, want := range cases {
		if got := EscapeControl(in); got != want {
			t.Errorf("EscapeControl(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLimiterEscapes: a line whose arguments carry ESC and newlines (a name
// from the disc, a rule string from the index sidecar) reaches the sink as
// one line with them escaped, and so does the summary Flush writes.
func TestLimiterEscapes(t *testing.T) {
	lr := &testdisc.Log{}
	l := NewLimiter(lr.Logf, 1)
	for range 3 {
		l.Logf("%s: %v", "G/\x1b[31mLEVEL\nforged: ok", errors.New("wad: \x1b]0;title\x07\nforged line"))
	}
	l.Flush()
	lines := lr.Lines()
	if len(lines) != 3 { // the line, "further ... counted", the summary
		t.Fatalf("lines %q", lines)
	}
	for _, s := range lines {
		if strings.ContainsAny(s, "\x1b\n\x07") {
			t.Errorf("raw control characters reach the sink: %q", s)
		}
	}
	if !strings.Contains(lines[0], `G/\x1b[31mLEVEL\nforged: ok: wad: \x1b]0;title\a\nforged line`) {
		t.Errorf("line %q does not show the escapes", lines[0])
	}
	if !strings.Contains(lines[2], `\x1b[31m`) {
		t.Errorf("summary %q does not show the escapes", lines[2])
	}
}
