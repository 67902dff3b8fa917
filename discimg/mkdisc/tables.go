package mkdisc

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
)

// Readings, spelled as discimg reports them (discimg.Reading*); mkdisc does not
// import discimg so that discimg's own tests may use mkdisc.
const (
	readingPairsBytes   = "pairs-bytes"
	readingPairsSectors = "pairs-sectors"
	readingStartList    = "start-list"
	readingLevel        = "level-header"
	readingSceneRecords = "scene-records"
)

// treeEntry is one extent of a container as the tree shows it.
type treeEntry struct {
	name    string  // "gameplay", "armor0_mesh", "017", "scene03/12"
	off, n  int64   // byte range in the container (n clamped to the file), or in its parent part
	decoded *stream // non-nil: the extent begins with this stream (NAME and NAME.wad)
	// parts are NAME.d/: ranges relative to the entry's first byte, or to its
	// decoded content when decoded is set (those carry their sum).
	parts []treeEntry
	sum   string // SHA-1 known when generated: a part of decoded content
	// content, when set, holds the entry's bytes at off: an extent past its
	// container, in the file inFile behind it.
	content    *sparseFile
	contentOff int64 // where content's first byte lies, relative to the container
	inFile     string
	idx        int // table index (container entries)
	// asset is what the entry's content is (views and format names follow
	// from it), data the asset's own bytes (what its view is made from).
	asset assetKind
	data  []byte
	// extra are files inside the entry's NAME.d/ that its part table does
	// not list (the data lump's core/), with their sums; paths relative to
	// NAME.d/.
	extra []ManifestEntry
	// beside are views in the entry's directory made from more than the
	// entry (a level's level.glb), paths relative to that directory.
	beside []ManifestEntry
}

// assetKind is what an entry holds, as the generator wrote it.
type assetKind int

const (
	assetNone      assetKind = iota
	assetPIF                 // a PIF texture: NAME.png beside it
	assetRGBA                // raw RGBA behind {w, h}: NAME.png
	assetVAG                 // a VAG: named NAME.vag, NAME.wav beside it
	assetPSS                 // a video: named NAME.pss
	assetELF                 // an IOP module: named NAME.irx
	assetSubtitles           // a GC subtitle blob: NAME.d/<language>.srt
)

// genFile is one file of the image with everything the generator knows of it.
type genFile struct {
	path      string // "G/LEVEL0.WAD"
	retailLBA int64
	lba       int64
	content   *sparseFile
	header    []byte // the container header as in the file; nil for plain files
	entries   []treeEntry
	beyond    []int          // table slots fillBeyond places in the files behind
	info      *ContainerInfo // nil for plain files
}

// finishContainer writes a container's header into its content and records
// what the tree will show of it (entries shown, how many are decoded).
func (f *genFile) finishContainer(hdr []byte, info *ContainerInfo) error {
	info.Shown = len(f.entries)
	for _, e := range f.entries {
		if e.decoded != nil {
			info.Compressed++
		}
	}
	f.content.put(0, hdr)
	f.header = hdr
	f.info = info
	return f.content.finish(f.path)
}

type gen struct {
	layout Layout
	seed   int64
	// levelDescs: a level's core description by row.File, for its chunks'
	// glb views (meshes.go)
	levelDescs sync.Map
	// levelPNGs: the bytes of a level core's PNG views by path below
	// data.d/core/, by row.File, for its level.glb (gameplay.go)
	levelPNGs sync.Map
}

func (g *gen) small() bool { return g.layout == Small }

func (g *gen) rng(labels ...any) *rand.Rand { return rngFor(g.seed, labels...) }

func sectorsOf(n int64) int64 { return (n + sectorSize - 1) / sectorSize }

type slotKind int

const (
	slotUnused slotKind = iota
	slotSentinel
	slotRaw
	slotWAD
)

// slot is one table entry to generate.
type slot struct {
	kind        slotKind
	weight      float64 // share of the retail container's data sectors
	smallBytes  int64   // raw extent size in the small layout
	tag         string  // WAD streams
	plainRetail int     // decoded size wanted in retail (capped by the share)
	plainSmall  int     // decoded size in the small layout
	style       rawStyle
	// plain, when set, makes a WAD slot's decoded content of about n bytes
	// and the parts it holds (instead of asset-like bytes).
	plain func(rng *rand.Rand, n int) ([]byte, []treeEntry)
	// body, when set, makes a raw slot's bytes and their parts (its size is
	// then the body's length, in both layouts).
	body func(g *gen, rng *rand.Rand) ([]byte, []treeEntry)
	// beyond: the extent lies past the container, in the files behind it
	// (placed by fillBeyond once the image is laid out).
	beyond bool
	asset  assetKind // what a body's or a decoded slot's content is
}

