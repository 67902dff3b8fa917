package imagefile

import (
	"bytes"
	"math/rand"
	"testing"

	"gcfs/cache"
	"gcfs/discimg/imagefile/imagetest"
)

// Throughput of each container against the plain ISO: sequential 64 KiB
// reads of the whole image (warm cache of 64 MiB), and cold random 4 KiB
// reads (a cache that keeps nothing, so every read decodes its hunk).

func benchImages(b *testing.B) map[string]func(c *cache.Cache) *Image {
	iso, data := sourceISO(b)
	open := func(p string) func(c *cache.Cache) *Image {
		return func(c *cache.Cache) *Image { return openPath(b, p, Options{Cache: c}) }
	}
	fromBytes := func(img []byte) func(c *cache.Cache) *Image {
		return func(c *cache.Cache) *Image {
			im, err := Open(bytes.NewReader(img), int64(len(img)), Options{Cache: c})
			if err != nil {
				b.Fatal(err)
			}
			return im
		}
	}
	return map[string]func(c *cache.Cache) *Image{
		"iso":          open(iso),
		"chd-cd":       open(chdman(b, iso, "createcd")),
		"chd-raw":      open(chdman(b, iso, "createraw", "-hs", "4096", "-us", "2048")),
		"chd-raw-zlib": open(chdman(b, iso, "createraw", "-hs", "4096", "-us", "2048", "-c", "zlib")),
		"cso1":         fromBytes(imagetest.WriteCSO(data, "cso1", 2048, 0)),
		"zso":          fromBytes(imagetest.WriteCSO(data, "zso", 2048, 0)),
	}
}

var benchOrder = []string{"iso", "chd-cd", "chd-raw", "chd-raw-zlib", "cso1", "zso"}

func BenchmarkSequentialRead(b *testing.B) {
	imgs := benchImages(b)
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			im := imgs[name](cache.New(64 << 20))
			buf := make([]byte, 64<<10)
			b.SetBytes(im.Size())
			b.ResetTimer()
			for range b.N {
				for off := int64(0); off < im.Size(); off += int64(len(buf)) {
					if _, err := im.ReadAt(buf, off); err != nil && off+int64(len(buf)) < im.Size() {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

func BenchmarkColdRandom4K(b *testing.B) {
	imgs := benchImages(b)
	for _, name := range benchOrder {
		b.Run(name, func(b *testing.B) {
			im := imgs[name](cache.New(0))
			buf := make([]byte, 4096)
			rng := rand.New(rand.NewSource(1))
			n := im.Size()/4096 - 1
			b.SetBytes(4096)
			b.ResetTimer()
			for range b.N {
				if _, err := im.ReadAt(buf, rng.Int63n(n)*4096); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
