package imagefile

import (
	"testing"
)

// BenchmarkHunkDecode decodes one stored hunk of a chdman CHD per op, per codec.
func BenchmarkHunkDecode(b *testing.B) {
	iso, _ := sourceISO(b)
	for _, tc := range []struct{ name, cmd, codec string }{
		{"zlib", "createraw", "zlib"}, {"lzma", "createraw", "lzma"}, {"huff", "createraw", "huff"}, {"flac", "createraw", "flac"},
		{"cdzl", "createcd", "cdzl"}, {"cdlz", "createcd", "cdlz"}, {"cdfl", "createcd", "cdfl"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			args := []string{tc.cmd, "-c", tc.codec}
			if tc.cmd == "createraw" {
				args = append(args, "-hs", "4096", "-us", "2048")
			}
			im := openPath(b, chdman(b, iso, args...), Options{})
			c := im.chd
			h := -1
			for i := len(c.entries) / 2; i < len(c.entries); i++ {
				if c.entries[i].typ == compType0 {
					h = i
					break
				}
			}
			if h < 0 {
				b.Skip("no compressed hunk")
			}
			b.SetBytes(int64(c.hdr.hunkBytes))
			b.ResetTimer()
			for range b.N {
				if _, err := c.decodeHunk(uint32(h), 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
