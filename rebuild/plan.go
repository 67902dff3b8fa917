// Package rebuild computes a disc rebuilt with edits (SPEC "Editing: an
// overlay, and the disc rebuilt"), FUSE-free: given the tree model of the
// original image and new bytes for some of its files, it rebuilds every
// edited node and everything that encloses it (part tables, level headers,
// container tables in the unit and form each was read in, core_index's
// sizes, RC2.HDR's header copies and level table, the ISO directory records
// and volume size) and leaves every other byte as it was. The result is a
// Layout: a list of spans (runs of the original image, new bytes, zeros) that
// both `gcfs pack` (writing them) and a served image (reading them) use.
//
// Placement: a rebuilt file that still fits the sectors it had keeps its
// LBA (the rest of its old sectors zeroed); one that grows moves to the end
// of the volume, in path order, and its old sectors are zeroed. Inside a
// container or a lump, a grown or shrunk part moves everything after it by
// the change, so every table keeps its order. SYSTEM.CNF (LBA 1000) and
// RC2.HDR (LBA 1001) never move.
package rebuild

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"

	"gcfs/assets"
	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/fsnode"
)

// DVDLimit is a single-layer DVD's capacity in bytes: a rebuilt image must
// fit it.
const DVDLimit = 4_700_372_992

// dvdLimit is DVDLimit; a test lowers it.
var dvdLimit int64 = DVDLimit

// Edit is new bytes for one file of the tree, in the form of that node: a
// raw file's bytes, a decoded file's decoded bytes, a NAME.wad's stream.
type Edit struct {
	Path string
	Data []byte
}

// Options tune Plan.
type Options struct {
	// MaxDecoded bounds the decoding of an edited NAME.wad (0: 256 MiB).
	MaxDecoded int64
	// Logf receives notes (a container RC2.HDR does not list).
	Logf func(format string, args ...any)
}

// Move is a file that moved.
type Move struct {
	Path           string
	FromLBA, ToLBA int64
	Sectors        int64
}

// Layout is the rebuilt image.
type Layout struct {
	Size  int64
	Spans []Span // in order, tiling [0, Size)
	// Rebuilt: the tree paths rebuilt, edited nodes first, then what
	// encloses them, outward (RC2.HDR last when it changed).
	Rebuilt []string
	Moved   []Move
	// Unchanged: edits whose bytes equal the disc's (nothing rebuilt).
	Unchanged []string
	// Expect: what each edited node (and each file patched because of one,
	// such as core_index) must read as in the rebuilt tree.
	Expect map[string][]byte
	// edited: the canonical nodes the edits name (a NAME.wad's is NAME);
	// changed: every canonical node whose stored bytes changed.
	edited, changed map[string]bool
}

// Span is a run of the rebuilt image: Data, or zeros when Zero, or else the
// original image's bytes at Src.
type Span struct {
	Off, Len int64
	Src      int64
	Data     []byte
	Zero     bool
}

// EditError is an edit that cannot be rebuilt: Path names it, Err says why.
type EditError struct {
	Path string
	Err  error
}

func (e *EditError) Error() string { return e.Path + ": " + e.Err.Error() }
func (e *EditError) Unwrap() error { return e.Err }

// ErrConflict is wrapped by the error for two edits of one node in two forms
// (X and X.wad, a lump and one of its parts).
var ErrConflict = errors.New("conflicting edits")

// ErrTooLarge is wrapped by the error for an image past DVDLimit.
var ErrTooLarge = errors.New("the rebuilt image does not fit a single-layer DVD")

// change is new stored bytes for a canonical node: a raw file, the stream of
// a decoded file, a container.
type change struct {
	node        *fsnode.Node
	data        *rope
	decodedSize int64    // a decoded file's new decoded size, -1 when not one
	header      []byte   // a container's new table
	expects     []expect // edits whose bytes end up in this node's slot
}

