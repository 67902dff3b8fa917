package mkdisc

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// BenchmarkGenerate times a whole `gcfs mkdisc` (build, hash, write) per
// layout; image-MB/s counts the image's full (sparse) size.
func BenchmarkGenerate(b *testing.B) {
	for _, l := range []Layout{Small, Retail} {
		b.Run(string(l), func(b *testing.B) {
			dir := b.TempDir()
			var size int64
			var files int
			start := time.Now()
			for i := 0; i < b.N; i++ {
				p := filepath.Join(dir, "disc.iso")
				res, err := Generate(p, l, 1)
				if err != nil {
					b.Fatal(err)
				}
				size, files = res.ImageSize, len(res.Manifest)
				os.Remove(p)
			}
			el := time.Since(start).Seconds() / float64(b.N)
			b.ReportMetric(el, "s/disc")
			b.ReportMetric(float64(size)/1e6/el, "image-MB/s")
			b.ReportMetric(float64(files), "files")
		})
	}
}
