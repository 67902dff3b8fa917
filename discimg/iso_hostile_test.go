package discimg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"gcfs/discimg/isowriter"
)

// ownImage is a small isowriter image of sampleTree in memory.
func ownImage(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile(writeISO(t, writerFiles(sampleTree()), isowriter.Options{VolumeID: "HOSTILE"}))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func put16both(b []byte, v uint16) {
	binary.LittleEndian.PutUint16(b, v)
	binary.BigEndian.PutUint16(b[2:], v)
}

func put32both(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

// recordOffset finds the image offset of the directory record naming path,
// using a clean parse of the image.
func recordOffset(t testing.TB, img []byte, path string) int64 {
	t.Helper()
	im, err := Open(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatal(err)
	}
	parent := ""
	name := path
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		parent, name = path[:i], path[i+1:]
	}
	d, ok := im.Lookup(parent)
	if !ok {
		t.Fatalf("no %s", parent)
	}
	e, ok := im.Lookup(path)
	if !ok {
		t.Fatalf("no %s", path)
	}
	for off := d.Offset(); off < d.Offset()+d.Size; {
		n := int64(img[off])
		if n == 0 {
			off = (off/SectorSize + 1) * SectorSize
			continue
		}
		id := string(img[off+33 : off+33+int64(img[off+32])])
		if strings.TrimSuffix(strings.TrimSuffix(id, ";1"), ".") == name && int64(binary.LittleEndian.Uint32(img[off+2:])) == e.LBA {
			return off
		}
		off += n
	}
	t.Fatalf("record of %s not found", path)
	return 0
}

func mustOpen(t *testing.T, img []byte) *Image {
	t.Helper()
	im, err := Open(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return im
}

// wantErr asserts e has a FormatError whose reason contains substr, and that
// Problems lists it.
func wantErr(t *testing.T, im *Image, path, substr string) *FormatError {
	t.Helper()
	e, ok := im.Lookup(path)
	if !ok {
		t.Fatalf("%s not listed", path)
	}
	var fe *FormatError
	if !errors.As(e.Err, &fe) || !errors.Is(e.Err, ErrFormat) {
		t.Fatalf("%s: Err %v, want a FormatError", path, e.Err)
	}
	if !strings.Contains(fe.Reason, substr) {
		t.Errorf("%s: %v, want %q", path, e.Err, substr)
	}
	found := false
	for _, p := range im.Problems {
		if p == e.Err {
			found = true
		}
	}
	if !found {
		t.Errorf("%s: error not in Problems", path)
	}
	return fe
}

func wantProblem(t *testing.T, im *Image, substr string) {
	t.Helper()
	for _, p := range im.Problems {
		if strings.Contains(p.Error(), substr) {
			return
		}
	}
	t.Errorf("no problem mentions %q; problems: %v", substr, im.Problems)
}

// stillServed asserts a few entries far from the damage read fine.
func stillServed(t *testing.T, im *Image, paths ...string) {
	t.Helper()
	want := map[string][]byte{}
	for _, f := range sampleTree() {
		want[f.path] = f.data
	}
	for _, p := range paths {
		e, ok := im.Lookup(p)
		if !ok || e.Err != nil {
			t.Errorf("%s: %v %v", p, ok, e)
			continue
		}
		b, err := readEntry(im, e)
		if err != nil || !bytes.Equal(b, want[p]) {
			t.Errorf("%s: contents differ (%v)", p, err)
		}
	}
}

func TestCorruptEndianLBA(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G/F007.WAD")
	binary.BigEndian.PutUint32(img[off+6:], 12345)
	im := mustOpen(t, img)
	fe := wantErr(t, im, "G/F007.WAD", "little-endian")
	if fe.Offset != off+2 {
		t.Errorf("offset %#x, want %#x", fe.Offset, off+2)
	}
	stillServed(t, im, "G/F006.WAD", "G/F008.WAD", "SYSTEM.CNF", "A/B/C/DEEP.TXT")
}

func TestCorruptEndianSize(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "SYSTEM.CNF")
	binary.BigEndian.PutUint32(img[off+14:], 1)
	im := mustOpen(t, img)
	wantErr(t, im, "SYSTEM.CNF", "data length")
	stillServed(t, im, "NOEXT", "G/F100.WAD")
}

func TestRecordTooShort(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G/F002.WAD")
	img[off] = 20
	im := mustOpen(t, img)
	wantProblem(t, im, "less than 34")
	if _, ok := im.Lookup("G/F002.WAD"); ok {
		t.Errorf("a record of length 20 was listed")
	}
	// Records of the next sectors of G are still served.
	stillServed(t, im, "G/F119.WAD", "G/F000.WAD", "SYSTEM.CNF")
}

func TestRecordOverrunsSector(t *testing.T) {
	img := ownImage(t)
	g := recordOffset(t, img, "G/F000.WAD")
	// Find the last record of G's first sector and stretch it past the sector.
	sec := g / SectorSize * SectorSize
	last := g
	for off := g; off < sec+SectorSize && img[off] != 0; off += int64(img[off]) {
		last = off
	}
	img[last] = byte(min(255, sec+SectorSize-last+10))
	if int64(img[last]) <= sec+SectorSize-last {
		t.Skip("record too far from the sector's end to overrun it")
	}
	im := mustOpen(t, img)
	wantProblem(t, im, "overruns its sector")
	stillServed(t, im, "G/F000.WAD", "G/F119.WAD")
}

func TestNameLengthPastRecord(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "ONE.BIN")
	img[off+32] = 200
	im := mustOpen(t, img)
	wantProblem(t, im, "name length 200")
	stillServed(t, im, "SYSTEM.CNF", "G/F050.WAD")
}