// expect is an edit's bytes; padded: the slot may show zeros after them.
type expect struct {
	path   string
	data   []byte
	padded bool
}

// canon is the node that holds n's stored bytes: NAME for NAME.wad.
func canon(n *fsnode.Node) *fsnode.Node {
	if w := n.WadOf(); w != nil {
		return w
	}
	return n
}

// encloser is the node whose table places n (a canonical node): the file of
// its NAME.d/, its container, or nil for an ISO file or container.
func encloser(n *fsnode.Node) (*fsnode.Node, error) {
	p := n.Parent
	if p == nil {
		return nil, fmt.Errorf("the root is no file")
	}
	if parts, of := p.Parts(); parts != nil {
		return of, nil
	}
	if n.Extent() != nil {
		for m := p; m != nil; m = m.Parent {
			if m.Container() != nil {
				return m, nil
			}
		}
	}
	if n.Entry() != nil {
		return nil, nil
	}
	return nil, fmt.Errorf("no table places it")
}

func depth(n *fsnode.Node) int {
	d := 0
	for m := n; m != nil; d++ {
		e, err := encloser(m)
		if err != nil {
			break
		}
		m = e
	}
	return d
}

// readAll reads a file of the tree whole.
func readAll(n *fsnode.Node) ([]byte, error) {
	if err := n.Err(); err != nil {
		return nil, err
	}
	r, err := n.Open()
	if err != nil {
		return nil, err
	}
	b := make([]byte, r.Size())
	if err := readFull(r, b, 0); err != nil && len(b) > 0 {
		return nil, err
	}
	return b, nil
}

