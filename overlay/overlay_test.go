package overlay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"gcfs/assets"
	"gcfs/discimg"
	"gcfs/discimg/gameplay"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
	"gcfs/fsnode"
	"gcfs/gltf"
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

// newOverlay is an overlay, in a new directory, over the small layout's
// tree.
func newOverlay(t *testing.T) (*fsnode.Tree, string, *Overlay) {
	t.Helper()
	tree := smallTree(t)
	dir := t.TempDir()
	ov, err := New(tree, dir, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	return tree, dir, ov
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
	tree, dir, ov := newOverlay(t)
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
		if got := dependentPaths(t, tree, p); got != strings.Join(want, " ") {
			t.Errorf("%s: dependents %v, want %v", p, got, want)
		}
	}
}

// dependentPaths is the paths of tree path p's Dependents, space-separated.
func dependentPaths(t *testing.T, tree *fsnode.Tree, p string) string {
	t.Helper()
	n, err := tree.Lookup(p)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range n.Dependents() {
		got = append(got, d.Path())
	}
	return strings.Join(got, " ")
}

// TestDerivedLazyViews: the views a level's blocks are encoded into
// (gameplay.json, level.glb, a class's glbs) follow an edit of what they
// are made of: the gameplay (a moby moved), a class's texture slot PNG (the
// glbs embed the new bytes), a class block (the same bytes: the same glb).
// Each edited node names them among its dependents.
func TestDerivedLazyViews(t *testing.T) {
	tree, dir, ov := newOverlay(t)
	derived := func(p string) []byte {
		t.Helper()
		n, err := tree.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		b, ok, err := ov.Derived(p, n)
		if !ok || err != nil {
			t.Fatalf("%s: ok %v, %v", p, ok, err)
		}
		return b
	}
	dependents := func(p string) string { return dependentPaths(t, tree, p) }
	lv := "G/LEVEL1.WAD/"
	// The gameplay written back as it is: the views are the disc's.
	gp := readNode(t, tree, lv+"gameplay")
	edit(t, dir, lv+"gameplay", gp)
	for _, v := range []string{"gameplay.json", "level.glb"} {
		if !bytes.Equal(derived(lv+v), readNode(t, tree, lv+v)) {
			t.Fatalf("%s of the gameplay written back unchanged differs from the disc's", v)
		}
	}
	// A moby moved.
	g, err := gameplay.Read(gp)
	if err != nil || len(g.Mobies) == 0 {
		t.Fatalf("%d mobies, %v", len(g.Mobies), err)
	}
	m := g.Mobies[0]
	moved := append([]byte(nil), gp...)
	binary.LittleEndian.PutUint32(moved[m.Offset+0x40:], math.Float32bits(4321.5))
	edit(t, dir, lv+"gameplay", moved)
	if j := derived(lv + "gameplay.json"); !bytes.Contains(j, []byte("4321.5")) {
		t.Error("gameplay.json does not show the moved moby")
	}
	glb := derived(lv + "level.glb")
	if !gltf.IsGLB(glb) || bytes.Equal(glb, readNode(t, tree, lv+"level.glb")) {
		t.Fatal("level.glb of the moved moby is the disc's, or not a glb")
	}
	var doc struct {
		Nodes []struct {
			Name   string    `json:"name"`
			Matrix []float64 `json:"matrix"`
		} `json:"nodes"`
	}
	glbJSON(t, glb, &doc)
	found := false
	for _, nd := range doc.Nodes {
		if nd.Name == fmt.Sprintf("moby_%d_%d", m.OClass, m.UID) && len(nd.Matrix) == 16 && nd.Matrix[12] == 4321.5 {
			found = true
		}
	}
	if !found {
		t.Errorf("level.glb has no node moby_%d_%d at x 4321.5", m.OClass, m.UID)
	}
	if d := dependents(lv + "gameplay"); !strings.Contains(d, lv+"gameplay.json") || !strings.Contains(d, lv+"level.glb") {
		t.Errorf("gameplay's dependents: %s", d)
	}

	// A moby class's slot 00 given slot 01's PNG.
	var class string
	core := lv + "data.d/core/mobies/"
	cdir, _ := tree.Lookup(strings.TrimSuffix(core, "/"))
	for _, c := range cdir.Children {
		if c.Child("00.png") != nil && c.Child("01.png") != nil && c.Child("mesh.glb") != nil {
			class = core + c.Name + "/"
			break
		}
	}
	if class == "" {
		t.Fatal("no moby class with two texture slots and a mesh")
	}
	png := readNode(t, tree, class+"01.png")
	if bytes.Equal(png, readNode(t, tree, class+"00.png")) {
		t.Fatal("slots 00 and 01 have the same PNG")
	}
	edit(t, dir, class+"00.png", png)
	for _, v := range []string{class + "mesh.glb", class + "mesh_low.glb", lv + "level.glb"} {
		b := derived(v)
		if bytes.Count(b, png) < 2 && !strings.HasSuffix(v, "level.glb") {
			t.Errorf("%s embeds the edited PNG %d times, want it in both slots", v, bytes.Count(b, png))
		}
		if !bytes.Contains(b, png) {
			t.Errorf("%s does not embed the edited PNG", v)
		}
	}
	for _, v := range []string{"mesh.glb", "mesh_low.glb"} {
		if d := dependents(class + "00.png"); !strings.Contains(d, class+v) || !strings.Contains(d, lv+"level.glb") {
			t.Errorf("00.png's dependents: %s", d)
		}
	}
	n, _ := tree.Lookup(class + "mesh.glb")
	if src := n.Sources(); !slices.ContainsFunc(src, func(s *fsnode.Node) bool { return s.Path() == class+"00.png" }) {
		t.Errorf("mesh.glb's sources leave out its texture")
	}
	// The class block written back: the same mesh, the edited texture.
	edit(t, dir, class+"class", readNode(t, tree, class+"class"))
	if b := derived(class + "mesh.glb"); !bytes.Contains(b, png) {
		t.Error("mesh.glb of both edits does not embed the edited PNG")
	}
	os.Remove(filepath.Join(dir, filepath.FromSlash(class+"00.png")))
	if !bytes.Equal(derived(class+"mesh.glb"), readNode(t, tree, class+"mesh.glb")) {
		t.Error("mesh.glb of the class block written back unchanged differs from the disc's")
	}
	os.Remove(filepath.Join(dir, filepath.FromSlash(class+"class")))

	// The moved moby's class block and the core's tfrags zeroed: level.glb
	// reads the edited blocks (it slices core_data itself otherwise), so
	// that class's mesh and the core's tfrags are gone from it.
	meshNames := func(glb []byte) map[string]bool {
		var doc struct {
			Meshes []struct {
				Name string `json:"name"`
			} `json:"meshes"`
		}
		glbJSON(t, glb, &doc)
		out := map[string]bool{}
		for _, m := range doc.Meshes {
			out[m.Name] = true
		}
		return out
	}
	mobyClass := fmt.Sprintf("%sdata.d/core/mobies/%04d/class", lv, m.OClass)
	coreTfrags := lv + "data.d/core/tfrags"
	classMesh := fmt.Sprintf("moby_%d", m.OClass)
	if disc := meshNames(readNode(t, tree, lv+"level.glb")); !disc[classMesh] || !disc["core_tfrags"] {
		t.Fatalf("the disc's level.glb has no mesh %s or core_tfrags: %v", classMesh, disc)
	}
	for _, p := range []string{mobyClass, coreTfrags} {
		edit(t, dir, p, make([]byte, len(readNode(t, tree, p))))
		if d := dependents(p); !strings.Contains(d, lv+"level.glb") {
			t.Errorf("%s's dependents leave out level.glb: %s", p, d)
		}
	}
	got := meshNames(derived(lv + "level.glb"))
	if got[classMesh] || got["core_tfrags"] {
		t.Errorf("level.glb of a zeroed class block and core tfrags still has mesh %s (%v) or core_tfrags (%v)", classMesh, got[classMesh], got["core_tfrags"])
	}
	if len(got) == 0 {
		t.Error("level.glb of the zeroed blocks has no mesh at all")
	}
	for _, p := range []string{mobyClass, coreTfrags} {
		os.Remove(filepath.Join(dir, filepath.FromSlash(p)))
	}

	// A slot's PNG edited into bytes that are no PNG: mesh.glb fails
	// naming the edit, level.glb leaves that material plain (it embedded
	// the bytes as image/png, which fails the validator).
	notPNG := []byte("\x89PNG but not really: no chunks at all")
	edit(t, dir, class+"00.png", notPNG)
	ov.Check(class + "00.png")
	if why, bad := ov.EditError(class + "00.png"); !bad || why == "" {
		t.Errorf("a slot PNG edited into no PNG has no edit error")
	}
	if _, _, err := ov.Derived(class+"mesh.glb", n); err == nil || !strings.Contains(err.Error(), "not a PNG") {
		t.Errorf("mesh.glb over a slot edited into no PNG: %v", err)
	}
	lg, _ := tree.Lookup(lv + "level.glb")
	b, ok, err := ov.Derived(lv+"level.glb", lg)
	if !ok || err != nil || !gltf.IsGLB(b) || bytes.Contains(b, notPNG) {
		t.Errorf("level.glb over a slot edited into no PNG: ok %v, %v, embeds it: %v", ok, err, bytes.Contains(b, notPNG))
	}
}

