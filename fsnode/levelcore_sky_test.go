package fsnode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"image/png"
	"os"
	"strings"
	"testing"
)

// TestSkyTexturesLazy: sky.d/ is there with the sky block; walking the
// core (as listing it does) leaves sky.d/textures/ unlisted and decodes
// nothing; its first listing reads the sky block's header range of
// core_data (the cache misses, no stream is scanned twice) and makes one
// PNG a texture def, with the width the PNG has; its xattrs say it lists
// core_data and left nothing out.
func TestSkyTexturesLazy(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	core := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core")
	scanned, misses := tree.scanned.Load(), tree.Cache.Stats().Misses
	sawSky := false
	_ = WalkFrom(core, func(n *Node) error {
		if n.Name == "sky.d" {
			sawSky = true
		}
		if !strings.HasSuffix(n.Name, ".glb") { // sized by encoding, by design
			_ = n.Size()
		}
		return nil
	})
	tex := core.Child("sky.d").Children[0]
	if !sawSky || tex.Name != "textures" || !tex.Lazy() || tex.Listed() || len(tex.Children) != 0 {
		t.Fatalf("sky.d seen %v, textures %q lazy %v listed %v", sawSky, tex.Name, tex.Lazy(), tex.Listed())
	}
	if s, m := tree.scanned.Load(), tree.Cache.Stats().Misses; s != scanned || m != misses {
		t.Fatalf("walking the core scanned %d streams, missed the cache %d times", s-scanned, m-misses)
	}
	if v, _ := tex.Xattr(XattrPrefix + "lists_core_data"); v != "true" {
		t.Errorf("lists_core_data %q", v)
	}
	if ok, _, _ := tex.SkyTextures(); ok {
		t.Error("listed before its listing")
	}
	kids := tex.List()
	if tree.Cache.Stats().Misses == misses {
		t.Error("listing sky.d/textures/ read nothing of core_data")
	}
	listed, declared, skipped := tex.SkyTextures()
	if !listed || declared != len(kids) || len(kids) != 3 || len(skipped) != 0 {
		t.Fatalf("listed %v, declared %d, %d textures, skipped %v", listed, declared, len(kids), skipped)
	}
	for i, k := range kids {
		if want := []string{"00.png", "01.png", "02.png"}[i]; k.Name != want || k.Path() != tex.Path()+"/"+want || k.Ino <= 1 {
			t.Errorf("texture %d: %q %q ino %d", i, k.Name, k.Path(), k.Ino)
		}
		b := readAll(t, k)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || int64(len(b)) != k.Size() {
			t.Fatalf("%s: %v (%d bytes, listed %d)", k.Path(), err, len(b), k.Size())
		}
		if w, _ := k.Xattr(XattrPrefix + "width"); w != itoa(int64(img.Bounds().Dx())) {
			t.Errorf("%s: width %q, PNG %d", k.Name, w, img.Bounds().Dx())
		}
		if v, _ := k.Xattr(XattrPrefix + "texture_table"); v != "sky" {
			t.Errorf("%s: texture_table %q", k.Name, v)
		}
	}
	if n, err := tree.Lookup("G/LEVEL2.WAD/data.d/core/sky.d/textures/01.png"); err != nil || n.Kind != View {
		t.Errorf("lookup inside an unlisted sky.d/textures/: %v", err)
	}
	if v, _ := tex.Xattr(XattrPrefix + "skipped"); v != "0" {
		t.Errorf("skipped %q", v)
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

// TestSkyTexturesUnreadable: a core_data that cannot be decoded (here past
// --max-decoded): sky.d/textures/ lists nothing, counts the table left out
// in user.gcfs.skipped with core_data's error as the reason, and logs
// nothing of its own (core_data's error is reported with core_data).
func TestSkyTexturesUnreadable(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{MaxDecoded: 4 << 10})
	tex := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/sky.d/textures")
	if kids := tex.List(); len(kids) != 0 {
		t.Fatalf("%d textures listed", len(kids))
	}
	_, _, skipped := tex.SkyTextures()
	if v, _ := tex.Xattr(XattrPrefix + "skipped"); v != "1" || len(skipped) != 1 || !strings.Contains(skipped[0], "core_data") {
		t.Errorf("skipped %q: %v", v, skipped)
	}
	if n := logs.Count("sky.d"); n != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

// skyListings lists every sky.d/textures/ of tree, returning each texture's
// name, size and xattrs by path, and each directory's declared count and
// skips.
func skyListings(t *testing.T, tree *Tree) (dirs []*Node, listing map[string]string) {
	t.Helper()
	listing = map[string]string{}
	_ = WalkListing(tree.Root, func(n *Node) error {
		if n.lc == nil || n.lc.sky == nil {
			return nil
		}
		dirs = append(dirs, n)
		_, declared, skipped := n.SkyTextures()
		listing[n.Path()] = fmt.Sprintf("declared %d skipped %q", declared, skipped)
		for _, c := range n.List() {
			x := c.Xattrs()
			listing[c.Path()] = fmt.Sprintf("%d %d %v", c.Size(), c.Ino, x)
		}
		return nil
	})
	if len(dirs) == 0 {
		t.Fatal("test setup: no sky.d/textures/ in the tree")
	}
	return dirs, listing
}

// TestSkyTexturesSidecar: the first listing of a sky.d/textures/ keeps the
// sky table it read in the index sidecar; the next tree of the same image
// lists every sky.d/textures/ from it, reading nothing of core_data (no
// cache miss, no image byte), the same names, sizes, inodes, xattrs, counts
// and skips, and its textures read the same bytes (the table proven
// against core_data at the first, without a refusal).
func TestSkyTexturesSidecar(t *testing.T) {
	path := copyOf(t)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	dirs1, want := skyListings(t, t1)
	wantBytes := map[string][]byte{}
	for _, d := range dirs1 {
		for _, c := range d.List() {
			wantBytes[c.Path()] = readAll(t, c)
		}
	}
	if len(wantBytes) == 0 {
		t.Fatal("test setup: no sky textures")
	}
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}

	t2, ci, logs := buildIndexed(t, path, dir, Options{})
	read, misses, scanned := ci.n.Load(), t2.Cache.Stats().Misses, t2.scanned.Load()
	_, got := skyListings(t, t2)
	if r, m, s := ci.n.Load()-read, t2.Cache.Stats().Misses-misses, t2.scanned.Load()-scanned; r != 0 || m != 0 || s != 0 {
		t.Errorf("listing every sky.d/textures/ from the sidecar read %d image bytes, missed the cache %d times, scanned %d streams; want none", r, m, s)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %q, first tree %q", p, got[p], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d listed, first tree %d", len(got), len(want))
	}
	for p, w := range wantBytes {
		if b := readAll(t, mustLookup(t, t2, p)); !bytes.Equal(b, w) {
			t.Errorf("%s: reads %d bytes other than the first tree's %d", p, len(b), len(w))
		}
	}
	if n := logs.Count("index sidecar"); n != 0 {
		t.Errorf("log %q", logs.Lines())
	}
}