// Plan computes the rebuilt image of t with edits.
func Plan(t *fsnode.Tree, edits []Edit, opt Options) (*Layout, error) {
	if opt.MaxDecoded <= 0 {
		opt.MaxDecoded = fsnode.DefaultMaxDecoded
	}
	if opt.Logf == nil {
		opt.Logf = func(string, ...any) {}
	}
	l := &Layout{Expect: map[string][]byte{}, edited: map[string]bool{}, changed: map[string]bool{}}
	img := t.Image.R
	changes := map[*fsnode.Node]*change{}
	byNode := map[*fsnode.Node]string{} // canonical node -> the edit's path, for conflicts
	sorted, writtenAs, err := levelTextureEdits(t, edits, l, opt)
	if err != nil {
		return nil, err
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	for _, e := range sorted {
		written := e.Path // as the overlay names it (a view's edit becomes its source's)
		if w, ok := writtenAs[e.Path]; ok {
			written = w
		}
		n, err := t.Lookup(e.Path)
		if err != nil {
			return nil, &EditError{e.Path, errors.New("not a file of the disc's tree")}
		}
		switch n.Kind {
		case fsnode.Dir:
			return nil, &EditError{e.Path, errors.New("is a directory")}
		case fsnode.View:
			if old, err := readAll(n); err == nil && bytes.Equal(old, e.Data) {
				// Written back as shown: nothing to take back (a WAV
				// encoded again would not give the VAG's bytes).
				l.Unchanged = append(l.Unchanged, e.Path)
				continue
			}
			src, data, note, err := fromView(n, e.Data)
			if err != nil {
				return nil, &EditError{e.Path, err}
			}
			if note != "" {
				opt.Logf("%s: %s", e.Path, note)
			}
			// The view's edit is an edit of the file it shows.
			e = Edit{Path: src.Path(), Data: data}
			n = src
		}
		c := canon(n)
		if prev, dup := byNode[c]; dup {
			return nil, fmt.Errorf("%w: %s and %s are one node: keep one of them", ErrConflict, prev, written)
		}
		if c.Path() == "RC2.HDR" {
			return nil, &EditError{e.Path, errors.New("RC2.HDR is rebuilt from the containers by pack: edit the containers instead")}
		}
		old, err := readAll(n)
		if err != nil {
			return nil, &EditError{e.Path, fmt.Errorf("the disc's file cannot be read: %w", err)}
		}
		if bytes.Equal(old, e.Data) {
			l.Unchanged = append(l.Unchanged, e.Path)
			continue
		}
		ch := &change{node: c, decodedSize: -1}
		switch {
		case n.WadOf() != nil:
			h, err := codec.ParseHeader(e.Data)
			if err != nil {
				return nil, &EditError{e.Path, fmt.Errorf("is no WAD stream: %w (write the decoded %s instead, or a stream)", err, c.Name)}
			}
			if h.Size > int64(len(e.Data)) {
				return nil, &EditError{e.Path, fmt.Errorf("the stream's header says %d bytes, the file has %d", h.Size, len(e.Data))}
			}
			dec, err := codec.Decode(e.Data[:h.Size], codec.Options{MaxOutput: opt.MaxDecoded})
			if err != nil {
				return nil, &EditError{e.Path, fmt.Errorf("does not decode: %w", err)}
			}
			ch.decodedSize = int64(len(dec))
			ch.data = bytesRope(e.Data)
			ch.expects = []expect{{e.Path, e.Data, true}}
		case n.Kind == fsnode.Decoded:
			if int64(len(e.Data)) >= 1<<31 {
				return nil, &EditError{e.Path, fmt.Errorf("%d bytes: a WAD stream holds less than 2 GiB", len(e.Data))}
			}
			s := codec.Encode(e.Data, codec.EncodeOptions{Tag: n.StreamHeader().Tag})
			ch.decodedSize = int64(len(e.Data))
			ch.data = bytesRope(s)
			ch.expects = []expect{{e.Path, e.Data, false}}
		default:
			ch.data = bytesRope(e.Data)
			ch.expects = []expect{{e.Path, e.Data, true}}
		}
		byNode[c] = written
		changes[c] = ch
		l.edited[c.Path()] = true
		l.changed[c.Path()] = true
	}
	// A lump and one of its parts: one node edited in two places.
	for c := range changes {
		for m := c; ; {
			e, err := encloser(m)
			if err != nil {
				return nil, &EditError{byNode[c], err}
			}
			if e == nil {
				break
			}
			if _, both := changes[e]; both {
				return nil, fmt.Errorf("%w: %s and %s (which holds it) are both edited: keep one of them", ErrConflict, byNode[c], byNode[e])
			}
			m = e
		}
	}
	var order []*fsnode.Node
	for c := range changes {
		order = append(order, c)
	}
	sort.Slice(order, func(i, j int) bool { return order[i].Path() < order[j].Path() })
	for _, c := range order {
		l.Rebuilt = append(l.Rebuilt, c.Path())
	}
	// Enclosers, deepest first: each becomes a change of its own encloser.
	for {
		groups := map[*fsnode.Node][]*change{}
		deepest := -1
		var at []*fsnode.Node
		for c, ch := range changes {
			e, _ := encloser(c)
			if e == nil {
				continue
			}
			d := depth(e)
			groups[e] = append(groups[e], ch)
			if d > deepest {
				deepest, at = d, nil
			}
			if d == deepest {
				at = append(at, e)
			}
		}
		if deepest < 0 {
			break
		}
		sort.Slice(at, func(i, j int) bool { return at[i].Path() < at[j].Path() })
		for i, e := range at {
			if i > 0 && at[i-1] == e {
				continue
			}
			ch, err := rebuildEncloser(e, groups[e], img, l)
			if err != nil {
				return nil, err
			}
			for _, k := range groups[e] {
				delete(changes, k.node)
			}
			changes[e] = ch
			l.changed[e.Path()] = true
			l.Rebuilt = append(l.Rebuilt, e.Path())
		}
	}
	if err := placeISO(t, changes, l, opt); err != nil {
		return nil, err
	}
	return l, nil
}

// rebuildEncloser rebuilds file (or container) e from the changes of its
// slots and returns e's own change.
func rebuildEncloser(e *fsnode.Node, kids []*change, img io.ReaderAt, l *Layout) (*change, error) {
	var tb *table
	var orig *rope
	var err error
	index := map[*change]int{}
	var parts *discimg.Parts
	var dir *fsnode.Node
	if c := e.Container(); c != nil {
		if tb, err = containerTable(e.Path(), c); err != nil {
			return nil, err
		}
		off, size, _ := e.ImageRange()
		orig = imageRope(off, size)
		for _, k := range kids {
			x := k.node.Extent()
			if x == nil {
				return nil, fmt.Errorf("%s: no table entry of %s", k.node.Path(), e.Path())
			}
			index[k] = x.Index
		}
	} else {
		if e.Parent != nil {
			dir = e.Parent.Child(e.Name + ".d")
		}
		if dir != nil {
			var of *fsnode.Node
			parts, of = dir.Parts()
			if of != e {
				parts = nil
			}
		}
		if parts == nil {
			return nil, fmt.Errorf("%s: its part table is not known", e.Path())
		}
		if tb, err = partsTable(e.Path(), parts); err != nil {
			return nil, err
		}
		if e.Kind == fsnode.Raw {
			off, size, _ := e.ImageRange()
			orig = imageRope(off, size)
		} else {
			b, err := readAll(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", e.Path(), err)
			}
			orig = bytesRope(b)
		}
		for _, k := range kids {
			rel, ok := partOffset(e, k.node)
			found := false
			for _, p := range parts.Parts {
				if ok && p.Offset == rel && !found {
					index[k], found = p.Index, true
				}
			}
			if !found {
				return nil, fmt.Errorf("%s: no part of %s", k.node.Path(), e.Path())
			}
		}
	}
	edits := map[int]*rope{}
	for _, k := range kids {
		edits[index[k]] = k.data
	}
	var patched *expect
	if parts != nil && parts.Layout == discimg.PartsDataLump {
		if patched, err = coreSizes(e, dir, parts, kids, index, orig, img, edits); err != nil {
			return nil, err
		}
	}
	roomUnit := tb.unit
	if e.Kind == fsnode.Raw && e.Extent() != nil || e.Container() != nil {
		roomUnit = discimg.SectorSize // held in whole sectors
	}
	out, hdr, shown, err := relayout(tb, orig, img, edits, roomUnit)
	if err != nil {
		return nil, err
	}
	for _, k := range kids {
		for _, x := range k.expects {
			want := x.data
			if s := shown[index[k]]; x.padded && s > int64(len(want)) {
				want = append(append([]byte(nil), want...), make([]byte, s-int64(len(want)))...)
			}
			l.Expect[x.path] = want
		}
	}
	if patched != nil {
		l.Expect[patched.path] = patched.data
	}
	ch := &change{node: e, decodedSize: -1}
	if e.Container() != nil {
		ch.header = hdr
	}
	if e.Kind == fsnode.Decoded {
		b, err := out.materialize(img)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Path(), err)
		}
		if int64(len(b)) >= 1<<31 {
			return nil, fmt.Errorf("%s: rebuilt to %d bytes: a WAD stream holds less than 2 GiB", e.Path(), len(b))
		}
		ch.decodedSize = int64(len(b))
		ch.data = bytesRope(codec.Encode(b, codec.EncodeOptions{Tag: e.StreamHeader().Tag}))
	} else {
		ch.data = out
	}
	return ch, nil
}

