package mkdisc

import (
	"bytes"
	"errors"
	"io"
	"path"
	"sort"
	"sync"
	"testing"

	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/discimg/isowriter"
)

var (
	buildOnce  sync.Map // Layout -> *builtLayout
	buildMutex sync.Mutex
)

type builtLayout struct {
	files []*genFile
	opt   isowriter.Options
	err   error
}

// built builds a layout in memory once per test binary (no image is written).
func built(t *testing.T, l Layout) []*genFile {
	files, _ := builtOpt(t, l)
	return files
}

// builtOpt is built with the volume options. The retail layout's streams are
// capped at 16 KiB of content here: its placement and tables are what the tests
// check, and encoding 170 MB under -race would take minutes.
func builtOpt(t *testing.T, l Layout) ([]*genFile, isowriter.Options) {
	t.Helper()
	buildMutex.Lock()
	defer buildMutex.Unlock()
	if v, ok := buildOnce.Load(l); ok {
		b := v.(*builtLayout)
		if b.err != nil {
			t.Fatal(b.err)
		}
		return b.files, b.opt
	}
	if l == Retail {
		testPlainCap = 16 << 10
		defer func() { testPlainCap = 0 }()
	}
	files, opt, err := build(l, 1)
	buildOnce.Store(l, &builtLayout{files, opt, err})
	if err != nil {
		t.Fatal(err)
	}
	return files, opt
}

