package fsnode

import (
	"io"
	"math/rand"
	"sort"
	"testing"
	"time"

	"gcfs/cache"
	"gcfs/codec"
	"gcfs/fsnode/testdisc"
)

// BenchmarkDecoded reads a 16 MiB decoded file through the model: sequential
// 1 MiB reads with an empty cache (cold: decode from the index) and with every
// block cached (warm), and random 4 KiB reads on an empty cache (median, p99).
// sequential-cold keeps the file's index from one iteration to the next;
// sequential-first is a file never looked up before (a fresh tree): its size,
// Open and the reads, everything a first cat of the file costs.
func BenchmarkDecoded(b *testing.B) {
	const size = 16 << 20
	d, err := testdisc.Write(b.TempDir(), testdisc.Options{SampleSize: size})
	if err != nil {
		b.Fatal(err)
	}
	tree, _ := openDisc(b, d.Path, -1, Options{CacheSize: 64 << 20})
	n := mustLookup(b, tree, "G/MISC.WAD/frontend")
	r, err := n.Open()
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	seq := func(b *testing.B) {
		for off := int64(0); off < r.Size(); off += int64(len(buf)) {
			if _, err := r.ReadAt(buf, off); err != nil && err != io.EOF {
				b.Fatal(err)
			}
		}
	}
	b.Run("codec-decode-whole", func(b *testing.B) { // the codec alone, for comparison
		stream := d.Files["G/MISC.WAD/frontend.wad"]
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			if _, err := codec.Decode(stream, codec.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("sequential-cold", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tree.Cache = cache.New(64 << 20)
			r, _ = n.Open()
			b.StartTimer()
			seq(b)
		}
	})
	b.Run("sequential-first", func(b *testing.B) {
		b.SetBytes(size)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			fresh, err := Build(tree.Image, Options{CacheSize: 64 << 20})
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			fn := mustLookup(b, fresh, "G/MISC.WAD/frontend")
			if fn.Size() != size {
				b.Fatalf("size %d", fn.Size())
			}
			fr, err := fn.Open()
			if err != nil {
				b.Fatal(err)
			}
			for off := int64(0); off < size; off += int64(len(buf)) {
				if _, err := fr.ReadAt(buf, off); err != nil && err != io.EOF {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("sequential-warm", func(b *testing.B) {
		b.SetBytes(size)
		seq(b)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			seq(b)
		}
	})
	b.Run("random-4k-cold", func(b *testing.B) {
		rng := rand.New(rand.NewSource(1))
		var lat []time.Duration
		p := make([]byte, 4096)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			tree.Cache = cache.New(64 << 20)
			r, _ = n.Open()
			off := rng.Int63n(size - 4096)
			b.StartTimer()
			t0 := time.Now()
			if _, err := r.ReadAt(p, off); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median_µs")
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99_µs")
	})
}