// fromView takes an edit of a view back to the format of the file it is
// computed from: PNG to the PIF texture or RGBA blob, WAV to the VAG.
func fromView(n *fsnode.Node, b []byte) (*fsnode.Node, []byte, string, error) {
	kind, src := n.View()
	if src == nil {
		return nil, nil, "", errors.New("a view without a source")
	}
	orig, err := readAll(src)
	if err != nil {
		return nil, nil, "", fmt.Errorf("%s cannot be read: %w", src.Path(), err)
	}
	switch kind {
	case fsnode.ViewPNG:
		if assets.IsPIF(orig) {
			out, note, err := assets.PIFFromPNG(orig, b)
			return src, out, note, err
		}
		out, err := assets.RGBABlobFromPNG(orig, b)
		return src, out, "", err
	case fsnode.ViewWAV:
		out, err := assets.VAGFromWAV(orig, b)
		return src, out, "", err
	case fsnode.ViewSRT:
		lang := -1
		for i, l := range assets.Languages {
			if n.Name == l+".srt" {
				lang = i
			}
		}
		rate, _ := n.FrameRate()
		out, err := assets.SubtitlesFromSRT(orig, lang, b, rate)
		return src, out, "", err
	}
	return nil, nil, "", fmt.Errorf("a %s view cannot be taken as an edit yet: edit %s instead", kind, src.Path())
}

