package discimg

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// Every family documented as pairs gets its slot names whether its table
// measures in the documented unit or in the other one (issue 18, item 1: note
// 003 measured byte sizes in tables Wrench types in sectors), and says which
// unit it measured.
func TestNamesWhateverTheUnit(t *testing.T) {
	for _, f := range []struct {
		name string
		hs   int
		l    *tableLayout
	}{
		{"MISC.WAD", 0x40, miscLayout}, {"ARMOR.WAD", 0xf8, armorLayout}, {"BONUS.WAD", 0xa48, bonusLayout},
		{"HUD.WAD", 0x1870, hudLayout}, {"MPEG.WAD", 0x328, mpegLayout}, {"AUDIO3.WAD", 0x1018, audioNLayout},
	} {
		names, layouts := f.l.table()
		n := len(names)
		first := sectorsFor(int64(f.hs))
		rng := rand.New(rand.NewPCG(uint64(f.hs), 18))
		for _, rd := range []Reading{ReadingPairsBytes, ReadingPairsSectors} {
			t.Run(fmt.Sprintf("%s/%s", f.name, rd), func(t *testing.T) {
				var pairs [][2]uint32
				var end int64
				if rd == ReadingPairsBytes {
					pairs, end = chainBytes(first, randSizes(rng, n, 3000, 40000))
				} else {
					pairs, end = chainSectors(first, randSizes(rng, n, 2, 60))
				}
				c := mustRead(t, f.name, header(f.hs, pairWords(pairs)), end)
				if c.Reading != rd {
					t.Fatalf("reading %s, want %s; candidates %+v", c.Reading, rd, c.Candidates)
				}
				if len(c.Extents) != n {
					t.Fatalf("%d extents, want %d", len(c.Extents), n)
				}
				for i, e := range c.Extents {
					if e.Name != names[i] || e.Layout != layouts[i] {
						t.Fatalf("extent %d named %q (layout %q), want %q (%q)", i, e.Name, e.Layout, names[i], layouts[i])
					}
				}
				other := rd != f.l.reading
				why := c.NamesReason()
				if !c.Named || c.OtherUnit() != other || !strings.HasPrefix(why, "documented slot names") {
					t.Fatalf("named %v, other unit %v (want %v), reason %q", c.Named, c.OtherUnit(), other, why)
				}
				if other && (!strings.Contains(why, "measured as "+string(rd)+" (sizes in "+rd.Unit()+")") ||
					!strings.Contains(why, "not the documented "+string(f.l.reading))) {
					t.Fatalf("reason %q does not say which unit was measured", why)
				}
			})
		}
	}
}

// A reading of another shape keeps table indices, and says why: the global
// AUDIO (documented as start lists) read as pairs, MISC (documented as pairs)
// read as a start list, a SCENE<n> start list whose records do not read.
func TestNamesNeedTheShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 1))
	pairs, end := chainBytes(3, randSizes(rng, 767, 100, 90000))
	audio := mustRead(t, "AUDIO.WAD", header(0x1800, pairWords(pairs)), end)
	misc := mustRead(t, "MISC.WAD", header(0x40, []uint32{1, 5, 9, 20, 22, 30, 31, 40, 41, 50, 60, 70, 80, 90}), 100*SectorSize)
	scene := mustRead(t, "SCENE9.WAD", header(0x137c, []uint32{9, 8, 7, 6, 5, 4, 3}), 1<<20)
	for _, k := range []struct {
		c     *Container
		rd    Reading
		first string
	}{{audio, ReadingPairsBytes, "000"}, {misc, ReadingStartList, "000"}, {scene, ReadingStartList, "scene00/00"}} {
		why := k.c.NamesReason()
		if k.c.Reading != k.rd || k.c.Named || k.c.OtherUnit() || k.c.Extents[0].Name != k.first ||
			!strings.HasPrefix(why, "table indices") || !strings.Contains(why, string(k.c.Documented.Shape())) {
			t.Errorf("%s: reading %s named %v first %q, reason %q", k.c.Name, k.c.Reading, k.c.Named, k.c.Extents[0].Name, why)
		}
	}
}