func TestLoopToParent(t *testing.T) {
	img := ownImage(t)
	a, _ := mustOpen(t, img).Lookup("A")
	off := recordOffset(t, img, "A/B")
	put32both(img[off+2:], uint32(a.LBA))
	im := mustOpen(t, img)
	wantErr(t, im, "A/B", "loop")
	if b, _ := im.Lookup("A/B"); len(b.Children) != 0 {
		t.Errorf("looping directory has %d children", len(b.Children))
	}
	stillServed(t, im, "A/SIB.TXT", "G/F001.WAD")
}

func TestLoopToRoot(t *testing.T) {
	img := ownImage(t)
	im0 := mustOpen(t, img)
	off := recordOffset(t, img, "A/B/C")
	put32both(img[off+2:], uint32(im0.Root.LBA))
	put32both(img[off+10:], uint32(im0.Root.Size))
	im := mustOpen(t, img)
	wantErr(t, im, "A/B/C", "loop")
	stillServed(t, im, "SYSTEM.CNF")
}

func TestSharedDirectoryExtent(t *testing.T) {
	img := ownImage(t)
	im0 := mustOpen(t, img)
	a, _ := im0.Lookup("A")
	off := recordOffset(t, img, "SIZES")
	put32both(img[off+2:], uint32(a.LBA))
	put32both(img[off+10:], uint32(a.Size))
	im := mustOpen(t, img)
	wantErr(t, im, "SIZES", "already listed as /A")
	stillServed(t, im, "A/SIB.TXT")
}

func TestAbsurdDirectorySize(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G")
	put32both(img[off+10:], 0xFFFFFFF0)
	im := mustOpen(t, img)
	wantErr(t, im, "G", "bound")
	if g, _ := im.Lookup("G"); len(g.Children) != 0 {
		t.Errorf("G has children")
	}
	stillServed(t, im, "SYSTEM.CNF", "A/B/C/DEEP.TXT")
}

func TestDirectoryPastImage(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "SIZES")
	put32both(img[off+2:], uint32(len(img)/SectorSize+5))
	im := mustOpen(t, img)
	wantErr(t, im, "SIZES", "past the image's end")
}

func TestTinyDirectory(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "A")
	put32both(img[off+10:], 0)
	im := mustOpen(t, img)
	wantErr(t, im, "A", "cannot hold")
}

func TestFileOutsideImage(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G/F009.WAD")
	put32both(img[off+2:], 0xFFFFFF)
	im := mustOpen(t, img)
	wantErr(t, im, "G/F009.WAD", "starts past the image's end")
	stillServed(t, im, "G/F008.WAD", "G/F010.WAD")
}

func TestDuplicateName(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G/F011.WAD")
	copy(img[off+33:], "F010.WAD;1")
	im := mustOpen(t, img)
	wantProblem(t, im, "duplicate name")
	g, _ := im.Lookup("G")
	if len(g.Children) != 119 {
		t.Errorf("G lists %d children, want 119", len(g.Children))
	}
	stillServed(t, im, "G/F010.WAD", "G/F012.WAD")
}

