package discimg

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"gcfs/discimg/isowriter"
)

// treeFile is one file a test puts on an image.
type treeFile struct {
	path string
	data []byte
}

// sampleTree has nested directories, a directory of 120 files (several
// sectors of records), a name without extension, and files of 0, 1, 2047,
// 2048, 2049 bytes and bigger.
func sampleTree() []treeFile {
	files := []treeFile{
		{"SYSTEM.CNF", []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n")},
		{"EMPTY.BIN", nil},
		{"NOEXT", []byte("no extension")},
		{"ONE.BIN", []byte{7}},
		{"A/B/C/DEEP.TXT", []byte("deep file")},
		{"A/B/EMPTY.DAT", nil},
		{"A/SIB.TXT", []byte("sibling")},
	}
	for _, n := range []int{2047, 2048, 2049, 70001} {
		files = append(files, treeFile{fmt.Sprintf("SIZES/S%d.BIN", n), patterned(n, byte(n))})
	}
	for i := 0; i < 120; i++ {
		files = append(files, treeFile{fmt.Sprintf("G/F%03d.WAD", i), patterned(i*53%4000, byte(i))})
	}
	return files
}

func patterned(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

func writerFiles(tree []treeFile) []isowriter.File {
	var fs []isowriter.File
	for _, f := range tree {
		fs = append(fs, isowriter.File{Path: f.path, Size: int64(len(f.data)), Chunks: []isowriter.Chunk{{Off: 0, Data: f.data}}})
	}
	return fs
}

// writeISO writes files with isowriter into a temp file and returns its path.
func writeISO(t testing.TB, files []isowriter.File, opt isowriter.Options) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "w.iso")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := isowriter.Write(f, files, opt); err != nil {
		t.Fatal(err)
	}
	return p
}

func openFile(t testing.TB, p string) *Image {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	im, err := Open(f, st.Size())
	if err != nil {
		t.Fatalf("Open %s: %v", p, err)
	}
	return im
}

// walkFiles lists every file entry of the tree by path.
func walkFiles(e *Entry, out map[string]*Entry) {
	for _, c := range e.Children {
		if c.IsDir {
			walkFiles(c, out)
		} else {
			out[c.Path] = c
		}
	}
}

func readEntry(im *Image, e *Entry) ([]byte, error) {
	b := make([]byte, e.Size)
	if e.Size == 0 {
		return b, nil
	}
	if err := readFull(im.R, b, e.Offset()); err != nil {
		return nil, err
	}
	return b, nil
}

// checkTree asserts the image shows exactly the tree's files, with their
// sizes and contents, and no problems.
func checkTree(t *testing.T, im *Image, tree []treeFile) {
	t.Helper()
	for _, p := range im.Problems {
		t.Errorf("problem: %v", p)
	}
	got := map[string]*Entry{}
	walkFiles(im.Root, got)
	want := map[string][]byte{}
	for _, f := range tree {
		want[f.path] = f.data
	}
	var paths []string
	for p := range want {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		e, ok := got[p]
		if !ok {
			t.Errorf("%s not listed", p)
			continue
		}
		if e.Err != nil {
			t.Errorf("%s: %v", p, e.Err)
		}
		if e.Size != int64(len(want[p])) {
			t.Errorf("%s: size %d, want %d", p, e.Size, len(want[p]))
			continue
		}
		b, err := readEntry(im, e)
		if err != nil {
			t.Errorf("%s: %v", p, err)
		} else if !bytes.Equal(b, want[p]) {
			t.Errorf("%s: contents differ", p)
		}
		if l, ok := im.Lookup(p); !ok || l != e {
			t.Errorf("Lookup(%q) = %v, %v", p, l, ok)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected file %s", p)
		}
	}
	if r, ok := im.Lookup(""); !ok || r != im.Root {
		t.Errorf("Lookup(\"\") is not the root")
	}
	if _, ok := im.Lookup("NOPE/X"); ok {
		t.Errorf("Lookup of a missing path succeeded")
	}
}