// entryName is the SPEC name of table entry i of a container whose
// documented slot names are names (nil: table indices).
func entryName(names []string, i, entries int) string {
	if i < len(names) {
		return names[i]
	}
	w := max(3, len(fmt.Sprint(entries-1)))
	return fmt.Sprintf("%0*d", w, i)
}

// pairFamily describes a pair-table container family.
type pairFamily struct {
	family     string
	headerSize int64
	sectors    bool            // size field in sectors (as Wrench types MISC, ARMOR, BONUS, HUD)
	names      func() []string // documented slot names (nil or returning nil: table indices)
	slots      func(g *gen, rng *rand.Rand) []slot
}

func (pf *pairFamily) entries() int { return int(pf.headerSize-8) / 8 }

// buildPairs builds a container with a pair table. size is the retail size
// (the small layout derives its own from the contents, keeping the retail tail
// overrun so the clamp is exercised in both).
func (g *gen) buildPairs(pf *pairFamily, inv invFile) (*genFile, error) {
	rng := g.rng(inv.Path, "table")
	slots := pf.slots(g, rng)
	if len(slots) != pf.entries() {
		return nil, fmt.Errorf("mkdisc: %s: %d slots for %d entries", inv.Path, len(slots), pf.entries())
	}
	lastUsed := -1
	var wsum float64
	for i, s := range slots {
		if (s.kind == slotRaw || s.kind == slotWAD) && !s.beyond {
			lastUsed = i
			wsum += s.weight
		}
	}
	if lastUsed < 0 || slots[lastUsed].kind != slotRaw {
		return nil, fmt.Errorf("mkdisc: %s: the last used entry must be raw", inv.Path)
	}
	hdrSectors := sectorsOf(pf.headerSize)
	retailN := sectorsOf(inv.Size) - hdrSectors // data sectors in retail
	overrun := sectorsOf(inv.Size)*sectorSize - inv.Size

	// WAD streams first: their lengths fix their extents.
	secs := make([]int64, len(slots))
	streams := make([]*stream, len(slots))
	var wadSecs int64
	for i, s := range slots {
		if s.kind != slotWAD {
			continue
		}
		plain, capacity := s.plainSmall, int64(0)
		if !g.small() {
			share := max(1, int64(float64(retailN)*s.weight/wsum))
			capacity = share * sectorSize
			plain = min(s.plainRetail, int(capacity*3/2))
		}
		st, err := makeStreamOf(g.rng(inv.Path, i, "stream"), s.tag, plain, capacity, s.plain)
		if err != nil {
			return nil, fmt.Errorf("%s entry %d: %w", inv.Path, i, err)
		}
		streams[i] = &st
		secs[i] = sectorsOf(int64(len(st.data)))
		wadSecs += secs[i]
	}
	// Raw extents with a body have its length; the others share what is
	// left (retail) or take their small size.
	bodies := make([][]byte, len(slots))
	bodyParts := make([][]treeEntry, len(slots))
	for i, s := range slots {
		if s.kind == slotRaw && s.body != nil && !s.beyond {
			bodies[i], bodyParts[i] = s.body(g, g.rng(inv.Path, i, "body"))
			secs[i] = max(1, sectorsOf(int64(len(bodies[i]))))
			wadSecs += secs[i]
		}
	}
	var rawW float64
	var nRaw int64
	for i, s := range slots {
		if s.kind == slotRaw && bodies[i] == nil && !s.beyond {
			rawW += s.weight
			nRaw++
		}
	}
	if g.small() {
		for i, s := range slots {
			if s.kind == slotRaw && bodies[i] == nil && !s.beyond {
				secs[i] = max(1, sectorsOf(s.smallBytes))
			}
		}
	} else {
		left := retailN - wadSecs
		if left < nRaw {
			return nil, fmt.Errorf("mkdisc: %s: streams leave %d sectors for %d raw extents", inv.Path, left, nRaw)
		}
		var used int64
		for i, s := range slots {
			if s.kind == slotRaw && bodies[i] == nil && !s.beyond {
				secs[i] = max(1, int64(float64(left-nRaw)*s.weight/rawW))
				used += secs[i]
			}
		}
		if used > left {
			return nil, fmt.Errorf("mkdisc: %s: raw shares overflow", inv.Path)
		}
		secs[lastUsed] += left - used
	}
	var total int64
	for _, n := range secs {
		total += n
	}
	fileSize := inv.Size
	if g.small() {
		if b := bodies[lastUsed]; b != nil && secs[lastUsed]*sectorSize-overrun < int64(len(b)) {
			secs[lastUsed]++ // the clamped last extent must still hold its body
			total++
		}
		fileSize = (hdrSectors+total)*sectorSize - overrun
		// the clamped last extent must keep at least one byte
		if overrun >= secs[lastUsed]*sectorSize {
			return nil, fmt.Errorf("mkdisc: %s: overrun swallows the last extent", inv.Path)
		}
	}
	fileSectors := sectorsOf(fileSize)

	f := &genFile{path: inv.Path, retailLBA: inv.LBA, content: &sparseFile{size: fileSize}}
	hdr := make([]byte, pf.headerSize)
	binary.LittleEndian.PutUint32(hdr[0:], uint32(pf.headerSize))
	info := &ContainerInfo{Path: inv.Path, Family: pf.family, HeaderSize: pf.headerSize, Entries: pf.entries()}
	if pf.sectors {
		info.Reading = readingPairsSectors
	} else {
		info.Reading = readingPairsBytes
	}
	start := hdrSectors
	sentinel := 0
	for i, s := range slots {
		var fStart, fSize uint32
		switch {
		case s.beyond:
			// written by fillBeyond once the files behind are placed
			f.beyond = append(f.beyond, i)
		case s.kind == slotUnused:
			info.Unused++
		case s.kind == slotSentinel:
			// points into the sectors of whatever follows the container
			fStart = uint32(fileSectors + 3 + int64(sentinel)*29)
			if pf.sectors {
				fSize = uint32(4 + sentinel%5)
			} else {
				fSize = uint32(0x8000 + sentinel*0x321)
			}
			sentinel++
			info.Sentinels++
		default:
			off := start * sectorSize
			n := secs[i] * sectorSize
			byteSize := n
			if i == lastUsed {
				byteSize = fileSize - off
			} else if s.kind == slotWAD {
				byteSize = int64(len(streams[i].data))
			} else if bodies[i] != nil {
				byteSize = int64(len(bodies[i]))
			} else {
				byteSize = n - int64(rng.IntN(sectorSize)) // still touches its last sector
			}
			fStart = uint32(start)
			if pf.sectors {
				fSize = uint32(secs[i])
			} else {
				fSize = uint32(byteSize)
			}
			shown := min(n, fileSize-off)
			if !pf.sectors {
				shown = byteSize
			}
			e := treeEntry{idx: i, name: entryName(pf.documentedNames(), i, pf.entries()), off: off, n: shown}
			switch {
			case s.kind == slotWAD:
				e.decoded = streams[i]
				e.parts = streams[i].parts
				e.asset, e.data = s.asset, streams[i].plain
				f.content.put(off, streams[i].data)
			case bodies[i] != nil:
				f.content.put(off, bodies[i])
				e.parts = toEnd(bodyParts[i], shown)
				e.asset, e.data = s.asset, bodies[i]
			default:
				idx := i
				switch s.style {
				case styleVideo:
					idx, e.asset = i/2, assetPSS // video NN
				case styleSubtitles:
					idx = i / 2 // subtitles NN
				}
				e.data = rawContent(f.content, off, shown, inv.Path+"/"+e.name, idx, s.style, g.rng(inv.Path, i, "raw"), g.small())
				switch {
				case e.data == nil:
				case s.style == styleVAG:
					e.asset = assetVAG
				case s.style == styleSubtitles:
					e.asset = assetSubtitles
				}
			}
			f.entries = append(f.entries, e)
			info.Coverage += sectorsOf(shown)
			start += secs[i]
		}
		binary.LittleEndian.PutUint32(hdr[8+8*i:], fStart)
		binary.LittleEndian.PutUint32(hdr[12+8*i:], fSize)
	}
	return f, f.finishContainer(hdr, info)
}

