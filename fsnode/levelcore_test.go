package fsnode

import (
	"bytes"
	"image/png"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/levelcore"
)

// TestLevelCoreTree: data.d/core/ is listed from core_index alone (names,
// sizes and attributes of every node with no stream scanned and no block
// decoded); its blocks are ranges of the decoded core_data read through its
// cached blocks (no second decode); its PNGs decode at their listed size.
// (TestSecondEditionManifest checks every file's bytes against mkdisc's.)
func TestLevelCoreTree(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	core := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core")
	scanned, misses := tree.scanned.Load(), tree.Cache.Stats().Misses
	files, pngs := 0, 0
	_ = WalkFrom(core, func(n *Node) error {
		if !n.IsDir() {
			files++
			if strings.HasSuffix(n.Name, ".png") {
				pngs++
				if w, _ := n.Xattr(XattrPrefix + "width"); w == "" {
					t.Errorf("%s: no width", n.Path())
				}
			}
			if n.vm == nil || n.vm.lazy == nil { // a glb is sized by encoding it, at its first lookup
				_ = n.Size()
			}
		}
		return nil
	})
	if s, m := tree.scanned.Load(), tree.Cache.Stats().Misses; s != scanned || m != misses {
		t.Errorf("listing the core scanned %d streams and missed the cache %d times", s-scanned, m-misses)
	}
	if files < 30 || pngs < 20 {
		t.Fatalf("core has %d files, %d PNGs", files, pngs)
	}
	c := core.LevelCore()
	if c == nil || len(c.Skipped) != 0 {
		t.Fatalf("reading %+v", c)
	}
	if v, _ := core.Xattr(XattrPrefix + "skipped"); v != "0" {
		t.Errorf("skipped %q", v)
	}
	for _, cl := range c.Mobies {
		d := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/mobies/"+leftPad(cl.OClass))
		if v, _ := d.Xattr(XattrPrefix + "o_class"); v != strconv.Itoa(int(cl.OClass)) {
			t.Errorf("%s: o_class %q", d.Path(), v)
		}
		if (d.Child("class") != nil) != (cl.Block != nil) {
			t.Errorf("%s: class file %v, block %v", d.Path(), d.Child("class") != nil, cl.Block)
		}
	}
	whole := readAll(t, mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core_data"))
	misses = tree.Cache.Stats().Misses
	for _, name := range []string{"tfrags", "occlusion", "sky", "collision"} {
		n := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/"+name)
		_, off := n.Within()
		if got := readAll(t, n); !bytes.Equal(got, whole[off:off+int64(len(got))]) || n.Kind != Nested {
			t.Errorf("%s is not bytes %d.. of core_data", name, off)
		}
	}
	if m := tree.Cache.Stats().Misses; m != misses {
		t.Errorf("reading core blocks of a cached core_data missed the cache %d times", m-misses)
	}
	for _, p := range []string{"textures/tfrag/000.png", "mobies/" + leftPad(c.Mobies[0].OClass) + "/00.png", "fx/00_lame_shadow.png", "particles/000/00.png"} {
		n := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/"+p)
		b := readAll(t, n)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || int64(len(b)) != n.Size() {
			t.Fatalf("%s: %v (%d bytes, listed %d)", p, err, len(b), n.Size())
		}
		w, _ := n.Xattr(XattrPrefix + "width")
		if strconv.Itoa(img.Bounds().Dx()) != w {
			t.Errorf("%s: %d wide, width %q", p, img.Bounds().Dx(), w)
		}
	}
	if v, _ := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/mobies/"+leftPad(c.Mobies[0].OClass)+"/00.png").Xattr(XattrPrefix + "stashed"); v != "true" {
		t.Errorf("the first moby class's texture: stashed %q", v)
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

func leftPad(v int32) string {
	s := strconv.Itoa(int(v))
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

// TestLevelCoreBadInput: a table outside core_index, a texture slot past
// its table and a texture outside core_data are each left out, counted in
// user.gcfs.skipped and logged once; every other file of the tree still
// reads as mkdisc wrote it.
func TestLevelCoreBadInput(t *testing.T) {
	path := copyOf(t)
	_, res := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ci := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core_index")
	index := readAll(t, ci)
	h, err := levelcore.ParseHeader(index)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := levelcore.Read(index, 1<<30)
	off, _, _ := ci.ImageRange()
	patchImage(t, path, off+0x24, le32(int32(len(index)-8)))                         // tie class table past core_index
	patchImage(t, path, off+int64(h.MobyClasses.Offset)+0x10, []byte{0xfe})          // moby class 0, slot 0
	patchImage(t, path, off+int64(h.TfragTextures.Offset), le32(h.DecompressedSize)) // tfrag texture 0 past core_data
	tree, logs := openDisc(t, path, -1, Options{LogBurst: 100})
	core := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core")
	if v, _ := core.Xattr(XattrPrefix + "skipped"); v != "3" {
		t.Errorf("skipped %q, want 3: %v", v, core.LevelCore().Skipped)
	}
	if n := logs.Count("data.d/core: left out"); n != 3 || len(logs.Lines()) != 3 {
		t.Errorf("logged %q", logs.Lines())
	}
	if core.Child("ties") != nil || core.Child("textures").Child("tfrag").Child("000.png") != nil {
		t.Error("ties or tfrag texture 000 still listed")
	}
	moby0 := "G/LEVEL2.WAD/data.d/core/mobies/" + leftPad(before.Mobies[0].OClass) + "/"
	// The last moby class block ended where the first tie block began; with
	// the tie table unread it runs to the next boundary it knows.
	var last *levelcore.Class
	for i, c := range before.Mobies {
		if c.Block != nil && (last == nil || c.Block.Offset > last.Block.Offset) {
			last = &before.Mobies[i]
		}
	}
	lastMoby := "G/LEVEL2.WAD/data.d/core/mobies/" + leftPad(last.OClass) + "/class"
	if n := mustLookup(t, tree, lastMoby); n.Size() <= last.Block.Size {
		t.Errorf("%s: %d bytes, %d before", lastMoby, n.Size(), last.Block.Size)
	}
	gone := func(p string) bool {
		// tfrags.glb: its tfrag texture 000 is gone, so it has no glb; level.glb
		// is made of the core's classes
		return p == lastMoby || strings.HasSuffix(p, "/tfrags.glb") || strings.HasPrefix(p, "G/LEVEL2.WAD/data.d/core/ties/") || p == "G/LEVEL2.WAD/data.d/core/textures/tfrag/000.png" ||
			p == moby0+"00.png" || p == moby0+"mesh.glb" || p == moby0+"mesh_low.glb" || p == "G/LEVEL2.WAD/data.d/core_index" || p == "G/LEVEL2.WAD/data" || p == "G/LEVEL2.WAD" ||
			p == "G/LEVEL2.WAD/level.glb"
	}
	if tree.Root.Child("G").Child("LEVEL2.WAD") == nil {
		t.Fatal("LEVEL2.WAD lost")
	}
	// The tfrags name tfrag texture 000, now left out: no tfrags.glb, its
	// source says why (collision.glb, which needs no texture, is served).
	tg := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core/tfrags.glb")
	if tg.Size() != 0 || !tg.ViewFailed() {
		t.Errorf("tfrags.glb: size %d, failed %v", tg.Size(), tg.ViewFailed())
	}
	if err := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core/tfrags").ViewError(); err == nil || !strings.Contains(err.Error(), "tfrag texture 0 is past") {
		t.Errorf("tfrags' view error: %v", err)
	}
	if cg := mustLookup(t, tree, "G/LEVEL2.WAD/data.d/core/collision.glb"); cg.Size() == 0 || cg.ViewFailed() {
		t.Error("collision.glb not served")
	}
	checked := 0
	for _, m := range res.Manifest {
		if gone(m.Path) || !strings.HasPrefix(m.Path, "G/LEVEL2.WAD/") {
			continue
		}
		n, err := tree.Lookup(m.Path)
		if err != nil {
			t.Errorf("%s: %v", m.Path, err)
			continue
		}
		if got := readAll(t, n); sha(got) != m.SHA1 {
			t.Errorf("%s changed", m.Path)
		}
		checked++
	}
	if checked < 50 {
		t.Fatalf("only %d files checked", checked)
	}
}

// TestLevelCoreDecodesShort: a core_data that decodes shorter than
// core_index+0x8c says: the block that runs past what decodes fails with
// an error naming it (logged once), everything before it still reads.
func TestLevelCoreDecodesShort(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ci := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core_index")
	cd := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core_data")
	index := readAll(t, ci)
	c, _ := levelcore.Read(index, 1<<30)
	last := c.RatchetSeqs[len(c.RatchetSeqs)-1]
	if last.Offset+last.Size != cd.Size() {
		t.Fatalf("the last ratchet sequence ends at %d, core_data at %d", last.Offset+last.Size, cd.Size())
	}
	off, _, _ := ci.ImageRange()
	patchImage(t, path, off+0x8c, le32(int32(cd.Size()+0x1000)))
	tree, logs := openDisc(t, path, -1, Options{})
	seq := mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core/ratchet_seqs/"+last.Name)
	if seq.Size() != last.Size+0x1000 {
		t.Fatalf("last ratchet sequence: %d bytes, want %d", seq.Size(), last.Size+0x1000)
	}
	r, err := seq.Open()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, seq.Size())
	if n, err := r.ReadAt(buf, 0); err == nil || int64(n) != last.Size {
		t.Errorf("read %d bytes, err %v: want the %d that decode and an error", n, err, last.Size)
	}
	for _, p := range []string{"tfrags", "collision", "textures/tfrag/000.png", "fx/00_lame_shadow.png"} {
		readAll(t, mustLookup(t, tree, "G/LEVEL5.WAD/data.d/core/"+p))
	}
	r.ReadAt(buf, 0) // again: logged once
	if n := logs.Count("data.d/core/ratchet_seqs/" + last.Name); n != 1 {
		t.Errorf("%d log lines on the block, want 1: %q", n, logs.Lines())
	}
}
