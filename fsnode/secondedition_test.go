package fsnode

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
)

// The synthetic discs, each generated once per test binary (in sharedDir,
// which TestMain removes) for the package's tests; a test that damages one
// works on its own copy.
var (
	sharedMu    sync.Mutex
	sharedDir   string
	sharedDiscs = map[mkdisc.Layout]*sharedDisc{}
)

type sharedDisc struct {
	path string
	res  *mkdisc.Result
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// sharedImage generates layout (seed 1) the first time a test asks for it.
func sharedImage(t testing.TB, layout mkdisc.Layout) (string, *mkdisc.Result) {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	d := sharedDiscs[layout]
	if d == nil {
		d = &sharedDisc{}
		sharedDiscs[layout] = d
		if sharedDir == "" {
			sharedDir, d.err = os.MkdirTemp("", "gcfs-fsnode-")
		}
		if d.err == nil {
			d.path = filepath.Join(sharedDir, string(layout)+".iso")
			d.res, d.err = mkdisctest.Generate(d.path, layout, 1)
		}
	}
	if d.err != nil {
		t.Fatalf("%s disc: %v", layout, d.err)
	}
	return d.path, d.res
}

func small(t testing.TB) (string, *mkdisc.Result) { return sharedImage(t, mkdisc.Small) }

// copyOf copies the small disc so a test may damage it.
func copyOf(t *testing.T) string {
	src, _ := small(t)
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "copy.iso")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func sha(b []byte) string { s := sha1.Sum(b); return hex.EncodeToString(s[:]) }

// TestSecondEditionManifest: every file mkdisc's own plan lists is in the
// tree with its size and content, nested parts and extents past MPEG.WAD
// included, and the tree has no file the plan lacks.
func TestSecondEditionManifest(t *testing.T) {
	path, res := small(t)
	tree, logs := openDisc(t, path, -1, Options{})
	want := map[string]mkdisc.ManifestEntry{}
	for _, m := range res.Manifest {
		want[m.Path] = m
	}
	seen := 0
	_ = WalkListing(tree.Root, func(n *Node) error { // sky.d/textures/ listed too
		if n.IsDir() {
			return nil
		}
		m, ok := want[n.Path()]
		if !ok {
			t.Errorf("%s: in the tree, not in mkdisc's plan", n.Path())
			return nil
		}
		seen++
		if got := readAll(t, n); int64(len(got)) != m.Size || sha(got) != m.SHA1 {
			t.Errorf("%s: %d bytes %s, plan %d %s", n.Path(), len(got), sha(got), m.Size, m.SHA1)
		}
		return nil
	})
	if seen != len(want) {
		t.Errorf("%d files in the tree, %d in the plan", seen, len(want))
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("a well-formed disc logged %q", logs.Lines())
	}
}

func TestSecondEditionNodes(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	attr := func(n *Node, k string) string { v, _ := n.Xattr(XattrPrefix + k); return v }

	core := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core_data")
	if core.Kind != Decoded {
		t.Fatalf("core_data: kind %v", core.Kind)
	}
	if es := attr(core, "expected_size"); es != itoa(core.Size()) {
		t.Errorf("core_data: expected_size %q, decoded size %d", es, core.Size())
	}
	if _, bad := core.Xattr(XattrPrefix + "error"); bad {
		t.Errorf("core_data: error %q", attr(core, "error"))
	}

	// A part of decoded content is a range of its parent, read through the
	// parent's cached blocks: no second decode.
	tt := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/transition_textures")
	whole := readAll(t, tt)
	part := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/transition_textures.d/01")
	if part.Kind != Nested || attr(part, "parent_offset") == "" || attr(part, "offset") != "" {
		t.Fatalf("texlist item: kind %v, xattrs %v", part.Kind, part.Xattrs())
	}
	misses := tree.Cache.Stats().Misses
	got := readAll(t, part)
	off := int(binary.LittleEndian.Uint32(whole[8:]))
	if !bytes.Equal(got, whole[off:off+len(got)]) || string(got[:4]) != "2FIP" {
		t.Errorf("texlist item 01 is not bytes %d.. of its decoded list (%q)", off, got[:4])
	}
	if m := tree.Cache.Stats().Misses; m != misses {
		t.Errorf("reading a part of a cached decoded file missed the cache %d times", m-misses)
	}

	// MISC irx decoded: an IRX bundle of ELF modules.
	mod := mustLookup(t, tree, "G/MISC.WAD/irx.d/989snd.irx")
	if b := readAll(t, mod); len(b) < 4 || string(b[:4]) != "\x7fELF" {
		t.Errorf("irx.d/989snd does not begin with an ELF header")
	}

	// A video past MPEG.WAD reads from MPEG1.WAD, and says so.
	v := mustLookup(t, tree, "G/MPEG.WAD/video20.pss")
	if attr(v, "in_file") != "G/MPEG1.WAD" {
		t.Errorf("video20: in_file %q", attr(v, "in_file"))
	}
	m1 := mustLookup(t, tree, "G/MPEG1.WAD")
	vOff, vSize, _ := v.ImageRange()
	m1Off, _, _ := m1.ImageRange()
	if got, all := readAll(t, v), readAll(t, m1); !bytes.Equal(got, all[vOff-m1Off:vOff-m1Off+vSize]) || got[3] != 0xBA {
		t.Error("video20 is not its bytes in MPEG1.WAD (or has no pack header)")
	}

	// Named slots, and the table of contents agreeing with every container.
	for _, p := range []string{"G/HUD.WAD/hud_bank4", "G/BONUS.WAD/credits_text", "G/AUDIO.WAD/help_italian/000.vag", "G/AUDIO.WAD/help_italian/000.wav",
		"G/AUDIO2.WAD/upgrade_sample.wav", "G/MPEG.WAD/subtitles03.d/french.srt", "G/SCENE1.WAD/scene00/moby_load", "G/SCENE1.WAD/scene00/chunks/00",
		"G/ARMOR.WAD/wrench5_textures.d/00", "G/LEVEL1.WAD/chunk0.d/tfrags.wad"} {
		mustLookup(t, tree, p)
	}
	_ = tree.Walk(func(n *Node) error {
		if n.Container() != nil && n.TOCStatus() != "matches" {
			t.Errorf("%s: toc %q", n.Path(), n.TOCStatus())
		}
		return nil
	})
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// patchImage overwrites bytes of an image at off.
func patchImage(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func le32(v int32) []byte { var b [4]byte; binary.LittleEndian.PutUint32(b[:], uint32(v)); return b[:] }

// Parts that overlap their parent's table, run outside it or are absent are
// left out and counted, each with its reason; the others still read.
func TestBadPartTable(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	data := mustLookup(t, tree, "G/LEVEL2.WAD/data")
	base, size, _ := data.ImageRange()
	overlay := readAll(t, mustLookup(t, tree, "G/LEVEL2.WAD/data.d/overlay"))
	patchImage(t, path, base+0x08, append(le32(0x10), le32(0x40)...))      // core_index inside the 0x58 table
	patchImage(t, path, base+0x10, append(le32(int32(size)), le32(16)...)) // gs_ram past the lump
	patchImage(t, path, base+0x18, append(le32(-1), le32(0)...))           // hud_header absent
	tree, logs := openDisc(t, path, -1, Options{})
	d := mustLookup(t, tree, "G/LEVEL2.WAD/data.d")
	if v, _ := d.Xattr(XattrPrefix + "skipped"); v != "3" {
		t.Errorf("data.d skipped %q, want 3", v)
	}
	ps, of := d.Parts()
	if of == nil || of.Path() != "G/LEVEL2.WAD/data" || len(ps.Skipped) != 3 {
		t.Fatalf("parts %+v of %v", ps, of)
	}
	for i, want := range []string{"overlaps the 0x58-byte table", "outside the file", "absent"} {
		if !strings.Contains(ps.Skipped[i].Reason, want) {
			t.Errorf("skip %d: %q, want %q", i, ps.Skipped[i].Reason, want)
		}
	}
	for _, gone := range []string{"core_index", "gs_ram", "hud_header"} {
		if d.Child(gone) != nil {
			t.Errorf("%s still listed", gone)
		}
	}
	if got := readAll(t, mustLookup(t, tree, "G/LEVEL2.WAD/data.d/overlay")); !bytes.Equal(got, overlay) {
		t.Error("overlay changed")
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

// core_index+0x8c that disagrees with what core_data decodes to: the error
// says so, the file still reads what decodes.
func TestCoreDataExpectedMismatch(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ci := mustLookup(t, tree, "G/LEVEL3.WAD/data.d/core_index")
	cd := mustLookup(t, tree, "G/LEVEL3.WAD/data.d/core_data")
	want := readAll(t, cd)
	off, _, _ := ci.ImageRange()
	patchImage(t, path, off+0x8c, le32(12345))
	tree, logs := openDisc(t, path, -1, Options{})
	cd = mustLookup(t, tree, "G/LEVEL3.WAD/data.d/core_data")
	if v, _ := cd.Xattr(XattrPrefix + "expected_size"); v != "12345" {
		t.Errorf("expected_size %q", v)
	}
	if v, _ := cd.Xattr(XattrPrefix + "error"); !strings.Contains(v, "12345") || !strings.Contains(v, itoa(int64(len(want)))) {
		t.Errorf("error %q", v)
	}
	if got := readAll(t, cd); !bytes.Equal(got, want) {
		t.Error("core_data does not read what decodes")
	}
	if logs.Count("data.d/core_data") != 1 { // the core reading also logs what +0x8c leaves out of it
		t.Errorf("log %q, want one line on core_data", logs.Lines())
	}
}

// A nested WAD stream that breaks a rule behaves as a top-level one: the
// clean length, Open fails, one log line naming it, .wad still reads.
func TestNestedCorruptStream(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	raw := mustLookup(t, tree, "G/LEVEL4.WAD/data.d/hud_bank2.wad")
	off, _, _ := raw.ImageRange()
	// two literal packets in a row right after the header
	patchImage(t, path, off+16, []byte{0x01, 'a', 'b', 'c', 'd', 0x01, 'e', 'f', 'g', 'h'})
	tree, logs := openDisc(t, path, -1, Options{})
	hb := mustLookup(t, tree, "G/LEVEL4.WAD/data.d/hud_bank2")
	if hb.Size() != 4 {
		t.Errorf("corrupt nested stream: size %d, want the 4 bytes that decode", hb.Size())
	}
	var se *StreamError
	if _, err := hb.Open(); !errors.As(err, &se) {
		t.Errorf("Open: %v, want a StreamError", err)
	}
	if logs.Count("hud_bank2") != 1 {
		t.Errorf("log %q, want one line on hud_bank2", logs.Lines())
	}
	readAll(t, mustLookup(t, tree, "G/LEVEL4.WAD/data.d/hud_bank2.wad"))
}

// An RC2.HDR that disagrees with a container is reported, and the
// container's own header is what the tree follows.
func TestTOCDisagrees(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	toc, hdr := tree.TOC()
	if toc == nil || toc.Problem != "" {
		t.Fatalf("toc %+v", toc)
	}
	before := len(mustLookup(t, tree, "G/MISC.WAD").Children)
	hOff, _, _ := hdr.ImageRange()
	misc := toc.Globals[1]
	patchImage(t, path, hOff+misc.Offset+8, le32(0x7777)) // MISC's copy: debug_font elsewhere
	tree, _ = openDisc(t, path, -1, Options{})
	m := mustLookup(t, tree, "G/MISC.WAD")
	if s := m.TOCStatus(); !strings.Contains(s, "differs") {
		t.Errorf("toc %q", s)
	}
	if v, _ := m.Xattr(XattrPrefix + "toc"); v != m.TOCStatus() {
		t.Errorf("xattr toc %q", v)
	}
	if len(m.Children) != before {
		t.Errorf("MISC.WAD has %d children, %d before: the tree followed RC2.HDR", len(m.Children), before)
	}
	// A cut RC2.HDR: reported, never fatal.
	toc = discimg.ReadTOC(bytes.NewReader(make([]byte, 0x100)), 0x100)
	if toc.Problem == "" || toc.Globals[0].Err == "" {
		t.Errorf("short RC2.HDR: %+v", toc)
	}
}

// An item list whose count does not fit its bytes has no NAME.d/, and says
// why; the file itself still reads.
func TestBadItemList(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	tex := mustLookup(t, tree, "G/ARMOR.WAD/armor2_textures")
	off, _, _ := tex.ImageRange()
	patchImage(t, path, off, le32(0x7fffffff))
	tree, logs := openDisc(t, path, -1, Options{})
	tex = mustLookup(t, tree, "G/ARMOR.WAD/armor2_textures")
	if tree.Root.Child("G").Child("ARMOR.WAD").Child("armor2_textures.d") != nil {
		t.Error("armor2_textures.d/ is still listed")
	}
	if err := tex.PartsError(); err == nil || !strings.Contains(err.Error(), "count") {
		t.Errorf("parts error %v", err)
	}
	readAll(t, tex)
	if logs.Count("armor2_textures") != 1 {
		t.Errorf("log %q", logs.Lines())
	}
}

// The tree's part nodes stay bounded whatever the tables say: past the bound
// the rest are left out, with one log line, and the tree still builds.
func TestPartNodesBounded(t *testing.T) {
	path, _ := small(t)
	defer func(n int) { maxPartNodes = n }(maxPartNodes)
	maxPartNodes = 50
	tree, logs := openDisc(t, path, -1, Options{})
	parts := 0
	_ = tree.Walk(func(n *Node) error {
		if n.Parent != nil && n.Parent.partsOf != nil && n.wadOf == nil && n.vm == nil && n.Kind != Dir {
			parts++
		}
		return nil
	})
	if parts != 50 {
		t.Errorf("%d parts, want the bound 50", parts)
	}
	if logs.Count("parts in the tree") != 1 {
		t.Errorf("log %q", logs.Lines())
	}
}
