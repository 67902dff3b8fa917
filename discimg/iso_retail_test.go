package discimg

import (
	"bufio"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/isowriter"
)

// retailInventory parses the retail inventory TSV (the copy mkdisc embeds,
// else the shared formats folder).
func retailInventory(t testing.TB) []isowriter.File {
	t.Helper()
	var f *os.File
	var err error
	for _, p := range []string{"mkdisc/data/rac2-ntscu-v1.01-inventory.tsv", "../../shared/formats/rac2-ntscu-v1.01-inventory.tsv"} {
		if f, err = os.Open(p); err == nil {
			break
		}
	}
	if err != nil {
		t.Skipf("no inventory TSV: %v", err)
	}
	defer f.Close()
	var files []isowriter.File
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) < 3 {
			t.Fatalf("inventory line %q", line)
		}
		size, err1 := strconv.ParseInt(cols[1], 10, 64)
		lba, err2 := strconv.ParseInt(cols[2], 10, 64)
		if err1 != nil || err2 != nil {
			t.Fatalf("inventory line %q", line)
		}
		files = append(files, isowriter.File{Path: strings.TrimPrefix(cols[0], "/"), Size: size, LBA: lba})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return files
}

const retailBlocks = 1869312

var retailOptions = isowriter.Options{
	VolumeID: "RATCHETANDCLANK2", SystemID: "PLAYSTATION",
	DirLBAs:     map[string]int64{"": 261, "G": 262},
	TotalBlocks: retailBlocks,
}

func TestRetailLayout(t *testing.T) {
	files := retailInventory(t)
	if len(files) != 97 {
		t.Fatalf("inventory has %d files, want 97", len(files))
	}
	p := writeISO(t, files, retailOptions)
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() != 3_828_350_976 {
		t.Errorf("image is %d bytes", st.Size())
	}
	im := openFile(t, p)
	if len(im.Problems) != 0 {
		t.Errorf("problems: %v", im.Problems)
	}
	if im.Vol.Blocks != retailBlocks || im.Vol.RootLBA != 261 || im.Vol.VolumeID != "RATCHETANDCLANK2" {
		t.Errorf("volume %+v", im.Vol)
	}
	g, ok := im.Lookup("G")
	if !ok || g.LBA != 262 || len(g.Children) != 92 || g.Size <= SectorSize {
		t.Errorf("G: %+v", g)
	}
	for _, f := range files {
		e, ok := im.Lookup(f.Path)
		if !ok || e.Err != nil || e.LBA != f.LBA || e.Size != f.Size {
			t.Errorf("%s: %+v, want LBA %d size %d", f.Path, e, f.LBA, f.Size)
		}
	}
	if len(im.Root.Children) != 6 {
		t.Errorf("root has %d entries, want 5 files and G", len(im.Root.Children))
	}

	// Standard tools list the same 97 files and sizes.
	if _, err := exec.LookPath("bsdtar"); err == nil {
		out, err := exec.Command("bsdtar", "-tvf", p).Output()
		if err != nil {
			t.Fatalf("bsdtar: %v", err)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			fs := strings.Fields(l)
			if len(fs) >= 9 && !strings.HasPrefix(fs[0], "d") {
				got = append(got, fs[8]+" "+fs[4])
			}
		}
		var want []string
		for _, f := range files {
			want = append(want, f.Path+" "+strconv.FormatInt(f.Size, 10))
		}
		sort.Strings(got)
		sort.Strings(want)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("bsdtar lists %d files:\n%s", len(got), strings.Join(got, "\n"))
		}
	}
}

func BenchmarkOpenRetailLayout(b *testing.B) {
	files := retailInventory(b)
	p := writeISO(b, files, retailOptions)
	f, err := os.Open(p)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	size := int64(retailBlocks) * SectorSize
	b.ResetTimer()
	var n int
	for i := 0; i < b.N; i++ {
		im, err := Open(f, size)
		if err != nil {
			b.Fatal(err)
		}
		n = countEntries(im.Root)
	}
	if n != 98 {
		b.Fatalf("walked %d entries, want 98", n)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/open")
}

func countEntries(e *Entry) int {
	n := len(e.Children)
	for _, c := range e.Children {
		n += countEntries(c)
	}
	return n
}
