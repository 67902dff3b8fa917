package mkdisc

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"gcfs/discimg/isowriter"
)

// Generate writes the image to path and returns its manifest. Deterministic for
// a given layout and seed.
func Generate(path string, layout Layout, seed int64) (*Result, error) {
	files, opt, err := build(layout, seed)
	if err != nil {
		return nil, err
	}
	out, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	// Writing the image and hashing the tree both only read the contents: do
	// them at once.
	var size int64
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		isoFiles := make([]isowriter.File, len(files))
		for i, f := range files {
			isoFiles[i] = isowriter.File{Path: f.path, LBA: f.lba, Size: f.content.size, Chunks: f.content.chunks}
		}
		size, werr = isowriter.Write(out, isoFiles, opt)
	}()
	res := &Result{Manifest: manifest(files)}
	<-done
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("mkdisc: writing %s: %w", path, werr)
	}
	res.ImageSize = size
	for _, f := range files {
		if f.info != nil {
			res.Containers = append(res.Containers, *f.info)
		}
	}
	sort.Slice(res.Containers, func(i, j int) bool { return res.Containers[i].Path < res.Containers[j].Path })
	return res, nil
}

// WriteTree writes the files of the image, not the image: dir gets every file
// of the inventory (G/*.WAD under dir/G), each with the bytes it has in the
// image, holes left as holes. Mastered by any ISO 9660 tool, the result shows
// the same tree: every file's content is independent of where it is placed,
// except RC2.HDR's copies of the LBAs, and RC2.HDR is a plain file. The
// manifest is the same as Generate's; ImageSize is 0 and the containers' LBA
// is where Generate would put them.
func WriteTree(dir string, layout Layout, seed int64) (*Result, error) {
	files, _, err := build(layout, seed)
	if err != nil {
		return nil, err
	}
	res := &Result{Manifest: manifest(files)}
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := writeSparse(p, f.content); err != nil {
			return nil, err
		}
		if f.info != nil {
			res.Containers = append(res.Containers, *f.info)
		}
	}
	sort.Slice(res.Containers, func(i, j int) bool { return res.Containers[i].Path < res.Containers[j].Path })
	return res, nil
}

func writeSparse(path string, c *sparseFile) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, ch := range c.chunks {
		if _, err := out.WriteAt(ch.Data, ch.Off); err != nil {
			out.Close()
			return err
		}
	}
	if err := out.Truncate(c.size); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// build makes every file of the image, placed, with the volume options.
func build(layout Layout, seed int64) ([]*genFile, isowriter.Options, error) {
	var opt isowriter.Options
	if layout != Retail && layout != Small {
		return nil, opt, fmt.Errorf("mkdisc: unknown layout %q (want retail or small)", layout)
	}
	g := &gen{layout: layout, seed: seed}
	inv, err := parseInventory()
	if err != nil {
		return nil, opt, err
	}
	levels, err := parseLevels()
	if err != nil {
		return nil, opt, err
	}
	levelByFile := map[string]levelRow{}
	for _, r := range levels {
		levelByFile["G/"+r.File] = r
	}
	files := make([]*genFile, len(inv))
	errs := make([]error, len(inv))
	// Biggest jobs first, spread over the cores; every job has its own random
	// source, so the order does not change the output.
	order := make([]int, len(inv))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return jobWeight(inv[order[a]]) > jobWeight(inv[order[b]]) })
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				files[i], errs[i] = g.buildFile(inv[i], levelByFile)
			}
		}()
	}
	for _, i := range order {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, opt, err
		}
	}
	// Placement: retail LBAs, or the same order packed from LBA 1000.
	sort.SliceStable(files, func(a, b int) bool { return files[a].retailLBA < files[b].retailLBA })
	lba := int64(1000)
	for _, f := range files {
		if layout == Retail {
			f.lba = f.retailLBA
		} else {
			f.lba = lba
			lba += max(1, sectorsOf(f.content.size))
		}
		if f.info != nil {
			f.info.Size, f.info.LBA = f.content.size, f.lba
		}
	}
	if err := fillBeyond(files); err != nil {
		return nil, opt, err
	}
	if err := fillRC2HDR(files); err != nil {
		return nil, opt, err
	}
	opt = isowriter.Options{VolumeID: volumeID, SystemID: systemID,
		DirLBAs: map[string]int64{"": rootDirLBA, "G": gDirLBA}}
	if layout == Retail {
		opt.TotalBlocks = retailBlocks
	}
	return files, opt, nil
}

