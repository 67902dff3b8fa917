package main

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gcfs/discimg"
	"gcfs/discimg/levelcore"
	"gcfs/discimg/mkdisc"
	"gcfs/fsnode"
)

// TestLsLeavesOutFailedViews: a glb that does not encode has no file, in ls
// as in the mount (ENOENT, left out of listings): ls and ls -l leave it out,
// with its error on stderr; ls of its own path fails; --json keeps it, with
// the error. Its siblings are listed as before.
func TestLsLeavesOutFailedViews(t *testing.T) {
	fullPassOnly(t)
	src, _ := genLayout(t, mkdisc.Small)
	img := filepath.Join(t.TempDir(), "bad.iso")
	if err := copyImage(src, img); err != nil {
		t.Fatal(err)
	}
	const core = "G/LEVEL2.WAD/data.d/core/"
	const tfragsGlb, collisionGlb = core + "tfrags.glb", core + "collision.glb"
	before := treeOK(t, "ls", "-R", "--no-index-cache", img)
	if !strings.Contains(before, tfragsGlb+"\n") || !strings.Contains(before, collisionGlb+"\n") {
		t.Fatalf("the unpatched image lacks %s or %s", tfragsGlb, collisionGlb)
	}

	// tfrag texture 0 moved past core_data: the tfrags name it, so their glb
	// does not encode (collision.glb needs no texture).
	off, index := coreIndex(t, img)
	h, err := levelcore.ParseHeader(index)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], uint32(h.DecompressedSize))
	if _, err := f.WriteAt(b[:], off+int64(h.TfragTextures.Offset)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	for _, args := range [][]string{{"ls", "-R"}, {"ls", "-l", "-R"}} {
		r := treeRun(t, append(args, "--no-index-cache", img)...)
		if r.err != nil {
			t.Fatalf("gcfs %v: %v\n%s", args, r.err, r.errOut)
		}
		// the chunks' tfrags name the same textures
		for _, p := range []string{tfragsGlb, "G/LEVEL2.WAD/chunk0.d/tfrags.glb"} {
			if strings.Contains(r.out, p) {
				t.Errorf("gcfs %v lists %s, which does not encode", args, p)
			}
		}
		if !strings.Contains(r.out, collisionGlb) {
			t.Errorf("gcfs %v lost %s", args, collisionGlb)
		}
		if n := strings.Count(r.errOut, tfragsGlb+": view:"); n != 1 {
			t.Errorf("gcfs %v: stderr gives %s's error %d times, want once:\n%s", args, tfragsGlb, n, r.errOut)
		}
	}
	dir := treeOK(t, "ls", "--no-index-cache", img, core)
	if strings.Contains(dir, "tfrags.glb") || !strings.Contains(dir, "collision.glb") {
		t.Errorf("ls of %s:\n%s", core, dir)
	}
	if r := treeFails(t, "ls", "--no-index-cache", img, tfragsGlb); !strings.Contains(r.err.Error(), "tfrags.glb") {
		t.Errorf("ls of %s: %v", tfragsGlb, r.err)
	}

	var entries []struct{ Path, Error string }
	if err := json.Unmarshal([]byte(treeOK(t, "ls", "-R", "--json", "--no-index-cache", img)), &entries); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range entries {
		if e.Path == tfragsGlb {
			found = true
			if e.Error == "" {
				t.Errorf("--json: %s has no error", tfragsGlb)
			}
		}
	}
	if !found {
		t.Errorf("--json left out %s", tfragsGlb)
	}
}

// coreIndex is LEVEL2.WAD's core_index: its offset in the image and bytes.
func coreIndex(t *testing.T, img string) (int64, []byte) {
	t.Helper()
	f, err := os.Open(img)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	im, err := discimg.Open(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(im, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := tree.Lookup("G/LEVEL2.WAD/data.d/core_index")
	if err != nil {
		t.Fatal(err)
	}
	off, _, _ := n.ImageRange()
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(io.NewSectionReader(r, 0, r.Size()))
	if err != nil {
		t.Fatal(err)
	}
	return off, b
}