// target is the canonical node an edit of n changes: a view's source's, a
// NAME.wad's NAME. A level texture is its own: its edit changes ranges of
// gs_ram or core_data that other textures' edits may change beside it
// (levelTextureEdits; Plan refuses two that change the same bytes apart).
func target(n *fsnode.Node) *fsnode.Node {
	if tex, _, _ := n.LevelTexture(); tex != nil {
		return n
	}
	for i := 0; i < 4 && n.Kind == fsnode.View; i++ {
		_, src := n.View()
		if src == nil {
			break
		}
		n = src
	}
	return canon(n)
}

// Conflict says why edits at tree paths a and b cannot both be taken, or
// "" when they can: they are one node in two forms (X and X.png, X and
// X.wad), or one holds the other (a lump and one of its parts). Plan
// refuses such edits; a mount with an overlay refuses the second.
func Conflict(t *fsnode.Tree, a, b string) string {
	na, err1 := t.Lookup(a)
	nb, err2 := t.Lookup(b)
	if err1 != nil || err2 != nil || na.IsDir() || nb.IsDir() || a == b {
		return ""
	}
	ca, cb := target(na), target(nb)
	if ca == cb {
		return fmt.Sprintf("%s and %s are one node", a, b)
	}
	holds := func(outer, inner *fsnode.Node) bool {
		for m, i := inner, 0; i < 64; i++ {
			e, err := encloser(m)
			if err != nil || e == nil {
				return false
			}
			if e == outer {
				return true
			}
			m = e
		}
		return false
	}
	switch {
	case holds(ca, cb):
		return fmt.Sprintf("%s holds %s", a, b)
	case holds(cb, ca):
		return fmt.Sprintf("%s holds %s", b, a)
	}
	return ""
}

// partOffset is where part n lies in file e's content. Parts are matched by
// offset, not name: a view may rename the stored bytes (NAME.irx, NAME.vag).
func partOffset(e, n *fsnode.Node) (int64, bool) {
	if e.Kind == fsnode.Raw {
		eo, _, ok1 := e.ImageRange()
		no, _, ok2 := n.ImageRange()
		return no - eo, ok1 && ok2
	}
	w, off := n.Within()
	if w == nil {
		return 0, false
	}
	if e.Kind == fsnode.Decoded && w == e {
		return off, true
	}
	if ew, eoff := e.Within(); ew != nil && ew == w {
		return off - eoff, true
	}
	return 0, false
}

// Level data lump (DISC-FACTS "Inside level lumps"): core_index+0x88 is
// core_data's compressed size and +0x8c its decoded size.
const (
	dataCoreIndex       = 1
	dataCoreData        = 9
	coreCompressedField = 0x88
	coreDecodedField    = 0x8c
)

