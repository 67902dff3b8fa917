package discimg

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"gcfs/discimg/isowriter"
)

// TestRandomTreesRoundTrip writes random trees (names of every length up to
// 30, directories that end exactly at a sector boundary or just past it,
// fixed and allocated LBAs, empty files) and reads them back.
func TestRandomTreesRoundTrip(t *testing.T) {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
	for seed := int64(1); seed <= 40; seed++ {
		rng := rand.New(rand.NewSource(seed))
		name := func(ext bool) string {
			n := 1 + rng.Intn(24)
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.Intn(len(alphabet))]
			}
			if ext && rng.Intn(2) == 0 {
				return string(b) + "." + string(alphabet[rng.Intn(26)])
			}
			return string(b)
		}
		dirs := []string{""}
		for i := 0; i < rng.Intn(6); i++ {
			parent := dirs[rng.Intn(len(dirs))]
			d := name(false)
			if parent != "" {
				d = parent + "/" + d
			}
			dirs = append(dirs, d)
		}
		seen := map[string]bool{}
		for _, d := range dirs {
			seen[d] = true
		}
		var tree []treeFile
		var files []isowriter.File
		nextFixed := int64(5000)
		for i := 0; i < 1+rng.Intn(150); i++ {
			p := name(true)
			if d := dirs[rng.Intn(len(dirs))]; d != "" {
				p = d + "/" + p
			}
			if seen[p] {
				continue
			}
			seen[p] = true
			data := patterned([]int{0, 1, 2047, 2048, 2049, rng.Intn(9000)}[rng.Intn(6)], byte(i))
			f := isowriter.File{Path: p, Size: int64(len(data)), Chunks: []isowriter.Chunk{{Data: data}}}
			if rng.Intn(4) == 0 {
				f.LBA = nextFixed
				nextFixed += int64(len(data))/SectorSize + 1 + int64(rng.Intn(3))
			}
			files = append(files, f)
			tree = append(tree, treeFile{p, data})
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			im := openFile(t, writeISO(t, files, isowriter.Options{VolumeID: name(false)}))
			checkTree(t, im, tree)
			for _, f := range tree {
				for d := f.path; strings.Contains(d, "/"); {
					d = d[:strings.LastIndexByte(d, '/')]
					if e, ok := im.Lookup(d); !ok || !e.IsDir {
						t.Errorf("directory %q: %+v", d, e)
					}
				}
			}
		})
	}
}