func TestOpenOwnWriter(t *testing.T) {
	tree := sampleTree()
	p := writeISO(t, writerFiles(tree), isowriter.Options{VolumeID: "RATCHETANDCLANK2", SystemID: "PLAYSTATION", DirLBAs: map[string]int64{"": 261, "G": 262}})
	im := openFile(t, p)
	checkTree(t, im, tree)
	if im.Vol.VolumeID != "RATCHETANDCLANK2" || im.Vol.SystemID != "PLAYSTATION" || im.Vol.BlockSize != 2048 || im.Vol.RootLBA != 261 {
		t.Errorf("volume %+v", im.Vol)
	}
	if im.Vol.Blocks*SectorSize != im.Size {
		t.Errorf("volume says %d blocks, image is %d bytes", im.Vol.Blocks, im.Size)
	}
	g, ok := im.Lookup("G")
	if !ok || !g.IsDir || g.LBA != 262 || len(g.Children) != 120 || g.Size < 2*SectorSize {
		t.Fatalf("G: %+v", g)
	}
	// Directory-record order is ISO order: sorted names.
	for i := 1; i < len(g.Children); i++ {
		if g.Children[i-1].Name >= g.Children[i].Name {
			t.Errorf("G children out of order: %s before %s", g.Children[i-1].Name, g.Children[i].Name)
		}
	}
	if e, _ := im.Lookup("/A/B/C/DEEP.TXT/"); e == nil || e.Path != "A/B/C/DEEP.TXT" || e.Name != "DEEP.TXT" {
		t.Errorf("Lookup with slashes: %+v", e)
	}
}

// hostTree writes the tree into a directory for mastering tools.
func hostTree(t *testing.T, tree []treeFile) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range tree {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func master(t *testing.T, tool string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not installed", tool)
	}
	tree := sampleTree()
	src := hostTree(t, tree)
	out := filepath.Join(t.TempDir(), "m.iso")
	cmd := exec.Command(tool, append(append(args, "-o", out), src)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, b)
	}
	return out
}

func TestOpenXorriso(t *testing.T) {
	p := master(t, "xorriso", "-as", "mkisofs", "-quiet", "-V", "XORRISO_VOL", "-sysid", "PLAYSTATION")
	im := openFile(t, p)
	checkTree(t, im, sampleTree())
	if im.Vol.VolumeID != "XORRISO_VOL" || im.Vol.SystemID != "PLAYSTATION" {
		t.Errorf("volume %+v", im.Vol)
	}
}

func TestOpenGenisoimage(t *testing.T) {
	p := master(t, "genisoimage", "-quiet", "-V", "GENISO")
	im := openFile(t, p)
	checkTree(t, im, sampleTree())
	if im.Vol.VolumeID != "GENISO" {
		t.Errorf("volume %+v", im.Vol)
	}
}

func TestOpenGenisoimageUDF(t *testing.T) {
	p := master(t, "genisoimage", "-quiet", "-udf", "-V", "GENUDF")
	checkTree(t, openFile(t, p), sampleTree())
}

func TestOpenGenisoimageRockRidge(t *testing.T) {
	// Rock Ridge adds system-use fields after the name; the primary names must
	// still be read (the tree uses names that need no mangling).
	p := master(t, "genisoimage", "-quiet", "-R", "-J")
	checkTree(t, openFile(t, p), sampleTree())
}

func TestNotISO(t *testing.T) {
	for _, c := range []struct {
		name string
		img  []byte
	}{
		{"empty", nil},
		{"short", make([]byte, 16*SectorSize+100)},
		{"zeros", make([]byte, 20*SectorSize)},
		{"no primary", func() []byte {
			b := make([]byte, 20*SectorSize)
			b[16*SectorSize] = 255
			copy(b[16*SectorSize+1:], "CD001")
			return b
		}()},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(c.img), int64(len(c.img)))
			if !errors.Is(err, ErrNotISO) {
				t.Errorf("got %v, want ErrNotISO", err)
			}
		})
	}
}

type errReader struct{}

func (errReader) ReadAt([]byte, int64) (int, error) { return 0, errors.New("device gone") }

func TestUnreadable(t *testing.T) {
	_, err := Open(errReader{}, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "device gone") {
		t.Errorf("got %v", err)
	}
}

func TestBadBlockSize(t *testing.T) {
	img := ownImage(t)
	put16both(img[16*SectorSize+128:], 512)
	_, err := Open(bytes.NewReader(img), int64(len(img)))
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Offset != 16*SectorSize+128 {
		t.Errorf("got %v, want a FormatError at the block size field", err)
	}
}

func TestReaderAtAcceptsEOFWithFullRead(t *testing.T) {
	// bytes.Reader returns io.EOF together with a full read at the very end.
	img := ownImage(t)
	r := &eofReader{img}
	im, err := Open(r, int64(len(img)))
	if err != nil || len(im.Problems) != 0 {
		t.Fatalf("Open: %v %v", err, im.Problems)
	}
}

type eofReader struct{ b []byte }

func (r *eofReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.b)) {
		return 0, io.EOF
	}
	n := copy(p, r.b[off:])
	if n < len(p) || off+int64(n) == int64(len(r.b)) {
		return n, io.EOF
	}
	return n, nil
}
