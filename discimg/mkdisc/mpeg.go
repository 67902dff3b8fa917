package mkdisc

import (
	"encoding/binary"
	"fmt"
	"sort"
)

// MPEG.WAD's videos past its own end (DISC-FACTS: MPEG.WAD, MPEG1.WAD and
// MPEG2.WAD are contiguous, and the entries past MPEG.WAD point into the other
// two): videos mpegFirstBeyond … 44 lie in MPEG1.WAD, 45 … 47 in MPEG2.WAD,
// and 48, 49 past MPEG2.WAD (true sentinels).
const (
	mpegFirstBeyond = 15
	mpegInMPEG1     = 30
	mpegInMPEG2     = 3
	mpegSentinels   = 2 // videos 48 and 49: past the run
)

// runVideo is one video stored in MPEG1.WAD or MPEG2.WAD.
type runVideo struct {
	off, n int64 // bytes in that file
}

// runVideos lays out the videos a file of the run holds: MPEG1.WAD keeps its
// first sector (its first word, 7,864,320, is no header size), MPEG2.WAD
// starts with its first video. Each starts on a sector; the last ends 3
// sectors before the file's end.
func runVideos(path string, size int64) []runVideo {
	count, first := mpegInMPEG1, int64(sectorSize)
	if path == "G/MPEG2.WAD" {
		count, first = mpegInMPEG2, 0
	}
	room := sectorsOf(size) - 3 - first/sectorSize
	per := room / int64(count)
	out := make([]runVideo, count)
	for i := range out {
		out[i] = runVideo{off: first + int64(i)*per*sectorSize, n: per*sectorSize - int64(i%3)*100}
	}
	return out
}

// fillBeyond writes MPEG.WAD's entries for the videos behind it, once every
// file is placed: offsets relative to MPEG.WAD's first sector, sizes in bytes,
// and the tree entries that read them from MPEG1.WAD and MPEG2.WAD.
func fillBeyond(files []*genFile) error {
	byPath := map[string]*genFile{}
	for _, f := range files {
		byPath[f.path] = f
	}
	mpeg, m1, m2, misc := byPath["G/MPEG.WAD"], byPath["G/MPEG1.WAD"], byPath["G/MPEG2.WAD"], byPath["G/MISC.WAD"]
	if mpeg == nil || len(mpeg.beyond) == 0 {
		return nil
	}
	if m1 == nil || m2 == nil || misc == nil {
		return fmt.Errorf("mkdisc: MPEG.WAD's videos need MPEG1.WAD, MPEG2.WAD and MISC.WAD behind it")
	}
	type place struct {
		f     *genFile
		video runVideo
	}
	var places []place
	for _, f := range []*genFile{m1, m2} {
		for _, v := range runVideos(f.path, f.content.size) {
			places = append(places, place{f, v})
		}
	}
	if len(places)+2 != len(mpeg.beyond) {
		return fmt.Errorf("mkdisc: %d videos behind MPEG.WAD for %d entries", len(places), len(mpeg.beyond))
	}
	le := binary.LittleEndian
	for k, slot := range mpeg.beyond {
		var sec, n uint32
		if k < len(places) {
			p := places[k]
			rel := p.f.lba - mpeg.lba
			sec, n = uint32(rel+p.video.off/sectorSize), uint32(p.video.n)
			mpeg.entries = append(mpeg.entries, treeEntry{idx: slot, name: mpegSlotNames()[slot], off: rel*sectorSize + p.video.off, n: p.video.n,
				content: p.f.content, contentOff: rel * sectorSize, inFile: p.f.path, asset: assetPSS})
			mpeg.info.Shown++
			mpeg.info.Coverage += sectorsOf(p.video.n)
		} else {
			// into MISC.WAD: past the run of plain files behind MPEG.WAD
			sec, n = uint32(misc.lba-mpeg.lba+5+int64(k)), 0x10000
			mpeg.info.Sentinels++
		}
		le.PutUint32(mpeg.header[8+8*slot:], sec)
		le.PutUint32(mpeg.header[12+8*slot:], n)
	}
	sort.SliceStable(mpeg.entries, func(a, b int) bool { return mpeg.entries[a].idx < mpeg.entries[b].idx })
	return nil
}