func TestBadNames(t *testing.T) {
	img := ownImage(t)
	off := recordOffset(t, img, "G/F012.WAD")
	copy(img[off+33:], "F0/2.WAD;1")
	off = recordOffset(t, img, "G/F013.WAD")
	copy(img[off+33:], "..;1\x00\x00\x00\x00\x00\x00")
	img[off+32] = 4
	im := mustOpen(t, img)
	wantProblem(t, im, "holds '/'")
	wantProblem(t, im, "names nothing")
	g, _ := im.Lookup("G")
	for _, c := range g.Children {
		if strings.ContainsAny(c.Name, "/\x00") || c.Name == ".." {
			t.Errorf("listed bad name %q", c.Name)
		}
	}
	stillServed(t, im, "G/F014.WAD")
}

func TestCorruptRootRecord(t *testing.T) {
	img := ownImage(t)
	img[16*SectorSize+156] = 5
	im := mustOpen(t, img)
	if im.Root == nil || im.Root.Err == nil || len(im.Root.Children) != 0 || len(im.Problems) == 0 {
		t.Errorf("root %+v problems %v", im.Root, im.Problems)
	}
}

func TestMultiExtentJoined(t *testing.T) {
	// Two contiguous files, then the records patched into one multi-extent file.
	first := patterned(4096, 1)
	second := patterned(100, 2)
	files := []isowriter.File{
		{Path: "MA.BIN", Size: 4096, Chunks: []isowriter.Chunk{{Data: first}}},
		{Path: "MB.BIN", Size: 100, Chunks: []isowriter.Chunk{{Data: second}}},
		{Path: "Z.BIN", Size: 3, Chunks: []isowriter.Chunk{{Data: []byte("zzz")}}},
	}
	p := writeISO(t, files, isowriter.Options{})
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	a := recordOffset(t, img, "MA.BIN")
	b := recordOffset(t, img, "MB.BIN")
	if binary.LittleEndian.Uint32(img[a+2:])+2 != binary.LittleEndian.Uint32(img[b+2:]) {
		t.Fatalf("writer did not place the files contiguously")
	}
	img[a+25] |= 0x80
	copy(img[b+33:], "MA.BIN;1")
	im := mustOpen(t, img)
	e, ok := im.Lookup("MA.BIN")
	if !ok || e.Err != nil || e.Size != 4196 {
		t.Fatalf("joined file: %+v", e)
	}
	got, err := readEntry(im, e)
	if err != nil || !bytes.Equal(got, append(first, second...)) {
		t.Errorf("joined contents differ (%v)", err)
	}
	if z, ok := im.Lookup("Z.BIN"); !ok || z.Err != nil {
		t.Errorf("Z.BIN after the multi-extent file: %+v", z)
	}
	if len(im.Problems) != 0 {
		t.Errorf("problems: %v", im.Problems)
	}

	// Not contiguous: served with an error.
	put32both(img[b+2:], binary.LittleEndian.Uint32(img[b+2:])+1)
	im = mustOpen(t, img)
	wantErr(t, im, "MA.BIN", "not contiguous")

	// No final extent.
	img[b+25] |= 0x80
	copy(img[b+33:], "MB.BIN;1")
	im = mustOpen(t, img)
	wantErr(t, im, "MA.BIN", "no final extent")
}

