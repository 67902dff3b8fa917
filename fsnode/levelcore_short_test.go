package fsnode

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"

	"gcfs/codec"
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

// TestLevelCoreBadInputMore: the other bad inputs, in one level of
// the mounted model: a class's texture list with no 0xff terminator, two
// class blocks at one offset, a stash count with no stash entry (the
// gs_ram count past its table), the ratchet_seqs table outside core_index.
// Each is left out, counted in user.gcfs.skipped (as levelcore reads the
// patched index), logged once a skip with its reason, and every other
// file of the level reads as mkdisc wrote it.
func TestLevelCoreBadInputMore(t *testing.T) {
	path := copyOf(t)
	_, res := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	const lvl = "G/LEVEL3.WAD/data.d/"
	ci := mustLookup(t, tree, lvl+"core_index")
	index := readAll(t, ci)
	before, _ := levelcore.Read(index, 1<<30)
	h := before.Header
	off, _, _ := ci.ImageRange()
	patch := func(at int64, b []byte) {
		patchImage(t, path, off+at, b)
		copy(index[at:], b)
	}
	tie0 := int64(h.TieClasses.Offset)
	patch(tie0+0x10, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})         // tie 0: no terminator
	patch(int64(h.MobyClasses.Offset)+0x20*int64(len(before.Mobies)-1), le32(h.Sky)) // last moby block on the sky's offset
	patch(0x00, le32(int32((int64(len(index))-int64(h.GsRAM.Offset))/0x10)))         // gs_ram count past the table
	patch(0x78, le32(int32(len(index)-0x10)))                                        // ratchet_seqs past core_index
	want, _ := levelcore.Read(index, 1<<30)
	tree, logs := openDisc(t, path, -1, Options{LogBurst: 1000})
	core := mustLookup(t, tree, lvl+"core")
	got := core.LevelCore().Skipped
	if v, _ := core.Xattr(XattrPrefix + "skipped"); v != strconv.Itoa(len(want.Skipped)) || len(got) != len(want.Skipped) {
		t.Fatalf("skipped %q, levelcore %d: %v", v, len(want.Skipped), got)
	}
	for _, w := range []string{"tie class 0 (o_class", "moby class " + strconv.Itoa(len(before.Mobies)-1), "moby stash", "ratchet_seqs"} {
		found := false
		for _, s := range got {
			if strings.HasPrefix(s.What, w) && s.Reason != "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no skip of %q in %v", w, got)
		}
	}
	if n := logs.Count("data.d/core: left out"); n != len(got) {
		t.Errorf("%d log lines for %d skips: %q", n, len(got), logs.Lines())
	}
	if core.Child("ratchet_seqs") != nil {
		t.Error("ratchet_seqs/ still listed")
	}
	// everything mkdisc wrote that none of these touch still reads
	stashed := map[string]bool{}
	for _, cl := range before.Mobies {
		if cl.Stashed {
			stashed[leftPad(cl.OClass)] = true
		}
	}
	lastMoby := leftPad(before.Mobies[len(before.Mobies)-1].OClass)
	checked := 0
	for _, m := range res.Manifest {
		p := m.Path
		if !strings.HasPrefix(p, lvl+"core/") {
			continue
		}
		r := strings.TrimPrefix(p, lvl+"core/")
		switch {
		case strings.HasPrefix(r, "ratchet_seqs/"), strings.HasPrefix(r, "ties/"+leftPad(before.Ties[0].OClass)+"/"),
			r == "mobies/"+lastMoby+"/class", r == "sky", strings.HasPrefix(r, "mobies/") && stashed[strings.Split(r, "/")[1]],
			strings.HasSuffix(r, "/class"), strings.HasSuffix(r, "/mesh.glb"), strings.HasSuffix(r, "/mesh_low.glb"):
			continue // left out, or a class block (and its meshes) whose end moved (the ratchet sequences were boundaries)
		}
		n, err := tree.Lookup(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if b := readAll(t, n); sha(b) != m.SHA1 {
			t.Errorf("%s changed", p)
		}
		checked++
	}
	if checked < 20 {
		t.Fatalf("only %d files checked", checked)
	}
}

// TestLevelCoreBrokenData: a core_data whose stream breaks a rule part way
// (its declared size cuts a packet) fails open, as any broken stream does,
// but the core's blocks and textures that lie wholly before the break still
// read as mkdisc wrote them; those past it fail with the stream's error;
// nothing reads different bytes; core_data's error is logged once.
func TestLevelCoreBrokenData(t *testing.T) {
	path := copyOf(t)
	_, res := small(t)
	const lvl = "G/LEVEL4.WAD/data.d/"
	tree, _ := openDisc(t, path, -1, Options{})
	clean := breakStream(t, tree, path, lvl+"core_data", 3.0/5, 0)
	tree, logs := openDisc(t, path, -1, Options{LogBurst: 1000})
	cd := mustLookup(t, tree, lvl+"core_data")
	if _, err := cd.Open(); !errors.Is(err, codec.ErrFormat) {
		t.Fatalf("core_data: Open %v, want the stream's error", err)
	}
	if cd.Size() != clean {
		t.Fatalf("core_data: %d bytes, %d decode cleanly", cd.Size(), clean)
	}
	inside := func(n *Node) (known, in bool) {
		end := clean
		switch {
		case n.Kind == Nested && n.within == cd:
			return true, n.woff+n.size <= end
		case n.lc != nil && n.lc.tex != nil:
			tx := n.lc.tex
			ok := func(p *Node, l levelcore.Loc) bool { return p != cd || l.Offset+l.Size <= end }
			return true, ok(n.lc.pixels, tx.Pixels) && ok(n.lc.palette, tx.Palette)
		}
		return false, false // (a glb: of several blocks)
	}
	read, failed := 0, 0
	for _, m := range res.Manifest {
		if !strings.HasPrefix(m.Path, lvl+"core/") {
			continue
		}
		n, err := tree.Lookup(m.Path)
		if err != nil {
			t.Errorf("%s: %v", m.Path, err)
			continue
		}
		known, in := inside(n)
		var b []byte
		r, err := n.Open()
		if err == nil {
			b = make([]byte, r.Size())
			var got int
			got, err = r.ReadAt(b, 0)
			if got == len(b) && errors.Is(err, io.EOF) {
				err = nil
			}
		}
		switch {
		case err == nil && sha(b) != m.SHA1:
			t.Errorf("%s: read different bytes", m.Path)
		case known && in && err != nil:
			t.Errorf("%s lies before the break: %v", m.Path, err)
		case known && !in && !errors.Is(err, codec.ErrFormat):
			t.Errorf("%s reaches past the break: err %v, want the stream's", m.Path, err)
		case known && in:
			read++
			if e := n.Err(); e != nil {
				t.Errorf("%s reads, but Err says %v", m.Path, e)
			}
		case known:
			failed++
		}
	}
	decoded, past, err := mustLookup(t, tree, lvl+"core").CoreDataShort()
	if decoded != clean || !errors.Is(err, codec.ErrFormat) || len(past) == 0 {
		t.Errorf("CoreDataShort: %d bytes, %d past, %v", decoded, len(past), err)
	}
	if read < 20 || failed < 5 {
		t.Errorf("%d files before the break read, %d past it failed", read, failed)
	}
	if n := logs.Count(lvl + "core_data:"); n != 1 {
		t.Errorf("core_data's error logged %d times: %q", n, logs.Lines())
	}
}
