package overlay

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gcfs/assets"
	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
	"gcfs/fsnode"
)

var smallDisc struct {
	once sync.Once
	path string
	err  error
}

// smallTree is a tree of the small layout's disc (generated once per run).
func smallTree(t *testing.T) *fsnode.Tree {
	t.Helper()
	smallDisc.once.Do(func() {
		dir, err := os.MkdirTemp("", "gcfs-overlay-")
		if err != nil {
			smallDisc.err = err
			return
		}
		smallDisc.path = filepath.Join(dir, "small.iso")
		_, smallDisc.err = mkdisctest.Generate(smallDisc.path, mkdisc.Small, 1)
	})
	if smallDisc.err != nil {
		t.Fatal(smallDisc.err)
	}
	f, err := os.Open(smallDisc.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, _ := f.Stat()
	img, err := discimg.Open(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(img, fsnode.Options{CacheSize: 16 << 20, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

func TestMain(m *testing.M) {
	code := m.Run()
	if smallDisc.path != "" {
		os.RemoveAll(filepath.Dir(smallDisc.path))
	}
	os.Exit(code)
}

func readNode(t *testing.T, tree *fsnode.Tree, p string) []byte {
	t.Helper()
	n, err := tree.Lookup(p)
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Open()
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	b := make([]byte, r.Size())
	if got, err := r.ReadAt(b, 0); got != len(b) {
		t.Fatalf("%s: %d of %d bytes: %v", p, got, len(b), err)
	}
	return b
}

// edit writes b as DIR's copy of tree path p (as the mount's copy-up and
// writes would).
func edit(t *testing.T, dir, p string, b []byte) {
	t.Helper()
	f := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDerivedShowsEdits: the files computed from an edited node (the PNG of
// a PIF, the WAV of a VAG, the SRT of a subtitle blob, the decoded file of a
// NAME.wad and that file's PNG) are computed from the edit's bytes, with
// their new sizes; the edit changed again is seen again; nothing edited:
// ok false (the disc's bytes serve). Each expected value is what the same
// view of the disc shows for the node whose bytes the edit copied.
func TestDerivedShowsEdits(t *testing.T) {
	tree := smallTree(t)
	dir := t.TempDir()
	ov, err := New(tree, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	derived := func(p string) ([]byte, bool, error) {
		t.Helper()
		n, err := tree.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		return ov.Derived(p, n)
	}
	want := func(p, like string) {
		t.Helper()
		b, ok, err := derived(p)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v, %v", p, ok, err)
		}
		if w := readNode(t, tree, like); !bytes.Equal(b, w) {
			t.Fatalf("%s: %d bytes, not those of %s (%d bytes)", p, len(b), like, len(w))
		}
	}
	tex := "G/ARMOR.WAD/armor0_textures.d/"
	if _, ok, _ := derived(tex + "00.png"); ok {
		t.Fatal("00.png is derived with nothing edited")
	}
	edit(t, dir, tex+"00", readNode(t, tree, tex+"01"))
	want(tex+"00.png", tex+"01.png")
	// Edited again: computed again (the cache is keyed by DIR's file).
	edit(t, dir, tex+"00", append(readNode(t, tree, tex+"00"), 0))
	want(tex+"00.png", tex+"00.png")

	snd := "G/AUDIO.WAD/vendor/"
	edit(t, dir, snd+"000.vag", readNode(t, tree, snd+"001.vag"))
	want(snd+"000.wav", snd+"001.wav")

	bonus := "G/BONUS.WAD/character_renders/"
	edit(t, dir, bonus+"00.wad", readNode(t, tree, bonus+"01.wad"))
	want(bonus+"00", bonus+"01")
	want(bonus+"00.png", bonus+"01.png") // a view of a decoded file of an edited .wad

	sub := "G/MPEG.WAD/subtitles01"
	blob := assets.WriteSubtitles([]assets.SubtitleCue{{Start: 30, Stop: 90, Text: [5]string{"edited", "f", "g", "s", "i"}}})
	edit(t, dir, sub, blob)
	b, ok, err := derived(sub + ".d/english.srt")
	if !ok || err != nil || !strings.Contains(string(b), "edited") {
		t.Fatalf("english.srt of the edited blob: %q, %v, %v", b, ok, err)
	}

	// An edit that cannot give the view: ok, and an error saying so.
	edit(t, dir, tex+"01", []byte("not a PIF"))
	if _, ok, err := derived(tex + "01.png"); !ok || err == nil || !strings.Contains(err.Error(), "01") {
		t.Fatalf("01.png of a broken PIF edit: ok %v, %v", ok, err)
	}
	// Unedited nodes beside them stay the disc's.
	if _, ok, _ := derived("G/ARMOR.WAD/armor1_textures.d/00.png"); ok {
		t.Error("armor1 00.png is derived, its PIF is not edited")
	}
}

// TestDependents: what shows an edit of a node at once.
func TestDependents(t *testing.T) {
	tree := smallTree(t)
	for p, want := range map[string][]string{
		"G/ARMOR.WAD/armor0_textures.d/00":     {"G/ARMOR.WAD/armor0_textures.d/00.png"},
		"G/AUDIO.WAD/vendor/000.vag":           {"G/AUDIO.WAD/vendor/000.wav"},
		"G/BONUS.WAD/character_renders/00.wad": {"G/BONUS.WAD/character_renders/00", "G/BONUS.WAD/character_renders/00.png"},
	} {
		n, err := tree.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range n.Dependents() {
			got = append(got, d.Path())
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("%s: dependents %v, want %v", p, got, want)
		}
	}
}
