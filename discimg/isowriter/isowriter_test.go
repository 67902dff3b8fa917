package isowriter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// sampleFiles is a small tree: root files, a multi-sector directory of 120
// files, a nested directory, a zero-byte file, fixed and allocated LBAs, and
// content with holes.
func sampleFiles() []File {
	files := []File{
		{Path: "SYSTEM.CNF", LBA: 1000, Size: 60, Chunks: []Chunk{{0, []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n")}}},
		{Path: "EMPTY.BIN", Size: 0},
		{Path: "SUB/DEEP/LEAF.DAT", Size: 5000, Chunks: []Chunk{{10, []byte("hello")}, {4095, bytes.Repeat([]byte{0xAB}, 905)}}},
	}
	for i := 0; i < 120; i++ {
		data := bytes.Repeat([]byte{byte(i + 1)}, i*37%3000+1)
		files = append(files, File{Path: fmt.Sprintf("G/F%03d.WAD", 119-i), Size: int64(len(data)) + 100, Chunks: []Chunk{{50, data}}})
	}
	return files
}

// content returns a file's bytes as the image should hold them.
func content(f File) []byte {
	b := make([]byte, f.Size)
	for _, c := range f.Chunks {
		copy(b[c.Off:], c.Data)
	}
	return b
}

func writeImage(t *testing.T, files []File, opt Options) (string, int64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "test.iso")
	out, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	n, err := Write(out, files, opt)
	if err != nil {
		t.Fatalf("Write: %v", err)
	}
	st, err := out.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != n {
		t.Fatalf("file is %d bytes, Write returned %d", st.Size(), n)
	}
	return p, n
}

func need(t *testing.T, tool string) {
	t.Helper()
	if _, err := exec.LookPath(tool); err != nil {
		t.Skipf("%s not installed", tool)
	}
}

func TestPVDFields(t *testing.T) {
	files := sampleFiles()
	p, n := writeImage(t, files, Options{VolumeID: "RATCHETANDCLANK2", SystemID: "PLAYSTATION", DirLBAs: map[string]int64{"": 261, "G": 262}})
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	pvd := img[16*SectorSize : 17*SectorSize]
	if pvd[0] != 1 || string(pvd[1:6]) != "CD001" || pvd[6] != 1 || pvd[881] != 1 {
		t.Fatalf("PVD header %q", pvd[:7])
	}
	if got := strings.TrimRight(string(pvd[8:40]), " "); got != "PLAYSTATION" {
		t.Errorf("system id %q", got)
	}
	if got := strings.TrimRight(string(pvd[40:72]), " "); got != "RATCHETANDCLANK2" {
		t.Errorf("volume id %q", got)
	}
	checkBoth32 := func(what string, b []byte) uint32 {
		le, be := binary.LittleEndian.Uint32(b), binary.BigEndian.Uint32(b[4:])
		if le != be {
			t.Errorf("%s: LE %d BE %d", what, le, be)
		}
		return le
	}
	checkBoth16 := func(what string, b []byte) uint16 {
		le, be := binary.LittleEndian.Uint16(b), binary.BigEndian.Uint16(b[2:])
		if le != be {
			t.Errorf("%s: LE %d BE %d", what, le, be)
		}
		return le
	}
	if v := checkBoth32("volume space size", pvd[80:]); int64(v)*SectorSize != n {
		t.Errorf("volume space size %d blocks, image %d bytes", v, n)
	}
	if v := checkBoth16("set size", pvd[120:]); v != 1 {
		t.Errorf("set size %d", v)
	}
	if v := checkBoth16("sequence", pvd[124:]); v != 1 {
		t.Errorf("sequence %d", v)
	}
	if v := checkBoth16("block size", pvd[128:]); v != SectorSize {
		t.Errorf("block size %d", v)
	}
	ptSize := checkBoth32("path table size", pvd[132:])
	if ptSize != 10+10+12+12 { // root (1-byte id, padded), "G", "SUB", "DEEP"
		t.Errorf("path table size %d", ptSize)
	}
	if v := checkBoth32("root LBA", pvd[156+2:]); v != 261 {
		t.Errorf("root LBA %d", v)
	}
	lPT := binary.LittleEndian.Uint32(pvd[140:])
	mPT := binary.BigEndian.Uint32(pvd[148:])
	l := img[int64(lPT)*SectorSize:][:ptSize]
	m := img[int64(mPT)*SectorSize:][:ptSize]
	if binary.LittleEndian.Uint32(l[2:]) != 261 || binary.BigEndian.Uint32(m[2:]) != 261 {
		t.Errorf("path table root LBA: L %x M %x", l[:8], m[:8])
	}
	if string(l[18:19]) != "G" || binary.LittleEndian.Uint32(l[12:]) != 262 || binary.BigEndian.Uint32(m[12:]) != 262 || binary.BigEndian.Uint16(m[16:]) != 1 {
		t.Errorf("path table G record: L %x M %x", l[10:], m[10:])
	}
	term := img[17*SectorSize:]
	if term[0] != 255 || string(term[1:6]) != "CD001" {
		t.Errorf("no set terminator at sector 17")
	}
	// G holds 120 records: more than one sector.
	g := img[262*SectorSize:]
	if sz := checkBoth32("G size", g[10:]); sz < 2*SectorSize {
		t.Errorf("G directory is %d bytes, want several sectors", sz)
	}
	// SYSTEM.CNF at its fixed LBA.
	if !bytes.HasPrefix(img[1000*SectorSize:], []byte("BOOT2")) {
		t.Errorf("SYSTEM.CNF not at LBA 1000")
	}
}

func expected(files []File) map[string]int64 {
	m := map[string]int64{}
	for _, f := range files {
		m[f.Path] = f.Size
	}
	return m
}

func compareListing(t *testing.T, tool string, got, want map[string]int64) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s missing", tool, k)
		} else if g != want[k] {
			t.Errorf("%s: %s is %d bytes, want %d", tool, k, g, want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected %s", tool, k)
		}
	}
}

