package mkdisc

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGenerate times a whole `gcfs mkdisc` (build, hash, write) per
// layout; image-MB/s counts the image's full (sparse) size.
func BenchmarkGenerate(b *testing.B) {
	for _, l := range []Layout{Small, Retail} {
		b.Run(string(l), func(b *testing.B) {
			dir := b.TempDir()
			var size int64
			var files int
			cpu0 := cpuTime()
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
			// CPU seconds (all threads) say more than wall time on a shared machine
			b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/disc")
			b.ReportMetric(float64(size)/1e6/el, "image-MB/s")
			b.ReportMetric(float64(files), "files")
		})
	}
}
