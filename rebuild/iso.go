package rebuild

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"gcfs/discimg"
	"gcfs/fsnode"
)

const sector = discimg.SectorSize

// Where the game looks for them (DISC-FACTS "RC2.HDR"): they never move.
const (
	systemCNFLBA = 1000
	rc2HdrLBA    = 1001
)

// RC2.HDR's level table (DISC-FACTS): 27 rows of three S ranges at 0x4ff8,
// {LBA of the header copy, the file's size in sectors}.
const (
	tocLevelTable = 0x4ff8
	tocRowBytes   = 24
)

// repl replaces the image's bytes from off with r.
type repl struct {
	off int64
	r   *rope
}

// placed is an ISO-level file rebuilt: where it goes and how long it is.
type placed struct {
	n        *fsnode.Node
	e        *discimg.Entry
	ch       *change
	lba      int64
	size     int64
	oldLBA   int64
	oldSize  int64
	isParent bool
}

// placeISO places every rebuilt ISO file and container, rewrites RC2.HDR's
// copies and level table, the directory records and the volume size, and
// fills l's spans.
func placeISO(t *fsnode.Tree, changes map[*fsnode.Node]*change, l *Layout, opt Options) error {
	im := t.Image
	vb := im.Vol.Blocks
	if vb*sector > im.Size {
		return fmt.Errorf("the image is %d bytes, shorter than its volume's %d blocks: it cannot be rebuilt", im.Size, vb)
	}
	beyond := beyondRanges(t)
	var nodes []*fsnode.Node
	for n := range changes {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Path() < nodes[j].Path() })
	cursor := vb
	var repls []repl
	var files []*placed
	for _, n := range nodes {
		ch := changes[n]
		e := n.Entry()
		if e == nil {
			return fmt.Errorf("%s: rebuilt, but no directory record holds it", n.Path())
		}
		if e.Err != nil {
			return &EditError{n.Path(), fmt.Errorf("its directory record is damaged (%v): it cannot be rebuilt", e.Err)}
		}
		size := ch.data.Len()
		if size > math.MaxUint32 {
			return &EditError{n.Path(), fmt.Errorf("rebuilt to %d bytes, more than one ISO extent holds", size)}
		}
		lo, hi := e.Offset(), e.Offset()+e.Size
		for _, b := range beyond {
			if lo < b.hi && b.lo < hi {
				return &EditError{n.Path(), fmt.Errorf("it holds %s (an extent of another container's table): editing it is not supported", b.path)}
			}
		}
		p := &placed{n: n, e: e, ch: ch, lba: e.LBA, size: size, oldLBA: e.LBA, oldSize: e.Size}
		oldSec, newSec := sectorsOf(e.Size), sectorsOf(size)
		if newSec <= oldSec && (newSec > 0 || oldSec == 0) {
			r := &rope{}
			r.append(ch.data)
			r.zeros(oldSec*sector - size)
			repls = append(repls, repl{e.LBA * sector, r})
		} else {
			if e.LBA == systemCNFLBA || e.LBA == rc2HdrLBA {
				return &EditError{n.Path(), fmt.Errorf("it must stay at LBA %d, where the game reads it, and %d bytes do not fit its %d sectors", e.LBA, size, oldSec)}
			}
			p.lba = cursor
			cursor += newSec
			if oldSec > 0 {
				r := &rope{}
				r.zeros(oldSec * sector)
				repls = append(repls, repl{e.LBA * sector, r})
			}
			r := &rope{}
			r.append(ch.data)
			r.zeros(newSec*sector - size)
			repls = append(repls, repl{p.lba * sector, r})
			l.Moved = append(l.Moved, Move{Path: n.Path(), FromLBA: e.LBA, ToLBA: p.lba, Sectors: newSec})
		}
		files = append(files, p)
	}
	if cursor > math.MaxUint32 {
		return fmt.Errorf("%w: %d blocks do not fit the volume size field", ErrTooLarge, cursor)
	}
	total := im.Size
	if cursor > vb {
		total = cursor * sector
	}
	if total > dvdLimit {
		return fmt.Errorf("%w: rebuilt, the image is %d bytes, past a single-layer DVD's %d: make the edits smaller", ErrTooLarge, total, dvdLimit)
	}
	r, err := patchTOC(t, files, l, opt)
	if err != nil {
		return err
	}
	if r != nil {
		repls = append(repls, *r)
	}
	dirs, err := patchDirectories(t, files)
	if err != nil {
		return err
	}
	repls = append(repls, dirs...)
	if cursor != vb {
		pvd, err := patchVolumeSize(im, cursor)
		if err != nil {
			return err
		}
		repls = append(repls, pvd...)
	}
	l.Size = total
	l.Spans, err = compose(repls, total, im.Size)
	return err
}

