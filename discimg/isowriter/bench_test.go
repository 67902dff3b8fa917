package isowriter

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkWriteRetailLayout writes the 97 files of the retail inventory at
// their LBAs, with one 64 KiB chunk each, into a sparse 3.8 GB image.
func BenchmarkWriteRetailLayout(b *testing.B) {
	f, err := os.Open("../mkdisc/data/rac2-ntscu-v1.01-inventory.tsv")
	if err != nil {
		b.Skip(err)
	}
	var files []File
	chunk := make([]byte, 64<<10)
	for i := range chunk {
		chunk[i] = byte(i*7 + 1)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || strings.HasPrefix(cols[0], "#") {
			continue
		}
		size, _ := strconv.ParseInt(cols[1], 10, 64)
		lba, _ := strconv.ParseInt(cols[2], 10, 64)
		fl := File{Path: strings.TrimPrefix(cols[0], "/"), LBA: lba, Size: size}
		if size >= int64(len(chunk)) {
			fl.Chunks = []Chunk{{Data: chunk}}
		}
		files = append(files, fl)
	}
	f.Close()
	if len(files) != 97 {
		b.Fatalf("%d files", len(files))
	}
	p := filepath.Join(b.TempDir(), "retail.iso")
	opt := Options{VolumeID: "RATCHETANDCLANK2", SystemID: "PLAYSTATION", DirLBAs: map[string]int64{"": 261, "G": 262}, TotalBlocks: 1869312}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := os.Create(p)
		if err != nil {
			b.Fatal(err)
		}
		if n, err := Write(out, files, opt); err != nil || n != 3828350976 {
			b.Fatal(n, err)
		}
		out.Close()
	}
	b.StopTimer()
	if used, err := diskUsage(p); err == nil {
		b.ReportMetric(float64(used)/(1<<20), "MiB-on-disk")
	}
}
