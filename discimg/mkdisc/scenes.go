package mkdisc

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// buildSceneRecords builds a SCENE<n>: 15 records of 83 u32 words (DISC-FACTS
// "What Wrench's unpacker reads"): starts in sectors, words 3 and 13 the
// sizes in sectors of the subtitles and moby_load extents; moby_load and the
// chunks are WAD streams. Equal starts (a right channel sharing its left's
// extent), zero words inside a record and exactly one sentinel after the last
// start. The extents are placed in another order than the words name them
// (the reader sizes by the next greater start, not by table order).
func (g *gen) buildSceneRecords(inv invFile) (*genFile, error) {
	const hs = 0x137c
	rng := g.rng(inv.Path, "table")
	hdrSectors := sectorsOf(hs)
	retailN := sectorsOf(inv.Size) - hdrSectors
	words := make([]uint32, sceneRecords*sceneWords)
	info := &ContainerInfo{Path: inv.Path, Family: "SCENE", HeaderSize: hs, Entries: sceneRecords * (sceneWords - 2), Reading: readingSceneRecords}

	// An extent to place: the words naming it and its content.
	type ext struct {
		words   []int // word indices whose start it is
		sizeAt  int   // the size word, or -1
		stream  *stream
		raw     int64 // raw bytes (small) or weight share (retail), when stream is nil
		weight  float64
		label   string
		secs    int64
		start   int64
		physKey int // placement order
	}
	var exts []*ext
	scenes := 0
	if retailN > 0 {
		scenes = 1 + rng.IntN(sceneRecords)
		for !g.small() && scenes > 1 && retailN < int64(scenes)*64 {
			scenes--
		}
	}
	streamCap := int64(0)
	if !g.small() && scenes > 0 {
		// seven streams a scene at most: together under half its share
		streamCap = retailN * sectorSize / int64(scenes) / 16
	}
	for sc := 0; sc < scenes; sc++ {
		base := sc * sceneWords
		add := func(e *ext) { exts = append(exts, e) }
		wad := func(w int, tag string, plainSmall, plainRetail int) (*ext, error) {
			st, err := makeStream(g.rng(inv.Path, w+base, "stream"), tag, g.plain(plainRetail, plainSmall), streamCap)
			if err != nil {
				return nil, fmt.Errorf("%s word %d: %w", inv.Path, base+w, err)
			}
			return &ext{words: []int{base + w}, sizeAt: -1, stream: &st, physKey: 0}, nil
		}
		// subtitles (raw, sized by word 3) and moby_load (WAD, sized by word 13)
		add(&ext{words: []int{base + sceneSubtitles}, sizeAt: base + sceneSubtitlesLen, raw: 1500 + rng.Int64N(3000), weight: 0.05, label: "subtitles", physKey: 0})
		moby, err := wad(sceneMobyLoad, "mobyload", 8<<10+rng.IntN(8<<10), 48<<10)
		if err != nil {
			return nil, err
		}
		moby.sizeAt = base + sceneMobyLoadLen
		add(moby)
		for c := 0; c < 1+rng.IntN(6); c++ {
			ch, err := wad(sceneChunk0+c, "cutscene", 6<<10+rng.IntN(8<<10), 24<<10)
			if err != nil {
				return nil, err
			}
			add(ch)
		}
		// speech: left and right of each language; a right channel may share
		// its left's extent, a language may be absent
		for lang := 0; lang < 5; lang++ {
			l, r := 2*lang+2, 2*lang+3
			if lang == 0 {
				l, r = 0, 1
			}
			if lang > 0 && rng.IntN(6) == 0 {
				continue // a zero pair inside a record
			}
			e := &ext{words: []int{base + l}, sizeAt: -1, raw: 2000 + rng.Int64N(6000), weight: 1, label: sceneWordName(l), physKey: 1}
			if rng.IntN(4) == 0 {
				e.words = append(e.words, base+r) // an equal start
				add(e)
				continue
			}
			add(e)
			add(&ext{words: []int{base + r}, sizeAt: -1, raw: 2000 + rng.Int64N(6000), weight: 1, label: sceneWordName(r), physKey: 1})
		}
	}
	// Sizes: streams by their bytes; raw extents their small size, or a share
	// of what the streams leave (retail). The last placed extent is raw.
	sort.SliceStable(exts, func(a, b int) bool { return exts[a].physKey < exts[b].physKey })
	var streamSecs int64
	var wsum float64
	for _, e := range exts {
		if e.stream != nil {
			e.secs = sectorsOf(int64(len(e.stream.data)))
			streamSecs += e.secs
		} else {
			wsum += e.weight
		}
	}
	overrun := sectorsOf(inv.Size)*sectorSize - inv.Size
	fileSize := inv.Size
	if g.small() {
		var total int64
		for _, e := range exts {
			if e.stream == nil {
				e.secs = max(1, sectorsOf(e.raw))
			}
			total += e.secs
		}
		if len(exts) > 0 {
			fileSize = (hdrSectors+total)*sectorSize - overrun
		}
	} else if len(exts) > 0 {
		left := retailN - streamSecs
		var rawN int64
		for _, e := range exts {
			if e.stream == nil {
				rawN++
			}
		}
		if left < rawN {
			return nil, fmt.Errorf("mkdisc: %s: streams leave %d sectors for %d raw extents", inv.Path, left, rawN)
		}
		var used int64
		for _, e := range exts {
			if e.stream == nil {
				e.secs = max(1, int64(float64(left-rawN)*e.weight/wsum))
				used += e.secs
			}
		}
		exts[len(exts)-1].secs += left - used
	}
	f := &genFile{path: inv.Path, retailLBA: inv.LBA, content: &sparseFile{size: fileSize}}
	at := hdrSectors
	for _, e := range exts {
		e.start = at
		at += e.secs
		off := e.start * sectorSize
		n := min(e.secs*sectorSize, fileSize-off)
		var st *stream
		var vag []byte
		if e.stream != nil {
			st = e.stream
			f.content.put(off, st.data)
		} else {
			// speech is VAG sound; the scene's subtitles stay raw bytes
			style := styleVAG
			if e.label == "subtitles" {
				style = styleGeneric
			}
			vag = rawContent(f.content, off, n, inv.Path+"/"+e.label, e.words[0], style, g.rng(inv.Path, e.words[0], "raw"), g.small())
		}
		for _, w := range e.words {
			words[w] = uint32(e.start)
			te := treeEntry{idx: w, name: fmt.Sprintf("scene%02d/%s", w/sceneWords, sceneWordName(w%sceneWords)), off: off, n: n, decoded: st}
			if vag != nil {
				te.asset, te.data = assetVAG, vag
			}
			f.entries = append(f.entries, te)
		}
		if e.sizeAt >= 0 {
			words[e.sizeAt] = uint32(e.secs)
		}
		info.Coverage += sectorsOf(n)
	}
	// one sentinel, on a start word after every real start
	last := -1
	for w, v := range words {
		if v != 0 {
			last = w
		}
	}
	sent := last + 1
	for sent%sceneWords == sceneSubtitlesLen || sent%sceneWords == sceneMobyLoadLen {
		sent++
	}
	words[sent] = uint32(sectorsOf(fileSize) + 7)
	info.Sentinels = 1
	for w, v := range words {
		if v == 0 && w%sceneWords != sceneSubtitlesLen && w%sceneWords != sceneMobyLoadLen {
			info.Unused++
		}
	}
	sort.SliceStable(f.entries, func(a, b int) bool { return f.entries[a].idx < f.entries[b].idx })
	hdr := make([]byte, hs)
	binary.LittleEndian.PutUint32(hdr[0:], hs)
	for w, v := range words {
		binary.LittleEndian.PutUint32(hdr[8+4*w:], v)
	}
	return f, f.finishContainer(hdr, info)
}