func jobWeight(f invFile) int64 {
	switch {
	case strings.HasPrefix(f.Path, "G/LEVEL"):
		return 1 << 40
	case f.Path == "G/BONUS.WAD", f.Path == "G/HUD.WAD", f.Path == "G/MISC.WAD":
		return 1 << 39
	}
	return f.Size
}

func (g *gen) buildFile(inv invFile, levels map[string]levelRow) (*genFile, error) {
	if row, ok := levels[inv.Path]; ok {
		return g.buildLevel(row, inv)
	}
	switch pf, sf, scene := familyOf(inv.Path); {
	case pf != nil:
		return g.buildPairs(pf, inv)
	case sf != nil:
		return g.buildStartList(sf, inv)
	case scene:
		return g.buildSceneRecords(inv)
	}
	return g.plainFile(inv)
}

// manifest hashes every file of the tree. Ranges named twice (equal starts)
// are hashed once.
func manifest(files []*genFile) []ManifestEntry {
	type job struct {
		f      *sparseFile
		off, n int64
		sum    string
	}
	type key struct {
		f      *sparseFile
		off, n int64
	}
	jobs := map[key]*job{}
	var list []*job
	want := func(f *sparseFile, off, n int64) *job {
		k := key{f, off, n}
		if j, ok := jobs[k]; ok {
			return j
		}
		j := &job{f: f, off: off, n: n}
		jobs[k] = j
		list = append(list, j)
		return j
	}
	type pending struct {
		path string
		size int64
		j    *job
		sum  string
	}
	var out []pending
	// emit lists an entry, its .wad beside a decoded one, and its parts
	// (NAME.d/), at every depth: parts of raw bytes are ranges of the same
	// file, parts of decoded content carry their sums.
	var emit func(path string, e treeEntry, content *sparseFile, base int64)
	emit = func(path string, e treeEntry, content *sparseFile, base int64) {
		if e.content != nil {
			content, base = e.content, -e.contentOff
		}
		stored := path + formatSuffix(e.asset) // VAG, PSS and IRX bytes are named by format
		switch {
		case e.sum != "":
			out = append(out, pending{path: stored, size: e.n, sum: e.sum})
		case e.decoded != nil:
			out = append(out, pending{path: path, size: e.decoded.plainSize, sum: e.decoded.plainSHA})
			out = append(out, pending{path: path + ".wad", size: e.n, j: want(content, base+e.off, e.n)})
		default:
			out = append(out, pending{path: stored, size: e.n, j: want(content, base+e.off, e.n)})
		}
		for _, v := range views(path, e) {
			out = append(out, pending{path: v.Path, size: v.Size, sum: v.SHA1})
		}
		for _, x := range e.beside {
			out = append(out, pending{path: path[:strings.LastIndexByte(path, '/')+1] + x.Path, size: x.Size, sum: x.SHA1})
		}
		for _, x := range e.extra {
			out = append(out, pending{path: path + ".d/" + x.Path, size: x.Size, sum: x.SHA1})
		}
		for _, p := range e.parts {
			if e.decoded != nil || e.sum != "" {
				if p.sum == "" {
					panic("mkdisc: a part of decoded content without its sum: " + path + ".d/" + p.name)
				}
				emit(path+".d/"+p.name, p, nil, 0)
			} else {
				emit(path+".d/"+p.name, p, content, base+e.off)
			}
		}
	}
	for _, f := range files {
		if f.info == nil {
			out = append(out, pending{path: f.path, size: f.content.size, j: want(f.content, 0, f.content.size)})
			continue
		}
		for _, e := range f.entries {
			emit(f.path+"/"+e.name, e, f.content, 0)
		}
	}
	sort.Slice(list, func(a, b int) bool { return list[a].n > list[b].n })
	var wg sync.WaitGroup
	next := make(chan *job)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				j.sum = j.f.hashRange(j.off, j.n)
			}
		}()
	}
	for _, j := range list {
		next <- j
	}
	close(next)
	wg.Wait()
	m := make([]ManifestEntry, len(out))
	for i, p := range out {
		if p.j != nil {
			p.sum = p.j.sum
		}
		m[i] = ManifestEntry{Path: p.path, Size: p.size, SHA1: p.sum}
	}
	SortManifest(m)
	return m
}

