package rebuild

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"gcfs/assets"
	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/discimg/gameplay"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
	"gcfs/fsnode"
)

var smallDisc struct {
	once sync.Once
	dir  string
	path string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if smallDisc.dir != "" {
		os.RemoveAll(smallDisc.dir)
	}
	os.Exit(code)
}

// small is the small layout's disc, generated once for the package.
func small(t testing.TB) string {
	t.Helper()
	smallDisc.once.Do(func() {
		smallDisc.dir, smallDisc.err = os.MkdirTemp("", "gcfs-rebuild-")
		if smallDisc.err != nil {
			return
		}
		smallDisc.path = filepath.Join(smallDisc.dir, "small.iso")
		_, smallDisc.err = mkdisctest.Generate(smallDisc.path, mkdisc.Small, 1)
	})
	if smallDisc.err != nil {
		t.Fatal(smallDisc.err)
	}
	return smallDisc.path
}

type sizedReader interface {
	io.ReaderAt
	Size() int64
}

func buildTree(t testing.TB, r io.ReaderAt, size int64) *fsnode.Tree {
	t.Helper()
	img, err := discimg.Open(r, size)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(img, fsnode.Options{CacheSize: 32 << 20, Logf: func(f string, a ...any) { t.Logf("tree: "+f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

var origTree struct {
	once sync.Once
	tree *fsnode.Tree
	f    *os.File
}

// original is the small disc's tree, built once (Plan only reads it).
func original(t testing.TB) (*fsnode.Tree, *os.File) {
	t.Helper()
	path := small(t)
	origTree.once.Do(func() {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		origTree.f, origTree.tree = f, buildTree(t, f, fi.Size())
	})
	if origTree.tree == nil {
		t.Fatal("the small disc's tree was not built")
	}
	return origTree.tree, origTree.f
}

func read(t testing.TB, tree *fsnode.Tree, path string) []byte {
	t.Helper()
	n, err := tree.Lookup(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readAll(n)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// rebuilt plans edits, builds the rebuilt image's tree from the layout's
// reader and runs the read-back check.
func rebuilt(t *testing.T, edits ...Edit) (*Layout, *fsnode.Tree, *fsnode.Tree) {
	t.Helper()
	tree, f := original(t)
	l, err := Plan(tree, edits, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	r := l.NewReader(f)
	out := buildTree(t, r, r.Size())
	if err := Check(tree, out, l); err != nil {
		t.Fatal(err)
	}
	return l, tree, out
}

func changed(b []byte) []byte {
	c := append([]byte(nil), b...)
	for i := 16; i < len(c); i += 97 { // headers (magic, sizes) kept
		c[i] ^= 0x5a
	}
	return c
}

func hashOf(t testing.TB, r io.ReaderAt, size int64) [32]byte {
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(r, 0, size)); err != nil {
		t.Fatal(err)
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// TestNoEditIsIdentical: no edit, or edits that equal the disc's bytes
// (a decoded file written back unchanged), give the image byte for byte.
func TestNoEditIsIdentical(t *testing.T) {
	tree, f := original(t)
	fi, _ := f.Stat()
	same := []Edit{
		{"G/LEVEL1.WAD/gameplay", read(t, tree, "G/LEVEL1.WAD/gameplay")},
		{"G/MISC.WAD/save_game", read(t, tree, "G/MISC.WAD/save_game")},
	}
	l, err := Plan(tree, same, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Unchanged) != 2 || len(l.Rebuilt) != 0 || len(l.Moved) != 0 {
		t.Fatalf("unchanged %v, rebuilt %v, moved %v", l.Unchanged, l.Rebuilt, l.Moved)
	}
	if l.Size != fi.Size() || hashOf(t, l.NewReader(f), l.Size) != hashOf(t, f, fi.Size()) {
		t.Fatal("the rebuilt image differs from the original")
	}
}

// TestRawEditInPlace: a raw extent of the same size changes those bytes
// (and MISC.WAD, whose table and RC2.HDR copy stay as they are); nothing
// moves.
func TestRawEditInPlace(t *testing.T) {
	tree, _ := original(t)
	p := "G/MISC.WAD/save_game"
	want := changed(read(t, tree, p))
	l, _, out := rebuilt(t, Edit{p, want})
	if got := read(t, out, p); !bytes.Equal(got, want) {
		t.Fatal("the rebuilt disc does not show the edit")
	}
	if len(l.Moved) != 0 {
		t.Fatalf("moved %v", l.Moved)
	}
	if strings.Join(l.Rebuilt, ",") != "G/MISC.WAD/save_game,G/MISC.WAD" {
		t.Fatalf("rebuilt %v", l.Rebuilt)
	}
	if n := l.NewBytes(); n > 64<<10 {
		t.Fatalf("%d bytes held for a 4 KiB edit", n)
	}
}

// TestDecodedEdit: a decoded file is encoded again with its stream's tag;
// a grown level lump moves what follows it inside the LEVEL file, whose
// header (sectors) and RC2.HDR copy follow.
func TestDecodedEdit(t *testing.T) {
	tree, _ := original(t)
	p := "G/LEVEL1.WAD/gameplay"
	want := append(changed(read(t, tree, p)), codec.SampleData(7, 200<<10)...)
	_, _, out := rebuilt(t, Edit{p, want})
	if got := read(t, out, p); !bytes.Equal(got, want) {
		t.Fatal("the rebuilt disc does not show the edit")
	}
	n, _ := out.Lookup(p)
	if n.StreamHeader().Tag != "gameplay" {
		t.Fatalf("tag %q", n.StreamHeader().Tag)
	}
	c, _ := out.Lookup("G/LEVEL1.WAD")
	if c.TOCStatus() != "matches" {
		t.Fatalf("RC2.HDR: %s", c.TOCStatus())
	}
}

// TestWadEdit: NAME.wad is taken as stored once it decodes; one that does
// not is refused, naming it.
func TestWadEdit(t *testing.T) {
	tree, _ := original(t)
	p := "G/MISC.WAD/frontbin_net"
	dec := changed(read(t, tree, p))
	stream := codec.Encode(dec, codec.EncodeOptions{Tag: "frontnet", Best: true})
	_, _, out := rebuilt(t, Edit{p + ".wad", stream})
	if got := read(t, out, p); !bytes.Equal(got, dec) {
		t.Fatal("the rebuilt disc does not decode to the edit")
	}
	// two literal packets in a row: no decoder takes it
	packets := []byte{0x01, 'a', 'b', 'c', 'd', 0x01, 'e', 'f', 'g', 'h'}
	bad := make([]byte, 16, 16+len(packets))
	copy(bad, "WAD")
	binary.LittleEndian.PutUint32(bad[3:], uint32(16+len(packets)))
	copy(bad[7:], "frontnet")
	bad = append(bad, packets...)
	_, err := Plan(tree, []Edit{{p + ".wad", bad}}, Options{})
	var ee *EditError
	if !errors.As(err, &ee) || ee.Path != p+".wad" || !strings.Contains(err.Error(), "does not decode") {
		t.Fatalf("got %v", err)
	}
	if _, err := Plan(tree, []Edit{{p + ".wad", []byte("not a stream")}}, Options{}); !errors.As(err, &ee) {
		t.Fatalf("got %v", err)
	}
}

// TestNestedEdits: parts inside decoded content (the irx bundle's modules,
// a texlist's textures) and inside raw lumps rebuild their tables and
// re-encode the stream around them.
func TestNestedEdits(t *testing.T) {
	tree, _ := original(t)
	mod := "G/MISC.WAD/irx.d/sio2man.irx"
	tex := "G/LEVEL1.WAD/data.d/transition_textures.d/01"
	coll := "G/LEVEL1.WAD/chunk0.d/tfrags"
	edits := []Edit{
		{mod, append(changed(read(t, tree, mod)), bytes.Repeat([]byte("grown"), 1000)...)},
		{tex, changed(read(t, tree, tex))[:1000]},
		{coll, append(read(t, tree, coll), codec.SampleData(3, 50<<10)...)},
	}
	_, _, out := rebuilt(t, edits...)
	for _, e := range edits {
		// A slot sized by the next one's offset shows its padding.
		got := read(t, out, e.Path)
		if !bytes.HasPrefix(got, e.Data) || len(got)-len(e.Data) >= 2048 || !isZero(got[len(e.Data):]) {
			t.Errorf("%s: the rebuilt disc does not show the edit (%d bytes, want %d)", e.Path, len(got), len(e.Data))
		}
	}
}

// TestCoreDataEdit: an edited core_data's sizes go into core_index +0x88 and
// +0x8c, so the tree finds the decoded size it records.
func TestCoreDataEdit(t *testing.T) {
	tree, _ := original(t)
	p := "G/LEVEL1.WAD/data.d/core_data"
	want := append(read(t, tree, p), codec.SampleData(9, 100<<10)...)
	_, _, out := rebuilt(t, Edit{p, want})
	n, _ := out.Lookup(p)
	if n.Warning() != nil {
		t.Fatal(n.Warning())
	}
	ci := read(t, out, "G/LEVEL1.WAD/data.d/core_index")
	wad := read(t, out, p+".wad")
	h, _ := codec.ParseHeader(wad)
	if got := binary.LittleEndian.Uint32(ci[0x8c:]); int(got) != len(want) {
		t.Fatalf("+0x8c %d, want %d", got, len(want))
	}
	if got := binary.LittleEndian.Uint32(ci[0x88:]); int64(got) != h.Size {
		t.Fatalf("+0x88 %d, want %d", got, h.Size)
	}
}

// TestGrowMoves: a container that outgrows its sectors moves to the end of
// the volume; its directory record, RC2.HDR's copy and level table and the
// volume size follow, and everything else stays where it was.
func TestGrowMoves(t *testing.T) {
	tree, _ := original(t)
	p := "G/LEVEL1.WAD/sound_bank"
	want := append(read(t, tree, p), codec.SampleData(5, 3<<20)...)
	l, _, out := rebuilt(t, Edit{p, want})
	if len(l.Moved) != 1 || l.Moved[0].Path != "G/LEVEL1.WAD" {
		t.Fatalf("moved %v", l.Moved)
	}
	m := l.Moved[0]
	c, _ := out.Lookup("G/LEVEL1.WAD")
	if c.Entry().LBA != m.ToLBA || c.TOCStatus() != "matches" {
		t.Fatalf("LBA %d (moved to %d), RC2.HDR: %s", c.Entry().LBA, m.ToLBA, c.TOCStatus())
	}
	if out.Image.Vol.Blocks*2048 != l.Size || l.Size <= tree.Image.Size {
		t.Fatalf("volume %d blocks, image %d bytes", out.Image.Vol.Blocks, l.Size)
	}
	toc, hdr := out.TOC()
	if probs := toc.LevelTableProblems(hdr.Entry().LBA); len(probs) != 0 {
		t.Fatal(probs)
	}
	if sec := toc.Levels[1].Level.Sectors; sec != (c.Entry().Size+2047)/2048 {
		t.Fatalf("level table: %d sectors, the file has %d bytes", sec, c.Entry().Size)
	}
	// every other root and G file keeps its LBA
	_ = tree.Walk(func(n *fsnode.Node) error {
		if e := n.Entry(); e != nil && !e.IsDir && n.Path() != "G/LEVEL1.WAD" {
			o, _ := out.Lookup(n.Path())
			if o == nil || o.Entry().LBA != e.LBA {
				t.Errorf("%s moved", n.Path())
			}
		}
		return nil
	})
}

// TestStartListAndScene: a grown extent of the global AUDIO start list and a
// scene record's moby_load (start and size word) move what follows.
func TestStartListAndScene(t *testing.T) {
	tree, _ := original(t)
	a := "G/AUDIO.WAD/vendor/001.vag"
	s := "G/SCENE1.WAD/scene00/moby_load"
	_, _, out := rebuilt(t,
		Edit{a, append(read(t, tree, a), make([]byte, 5000)...)},
		Edit{s, append(read(t, tree, s), codec.SampleData(2, 30<<10)...)})
	if got := read(t, out, a); len(got) != len(read(t, tree, a))+5000+(2048-(len(read(t, tree, a))+5000)%2048)%2048 {
		t.Fatalf("%s: %d bytes", a, len(got))
	}
}

// TestConflicts: one node edited in two forms, or a lump and its part.
func TestConflicts(t *testing.T) {
	tree, _ := original(t)
	for _, pair := range [][2]string{
		{"G/LEVEL1.WAD/gameplay", "G/LEVEL1.WAD/gameplay.wad"},
		{"G/LEVEL1.WAD/data", "G/LEVEL1.WAD/data.d/core_index"},
	} {
		_, err := Plan(tree, []Edit{{pair[0], []byte("x")}, {pair[1], []byte("y")}}, Options{})
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), pair[0]) || !strings.Contains(err.Error(), pair[1]) {
			t.Errorf("%v: got %v", pair, err)
		}
		if Conflict(tree, pair[0], pair[1]) == "" || Conflict(tree, pair[1], pair[0]) == "" {
			t.Errorf("%v: Conflict says none", pair)
		}
	}
	// A texture and its PNG, both changed: the error names both as written
	// (the PNG's edit is taken back to the PIF's path before the check).
	tex := "G/ARMOR.WAD/armor0_textures.d/00"
	pic := read(t, tree, "G/ARMOR.WAD/armor0_textures.d/01.png")
	other := read(t, tree, "G/ARMOR.WAD/armor0_textures.d/01")
	_, err := Plan(tree, []Edit{{tex, other}, {tex + ".png", pic}}, Options{})
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tex+" and "+tex+".png") {
		t.Errorf("PIF and PNG: got %v", err)
	}
	// A view of a decoded file and its .wad.
	bonus := "G/BONUS.WAD/character_renders/00"
	if Conflict(tree, bonus+".png", bonus+".wad") == "" {
		t.Error("00.png and 00.wad: Conflict says none")
	}
	// Different nodes: none.
	for _, pair := range [][2]string{
		{tex, "G/ARMOR.WAD/armor0_textures.d/01.png"},
		{"G/LEVEL1.WAD/data.d/core_index", "G/LEVEL1.WAD/gameplay"},
	} {
		if why := Conflict(tree, pair[0], pair[1]); why != "" {
			t.Errorf("%v: Conflict says %q", pair, why)
		}
	}
}

// TestRefused: edits pack cannot rebuild are refused, naming the file.
func TestRefused(t *testing.T) {
	tree, _ := original(t)
	for _, c := range []struct {
		e    Edit
		want string
	}{
		{Edit{"RC2.HDR", []byte("x")}, "rebuilt from the containers"},
		{Edit{"SYSTEM.CNF", make([]byte, 5000)}, "must stay at LBA 1000"},
		{Edit{"G/NOSUCH.WAD", []byte("x")}, "not a file"},
		{Edit{"G/LEVEL1.WAD", []byte("x")}, "is a directory"},
	} {
		_, err := Plan(tree, []Edit{c.e}, Options{})
		var ee *EditError
		if !errors.As(err, &ee) || ee.Path != c.e.Path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v", c.e.Path, err)
		}
	}
}

// TestTooLarge: a rebuilt image past the DVD's capacity is refused.
func TestTooLarge(t *testing.T) {
	tree, _ := original(t)
	defer func(v int64) { dvdLimit = v }(dvdLimit)
	dvdLimit = tree.Image.Size + 1<<20
	p := "G/LEVEL1.WAD/sound_bank"
	_, err := Plan(tree, []Edit{{p, make([]byte, 2<<20)}}, Options{})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
}

// TestFieldLimit: a value past a 32-bit signed field is refused, naming the
// field.
func TestFieldLimit(t *testing.T) {
	hdr := make([]byte, 16)
	if err := putU32(hdr, 8, 1<<31, "X.WAD entry 0 size"); err == nil || !strings.Contains(err.Error(), "X.WAD entry 0 size") {
		t.Fatalf("got %v", err)
	}
	if err := putU32(hdr, 8, 1<<31-1, "x"); err != nil {
		t.Fatal(err)
	}
}

// flipped reads r with one byte changed.
type flipped struct {
	r  io.ReaderAt
	at int64
}

func (f flipped) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.r.ReadAt(p, off)
	if f.at >= off && f.at < off+int64(n) {
		p[f.at-off] ^= 1
	}
	return n, err
}

// TestCheckFindsDamage: the read-back check fails on a byte changed in a
// file no edit touches, and on an edited file that is not its edit.
func TestCheckFindsDamage(t *testing.T) {
	tree, f := original(t)
	p := "G/MISC.WAD/save_game"
	l, err := Plan(tree, []Edit{{p, changed(read(t, tree, p))}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := tree.Lookup("IOPRP255.IMG")
	off, _, _ := other.ImageRange()
	r := l.NewReader(f)
	out := buildTree(t, flipped{r, off + 100}, r.Size())
	if err := Check(tree, out, l); err == nil || !strings.Contains(err.Error(), "IOPRP255.IMG: differs") {
		t.Fatalf("got %v", err)
	}
	out = buildTree(t, r, r.Size())
	l.Expect[p] = read(t, tree, p)
	if err := Check(tree, out, l); err == nil || !strings.Contains(err.Error(), p+": not the edit") {
		t.Fatalf("got %v", err)
	}
}

func recolour(t *testing.T, pic []byte, c color.NRGBA, every int) []byte {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(pic))
	if err != nil {
		t.Fatal(err)
	}
	b := img.Bounds()
	out := image.NewNRGBA(b)
	i := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			out.Set(x, y, img.At(x, y))
			if i%every == 0 {
				out.SetNRGBA(x, y, c)
			}
			i++
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestViewEdits: a texture's PNG becomes the PIF again (a new colour in its
// palette; a BONUS image re-encoded in its stream; an RGBA blob), a sound's
// WAV a VAG at the WAV's rate; a PNG or WAV written back unchanged rebuilds
// nothing; bad ones are refused saying why.
func TestViewEdits(t *testing.T) {
	tree, f := original(t)
	pngs := []string{"G/ARMOR.WAD/armor0_textures.d/00.png", "G/BONUS.WAD/paintings/00.png", "G/BONUS.WAD/credits_images/00.png"}
	wav := "G/AUDIO.WAD/vendor/000.wav"
	var same []Edit
	for _, p := range append(pngs, wav) {
		same = append(same, Edit{p, read(t, tree, p)})
	}
	l, err := Plan(tree, same, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Rebuilt) != 0 || l.Size != tree.Image.Size || hashOf(t, l.NewReader(f), l.Size) != hashOf(t, f, l.Size) {
		t.Fatalf("unchanged views rebuilt %v", l.Rebuilt)
	}
	red := color.NRGBA{250, 1, 2, 255}
	var edits []Edit
	for _, p := range pngs {
		edits = append(edits, Edit{p, recolour(t, read(t, tree, p), red, 5)})
	}
	samples := make([]int16, 5000)
	for i := range samples {
		samples[i] = int16((i * 37) % 20000)
	}
	w := assets.WAVHeader(22050, int64(len(samples)))
	for _, s := range samples {
		w = binary.LittleEndian.AppendUint16(w, uint16(s))
	}
	edits = append(edits, Edit{wav, w})
	_, _, out := rebuilt(t, edits...)
	for _, e := range edits[:len(pngs)] {
		got, err := png.Decode(bytes.NewReader(read(t, out, e.Path)))
		if err != nil {
			t.Fatal(err)
		}
		b := got.Bounds()
		if c := color.NRGBAModel.Convert(got.At(b.Min.X, b.Min.Y)).(color.NRGBA); c != red {
			t.Errorf("%s: first pixel %v, want %v", e.Path, c, red)
		}
	}
	h, dec, err := assets.DecodeVAG(read(t, out, "G/AUDIO.WAD/vendor/000.vag"))
	if err != nil || h.SampleRate != 22050 || len(dec) < len(samples) {
		t.Fatalf("VAG: rate %d, %d samples, %v", h.SampleRate, len(dec), err)
	}
	for _, c := range []struct {
		path string
		data []byte
		want string
	}{
		{pngs[0], []byte("no png"), "not a PNG"},
		{pngs[0], read(t, tree, pngs[1]), "keeps its size"},
		{wav, stereo(w), "channels"},
		{wav, fmtField(w, 34, 8), "8-bit"},
		{wav, fmtField32(w, 24, 0), "rate 0 Hz"},
		{wav, fmtField32(w, 24, 1<<20), "outside"},
		{wav, []byte("RIFF...."), "not a WAV"},
	} {
		_, err := Plan(tree, []Edit{{c.path, c.data}}, Options{})
		var ee *EditError
		if !errors.As(err, &ee) || ee.Path != c.path || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.path, err, c.want)
		}
	}
	// X and X.png are one node.
	_, err = Plan(tree, []Edit{{pngs[0], edits[0].Data}, {strings.TrimSuffix(pngs[0], ".png"), []byte("x")}}, Options{})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("got %v", err)
	}
}

func fmtField(w []byte, at int, v uint16) []byte {
	s := append([]byte(nil), w...)
	binary.LittleEndian.PutUint16(s[at:], v)
	return s
}

func fmtField32(w []byte, at int, v uint32) []byte {
	s := append([]byte(nil), w...)
	binary.LittleEndian.PutUint32(s[at:], v)
	return s
}

// TestSRTEdit: an edited LANG.srt becomes the subtitle records: the
// rebuilt disc's blob holds the new text and times (frames at the video's
// rate), its other languages as they were; the SRT written back unchanged
// rebuilds nothing; a bad SRT is refused naming the file.
func TestSRTEdit(t *testing.T) {
	tree, _ := original(t)
	p := "G/MPEG.WAD/subtitles01.d/english.srt"
	srt := read(t, tree, p)
	l, err := Plan(tree, []Edit{{p, srt}}, Options{})
	if err != nil || len(l.Rebuilt) != 0 {
		t.Fatalf("unchanged SRT: rebuilt %v, %v", l.Rebuilt, err)
	}
	lines := strings.Split(string(srt), "\n")
	if len(lines) < 3 {
		t.Fatalf("english.srt: %q", srt)
	}
	lines[2] = "An edited line, longer than the one it replaces"
	_, _, out := rebuilt(t, Edit{p, []byte(strings.Join(lines, "\n"))})
	got := string(read(t, out, p))
	if !strings.Contains(got, lines[2]) || got != strings.Join(lines, "\n") {
		t.Errorf("the rebuilt disc's english.srt:\n%s", got)
	}
	if a, b := read(t, out, "G/MPEG.WAD/subtitles01.d/french.srt"), read(t, tree, "G/MPEG.WAD/subtitles01.d/french.srt"); !bytes.Equal(a, b) {
		t.Error("french.srt changed")
	}
	for _, c := range []struct{ srt, want string }{
		{"1\nnot a time\nx\n", "line 2"},
		{"1\n00:00:01,000 --> 00:00:02,000\nonly one cue\n", "cues, the blob has"},
	} {
		_, err := Plan(tree, []Edit{{p, []byte(c.srt)}}, Options{})
		var ee *EditError
		if !errors.As(err, &ee) || ee.Path != p || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.srt, err, c.want)
		}
	}
}

func stereo(w []byte) []byte {
	s := append([]byte(nil), w...)
	binary.LittleEndian.PutUint16(s[22:], 2)
	return s
}

// TestWriteSparse: Write gives the image's bytes and leaves its zero pages
// as holes (a sparse input stays sparse).
func TestWriteSparse(t *testing.T) {
	tree, f := original(t)
	p := "G/MISC.WAD/save_game"
	l, err := Plan(tree, []Edit{{p, changed(read(t, tree, p))}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(filepath.Join(t.TempDir(), "out.iso"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := l.Write(out, f, nil); err != nil {
		t.Fatal(err)
	}
	if err := out.Truncate(l.Size); err != nil {
		t.Fatal(err)
	}
	if hashOf(t, out, l.Size) != hashOf(t, l.NewReader(f), l.Size) {
		t.Fatal("written image differs from the layout's reader")
	}
	blocks := func(f *os.File) int64 {
		st, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return st.Sys().(*syscall.Stat_t).Blocks * 512
	}
	if err := out.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, orig := blocks(out), blocks(f); got > orig+1<<20 {
		t.Fatalf("%d bytes allocated, the original image %d", got, orig)
	}
}

// TestRetailTextureEdit: on the retail layout (3.8 GB sparse), a texture's
// PNG edited and a level lump grown rebuild and read back; the LEVEL file
// moves past the volume's end and RC2.HDR follows.
func TestRetailTextureEdit(t *testing.T) {
	if testing.Short() {
		t.Skip("retail layout (3.8 GB sparse) skipped in -short mode")
	}
	path := filepath.Join(t.TempDir(), "retail.iso")
	if _, err := mkdisctest.Generate(path, mkdisc.Retail, 1); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tree := buildTree(t, f, fi.Size())
	tex := "G/ARMOR.WAD/armor0_textures.d/00.png"
	lump := "G/LEVEL4.WAD/sound_bank"
	edits := []Edit{
		{tex, recolour(t, read(t, tree, tex), color.NRGBA{1, 200, 3, 255}, 3)},
		{lump, append(read(t, tree, lump), codec.SampleData(8, 4<<20)...)},
	}
	l, err := Plan(tree, edits, Options{Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Moved) != 1 || l.Moved[0].Path != "G/LEVEL4.WAD" || l.Moved[0].ToLBA != tree.Image.Vol.Blocks {
		t.Fatalf("moved %v", l.Moved)
	}
	if n := l.NewBytes(); n > 32<<20 {
		t.Errorf("%d rebuilt bytes held", n)
	}
	r := l.NewReader(f)
	out := buildTree(t, r, r.Size())
	if err := Check(tree, out, l); err != nil {
		t.Fatal(err)
	}
	c, _ := out.Lookup("G/LEVEL4.WAD")
	if c.TOCStatus() != "matches" {
		t.Fatalf("RC2.HDR: %s", c.TOCStatus())
	}
}

// TestGameplayBlockEdit: a block of gameplay.d/ edited (a moby record added,
// so the block grows) moves the blocks after it; the header's offsets follow,
// the rebuilt gameplay reads the new record, and every other block keeps its
// bytes.
func TestGameplayBlockEdit(t *testing.T) {
	tree, _ := original(t)
	dir := "G/LEVEL1.WAD/gameplay.d/"
	p := dir + "moby_instances"
	old := read(t, tree, p)
	static := int64(binary.LittleEndian.Uint32(old))
	if static < 1 || 0x10+static*gameplay.MobyRecordSize > int64(len(old)) {
		t.Fatalf("moby_instances: %d records in %d bytes", static, len(old))
	}
	end := 0x10 + static*gameplay.MobyRecordSize
	rec := append([]byte(nil), old[end-gameplay.MobyRecordSize:end]...)
	binary.LittleEndian.PutUint32(rec[0x10:], 0x7eadbeef)               // uid
	binary.LittleEndian.PutUint32(rec[0x40:], math.Float32bits(1234.5)) // position x
	want := append(append(append([]byte(nil), old[:end]...), rec...), old[end:]...)
	binary.LittleEndian.PutUint32(want, uint32(static+1))

	orig, err := gameplay.Read(read(t, tree, "G/LEVEL1.WAD/gameplay"))
	if err != nil {
		t.Fatal(err)
	}
	l, _, out := rebuilt(t, Edit{p, want})
	if got := read(t, out, p); !bytes.HasPrefix(got, want) || !isZero(got[len(want):]) {
		t.Fatalf("%s: the rebuilt disc shows %d bytes, not the edit's %d", p, len(got), len(want))
	}
	if !strings.Contains(strings.Join(l.Rebuilt, ","), "G/LEVEL1.WAD/gameplay") {
		t.Fatalf("rebuilt %v", l.Rebuilt)
	}
	g, err := gameplay.Read(read(t, out, "G/LEVEL1.WAD/gameplay"))
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Mobies) != len(orig.Mobies)+1 {
		t.Fatalf("%d mobies rebuilt, %d before", len(g.Mobies), len(orig.Mobies))
	}
	if m := g.Mobies[len(g.Mobies)-1]; m.UID != 0x7eadbeef || m.Position[0] != 1234.5 {
		t.Fatalf("the added moby reads as uid %#x at %v", m.UID, m.Position)
	}
	moved := 0
	for _, b := range orig.Blocks {
		if b.Name == "moby_instances" {
			continue
		}
		nb := g.Blocks[slices.IndexFunc(g.Blocks, func(x gameplay.Block) bool { return x.Slot == b.Slot })]
		if nb.Offset != b.Offset {
			moved++
		}
		if !bytes.Equal(read(t, out, dir+b.Name), read(t, tree, dir+b.Name)) {
			t.Errorf("%s: changed by another block's edit", b.Name)
		}
	}
	if moved == 0 {
		t.Fatal("no block moved after a grown one")
	}
}

// TestLevelTextureEdits: a level texture's PNG becomes its pixels and
// palette again where they lie (gs_ram, core_data), the edits on one file
// made one; the rebuilt disc's PNG views show the edits: exactly where the
// texture's palette is its own (rebuilt), the nearest colours of a palette
// other textures share (kept); every other texture reads as it did. Two
// edits of one texture's bytes apart are refused, naming both.
func TestLevelTextureEdits(t *testing.T) {
	tree, _ := original(t)
	lv := "G/LEVEL1.WAD/"
	var own, shared []string
	_ = tree.Walk(func(n *fsnode.Node) error {
		if tex, _, _ := n.LevelTexture(); tex != nil && strings.HasPrefix(n.Path(), lv) {
			if sharesPalette(n) {
				shared = append(shared, n.Path())
			} else {
				own = append(own, n.Path())
			}
		}
		return nil
	})
	if len(own) == 0 || len(shared) == 0 {
		t.Fatalf("%d textures with a palette of their own, %d sharing one", len(own), len(shared))
	}
	colours := map[string]color.NRGBA{own[0]: {250, 1, 2, 255}, shared[0]: {3, 250, 4, 255}}
	var edits []Edit
	for p, c := range colours {
		edits = append(edits, Edit{p, recolour(t, read(t, tree, p), c, 5)})
	}
	l, _, out := rebuilt(t, edits...)
	for _, e := range edits {
		n, _ := tree.Lookup(e.Path)
		var palette []color.NRGBA // the nearest colours a shared palette gives
		if sharesPalette(n) {
			tex, pixN, palN := n.LevelTexture()
			pix, _ := readRange(pixN, tex.Pixels.Offset, tex.Pixels.Size)
			pal, _ := readRange(palN, tex.Palette.Offset, tex.Palette.Size)
			d, err := assets.DecodeIndexed8(tex.Width, tex.Height, pix, pal)
			if err != nil {
				t.Fatal(err)
			}
			palette = d.Palette
		}
		want, err := png.Decode(bytes.NewReader(e.Data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := png.Decode(bytes.NewReader(read(t, out, e.Path)))
		if err != nil {
			t.Fatalf("%s: %v", e.Path, err)
		}
		b := want.Bounds()
		for y := b.Min.Y; y < b.Max.Y; y++ {
			for x := b.Min.X; x < b.Max.X; x++ {
				w := color.NRGBAModel.Convert(want.At(x, y)).(color.NRGBA)
				g := color.NRGBAModel.Convert(got.At(x, y)).(color.NRGBA)
				w.A = assets.PS2Alpha(assets.PS2AlphaFrom8(w.A))
				if palette != nil {
					w = nearest(palette, w)
				}
				if w != g {
					t.Fatalf("%s at (%d, %d): %v, want %v", e.Path, x, y, g, w)
				}
			}
		}
	}
	if !strings.Contains(strings.Join(l.Rebuilt, " "), "G/LEVEL1.WAD/data.d/") {
		t.Errorf("rebuilt %v", l.Rebuilt)
	}
	// Every other level texture reads as before.
	edited := map[string]bool{}
	for _, e := range edits {
		edited[e.Path] = true
	}
	checked := 0
	_ = tree.Walk(func(n *fsnode.Node) error {
		if tex, _, _ := n.LevelTexture(); tex != nil && !edited[n.Path()] && strings.HasPrefix(n.Path(), "G/LEVEL1.WAD/") {
			if !bytes.Equal(read(t, out, n.Path()), read(t, tree, n.Path())) {
				t.Errorf("%s changed", n.Path())
			}
			checked++
		}
		return nil
	})
	if checked == 0 {
		t.Fatal("no other level texture checked")
	}
	// One texture's bytes changed apart by two edits (as two class slots
	// sharing a table entry would): the same PNG view given twice.
	tfrag := own[0]
	a := recolour(t, read(t, tree, tfrag), color.NRGBA{1, 2, 3, 255}, 3)
	b := recolour(t, read(t, tree, tfrag), color.NRGBA{9, 8, 7, 255}, 3)
	if _, _, err := levelTextureEdits(tree, []Edit{{tfrag, a}, {tfrag, b}}, &Layout{}, Options{Logf: t.Logf}); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tfrag) {
		t.Fatalf("two edits of one texture apart: %v", err)
	}
	if _, _, err := levelTextureEdits(tree, []Edit{{tfrag, a}, {tfrag, a}}, &Layout{}, Options{Logf: t.Logf}); err != nil {
		t.Fatalf("two edits of one texture alike: %v", err)
	}
	// The PNG of another size: refused, saying so.
	small := recolour(t, read(t, tree, "G/ARMOR.WAD/armor0_textures.d/00.png"), color.NRGBA{1, 1, 1, 255}, 2)
	if _, err := Plan(tree, []Edit{{tfrag, small}}, Options{}); err == nil || !strings.Contains(err.Error(), "keeps its size") {
		t.Fatalf("a PNG of another size: %v", err)
	}
}

// nearest is the colour of palette nearest c (as Indexed8FromPNG maps a
// colour a shared palette lacks).
func nearest(palette []color.NRGBA, c color.NRGBA) color.NRGBA {
	best, out := -1, color.NRGBA{}
	sq := func(v int) int { return v * v }
	for _, p := range palette {
		if d := sq(int(c.R)-int(p.R)) + sq(int(c.G)-int(p.G)) + sq(int(c.B)-int(p.B)) + sq(int(c.A)-int(p.A)); best < 0 || d < best {
			best, out = d, p
		}
	}
	return out
}