// coreSizes writes an edited core_data's sizes into core_index (edited too,
// or as it is), and returns what core_index must read as.
func coreSizes(e, dir *fsnode.Node, parts *discimg.Parts, kids []*change, index map[*change]int, orig *rope, img io.ReaderAt, edits map[int]*rope) (*expect, error) {
	var core *change
	for _, k := range kids {
		if index[k] == dataCoreData {
			core = k
		}
	}
	if core == nil || core.decodedSize < 0 {
		return nil, nil // no stream: nothing records its sizes
	}
	var ci *discimg.Part
	for i := range parts.Parts {
		if parts.Parts[i].Index == dataCoreIndex {
			ci = &parts.Parts[i]
		}
	}
	if ci == nil || ci.Size < coreDecodedField+4 {
		return nil, fmt.Errorf("%s: core_data is edited but the lump has no core_index to record its sizes", e.Path())
	}
	var b []byte
	if r := edits[dataCoreIndex]; r != nil {
		m, err := r.materialize(img)
		if err != nil {
			return nil, err
		}
		b = append([]byte(nil), m...)
	} else {
		r := &rope{}
		r.sub(orig, ci.Offset, ci.Size)
		m, err := r.materialize(img)
		if err != nil {
			return nil, fmt.Errorf("%s: core_index: %w", e.Path(), err)
		}
		b = append([]byte(nil), m...)
	}
	if len(b) < coreDecodedField+4 {
		return nil, fmt.Errorf("%s: the edited core_index is %d bytes, too short for core_data's sizes at +0x88", e.Path(), len(b))
	}
	what := e.Path() + " core_index"
	if err := putU32(b, coreCompressedField, core.data.Len(), what+" +0x88 (core_data's compressed size)"); err != nil {
		return nil, err
	}
	if err := putU32(b, coreDecodedField, core.decodedSize, what+" +0x8c (core_data's decoded size)"); err != nil {
		return nil, err
	}
	edits[dataCoreIndex] = bytesRope(b)
	path := dir.Path() + "/" + parts.Parts[indexOf(parts, dataCoreIndex)].Name
	return &expect{path: path, data: b}, nil
}

func indexOf(p *discimg.Parts, index int) int {
	for i := range p.Parts {
		if p.Parts[i].Index == index {
			return i
		}
	}
	return -1
}