// glbJSON decodes glb's JSON chunk into v.
func glbJSON(t *testing.T, glb []byte, v any) {
	t.Helper()
	if !gltf.IsGLB(glb) || len(glb) < 20 || int64(len(glb)) < 20+int64(binary.LittleEndian.Uint32(glb[12:])) {
		t.Fatalf("not a glb (%d bytes)", len(glb))
	}
	if err := json.Unmarshal(glb[20:20+binary.LittleEndian.Uint32(glb[12:])], v); err != nil {
		t.Fatal(err)
	}
}

// TestLevelTextureEditChecks: a level texture's PNG edited (recoloured, at
// its size) is an edit the rebuild takes: no edit error; one of another
// size has one saying so. Two level textures edited beside each other are
// no conflict.
func TestLevelTextureEditChecks(t *testing.T) {
	tree, dir, ov := newOverlay(t)
	tfrag := "G/LEVEL1.WAD/data.d/core/textures/tfrag/"
	recoloured := func(p string) []byte {
		img, err := png.Decode(bytes.NewReader(readNode(t, tree, p)))
		if err != nil {
			t.Fatal(err)
		}
		out := image.NewNRGBA(img.Bounds())
		draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
		out.SetNRGBA(0, 0, color.NRGBA{1, 2, 3, 255})
		var buf bytes.Buffer
		png.Encode(&buf, out)
		return buf.Bytes()
	}
	for _, p := range []string{tfrag + "000.png", tfrag + "001.png"} {
		edit(t, dir, p, recoloured(p))
		ov.Check(p)
		if why, bad := ov.EditError(p); bad {
			t.Errorf("%s: edit error %q", p, why)
		}
	}
	if why := ov.conflict(tfrag + "001.png"); why != nil {
		t.Errorf("two level textures conflict: %v", why)
	}
	edit(t, dir, tfrag+"002.png", readNode(t, tree, "G/ARMOR.WAD/armor0_textures.d/00.png"))
	ov.Check(tfrag + "002.png")
	if why, bad := ov.EditError(tfrag + "002.png"); !bad || !strings.Contains(why, "keeps its size") {
		t.Errorf("a PNG of another size: edit error %q", why)
	}
}

