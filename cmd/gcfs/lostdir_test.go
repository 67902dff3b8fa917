package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gcfs/discimg"
	"gcfs/discimg/imagefile/imagetest"
	"gcfs/discimg/mkdisc"
	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
)

// csoWithBadSector writes iso as a CSO v1 of 2048-byte blocks whose block
// holding image sector sec fails to decode (its deflate bytes overwritten).
func csoWithBadSector(t *testing.T, iso []byte, sec int64) string {
	t.Helper()
	c := imagetest.WriteCSO(iso, "cso1", 2048, 0)
	idx := func(i int64) uint32 { return binary.LittleEndian.Uint32(c[24+4*i:]) }
	start, end := int64(idx(sec)&^0x80000000), int64(idx(sec+1)&^0x80000000)
	binary.LittleEndian.PutUint32(c[24+4*sec:], uint32(start)) // deflate, not stored
	for i := start; i < end; i++ {
		c[i] = 0xff // a reserved deflate block type: the block cannot decode
	}
	p := filepath.Join(t.TempDir(), "bad.cso")
	if err := os.WriteFile(p, c, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// dirExtent finds a directory's extent in an ISO image.
func dirExtent(t *testing.T, iso []byte, path string) (lba, size int64) {
	t.Helper()
	im, err := discimg.Open(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	e, ok := im.Lookup(path)
	if !ok || !e.IsDir {
		t.Fatalf("no directory %s", path)
	}
	return e.LBA, e.Size
}

// Issue 18 item 5: a bad block in a subdirectory refused the whole image.
// Now only the entries of that sector are lost: the directory is named as
// one whose entries are missing, and everything else serves.
func TestBadDirectorySectorLosesOnlyIt(t *testing.T) {
	fullPassOnly(t)
	img, _ := genLayout(t, mkdisc.Small)
	iso, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	lba, size := dirExtent(t, iso, "G")
	if size <= discimg.SectorSize {
		t.Fatalf("/G is %d bytes: one sector, the test needs two", size)
	}
	good := treeOK(t, "ls", img, "G")
	cso := csoWithBadSector(t, iso, lba+1)

	r := treeRun(t, "ls", cso, "G")
	if r.err != nil {
		t.Fatalf("ls G: %v\n%s", r.err, r.errOut)
	}
	if n := linesWith(r.errOut, "directory /G "); n != 1 {
		t.Errorf("ls G: %d stderr lines name directory /G, want 1:\n%s", n, r.errOut)
	}
	listed := strings.Fields(r.out)
	if len(listed) == 0 || len(listed) >= len(strings.Fields(good)) {
		t.Errorf("ls G lists %d entries (%d undamaged): want those of its first sector", len(listed), len(strings.Fields(good)))
	}
	if first := strings.Fields(good)[0]; !strings.Contains(r.out, first) {
		t.Errorf("ls G lacks %s, of the readable sector", first)
	}
	if out := treeOK(t, "cat", cso, "SYSTEM.CNF"); !strings.Contains(out, "BOOT2") {
		t.Errorf("cat SYSTEM.CNF: %q", out)
	}
	if out := treeOK(t, "identify", cso); !strings.Contains(out, "SCUS-97268") {
		t.Errorf("identify: %s", out)
	}
	m := treeFails(t, "manifest", cso)
	if !strings.Contains(m.err.Error(), "could not be listed") || linesWith(m.errOut, "directory /G ") != 1 {
		t.Errorf("manifest: %v\n%s", m.err, m.errOut)
	}
	if !strings.Contains(m.out, "SYSTEM.CNF\t") {
		t.Errorf("manifest lacks SYSTEM.CNF")
	}
	x := treeFails(t, "extract", "-q", cso, filepath.Join(t.TempDir(), "out"))
	if linesWith(x.errOut, "directory /G ") != 1 {
		t.Errorf("extract: %v\n%s", x.err, x.errOut)
	}
}

// Issue 18 item 13a: a record whose name cannot be a child (".", "/",
// "..", NUL) dropped what it listed with exit 0. The record is refused, its
// directory named as one whose entries are missing, the rest served;
// manifest and extract exit 1.
func TestUnnamableRecordIsALoss(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{".", "/", "\x00", "\x01"} {
		t.Run(strings.Trim(fmtName(name), `"`), func(t *testing.T) {
			img := damaged(t, d, func(p string) error {
				return testdisc.PatchRecord(p, "G", func(rec []byte) { rec[33] = name[0] })
			})
			r := treeRun(t, "ls", img)
			if r.err != nil || strings.Contains(r.out, "G\n") || !strings.Contains(r.out, "ZTAIL.DUP") {
				t.Errorf("ls: %v\n%s", r.err, r.out)
			}
			if n := linesWith(r.errOut, "directory / "); n != 1 {
				t.Errorf("ls: %d stderr lines name the root directory, want 1:\n%s", n, r.errOut)
			}
			m := treeFails(t, "manifest", img)
			if !strings.Contains(m.err.Error(), "could not be listed") || linesWith(m.errOut, "names nothing")+linesWith(m.errOut, "holds '/' or NUL") != 1 {
				t.Errorf("manifest: %v\n%s", m.err, m.errOut)
			}
			treeFails(t, "extract", "-q", img, filepath.Join(t.TempDir(), "out"))
		})
	}
}

func fmtName(s string) string {
	return strings.NewReplacer("\x00", "self", "\x01", "parent", "/", "slash", ".", "dot").Replace(s)
}

// Issue 18 item 13b: manifest --max-decoded 4KiB printed an error line for
// every one of ~1000 files. Repeated errors are summarised as the mount log
// summarises them: the first few of a kind, then one line with the count.
func TestManifestErrorsSummarised(t *testing.T) {
	fullPassOnly(t)
	img, _ := genLayout(t, mkdisc.Small)
	for _, cmd := range [][]string{
		{"manifest", "--max-decoded", "4KiB", img},
		{"extract", "-q", "--max-decoded", "4KiB", img, filepath.Join(t.TempDir(), "out")},
	} {
		r := treeFails(t, cmd...)
		var failed int
		if _, err := fmt.Sscanf(r.err.Error()[strings.LastIndex(r.err.Error(), ": ")+2:], "%d", &failed); err != nil || failed < 100 {
			t.Fatalf("%s: exit message %q: want a count of ~1000 failed files", cmd[0], r.err)
		}
		lines := strings.Split(strings.TrimSpace(r.errOut), "\n")
		if len(lines) > 30 {
			t.Errorf("%s: %d stderr lines for %d failed files", cmd[0], len(lines), failed)
		}
		shown, counted := 0, 0
		for _, l := range lines {
			rest := strings.TrimPrefix(l, "gcfs: "+img+": ")
			var n int
			switch {
			case strings.HasPrefix(rest, "G/"):
				shown++
			case strings.Contains(rest, "more problems like this one not shown"):
				if _, err := fmt.Sscanf(rest, "%d more", &n); err != nil {
					t.Errorf("%s: %q", cmd[0], l)
				}
				counted += n
			}
			if strings.Contains(rest, ": : ") {
				t.Errorf("%s: a line without its path: %q", cmd[0], l)
			}
		}
		if shown+counted != failed {
			t.Errorf("%s: %d lines shown + %d counted, %d files failed:\n%s", cmd[0], shown, counted, failed, r.errOut)
		}
	}
}

// probeVictim finds, in the ISO's tree, a VAG in G/HUD.WAD/vendor_audio/
// whose first sector holds no other VAG's start and which is followed by
// other VAGs within the build's merged probe reads: the sector a bad block
// should hit to show item 4. It returns the VAG's path (without .vag) and
// its sector.
func probeVictim(t *testing.T, iso []byte) (string, int64, []string) {
	t.Helper()
	im, err := discimg.Open(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(im, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir, err := tree.Lookup("G/HUD.WAD/vendor_audio")
	if err != nil {
		t.Fatal(err)
	}
	type vag struct {
		path string
		off  int64
	}
	var vags []vag
	for _, c := range dir.Children {
		if off, _, ok := c.ImageRange(); ok && strings.HasSuffix(c.Name, ".vag") {
			vags = append(vags, vag{c.Path(), off})
		}
	}
	sort.Slice(vags, func(i, j int) bool { return vags[i].off < vags[j].off })
	for i := 0; i+3 < len(vags); i++ {
		sec := vags[i].off / discimg.SectorSize
		if (i == 0 || vags[i-1].off/discimg.SectorSize != sec) && vags[i+1].off/discimg.SectorSize != sec && vags[i+3].off-vags[i].off < 8<<10 {
			return strings.TrimSuffix(vags[i].path, ".vag"), sec, []string{vags[i+1].path, vags[i+2].path, vags[i+3].path}
		}
	}
	t.Fatal("no VAG of vendor_audio fits")
	return "", 0, nil
}

// Issue 18 item 4 through the CLI: a CSO block holding one VAG's first
// bytes fails. That VAG is an error (cat and manifest say so, exit 1); the
// VAGs after it, in good blocks, keep their .vag and .wav.
func TestBadBlockProbeCLI(t *testing.T) {
	fullPassOnly(t)
	img, _ := genLayout(t, mkdisc.Small)
	iso, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	victim, sec, after := probeVictim(t, iso)
	cso := csoWithBadSector(t, iso, sec)
	ls := treeOK(t, "ls", cso, "G/HUD.WAD/vendor_audio")
	base := victim[strings.LastIndex(victim, "/")+1:]
	if !strings.Contains(ls, base+"\n") || strings.Contains(ls, base+".wav") {
		t.Errorf("ls vendor_audio: %s listed as %q", base, ls)
	}
	for _, p := range after {
		name := p[strings.LastIndex(p, "/")+1:]
		if !strings.Contains(ls, name+"\n") || !strings.Contains(ls, strings.TrimSuffix(name, ".vag")+".wav\n") {
			t.Errorf("ls vendor_audio lacks %s or its .wav:\n%s", name, ls)
		}
	}
	c := treeFails(t, "cat", cso, victim)
	if c.out != "" || !strings.Contains(c.err.Error(), victim) || !strings.Contains(c.err.Error(), "could not be read") {
		t.Errorf("cat %s: %d bytes, %v", victim, len(c.out), c.err)
	}
	m := treeFails(t, "manifest", cso)
	if linesWith(m.errOut, victim+":") != 1 {
		t.Errorf("manifest: %d lines name %s:\n%s", linesWith(m.errOut, victim+":"), victim, m.errOut)
	}
	for _, p := range after {
		if !strings.Contains(m.out, p+"\t") {
			t.Errorf("manifest lacks %s", p)
		}
	}
}