func TestTruncatedEverywhere(t *testing.T) {
	img := ownImage(t)
	full := mustOpen(t, img)
	all := map[string]*Entry{}
	walkFiles(full.Root, all)
	var cuts []int64
	for c := int64(0); c <= int64(len(img)); c += SectorSize / 2 {
		cuts = append(cuts, c, c+1, c+33)
	}
	for _, cut := range cuts {
		if cut > int64(len(img)) {
			continue
		}
		im, err := Open(bytes.NewReader(img[:cut]), cut)
		if cut < 17*SectorSize {
			if !errors.Is(err, ErrNotISO) {
				t.Fatalf("cut at %d: %v, want ErrNotISO", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		got := map[string]*Entry{}
		walkFiles(im.Root, got)
		for p, e := range got {
			end := e.Offset() + e.Size
			if e.Size > 0 && end > cut && e.Err == nil {
				t.Fatalf("cut at %d: %s reaches %d without an error", cut, p, end)
			}
			if e.Err == nil {
				if _, err := readEntry(im, e); err != nil {
					t.Fatalf("cut at %d: %s: %v", cut, p, err)
				}
			}
		}
		if im.Root.Err == nil && full.Root.Offset()+full.Root.Size <= cut {
			// Every file wholly inside the cut image, in a directory that is,
			// is listed without an error.
			for p, e := range all {
				if e.Offset()+e.Size > cut {
					continue
				}
				if _, ok := got[p]; !ok {
					dir, _ := full.Lookup(p[:max(0, strings.LastIndexByte(p, '/'))])
					if dir.Offset()+dir.Size <= cut {
						t.Fatalf("cut at %d: %s missing", cut, p)
					}
				}
			}
		}
	}
	// A cut inside a file: that file says so, and names the image's end.
	e := all["SIZES/S70001.BIN"]
	cut := e.Offset() + 1000
	im := mustOpen(t, img[:cut])
	fe := wantErr(t, im, "SIZES/S70001.BIN", "ends past the image's end")
	if !strings.Contains(fe.Reason, "0x") {
		t.Errorf("reason %q does not name the offset", fe.Reason)
	}
	// A cut inside the root directory: the root says so.
	im = mustOpen(t, img[:full.Root.Offset()+100])
	if im.Root.Err == nil || len(im.Root.Children) != 0 {
		t.Errorf("root of an image cut inside it: %+v", im.Root)
	}
}

func TestPast4GiB(t *testing.T) {
	// Sparse: a file beyond 4 GiB costs only its written blocks.
	const lba = 2_300_000 // ≈ 4.7 GB
	data := patterned(10000, 9)
	files := []isowriter.File{
		{Path: "LOW.BIN", Size: 5, Chunks: []isowriter.Chunk{{Data: []byte("hello")}}},
		{Path: "HIGH/FAR.BIN", LBA: lba, Size: int64(len(data)), Chunks: []isowriter.Chunk{{Data: data}}},
	}
	p := writeISO(t, files, isowriter.Options{TotalBlocks: lba + 100, DirLBAs: map[string]int64{"HIGH": lba - 10}})
	im := openFile(t, p)
	if len(im.Problems) != 0 {
		t.Fatalf("problems: %v", im.Problems)
	}
	e, ok := im.Lookup("HIGH/FAR.BIN")
	if !ok || e.Err != nil || e.Offset() <= 1<<32 {
		t.Fatalf("far file %+v", e)
	}
	got, err := readEntry(im, e)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("far file contents differ (%v)", err)
	}
	// Truncated below the far file, past 4 GiB: it is listed with an error.
	if err := os.Truncate(p, int64(lba)*SectorSize+4096); err != nil {
		t.Fatal(err)
	}
	im = openFile(t, p)
	wantErr(t, im, "HIGH/FAR.BIN", "ends past the image's end")
	if l, _ := im.Lookup("LOW.BIN"); l == nil || l.Err != nil {
		t.Errorf("LOW.BIN: %+v", l)
	}
}

func TestTreeByteBound(t *testing.T) {
	// Ten directories whose records claim 16 MiB extents starting one sector
	// apart: each is within the per-directory bound, together they pass the
	// tree bound, and the walk stops reading there.
	var files []isowriter.File
	for i := 0; i < 10; i++ {
		files = append(files, file("D"+string(rune('0'+i))+"/X.BIN", []byte("x")))
	}
	p := writeISO(t, files, isowriter.Options{TotalBlocks: 20000})
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	base := mustOpen(t, img).Root.LBA + 100
	for i := 0; i < 10; i++ {
		off := recordOffset(t, img, "D"+string(rune('0'+i)))
		put32both(img[off+2:], uint32(base+int64(i)))
		put32both(img[off+10:], maxDirBytes)
	}
	im := mustOpen(t, img)
	wantErr(t, im, "D9", "directories total more than")
	bounded := 0
	for _, c := range im.Root.Children {
		if c.Err != nil {
			bounded++
		}
	}
	if bounded != 10-maxTreeBytes/maxDirBytes+1 {
		t.Errorf("%d directories refused, want %d", bounded, 10-maxTreeBytes/maxDirBytes+1)
	}
}

func TestRecordVariants(t *testing.T) {
	img := ownImage(t)
	// Interleaved: listed with an error.
	off := recordOffset(t, img, "G/F020.WAD")
	img[off+26] = 1
	// Associated file: a hidden companion, not listed.
	off = recordOffset(t, img, "G/F021.WAD")
	img[off+25] |= 4
	// Extended attribute record of one block: the data starts one block later.
	off = recordOffset(t, img, "G/F022.WAD")
	lba := binary.LittleEndian.Uint32(img[off+2:])
	put32both(img[off+2:], lba-1)
	img[off+1] = 1
	im := mustOpen(t, img)
	wantErr(t, im, "G/F020.WAD", "interleaved")
	if _, ok := im.Lookup("G/F021.WAD"); ok {
		t.Errorf("associated file listed")
	}
	stillServed(t, im, "G/F022.WAD", "G/F023.WAD")
}