// mpegBeyond is an MPEG.WAD table of size bytes followed by a run of files up
// to limit: subtitles and videos 0 … 14 inside the file, videos 15 … 49 in the
// run, where videos 21 and 22 overlap video 20, video 24 is video 23 again
// (the same bytes), and videos 48 and 49 lie past the run (sentinels).
func mpegBeyond() (hdr []byte, size, limit int64) {
	rng := rand.New(rand.NewPCG(18, 2))
	var sizes []int64
	for range 15 {
		sizes = append(sizes, 1500+rng.Int64N(2500), 16<<10+rng.Int64N(32<<10))
	}
	pairs := make([][2]uint32, 100)
	inside, end := chainBytes(1, sizes)
	copy(pairs, inside)
	// subtitles 15 … 49 inside the file, after the first 15 videos, a sector
	// each; the last one's sector runs 48 bytes past the file (clamped)
	at := sectorsFor(end)
	for v := 15; v < 50; v++ {
		pairs[2*v] = [2]uint32{uint32(at), 1000}
		at++
	}
	size = at*SectorSize - 48
	run := uint32(at + 10) // where the videos behind the file start
	for v := 15; v < 50; v++ {
		pairs[2*v+1] = [2]uint32{run + uint32(20*(v-15)), uint32(40000 + 100*v)}
	}
	pairs[2*21+1] = [2]uint32{pairs[2*20+1][0] + 5, 30000}  // inside video 20
	pairs[2*22+1] = [2]uint32{pairs[2*20+1][0] + 15, 50000} // from video 20 into video 21's sectors
	pairs[2*24+1] = pairs[2*23+1]                           // the same bytes as video 23
	limit = int64(run+20*34)*SectorSize + 100               // videos 48 and 49 lie past it
	pairs[2*48+1] = [2]uint32{uint32(limit/SectorSize) + 1, 40000}
	pairs[2*49+1] = [2]uint32{uint32(limit/SectorSize) + 30, 40000}
	return header(0x328, pairWords(pairs)), size, limit
}

// Issue 18, item 2: entries past MPEG.WAD's end that overlap each other or
// share bytes do not make the table inconsistent; each is listed (in the run)
// or counted as a sentinel on its own, and every subtitle and video inside
// the file is shown.
func TestBeyondEntriesOverlap(t *testing.T) {
	hdr, size, limit := mpegBeyond()
	c, err := ReadContainerIn("MPEG.WAD", sparseContainer{hdr, limit}, size, limit)
	if err != nil {
		t.Fatalf("ReadContainerIn: %v", err)
	}
	if c.Reading != ReadingPairsBytes || !c.Named {
		t.Fatalf("reading %s named %v; candidates %+v", c.Reading, c.Named, c.Candidates)
	}
	names := map[string]Extent{}
	for _, e := range c.Extents {
		names[e.Name] = e
	}
	for v := range 50 {
		if _, ok := names[fmt.Sprintf("subtitles%02d", v)]; !ok {
			t.Errorf("subtitles%02d not listed", v)
		}
		e, ok := names[fmt.Sprintf("video%02d", v)]
		if ok == (v >= 48) {
			t.Errorf("video%02d listed %v", v, ok)
		}
		if ok && e.Beyond != (v >= 15) {
			t.Errorf("video%02d beyond %v", v, e.Beyond)
		}
	}
	if c.Sentinels != 2 || c.Beyond != 33 || len(c.Extents) != 98 || c.Skipped != 2 {
		t.Errorf("sentinels %d beyond %d extents %d skipped %d, want 2, 33, 98, 2", c.Sentinels, c.Beyond, len(c.Extents), c.Skipped)
	}
	if a, b := names["video23"], names["video24"]; a.Offset != b.Offset || a.Size != b.Size {
		t.Errorf("video23 %+v and video24 %+v should be the same bytes", a, b)
	}
	// Inside the file, an overlap still makes the reading inconsistent.
	bad := append([]byte(nil), hdr...)
	copy(bad[8+8*3:8+8*3+4], bad[8:12]) // video01 starts where subtitles00 does
	c, err = ReadContainerIn("MPEG.WAD", sparseContainer{bad, limit}, size, limit)
	if err == nil && candidate(c, ReadingPairsBytes).Consistent {
		t.Errorf("an overlap inside the file: pairs-bytes still consistent (%+v)", candidate(c, ReadingPairsBytes))
	}
}
