package mkdisctest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"

	"gcfs/discimg/mkdisc"
)

// The child writes the image and returns the Result the generator gives
// in-process, byte for byte and field for field.
func TestChildMatchesInProcess(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go toolchain to build the child")
	}
	dir := t.TempDir()
	pa, pb := filepath.Join(dir, "a.iso"), filepath.Join(dir, "b.iso")
	want, err := mkdisc.Generate(pa, mkdisc.Small, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, err := generateInChild(gobin, pb, mkdisc.Small, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("child's result differs: %d manifest entries and %d containers, want %d and %d",
			len(got.Manifest), len(got.Containers), len(want.Manifest), len(want.Containers))
	}
	a, _ := os.ReadFile(pa)
	b, _ := os.ReadFile(pb)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("images differ (%d and %d bytes)", len(a), len(b))
	}
	if _, err := generateInChild(gobin, filepath.Join(dir, "c.iso"), "bogus", 1); err == nil {
		t.Fatal("a bad layout gave no error")
	}
}