func TestBsdtarAgrees(t *testing.T) {
	need(t, "bsdtar")
	files := sampleFiles()
	p, _ := writeImage(t, files, Options{VolumeID: "TEST"})
	out, err := exec.Command("bsdtar", "-tvf", p).CombinedOutput()
	if err != nil {
		t.Fatalf("bsdtar -tvf: %v\n%s", err, out)
	}
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 9 || strings.HasPrefix(f[0], "d") {
			continue
		}
		size, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			t.Fatalf("bsdtar line %q", line)
		}
		got[strings.Join(f[8:], " ")] = size
	}
	compareListing(t, "bsdtar", got, expected(files))

	dir := t.TempDir()
	if out, err := exec.Command("bsdtar", "-xf", p, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("bsdtar -x: %v\n%s", err, out)
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f.Path))
		if err != nil {
			t.Errorf("extracted: %v", err)
			continue
		}
		if !bytes.Equal(b, content(f)) {
			t.Errorf("extracted %s differs (%d bytes, want %d)", f.Path, len(b), f.Size)
		}
	}
}

func Test7zAgrees(t *testing.T) {
	need(t, "7z")
	files := sampleFiles()
	p, _ := writeImage(t, files, Options{VolumeID: "TEST"})
	out, err := exec.Command("7z", "l", "-slt", p).CombinedOutput()
	if err != nil {
		t.Fatalf("7z l: %v\n%s", err, out)
	}
	got := map[string]int64{}
	var path string
	var size int64
	isDir := false
	flush := func() {
		if path != "" && !isDir {
			got[path] = size
		}
		path, size, isDir = "", 0, false
	}
	for _, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Path = "):
			flush()
			path = strings.TrimPrefix(line, "Path = ")
		case strings.HasPrefix(line, "Size = "):
			size, _ = strconv.ParseInt(strings.TrimPrefix(line, "Size = "), 10, 64)
		case strings.HasPrefix(line, "Folder = +"):
			isDir = true
		}
	}
	flush()
	delete(got, p) // the archive itself
	compareListing(t, "7z", got, expected(files))
}

func TestIsoInfoAgrees(t *testing.T) {
	need(t, "iso-info")
	files := sampleFiles()
	p, _ := writeImage(t, files, Options{VolumeID: "TEST"})
	out, err := exec.Command("iso-info", "--no-header", "-l", "-i", p).CombinedOutput()
	if err != nil {
		t.Fatalf("iso-info: %v\n%s", err, out)
	}
	// "/g/:" introduces a directory; a file line is
	// "  - [LSN     29]       101 Nov 11 2003 12:00:00  f119.wad" (iso-info
	// lower-cases plain ISO 9660 names and drops ";1").
	got := map[string]int64{}
	dir := ""
	line := regexp.MustCompile(`^\s*-\s+\[LSN\s+\d+\]\s+(\d+)\s+\S+\s+\d+\s+\d+\s+[\d:]+\s+(\S+)$`)
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "/") && strings.HasSuffix(l, ":") {
			dir = strings.ToUpper(strings.Trim(strings.TrimSuffix(l, ":"), "/"))
			continue
		}
		m := line.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		size, _ := strconv.ParseInt(m[1], 10, 64)
		name := strings.TrimSuffix(strings.ToUpper(m[2]), ";1")
		if dir != "" {
			name = dir + "/" + name
		}
		got[name] = size
	}
	if len(got) == 0 {
		t.Fatalf("could not parse iso-info output:\n%s", out)
	}
	compareListing(t, "iso-info", got, expected(files))
}