// pathUnder reports whether p is dir or lies under it.
func pathUnder(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// levelTextureEdits takes the edits of level textures' PNGs (LEVEL-CORE
// §1.5: 8-bit pixels and a palette in ranges of gs_ram or core_data) back
// to those files: each texture's pixels and palette from its PNG
// (assets.Indexed8FromPNG), patched into the file they lie in, the patches
// of every texture edit on one file making one edit of it (writtenAs names
// the texture edits it stands for). A palette other textures share is
// kept (sharesPalette). Two edits that change the same bytes to different
// values (one texture shown in two class slots, edited apart) are refused,
// naming both; to the same values, they agree. The other edits are
// returned as they are.
func levelTextureEdits(t *fsnode.Tree, edits []Edit, l *Layout, opt Options) ([]Edit, map[string]string, error) {
	type patch struct {
		off  int64
		data []byte
		by   string
	}
	patches := map[*fsnode.Node][]patch{}
	var out []Edit
	for _, e := range edits {
		n, err := t.Lookup(e.Path)
		if err != nil || n.Kind != fsnode.View {
			out = append(out, e)
			continue
		}
		tex, pixN, palN := n.LevelTexture()
		if tex == nil {
			out = append(out, e)
			continue
		}
		if old, err := readAll(n); err == nil && bytes.Equal(old, e.Data) {
			l.Unchanged = append(l.Unchanged, e.Path)
			continue
		}
		pix, err := readRange(pixN, tex.Pixels.Offset, tex.Pixels.Size)
		if err != nil {
			return nil, nil, &EditError{e.Path, fmt.Errorf("the texture's pixels cannot be read: %w", err)}
		}
		pal, err := readRange(palN, tex.Palette.Offset, tex.Palette.Size)
		if err != nil {
			return nil, nil, &EditError{e.Path, fmt.Errorf("the texture's palette cannot be read: %w", err)}
		}
		np, npal, note, err := assets.Indexed8FromPNG(tex.Width, tex.Height, pix, pal, e.Data, sharesPalette(n))
		if err != nil {
			return nil, nil, &EditError{e.Path, err}
		}
		if note != "" {
			opt.Logf("%s: %s", e.Path, note)
		}
		patches[pixN] = append(patches[pixN], patch{tex.Pixels.Offset, np, e.Path})
		patches[palN] = append(patches[palN], patch{tex.Palette.Offset, npal, e.Path})
	}
	var files []*fsnode.Node
	for f := range patches {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path() < files[j].Path() })
	writtenAs := map[string]string{}
	for _, f := range files {
		ps := patches[f]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].off < ps[j].off })
		orig, err := readAll(f)
		if err != nil {
			return nil, nil, &EditError{ps[0].by, fmt.Errorf("%s cannot be read: %w", f.Path(), err)}
		}
		b := append([]byte(nil), orig...)
		var by []string
		for i, p := range ps {
			if p.off < 0 || p.off > int64(len(b)) || int64(len(p.data)) > int64(len(b))-p.off {
				return nil, nil, &EditError{p.by, fmt.Errorf("its bytes at %#x lie outside %s's %d", p.off, f.Path(), len(b))}
			}
			for _, q := range ps[:i] {
				lo, hi := max(p.off, q.off), min(p.off+int64(len(p.data)), q.off+int64(len(q.data)))
				if lo < hi && !bytes.Equal(p.data[lo-p.off:hi-p.off], q.data[lo-q.off:hi-q.off]) {
					return nil, nil, fmt.Errorf("%w: %s and %s change the same bytes of %s (at %#x: a palette or pixels they share) apart: keep one of them", ErrConflict, q.by, p.by, f.Path(), lo)
				}
			}
			copy(b[p.off:], p.data)
			if !slices.Contains(by, p.by) {
				by = append(by, p.by)
			}
		}
		if bytes.Equal(b, orig) {
			l.Unchanged = append(l.Unchanged, by...)
			continue
		}
		out = append(out, Edit{Path: f.Path(), Data: b})
		writtenAs[f.Path()] = strings.Join(by, ", ")
	}
	return out, writtenAs, nil
}

// sharesPalette reports whether level texture v's palette is another
// texture's too (one with other pixels, in the same level core): its edit
// then keeps the palette, which a rebuilt one would recolour the others.
func sharesPalette(v *fsnode.Node) bool {
	tex, pixN, palN := v.LevelTexture()
	core := v.Parent
	for core != nil && core.LevelCore() == nil {
		core = core.Parent
	}
	if core == nil {
		return true // (no core above it: assume the worst)
	}
	shared := false
	_ = fsnode.WalkFrom(core, func(n *fsnode.Node) error {
		o, opix, opal := n.LevelTexture()
		if o == nil || shared || opal != palN || (opix == pixN && o.Pixels == tex.Pixels) {
			return nil
		}
		if o.Palette.Offset < tex.Palette.Offset+tex.Palette.Size && tex.Palette.Offset < o.Palette.Offset+o.Palette.Size {
			shared = true
		}
		return nil
	})
	return shared
}

// readRange reads n bytes of node f at off.
func readRange(f *fsnode.Node, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || n > 1<<26 || off > f.Size() || n > f.Size()-off {
		return nil, fmt.Errorf("%d bytes at %#x lie outside %s's %d", n, off, f.Path(), f.Size())
	}
	r, err := f.Open()
	if err != nil {
		return nil, err
	}
	b := make([]byte, n) // bounded above
	if err := readFull(r, b, off); err != nil {
		return nil, err
	}
	return b, nil
}
