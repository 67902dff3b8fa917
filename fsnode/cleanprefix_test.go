package fsnode

import (
	"errors"
	"strings"
	"testing"

	"gcfs/codec"
	"gcfs/fsnode/testdisc"
)

// breakStream makes the WAD stream of decoded file name (in tree, read
// from the image at path) break a rule at about frac of its length, or
// later, where at least minClean bytes decode before the break: its
// declared size is lowered into the middle of a packet. It returns the
// length that still decodes cleanly.
func breakStream(t *testing.T, tree *Tree, path, name string, frac float64, minClean int) int64 {
	t.Helper()
	wad := mustLookup(t, tree, name+".wad")
	stream := readAll(t, wad)
	soff, _, ok := wad.ImageRange()
	cut, clean, found := testdisc.CutInPacket(stream, int(float64(len(stream))*frac), minClean)
	if !ok || !found {
		t.Fatalf("%s: no image range (%v) or no cut that breaks a packet", name, ok)
	}
	patchImage(t, path, soff+3, le32(int32(cut)))
	return int64(clean)
}

// TestPartsOfBrokenStream: a decoded texture list whose stream breaks a rule
// part way still has its NAME.d/: the table and the textures wholly before
// the break read as mkdisc wrote them, those past it are left out, the list
// itself fails open, and the stream's error is the one line logged.
func TestPartsOfBrokenStream(t *testing.T) {
	path := copyOf(t)
	_, res := small(t)
	const list = "G/LEVEL1.WAD/data.d/transition_textures"
	tree, _ := openDisc(t, path, -1, Options{})
	// (past texture 00, the list's longest: 3,104 bytes after its table)
	clean := breakStream(t, tree, path, list, 0.5, 4000)
	tree, logs := openDisc(t, path, -1, Options{LogBurst: 1000})
	tl := mustLookup(t, tree, list)
	if _, err := tl.Open(); !errors.Is(err, codec.ErrFormat) {
		t.Fatalf("Open: %v, want the stream's error", err)
	}
	d := mustLookup(t, tree, list+".d")
	read := 0
	for _, c := range d.Children {
		if c.Kind != Nested {
			continue
		}
		if c.woff+c.size > clean {
			t.Errorf("%s: lies past the %d clean bytes", c.Path(), clean)
			continue
		}
		want := ""
		for _, m := range res.Manifest {
			if m.Path == c.Path() {
				want = m.SHA1
			}
		}
		if got := sha(readAll(t, c)); got != want {
			t.Errorf("%s: read different bytes", c.Path())
		}
		read++
	}
	listed := 0
	for _, m := range res.Manifest {
		if strings.HasPrefix(m.Path, list+".d/") && !strings.Contains(m.Path[len(list)+3:], ".") {
			listed++
		}
	}
	if read == 0 || read >= listed {
		t.Errorf("%d of %d textures served", read, listed)
	}
	if n := len(logs.Lines()); n != 1 || logs.Count(list+":") != 1 {
		t.Errorf("logged %q", logs.Lines())
	}
}
