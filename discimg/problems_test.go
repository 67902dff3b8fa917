package discimg

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"gcfs/discimg/isowriter"
	"gcfs/fsnode/testdisc"
)

// Issue 10 case 5: a million bad records cost a counter, not a million
// errors: Problems keeps the first maxProblems, MoreProblems counts the rest.
func TestProblemsBounded(t *testing.T) {
	const files = maxProblems + 150
	p, size, err := testdisc.WriteDuplicates(t.TempDir(), files, func(i int) []byte { return []byte{byte(i)} })
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	im, err := Open(bytes.NewReader(b), size)
	if err != nil {
		t.Fatal(err)
	}
	if len(im.Problems) != maxProblems || len(im.Problems)+im.MoreProblems != files-1 {
		t.Errorf("%d problems kept, %d counted; want %d kept of %d", len(im.Problems), im.MoreProblems, maxProblems, files-1)
	}
	if d, ok := im.Lookup("D"); !ok || len(d.Children) != 1 || d.Children[0].Name != "DUP" {
		t.Errorf("D lists %v", d)
	}
}

// The root record's own damage names the root directory.
func TestRootRecordErrorNamesRoot(t *testing.T) {
	fs := []isowriter.File{{Path: "A", Size: 1, Chunks: []isowriter.Chunk{{Data: []byte{1}}}}}
	p := filepath.Join(t.TempDir(), "a.iso")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	size, err := isowriter.Write(f, fs, isowriter.Options{})
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	b[16*SectorSize+156] = 5
	im, err := Open(bytes.NewReader(b), size)
	if err != nil {
		t.Fatal(err)
	}
	if im.Root.Err == nil || !bytes.Contains([]byte(im.Root.Err.Error()), []byte("root directory record")) {
		t.Errorf("root Err %v", im.Root.Err)
	}
}