type imageRange struct {
	lo, hi int64
	path   string
}

// beyondRanges are the image ranges of container extents that lie past their
// container, in the files behind it (MPEG's videos in MPEG1.WAD).
func beyondRanges(t *fsnode.Tree) []imageRange {
	var out []imageRange
	_ = t.Walk(func(n *fsnode.Node) error {
		c := n.Container()
		if c == nil || c.Beyond == 0 {
			return nil
		}
		off, _, _ := n.ImageRange()
		for _, x := range c.Extents {
			if x.Beyond {
				out = append(out, imageRange{off + x.Offset, off + x.Offset + x.Size, n.Path() + "/" + x.Name})
			}
		}
		return nil
	})
	return out
}

// patchTOC writes every rebuilt or moved container's header and LBA into its
// RC2.HDR copy, and a level file's new size in sectors into the level table.
func patchTOC(t *fsnode.Tree, files []*placed, l *Layout, opt Options) (*repl, error) {
	var conts []*placed
	for _, f := range files {
		if f.n.Container() != nil {
			conts = append(conts, f)
		}
	}
	if len(conts) == 0 {
		return nil, nil
	}
	toc, hdrNode := t.TOC()
	if toc == nil || hdrNode == nil {
		opt.Logf("the image has no RC2.HDR table of contents: no header copies to update")
		return nil, nil
	}
	old, err := readAll(hdrNode)
	if err != nil {
		return nil, fmt.Errorf("RC2.HDR: %w", err)
	}
	b := append([]byte(nil), old...)
	dirty := false
	for _, f := range conts {
		hdr := f.ch.header
		if hdr == nil {
			hdr = f.n.Container().Header
		}
		match := func(h *discimg.TOCHeader) bool {
			return h.Err == "" && h.LBA == f.oldLBA && strings.EqualFold(h.File, f.n.Name)
		}
		put := func(h *discimg.TOCHeader) error {
			if len(h.Header) != len(hdr) || h.Offset+int64(len(hdr)) > int64(len(b)) {
				return fmt.Errorf("RC2.HDR: the copy of %s at %#x is %d bytes, its header %d", f.n.Path(), h.Offset, len(h.Header), len(hdr))
			}
			copy(b[h.Offset:], hdr)
			if err := putU32(b, int(h.Offset+4), f.lba, "RC2.HDR copy of "+f.n.Path()+" LBA"); err != nil {
				return err
			}
			dirty = true
			return nil
		}
		found := false
		for i := range toc.Globals {
			if h := &toc.Globals[i]; match(h) {
				if err := put(h); err != nil {
					return nil, err
				}
				found = true
			}
		}
		for n := range toc.Copies {
			for k := range toc.Copies[n] {
				h := &toc.Copies[n][k]
				if !match(h) {
					continue
				}
				if err := put(h); err != nil {
					return nil, err
				}
				found = true
				if n < len(toc.Levels) {
					at := tocLevelTable + n*tocRowBytes + k*8 + 4
					if err := putU32(b, at, sectorsOf(f.size), fmt.Sprintf("RC2.HDR level table row %d", n)); err != nil {
						return nil, err
					}
				}
			}
		}
		if !found {
			opt.Logf("%s: RC2.HDR has no header copy naming its LBA %d: nothing there to update", f.n.Path(), f.oldLBA)
		}
	}
	if !dirty || string(b) == string(old) {
		return nil, nil
	}
	e := hdrNode.Entry()
	if e == nil {
		return nil, fmt.Errorf("RC2.HDR has no directory record")
	}
	l.Rebuilt = append(l.Rebuilt, hdrNode.Path())
	l.changed[hdrNode.Path()] = true
	return &repl{e.Offset(), bytesRope(b)}, nil
}

// maxDirBytes bounds a directory extent read to patch (discimg's own bound).
const maxDirBytes = 16 << 20