func TestSparse(t *testing.T) {
	// A 1 GiB volume with one small file near the end must cost a few blocks.
	files := []File{{Path: "TAIL.DUP", LBA: 500000, Size: 4096, Chunks: []Chunk{{0, []byte("x")}}}}
	p, n := writeImage(t, files, Options{TotalBlocks: 524288})
	if n != 524288*SectorSize {
		t.Fatalf("size %d", n)
	}
	used, err := diskUsage(p)
	if err != nil {
		t.Skip(err)
	}
	if used > 1<<20 {
		t.Errorf("sparse image uses %d bytes on disk", used)
	}
}

func TestLayoutErrors(t *testing.T) {
	cases := []struct {
		name  string
		files []File
		opt   Options
	}{
		{"overlapping files", []File{{Path: "A", LBA: 100, Size: 4096}, {Path: "B", LBA: 101, Size: 10}}, Options{}},
		{"file over directory", []File{{Path: "A", LBA: 262, Size: 10}}, Options{DirLBAs: map[string]int64{"": 262}}},
		{"file over path table", []File{{Path: "A", LBA: 18, Size: 10}}, Options{}},
		{"file over descriptor", []File{{Path: "A", LBA: 16, Size: 10}}, Options{}},
		{"duplicate", []File{{Path: "A", Size: 1}, {Path: "a", Size: 1}}, Options{}},
		{"file and dir", []File{{Path: "A", Size: 1}, {Path: "A/B", Size: 1}}, Options{}},
		{"bad char", []File{{Path: "A B", Size: 1}}, Options{}},
		{"chunk past size", []File{{Path: "A", Size: 1, Chunks: []Chunk{{0, []byte("ab")}}}}, Options{}},
		{"chunks out of order", []File{{Path: "A", Size: 10, Chunks: []Chunk{{5, []byte("ab")}, {1, []byte("c")}}}}, Options{}},
		{"too small volume", []File{{Path: "A", LBA: 100, Size: 10}}, Options{TotalBlocks: 50}},
		{"unknown dir LBA", []File{{Path: "A", Size: 10}}, Options{DirLBAs: map[string]int64{"X": 300}}},
		{"size past 4 GiB", []File{{Path: "A", Size: 1 << 32}}, Options{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf memWriter
			_, err := Write(&buf, c.files, c.opt)
			if !errors.Is(err, ErrLayout) {
				t.Errorf("got %v, want ErrLayout", err)
			}
		})
	}
}

func TestAllocationAvoidsFixed(t *testing.T) {
	// Allocated files must flow around a fixed one.
	files := []File{
		{Path: "FIXED", LBA: 30, Size: 2048 * 5},
		{Path: "A", Size: 2048 * 8},
		{Path: "B", Size: 1},
	}
	var buf memWriter
	n, err := Write(&buf, files, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(len(buf.b)) {
		t.Errorf("size %d, wrote %d", n, len(buf.b))
	}
}

type memWriter struct{ b []byte }

func (m *memWriter) WriteAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(m.b)) {
		m.b = append(m.b, make([]byte, end-int64(len(m.b)))...)
	}
	copy(m.b[off:], p)
	return len(p), nil
}

func TestXorrisoAgrees(t *testing.T) {
	need(t, "xorriso")
	files := sampleFiles()
	p, _ := writeImage(t, files, Options{VolumeID: "TEST", DirLBAs: map[string]int64{"": 261, "G": 262}})
	cmd := exec.Command("xorriso", "-indev", p, "-find", "/", "-type", "f", "-exec", "lsdl")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("xorriso: %v\n%s", err, stderr.String())
	}
	if m := regexp.MustCompile(`(?i)(warning|sorry|failure|mishap)`).FindString(stderr.String()); m != "" {
		t.Errorf("xorriso complains:\n%s", stderr.String())
	}
	// "-r-xr-xr-x    1 0        0            1504 Nov 11  2003 '/G/F000.WAD'"
	got := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(l)
		if len(f) < 9 {
			continue
		}
		size, err := strconv.ParseInt(f[4], 10, 64)
		if err != nil {
			t.Fatalf("xorriso line %q", l)
		}
		got[strings.TrimPrefix(strings.Trim(f[len(f)-1], "'"), "/")] = size
	}
	compareListing(t, "xorriso", got, expected(files))
}