// tamperSky rewrites the sky table entries of tree's sidecar with fn, and
// seals the file again.
func tamperSky(t *testing.T, tree *Tree, good []byte, fn func(k string, e *sideEntry)) {
	t.Helper()
	ents, err := parseSidecar(bytes.Clone(good), tree.side.key) // its entries alias the bytes
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for k, e := range ents {
		if e.sky != nil {
			fn(k, e)
			n++
		}
	}
	if n == 0 {
		t.Fatal("test setup: the sidecar has no sky table")
	}
	if err := os.WriteFile(tree.IndexFile(), marshalSidecar(tree.side.key, ents), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestSkyTexturesSidecarTampered: a sky table the sidecar kept is checked
// like its other entries. One that no read of the sky block can have given
// (a header cut short, defs of another length than its header places, the
// entry of a decoded stream under a sky table's key) is refused at the
// listing: one log line, the table read from core_data, the listing the
// true one. One that parses but lies (a texture's width halved, within the
// block) lists what it says, as a stat cannot tell, but every read of a
// sky texture then fails naming the sidecar, never serving the forged
// geometry's pixels. Either way the save corrects the entry and the next
// tree lists the true table from the sidecar without reading core_data.
func TestSkyTexturesSidecarTampered(t *testing.T) {
	path := copyOf(t)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	_, want := skyListings(t, t1)
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(t1.IndexFile())
	if err != nil {
		t.Fatal(err)
	}
	refused := map[string]func(k string, e *sideEntry){
		"header cut":     func(k string, e *sideEntry) { e.sky.header = e.sky.header[:len(e.sky.header)-1] },
		"defs short":     func(k string, e *sideEntry) { e.sky.defs = e.sky.defs[:len(e.sky.defs)-16] },
		"defs long":      func(k string, e *sideEntry) { e.sky.defs = append(e.sky.defs, make([]byte, 16)...) },
		"count negative": func(k string, e *sideEntry) { e.sky.header[0xd] = 0x80 },
		"not a sky entry": func(k string, e *sideEntry) {
			*e = sideEntry{sized: true, size: 12}
		},
	}
	lied := map[string]func(k string, e *sideEntry){
		"width halved": func(k string, e *sideEntry) {
			w := binary.LittleEndian.Uint32(e.sky.defs[8:])
			binary.LittleEndian.PutUint32(e.sky.defs[8:], w/2)
		},
	}
	check := func(t *testing.T, fn func(k string, e *sideEntry), lies bool) {
		tamperSky(t, t1, good, fn)
		t2, _, logs := buildIndexed(t, path, dir, Options{})
		_, got := skyListings(t, t2)
		differ := 0
		for p, w := range want {
			if got[p] != w {
				differ++
				if !lies {
					t.Errorf("%s: %q, true %q", p, got[p], w)
				}
			}
		}
		if lies {
			if differ == 0 {
				t.Fatal("test setup: the forged table lists as the true one")
			}
			for p := range want {
				n, err := t2.Lookup(p)
				if err != nil || n.Kind != View {
					continue
				}
				r, err := n.Open()
				if err == nil {
					_, err = r.ReadAt(make([]byte, r.Size()), 0)
				}
				if err == nil || !strings.Contains(err.Error(), "index sidecar") {
					t.Errorf("%s: read of a texture listed from a forged table: %v, want an error naming the sidecar", p, err)
				}
			}
		}
		if n := logs.Count("refused"); n != 1 {
			t.Errorf("log %q: want one refused line", logs.Lines())
		}
		if err := t2.SaveIndex(); err != nil {
			t.Fatal(err)
		}
		t3, ci, logs3 := buildIndexed(t, path, dir, Options{})
		read := ci.n.Load()
		if _, got := skyListings(t, t3); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("the next tree lists %v, want %v", got, want)
		}
		if r := ci.n.Load() - read; r != 0 || len(logs3.Lines()) != 0 {
			t.Errorf("the next tree read %d image bytes to list (want 0: the corrected sidecar), log %q", r, logs3.Lines())
		}
	}
	for name, fn := range refused {
		t.Run(name, func(t *testing.T) { check(t, fn, false) })
	}
	for name, fn := range lied {
		t.Run(name, func(t *testing.T) { check(t, fn, true) })
	}
}