// patchDirectories rewrites the directory record of every file whose LBA or
// size changed (both-endian fields), in each directory's own extent.
func patchDirectories(t *fsnode.Tree, files []*placed) ([]repl, error) {
	byDir := map[*discimg.Entry][]*placed{}
	var dirs []*discimg.Entry
	for _, f := range files {
		if f.lba == f.oldLBA && f.size == f.oldSize {
			continue
		}
		if f.n.Parent == nil || f.n.Parent.Entry() == nil {
			return nil, fmt.Errorf("%s: its directory is not known", f.n.Path())
		}
		d := f.n.Parent.Entry()
		if byDir[d] == nil {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], f)
	}
	sort.Slice(dirs, func(i, j int) bool { return dirs[i].LBA < dirs[j].LBA })
	var out []repl
	for _, d := range dirs {
		if d.Size <= 0 || d.Size > maxDirBytes {
			return nil, fmt.Errorf("directory /%s: extent of %d bytes", d.Path, d.Size)
		}
		buf := make([]byte, d.Size) // bounded above
		if err := readFull(t.Image.R, buf, d.Offset()); err != nil {
			return nil, fmt.Errorf("directory /%s: %w", d.Path, err)
		}
		found := map[*placed]bool{}
		for s := int64(0); s < d.Size; s += sector {
			sec := buf[s:min(s+sector, d.Size)]
			for pos := 0; pos < len(sec); {
				n := int(sec[pos])
				if n == 0 {
					break // the rest of the sector is padding
				}
				if n < 34 || pos+n > len(sec) || 33+int(sec[pos+32]) > n {
					return nil, fmt.Errorf("directory /%s: damaged record at image offset %#x", d.Path, d.Offset()+s+int64(pos))
				}
				rec := sec[pos : pos+n]
				pos += n
				if rec[25]&2 != 0 {
					continue
				}
				name := string(rec[33 : 33+int(rec[32])])
				if i := strings.LastIndexByte(name, ';'); i >= 0 {
					name = name[:i]
				}
				name = strings.TrimSuffix(name, ".")
				lba := int64(binary.LittleEndian.Uint32(rec[2:])) + int64(rec[1])
				size := int64(binary.LittleEndian.Uint32(rec[10:]))
				for _, f := range byDir[d] {
					if found[f] || name != f.e.Name || lba != f.oldLBA || size != f.oldSize {
						continue
					}
					if rec[1] != 0 || rec[25]&0x80 != 0 {
						return nil, &EditError{f.n.Path(), fmt.Errorf("its directory record has an extended attribute record or several extents: it cannot be moved")}
					}
					binary.LittleEndian.PutUint32(rec[2:], uint32(f.lba))
					binary.BigEndian.PutUint32(rec[6:], uint32(f.lba))
					binary.LittleEndian.PutUint32(rec[10:], uint32(f.size))
					binary.BigEndian.PutUint32(rec[14:], uint32(f.size))
					found[f] = true
				}
			}
		}
		for _, f := range byDir[d] {
			if !found[f] {
				return nil, fmt.Errorf("%s: its directory record was not found in /%s", f.n.Path(), d.Path)
			}
		}
		out = append(out, repl{d.Offset(), bytesRope(buf)})
	}
	return out, nil
}

// patchVolumeSize writes the new volume size into the primary volume
// descriptor. A supplementary one (Joliet) has directory records of its own
// that pack does not rewrite: an image with one is refused when files move.
func patchVolumeSize(im *discimg.Image, blocks int64) ([]repl, error) {
	var out []repl
	for i := int64(16); i < 16+64; i++ {
		buf := make([]byte, sector)
		if err := readFull(im.R, buf, i*sector); err != nil {
			return nil, fmt.Errorf("volume descriptor at sector %d: %w", i, err)
		}
		if string(buf[1:6]) != "CD001" || buf[0] == 255 {
			break
		}
		switch buf[0] {
		case 1:
			binary.LittleEndian.PutUint32(buf[80:], uint32(blocks))
			binary.BigEndian.PutUint32(buf[84:], uint32(blocks))
			out = append(out, repl{i * sector, bytesRope(buf)})
		case 2:
			return nil, fmt.Errorf("the image has a supplementary volume descriptor (Joliet) at sector %d, whose directory pack does not rewrite: files cannot move", i)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no primary volume descriptor found to record the new volume size")
	}
	return out, nil
}

// compose turns replacements into spans tiling [0, total): the original
// image between them (zeros past its end).
func compose(repls []repl, total, imgSize int64) ([]Span, error) {
	sort.Slice(repls, func(i, j int) bool { return repls[i].off < repls[j].off })
	var out []Span
	identity := func(a, b int64) {
		if a < min(b, imgSize) {
			out = append(out, Span{Off: a, Len: min(b, imgSize) - a, Src: a})
		}
		if c := max(a, imgSize); c < b {
			out = append(out, Span{Off: c, Len: b - c, Zero: true})
		}
	}
	var pos int64
	for _, r := range repls {
		if r.off < pos {
			return nil, fmt.Errorf("rebuild: replacements overlap at image offset %#x (a bug)", r.off)
		}
		identity(pos, r.off)
		at := r.off
		for _, p := range r.r.ps {
			s := Span{Off: at, Len: p.n, Src: p.src, Data: p.data, Zero: p.zero}
			out = append(out, s)
			at += p.n
		}
		pos = at
	}
	if pos > total {
		return nil, fmt.Errorf("rebuild: replacements run to %#x, past the image's %#x (a bug)", pos, total)
	}
	identity(pos, total)
	return out, nil
}