// toEnd gives a part whose size is -1 ("to the end", as a list's last item
// runs) the rest of a parent of n bytes.
func toEnd(parts []treeEntry, n int64) []treeEntry {
	for i := range parts {
		if parts[i].n == -1 {
			parts[i].n = n - parts[i].off
		}
	}
	return parts
}

// startFamily describes a container whose table is a flat list of start sectors.
type startFamily struct {
	family     string // "AUDIO"
	headerSize int64
	names      func() []string // documented slot names
	// values lays out the list: for each entry, -1 unused (zero), -2 the
	// sentinel, otherwise the ordinal of its distinct extent (non-decreasing).
	values func(g *gen, rng *rand.Rand, maxDistinct int64) []int
}

func (sf *startFamily) entries() int { return int(sf.headerSize-8) / 4 }

func (g *gen) buildStartList(sf *startFamily, inv invFile) (*genFile, error) {
	rng := g.rng(inv.Path, "table")
	hdrSectors := sectorsOf(sf.headerSize)
	retailN := sectorsOf(inv.Size) - hdrSectors
	maxDistinct := retailN
	if g.small() {
		maxDistinct = min(retailN, 48)
	}
	vals := sf.values(g, rng, maxDistinct)
	if len(vals) != sf.entries() {
		return nil, fmt.Errorf("mkdisc: %s: %d values for %d entries", inv.Path, len(vals), sf.entries())
	}
	distinct := 0
	for _, v := range vals {
		distinct = max(distinct, v+1)
	}
	secs := make([]int64, distinct)
	if g.small() {
		for i := range secs {
			secs[i] = 1 + int64(rng.IntN(3))
		}
	} else if distinct > 0 {
		ws := make([]float64, distinct)
		var wsum float64
		for i := range ws {
			ws[i] = 0.2 + rng.Float64()*rng.Float64()*4
			wsum += ws[i]
		}
		var used int64
		for i := range secs {
			secs[i] = max(1, int64(float64(retailN-int64(distinct))*ws[i]/wsum))
			used += secs[i]
		}
		if used > retailN {
			return nil, fmt.Errorf("mkdisc: %s: start list shares overflow", inv.Path)
		}
		secs[distinct-1] += retailN - used
	}
	overrun := sectorsOf(inv.Size)*sectorSize - inv.Size
	fileSize := inv.Size
	if g.small() {
		var total int64
		for _, n := range secs {
			total += n
		}
		fileSize = (hdrSectors+total)*sectorSize - overrun
	}
	starts := make([]int64, distinct)
	s := hdrSectors
	for i := range secs {
		starts[i] = s
		s += secs[i]
	}
	f := &genFile{path: inv.Path, retailLBA: inv.LBA, content: &sparseFile{size: fileSize}}
	hdr := make([]byte, sf.headerSize)
	binary.LittleEndian.PutUint32(hdr[0:], uint32(sf.headerSize))
	info := &ContainerInfo{Path: inv.Path, Family: sf.family, HeaderSize: sf.headerSize, Entries: sf.entries(), Reading: readingStartList}
	extentLen := func(d int) int64 {
		if d == distinct-1 {
			return fileSize - starts[d]*sectorSize
		}
		return secs[d] * sectorSize
	}
	// every extent of the global AUDIO is a VAG sound
	vags := make([][]byte, distinct)
	for d := 0; d < distinct; d++ {
		vags[d] = rawContent(f.content, starts[d]*sectorSize, extentLen(d), inv.Path, d, styleVAG, g.rng(inv.Path, d, "raw"), g.small())
		info.Coverage += sectorsOf(extentLen(d))
	}
	for i, v := range vals {
		var word uint32
		switch {
		case v == -1:
			info.Unused++
		case v == -2:
			word = uint32(sectorsOf(fileSize) + 7)
			info.Sentinels++
		default:
			word = uint32(starts[v])
			e := treeEntry{name: entryName(sf.documentedNames(), i, sf.entries()), off: starts[v] * sectorSize, n: extentLen(v)}
			if vags[v] != nil {
				e.asset, e.data = assetVAG, vags[v]
			}
			f.entries = append(f.entries, e)
		}
		binary.LittleEndian.PutUint32(hdr[8+4*i:], word)
	}
	// A header-only SCENE<n> (retail SCENE21, 24, 25: zeros and one
	// sentinel) is an empty directory: discimg reads it as an empty table.
	return f, f.finishContainer(hdr, info)
}

// documentedNames is the family's documented slot names, nil for none.
func (pf *pairFamily) documentedNames() []string {
	if pf.names == nil {
		return nil
	}
	return pf.names()
}

// documentedNames is the family's documented slot names, nil for none.
func (sf *startFamily) documentedNames() []string {
	if sf.names == nil {
		return nil
	}
	return sf.names()
}