// TestContainersReadBack reads every generated G/ container's header with
// discimg.ReadContainer and checks that the measurement picks the reading the
// table was written in, and shows exactly the extents the manifest names.
func TestContainersReadBack(t *testing.T) {
	for _, l := range []Layout{Small, Retail} {
		t.Run(string(l), func(t *testing.T) {
			readings := map[string]int{}
			ties := map[string]bool{}
			files := built(t, l)
			for _, f := range files {
				if !isG(f.path) {
					continue
				}
				r, limit := runReader(files, f)
				c, err := discimg.ReadContainerIn(path.Base(f.path), r, f.content.size, limit)
				if f.info == nil {
					if err == nil {
						t.Errorf("%s: generated as a plain file, but ReadContainer reads it (%s, %d extents)", f.path, c.Reading, len(c.Extents))
					} else if f.header != nil && !errors.Is(err, discimg.ErrNoReading) {
						t.Errorf("%s: want ErrNoReading, got %v", f.path, err)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s: %v", f.path, err)
					continue
				}
				readings[string(c.Reading)]++
				if string(c.Reading) != f.info.Reading || c.Family != f.info.Family {
					t.Errorf("%s: read as %s %s, generated as %s %s (candidates %+v)", f.path, c.Family, c.Reading, f.info.Family, f.info.Reading, c.Candidates)
					continue
				}
				// Unambiguous: every other reading is inconsistent or covers
				// strictly less, so no tie-break decides. The one exception
				// is inherent in the rules: a table of sector pairs that tile
				// their file also reads as a consistent start list of the
				// same coverage (its sizes are small sector numbers inside
				// the file, and a start list is sized by next greater start,
				// so it never overlaps); DISC-FACTS's tie order prefers pairs.
				for _, k := range c.Candidates {
					// Likewise scene records against the plain start list
					// (the records are its refinement; their size words,
					// read as starts, split nothing new).
					inherent := (c.Reading == readingPairsSectors || c.Reading == readingSceneRecords) && k.Reading == readingStartList
					if k.Reading != c.Reading && k.Consistent && k.Coverage >= c.Coverage && c.Coverage > 0 && !inherent {
						ties[f.path+" "+string(k.Reading)] = true
					}
				}
				if c.Sentinels != f.info.Sentinels || c.Unused != f.info.Unused || c.Skipped != f.info.Sentinels+f.info.Unused {
					t.Errorf("%s: read %d sentinels, %d unused, %d skipped; generated %d sentinels, %d unused", f.path, c.Sentinels, c.Unused, c.Skipped, f.info.Sentinels, f.info.Unused)
				}
				compressed := 0
				for _, e := range c.Extents {
					b := make([]byte, 16)
					f.content.ReadAt(b, e.Offset)
					if codec.IsStream(b, e.Size) {
						compressed++
					}
				}
				if compressed != f.info.Compressed {
					t.Errorf("%s: %d extents begin with a stream, generated %d", f.path, compressed, f.info.Compressed)
				}
				if c.Coverage != f.info.Coverage {
					t.Errorf("%s: coverage %d sectors, generated %d", f.path, c.Coverage, f.info.Coverage)
				}
				if len(c.Extents) != len(f.entries) {
					t.Errorf("%s: %d extents read, %d generated", f.path, len(c.Extents), len(f.entries))
					continue
				}
				for i, e := range c.Extents {
					g := f.entries[i]
					if e.Name != g.name || e.Offset != g.off || e.Size != g.n {
						t.Errorf("%s: extent %d read as %s @%d+%d, generated %s @%d+%d", f.path, i, e.Name, e.Offset, e.Size, g.name, g.off, g.n)
						break
					}
				}
				if c.Level != nil {
					if c.Level.ID != f.info.LevelID || c.Level.Reverb != f.info.Reverb || c.Level.Name != f.info.LevelName {
						t.Errorf("%s: level %+v, generated id %d reverb %d %q", f.path, c.Level, f.info.LevelID, f.info.Reverb, f.info.LevelName)
					}
				}
			}
			t.Logf("readings: %v", readings)
			for k := range ties {
				t.Errorf("%s: another reading is consistent and covers as much", k)
			}
			for _, r := range []string{readingPairsBytes, readingPairsSectors, readingStartList, readingLevel} {
				if readings[r] == 0 {
					t.Errorf("no container read as %s", r)
				}
			}
		})
	}
}

func isG(p string) bool { return len(p) > 2 && p[:2] == "G/" }

// TestStreamsDecode decodes every stream of the small layout and checks it
// gives the content the manifest hashes, that the codec's size scan agrees, and
// that the disc's streams together use every packet kind of note 000.
func TestStreamsDecode(t *testing.T) {
	var total codec.Stats
	n := 0
	for _, f := range built(t, Small) {
		for _, e := range f.entries {
			if e.decoded == nil {
				continue
			}
			n++
			buf := make([]byte, e.n)
			f.content.ReadAt(buf, e.off)
			if !codec.IsStream(buf, e.n) {
				t.Errorf("%s/%s: codec.IsStream says no", f.path, e.name)
				continue
			}
			out, err := codec.Decode(buf, codec.Options{})
			if err != nil {
				t.Errorf("%s/%s: %v", f.path, e.name, err)
				continue
			}
			if int64(len(out)) != e.decoded.plainSize || sha1Hex(out) != e.decoded.plainSHA {
				t.Errorf("%s/%s: decodes to %d bytes %s, want %d %s", f.path, e.name, len(out), sha1Hex(out), e.decoded.plainSize, e.decoded.plainSHA)
			}
			h, err := codec.ParseHeader(buf)
			if err != nil || h.Tag != e.decoded.tag {
				t.Errorf("%s/%s: header %+v %v, want tag %q", f.path, e.name, h, err, e.decoded.tag)
			}
			st, err := codec.Scan(bytes.NewReader(buf), e.n, codec.Options{})
			if err != nil || st.DecodedSize != e.decoded.plainSize {
				t.Errorf("%s/%s: scan says %d bytes, %v; want %d", f.path, e.name, st.DecodedSize, err, e.decoded.plainSize)
			}
			total.Literals += st.Literals
			total.ShortMatches += st.ShortMatches
			total.Matches += st.Matches
			total.FarMatches += st.FarMatches
			total.Dummies += st.Dummies
			total.BlockMarkers += st.BlockMarkers
		}
	}
	t.Logf("%d streams decoded; packets: %+v", n, total)
	for kind, c := range map[string]int{"literal": total.Literals, "short match": total.ShortMatches, "match": total.Matches,
		"far match": total.FarMatches, "dummy": total.Dummies, "block marker": total.BlockMarkers} {
		if c == 0 {
			t.Errorf("no %s packet in the disc's streams", kind)
		}
	}
}

// runReader reads a container and the gap-free run of plain files behind it
// on the disc, as gcfs reads a container's extents past its end: the bytes
// up to the next container (or a gap), relative to the container's start.
func runReader(files []*genFile, f *genFile) (io.ReaderAt, int64) {
	sorted := append([]*genFile(nil), files...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].lba < sorted[b].lba })
	run := []*genFile{f}
	limit := f.content.size
	for i, g := range sorted {
		if g != f {
			continue
		}
		end := f.lba + sectorsOf(f.content.size)
		for _, h := range sorted[i+1:] {
			if h.lba > end+1 {
				break // a gap
			}
			if h.info != nil {
				limit = max(limit, (h.lba-f.lba)*sectorSize) // the next container
				break
			}
			run = append(run, h)
			end = h.lba + sectorsOf(h.content.size)
			limit = (h.lba-f.lba)*sectorSize + h.content.size
		}
	}
	if len(run) == 1 {
		return f.content, f.content.size
	}
	return multiReader{base: f.lba, files: run}, limit
}

type multiReader struct {
	base  int64
	files []*genFile
}

func (m multiReader) ReadAt(p []byte, off int64) (int, error) {
	clear(p)
	for _, g := range m.files {
		start := (g.lba - m.base) * sectorSize
		lo, hi := max(off, start), min(off+int64(len(p)), start+g.content.size)
		if lo < hi {
			g.content.ReadAt(p[lo-off:hi-off], lo-start)
		}
	}
	return len(p), nil
}