// fillRC2HDR writes RC2.HDR: copies of the global containers' headers back to
// back with +4 = the container's LBA, then per level n at 0x5800+n*0x3800 the
// LEVEL header (padded to 0x800), the AUDIO<n> header (padded to 0x1800) and
// the SCENE<n> header (0x137c).
func fillRC2HDR(files []*genFile) error {
	byPath := map[string]*genFile{}
	var hdrFile *genFile
	for _, f := range files {
		byPath[f.path] = f
		if f.path == "RC2.HDR" {
			hdrFile = f
		}
	}
	if hdrFile == nil {
		return fmt.Errorf("mkdisc: no RC2.HDR in the inventory")
	}
	buf := make([]byte, hdrFile.content.size)
	copyHdr := func(at int64, path string) (int64, error) {
		f := byPath[path]
		if f == nil || f.header == nil {
			return 0, fmt.Errorf("mkdisc: RC2.HDR: no container %s", path)
		}
		if at+int64(len(f.header)) > int64(len(buf)) {
			return 0, fmt.Errorf("mkdisc: RC2.HDR: %s's header does not fit at %#x", path, at)
		}
		copy(buf[at:], f.header)
		binary.LittleEndian.PutUint32(buf[at+4:], uint32(f.lba))
		return at + int64(len(f.header)), nil
	}
	at := int64(0)
	var err error
	for _, p := range []string{"MPEG", "MISC", "HUD", "BONUS", "AUDIO", "SPACE", "SCENE", "GADGET", "ARMOR"} {
		if at, err = copyHdr(at, "G/"+p+".WAD"); err != nil {
			return err
		}
	}
	if at != rc2hdrLevelTable {
		return fmt.Errorf("mkdisc: RC2.HDR: global headers end at %#x, not at the level table %#x", at, rc2hdrLevelTable)
	}
	if at > rc2hdrLevelBase {
		return fmt.Errorf("mkdisc: RC2.HDR: global headers run to %#x", at)
	}
	for n := 0; n < numLevels; n++ {
		base := int64(rc2hdrLevelBase + n*rc2hdrLevelStride)
		for k, part := range []struct {
			name string
			off  int64
		}{{"LEVEL", 0}, {"AUDIO", 0x800}, {"SCENE", 0x2000}} {
			path := fmt.Sprintf("G/%s%d.WAD", part.name, n)
			if _, err := copyHdr(base+part.off, path); err != nil {
				return err
			}
			// the level table: per level three {s32 sector, s32 sectors}
			// ranges (level, audio, scene): the absolute LBA of the header
			// copy inside RC2.HDR and the file's size in sectors
			e := rc2hdrLevelTable + int64(n)*24 + int64(k)*8
			binary.LittleEndian.PutUint32(buf[e:], uint32(hdrFile.lba+(base+part.off)/sectorSize))
			binary.LittleEndian.PutUint32(buf[e+4:], uint32(sectorsOf(byPath[path].content.size)))
		}
	}
	hdrFile.content.chunks = nil
	hdrFile.content.put(0, buf)
	return nil
}
