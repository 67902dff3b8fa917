package fsnode

import (
	"strings"
	"testing"

	"gcfs/discimg/levelcore"
)

// TestLevelCoreShortKnownAtBuild: a core_data that decodes shorter than
// core_index+0x8c, when the build knows it without reading the stream (the
// index sidecar's size from an earlier run; or +0x8c past what the stream's
// length can decode to): the entry past the end (the last ratchet
// sequence) is left out, counted in the core's user.gcfs.skipped, logged
// in one line, and everything else reads. Found only by a scan (the first
// run), info's CoreDataShort names it.
func TestLevelCoreShortKnownAtBuild(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ci := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core_index")
	cd := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core_data")
	c, _ := levelcore.Read(readAll(t, ci), 1<<30)
	last := c.RatchetSeqs[len(c.RatchetSeqs)-1]
	seqPath := "G/LEVEL5.WAD/data.d/core/ratchet_seqs/" + last.Name
	real := cd.Size()
	off, _, _ := ci.ImageRange()
	check := func(tree *Tree, logs interface{ Lines() []string }, why string) {
		t.Helper()
		core := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core")
		if _, err := tree.Lookup(seqPath); err == nil {
			t.Errorf("%s: %s still listed", why, seqPath)
		}
		if v, _ := core.Xattr(XattrPrefix + "skipped"); v != "1" {
			t.Errorf("%s: skipped %q: %v", why, v, core.LevelCore().Skipped)
		}
		n := 0
		for _, l := range logs.Lines() {
			if strings.Contains(l, "entries past its end left out") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: %d lines on the short core_data: %q", why, n, logs.Lines())
		}
		for _, p := range []string{"tfrags", "collision", "textures/tfrag/000.png", "fx/00_lame_shadow.png", "ratchet_seqs/" + c.RatchetSeqs[0].Name} {
			readAll(t, mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core/"+p))
		}
	}

	// The sidecar's size.
	patchImage(t, path, off+0x8c, le32(int32(real+0x1000)))
	dir := t.TempDir()
	first, _, _ := buildIndexed(t, path, dir, Options{})
	core := mustLookup(t, first, "G/LEVEL5.WAD/data.d/core")
	if _, err := first.Lookup(seqPath); err != nil {
		t.Fatalf("first run (size unknown at build): %v", err)
	}
	decoded, past, err := core.CoreDataShort()
	if err != nil || decoded != real || len(past) != 1 || !strings.HasPrefix(past[0].What, "ratchet_seqs/") {
		t.Fatalf("CoreDataShort: %d %v %v", decoded, past, err)
	}
	if err := first.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	second, _, logs := buildIndexed(t, path, dir, Options{})
	check(second, logs, "sidecar")
	if _, past, _ := mustLookup(t, second, "G/LEVEL5.WAD/data.d/core").CoreDataShort(); len(past) != 0 {
		t.Errorf("left out at build, and still past the end: %v", past)
	}

	// +0x8c past what the stream can decode to.
	patchImage(t, path, off+0x8c, le32(0x7fff0000))
	tree, logs2 := openDisc(t, path, -1, Options{})
	check(tree, logs2, "bound")
}
