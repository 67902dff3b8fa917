package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gcfs/codec"
	"gcfs/discimg/imagefile/imagetest"
	"gcfs/discimg/mkdisc"
)

func writeEdit(t *testing.T, dir, path string, b []byte) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func catOf(t *testing.T, img, path string) []byte {
	t.Helper()
	return []byte(treeOK(t, "cat", "--no-index-cache", img, path))
}

// noTemp: pack leaves nothing but OUT (when it succeeds) in OUT's directory.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("pack left %s behind", e.Name())
		}
	}
}

// TestPackSmall: an edit of each kind (a raw extent, a decoded file, a
// NAME.wad, a part inside decoded content, a grown lump) round-trips through
// `gcfs pack`; untouched files are byte-identical; the grown LEVEL file moves
// and RC2.HDR agrees; a file of no node is named and ignored; --dry-run
// writes nothing; a CSO input gives the same image.
func TestPackSmall(t *testing.T) {
	img, _ := genLayout(t, mkdisc.Small)
	work := t.TempDir()
	ov := filepath.Join(work, "overlay")
	raw := "G/MISC.WAD/save_game"
	dec := "G/LEVEL1.WAD/gameplay"
	wad := "G/MISC.WAD/frontbin_net"
	part := "G/MISC.WAD/irx.d/image"
	rawEdit := bytes.Repeat([]byte("saved!"), 600)
	decEdit := append(catOf(t, img, dec), codec.SampleData(1, 3<<20)...)
	wadDec := append(catOf(t, img, wad), []byte("more")...)
	wadEdit := codec.Encode(wadDec, codec.EncodeOptions{Tag: "frontnet", Best: true})
	partEdit := catOf(t, img, part)
	copy(partEdit[16:], bytes.Repeat([]byte{0xee}, 64))
	writeEdit(t, ov, raw, rawEdit)
	writeEdit(t, ov, dec, decEdit)
	writeEdit(t, ov, wad+".wad", wadEdit)
	writeEdit(t, ov, part, partEdit)
	writeEdit(t, ov, "G/MISC.WAD/notes.txt", []byte("mine"))

	out := filepath.Join(work, "out.iso")
	dry := treeRun(t, "pack", "--dry-run", "--no-index-cache", img, ov, out)
	if dry.err != nil {
		t.Fatalf("dry run: %v: %s", dry.err, dry.errOut)
	}
	for _, want := range []string{"rebuilt\tG/LEVEL1.WAD/gameplay\n", "rebuilt\tRC2.HDR\n", "moves\tG/LEVEL1.WAD\tLBA "} {
		if !strings.Contains(dry.out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry.out)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("--dry-run wrote OUT")
	}
	r := treeRun(t, "pack", "--no-index-cache", img, ov, out)
	if r.err != nil {
		t.Fatalf("pack: %v: %s", r.err, r.errOut)
	}
	if !strings.Contains(r.errOut, "notes.txt: no file of the disc's tree has this path: ignored") {
		t.Errorf("the stray overlay file is not named: %s", r.errOut)
	}
	noTemp(t, work)
	for p, want := range map[string][]byte{dec: decEdit, wad: wadDec, wad + ".wad": wadEdit, part: partEdit} {
		got := catOf(t, out, p)
		if p == wad+".wad" {
			got = bytes.TrimRight(got, "\x00") // the slot's sector padding
			want = bytes.TrimRight(want, "\x00")
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, not the edit's %d", p, len(got), len(want))
		}
	}
	if got := catOf(t, out, raw); !bytes.HasPrefix(got, rawEdit) || len(got)-len(rawEdit) >= 2048 {
		t.Errorf("%s: not the edit", raw)
	}
	for _, p := range []string{"SCUS_972.68", "IOPRP255.IMG", "G/LEVEL1.WAD/data.d/core_data", "G/LEVEL2.WAD/gameplay.wad", "G/MISC.WAD/debug_font"} {
		if !bytes.Equal(catOf(t, out, p), catOf(t, img, p)) {
			t.Errorf("%s changed", p)
		}
	}
	info := treeOK(t, "info", "--no-index-cache", out, "G/LEVEL1.WAD")
	if !strings.Contains(info, "toc:             matches") {
		t.Errorf("RC2.HDR does not match the moved LEVEL1.WAD:\n%s", info)
	}
	if o, n := treeOK(t, "info", "--no-index-cache", img, "G/LEVEL1.WAD"), info; lbaLine(o) == lbaLine(n) {
		t.Errorf("LEVEL1.WAD did not move (%s)", lbaLine(n))
	}
	// An edit that changes nothing: the image byte for byte, also from a CSO.
	same := filepath.Join(work, "same")
	writeEdit(t, same, dec, catOf(t, img, dec))
	orig, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	cso := filepath.Join(work, "small.cso")
	if err := os.WriteFile(cso, imagetest.WriteCSO(orig, "cso1", 2048, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{img, cso} {
		o2 := filepath.Join(work, "same.iso")
		treeOK(t, "pack", "--no-index-cache", "-q", in, same, o2)
		got, err := os.ReadFile(o2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, orig) {
			t.Errorf("%s: an unchanged edit did not give the image byte for byte", in)
		}
	}
}

func lbaLine(info string) string {
	for _, l := range strings.Split(info, "\n") {
		if strings.HasPrefix(l, "lba:") {
			return l
		}
	}
	return ""
}

// TestPackRefuses: conflicting edits, a stream that does not decode, an
// edit of RC2.HDR: a clear error naming the files, and no OUT.
func TestPackRefuses(t *testing.T) {
	img, _ := genLayout(t, mkdisc.Small)
	bad := make([]byte, 16, 26)
	copy(bad, "WAD")
	binary.LittleEndian.PutUint32(bad[3:], 26)
	bad = append(bad, 0x01, 'a', 'b', 'c', 'd', 0x01, 'e', 'f', 'g', 'h') // two literal packets in a row
	for _, c := range []struct {
		name  string
		edits map[string][]byte
		want  []string
	}{
		{"conflict", map[string][]byte{"G/LEVEL1.WAD/gameplay": []byte("a"), "G/LEVEL1.WAD/gameplay.wad": []byte("b")},
			[]string{"G/LEVEL1.WAD/gameplay and G/LEVEL1.WAD/gameplay.wad are one node"}},
		{"lump and part", map[string][]byte{"G/LEVEL1.WAD/data": []byte("a"), "G/LEVEL1.WAD/data.d/gs_ram": []byte("b")},
			[]string{"G/LEVEL1.WAD/data.d/gs_ram and G/LEVEL1.WAD/data", "keep one"}},
		{"bad stream", map[string][]byte{"G/MISC.WAD/irx.wad": bad}, []string{"G/MISC.WAD/irx.wad: does not decode"}},
		{"texture and PNG", map[string][]byte{"G/ARMOR.WAD/armor0_textures.d/00": catOf(t, img, "G/ARMOR.WAD/armor0_textures.d/01"),
			"G/ARMOR.WAD/armor0_textures.d/00.png": catOf(t, img, "G/ARMOR.WAD/armor0_textures.d/01.png")},
			[]string{"G/ARMOR.WAD/armor0_textures.d/00 and G/ARMOR.WAD/armor0_textures.d/00.png are one node"}},
		{"PNG of another size", map[string][]byte{"G/ARMOR.WAD/armor0_textures.d/00.png": catOf(t, img, "G/BONUS.WAD/paintings/00.png")},
			[]string{"G/ARMOR.WAD/armor0_textures.d/00.png:", "keeps its size"}},
		{"toc", map[string][]byte{"RC2.HDR": []byte("x")}, []string{"RC2.HDR: RC2.HDR is rebuilt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			ov := filepath.Join(work, "ov")
			for p, b := range c.edits {
				writeEdit(t, ov, p, b)
			}
			out := filepath.Join(work, "out.iso")
			r := treeFails(t, "pack", "--no-index-cache", img, ov, out)
			for _, w := range c.want {
				if !strings.Contains(r.err.Error(), w) {
					t.Errorf("error %q lacks %q", r.err, w)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("OUT written")
			}
			noTemp(t, work)
		})
	}
}

// TestPackOverlayChanged: an overlay written to while pack runs (after it
// read the edits, before OUT is renamed into place): pack says which file
// changed, writes nothing under OUT's name and leaves no temporary file.
func TestPackOverlayChanged(t *testing.T) {
	img, _ := genLayout(t, mkdisc.Small)
	for _, c := range []struct {
		name, want string
		change     func(ov string)
	}{
		{"written", "G/MISC.WAD/save_game was written", func(ov string) {
			writeEdit(t, ov, "G/MISC.WAD/save_game", []byte("written while pack ran, longer"))
		}},
		{"appeared", "G/LEVEL1.WAD/gameplay appeared", func(ov string) {
			writeEdit(t, ov, "G/LEVEL1.WAD/gameplay", []byte("new"))
		}},
		{"removed", "G/MISC.WAD/save_game was removed", func(ov string) {
			os.Remove(filepath.Join(ov, "G/MISC.WAD/save_game"))
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			ov := filepath.Join(work, "ov")
			writeEdit(t, ov, "G/MISC.WAD/save_game", []byte("an edit"))
			packWritten = func(string) { c.change(ov) }
			defer func() { packWritten = func(string) {} }()
			out := filepath.Join(work, "out.iso")
			r := treeFails(t, "pack", "--no-index-cache", "-q", img, ov, out)
			if !strings.Contains(r.err.Error(), "changed while pack ran") || !strings.Contains(r.err.Error(), c.want) {
				t.Errorf("error %q lacks %q", r.err, c.want)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("OUT written")
			}
			noTemp(t, work)
		})
	}
}

// TestPackServe: `gcfs pack --serve` shows the rebuilt image as one file,
// byte for byte what pack writes, and ends when unmounted.
func TestPackServe(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse")
	}
	img, _ := genLayout(t, mkdisc.Small)
	work := t.TempDir()
	ov := filepath.Join(work, "ov")
	p := "G/LEVEL2.WAD/gameplay"
	writeEdit(t, ov, p, append(catOf(t, img, p), codec.SampleData(4, 1<<20)...))
	out := filepath.Join(work, "out.iso")
	treeOK(t, "pack", "--no-index-cache", "-q", img, ov, out)
	mnt := filepath.Join(work, "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	done := make(chan treeResult, 1)
	go func() { done <- treeRun(t, "pack", "--serve", "--no-index-cache", mnt, img, ov) }()
	served := filepath.Join(mnt, "small.iso")
	unmounted := false
	defer func() {
		if !unmounted {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
	}()
	for i := 0; ; i++ {
		if _, err := os.Stat(served); err == nil {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("pack --serve ended: %v: %s", r.err, r.errOut)
		case <-time.After(50 * time.Millisecond):
		}
		if i > 400 {
			t.Fatal("the served image did not appear")
		}
	}
	got, err := os.ReadFile(served)
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the served image (%d bytes) differs from the written one (%d)", len(got), len(want))
	}
	if err := os.WriteFile(served, []byte("x"), 0o644); err == nil {
		t.Error("the served image is writable")
	}
	if err := syscall.Unmount(mnt, 0); err != nil {
		t.Fatal(err)
	}
	unmounted = true
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("pack --serve: %v: %s", r.err, r.errOut)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pack --serve did not end when unmounted")
	}
}