// TestCheckLastReadWins: a check of an older write that read its bytes
// before a later write's check ran cannot set its mark after that check:
// the mark is that of the last bytes read. (The mount's RELEASEs run
// concurrently, and a slow one used to put back a cleared edit_error.)
func TestCheckLastReadWins(t *testing.T) {
	tree, dir, ov := newOverlay(t)
	p := "G/BONUS.WAD/character_renders/00.wad"
	good := readNode(t, tree, p)
	edit(t, dir, p, []byte("not a stream at all"))

	staleRead := make(chan struct{})
	goodDone := make(chan struct{})
	first := true
	checkRead = func(string) {
		if !first {
			return
		}
		first = false
		close(staleRead)
		// Held until the later check is done, or long enough that it
		// must have run were it not ordered behind this one.
		select {
		case <-goodDone:
		case <-time.After(300 * time.Millisecond):
		}
	}
	t.Cleanup(func() { checkRead = nil })

	staleDone := make(chan struct{})
	go func() { ov.Check(p); close(staleDone) }()
	<-staleRead
	edit(t, dir, p, good)
	go func() { ov.Check(p); close(goodDone) }()
	<-staleDone
	<-goodDone
	if why, bad := ov.EditError(p); bad {
		t.Fatalf("the disc's own bytes, checked last: edit error %q", why)
	}
}
