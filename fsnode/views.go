package fsnode

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"gcfs/assets"
	"gcfs/cache"
	"gcfs/discimg"
)

// Views (SPEC "Views: the assets in the formats people open"): files computed
// on read from a node of the tree, beside it, through the tree's block cache.
// A texture (PIF, or raw RGBA behind a {w, h} header where the layout says)
// gets NAME.png; a VAG is named NAME.vag and gets NAME.wav; a GC subtitle
// blob gets NAME.d/<language>.srt. Stored bytes get their format's name too
// (videos NAME.pss, IOP modules NAME.irx) and never change content. Sizes are
// exact at build, from the assets' headers; nothing is encoded until read.
// The asset formats themselves are package assets'; this file only composes.

// View kinds, the value of user.gcfs.view.
const (
	ViewPNG = "png"
	ViewWAV = "wav"
	ViewSRT = "srt"
)

// viewPrefix is how much of a candidate's content is read at build: enough
// for every header a view's size comes from.
const viewPrefix = 0x30

// maxSubtitleBlob bounds the subtitle blobs read whole at build.
const maxSubtitleBlob = 1 << 20

// viewBlock is the size of the view blocks kept in the tree's cache.
const viewBlock = 64 << 10

// viewMeta is what a view node computes from.
type viewMeta struct {
	source *Node
	kind   string
	lang   int // ViewSRT: index into assets.Languages
	rgba   bool
	// pixelOrder (a 4-bit texture's PNG): how its pixel pairs are ordered,
	// user.gcfs.pixel_order.
	pixelOrder string
	once       sync.Once
	rate       assets.Rate // ViewSRT: the frame rate used, once read
	note       string      // ViewSRT: why the default rate is used
	lazy       *lazyView   // a lazily sized view (lazyview.go), or nil
}

// views sniffs every file inside a container and adds its views; with
// NoViews only the stored bytes' names change.
func (b *builder) views() {
	var cands []*Node
	var walk func(d *Node)
	walk = func(d *Node) {
		for _, c := range d.Children {
			switch {
			case c.Kind == Dir:
				walk(c)
			case c.wadOf == nil && (c.extent != nil || c.within != nil || (c.Parent != nil && c.Parent.partsOf != nil)):
				cands = append(cands, c)
			}
		}
	}
	walk(b.t.Root)
	for _, n := range cands {
		b.viewsOf(n)
	}
}

// family is the family of the container a node lies in ("" outside one).
func (n *Node) family() string {
	for m := n.Parent; m != nil; m = m.Parent {
		if c := m.Container(); c != nil {
			return c.Family
		}
	}
	return ""
}

func (b *builder) viewsOf(n *Node) {
	if n.Kind == Decoded && n.family() != "BONUS" {
		// Decoded content is sniffed only where a layout says it holds
		// assets (BONUS image arrays decode to PIF textures): sniffing every
		// stream would decode a block of each at every build.
		return
	}
	if n.Err() != nil {
		return
	}
	fam := n.family()
	parent := n.Parent
	size := n.Size()
	prefix, ok := b.prefixes[n] // the bytes as stored: a decoded file's are its stream's
	if n.Kind != Raw {
		ok = false
	} else if !ok {
		return
	}
	if ok && !maybeAsset(prefix, n, fam) {
		return // nothing there to open the file for
	}
	if !ok {
		r, err := n.openForModel()
		if err != nil {
			return
		}
		var buf [viewPrefix]byte
		want := min(int64(viewPrefix), size)
		got, err := r.ReadAt(buf[:want], 0)
		if int64(got) < want && err != nil && !errors.Is(err, io.EOF) {
			// What it is is not known: an error, not a file without
			// the view its bytes would have given it.
			if n.staticErr == nil {
				pe := &ProbeError{Len: int(want), Err: err}
				if n.Kind == Decoded {
					pe.Within = n.logPath() // its own decoded content, from its start
				} else {
					pe.Within, pe.Offset = n.within.logPath(), n.woff
				}
				n.staticErr = pe
			}
			return
		}
		prefix = buf[:got]
	}
	// Headers come from the prefix (every view's size is in its first
	// viewPrefix bytes), checked against the file's whole size.
	hdr := bytesReader(prefix)
	switch assets.Sniff(prefix) {
	case assets.KindPIF:
		h, err := assets.StatPIF(hdr, size)
		if err != nil {
			n.viewErr = fmt.Errorf("no PNG: %w", err)
			return
		}
		m := &viewMeta{source: n, kind: ViewPNG}
		if h.Format == assets.PIFFormat4 {
			m.pixelOrder = assets.PixelOrder4
		}
		b.addView(n, n.Name+".png", ViewPNG, h.PNGSize(), m)
	case assets.KindVAG:
		h, err := assets.StatVAG(hdr, size)
		base := n.Name
		n.Name += ".vag"
		if err != nil {
			n.viewErr = fmt.Errorf("no WAV: %w", err)
			return
		}
		b.addView(n, base+".wav", ViewWAV, h.WAVSize(), &viewMeta{source: n, kind: ViewWAV})
	case assets.KindPSS:
		if fam == "MPEG" {
			n.Name += ".pss"
		}
	case assets.KindELF:
		if parent != nil && parent.parts != nil && parent.parts.Layout == discimg.PartsIRX {
			n.Name += ".irx"
		}
	default:
		switch placeOf(n, fam) {
		case placeRGBA:
			h, err := assets.StatRGBABlob(hdr, size)
			if err != nil {
				n.viewErr = fmt.Errorf("no PNG: %w", err)
				return
			}
			b.addView(n, n.Name+".png", ViewPNG, assets.PNGSize(assets.Shape{Width: int(h.Width), Height: int(h.Height), Depth: 32}),
				&viewMeta{source: n, kind: ViewPNG, rgba: true})
		case placeSubtitles:
			r, err := n.openForModel()
			if err != nil {
				return
			}
			b.subtitleViews(n, r, size)
		}
	}
}

// Assets without a magic are known by their place in the tree.
type place int

const (
	placeNone      place = iota
	placeRGBA            // raw RGBA behind {w, h}: BONUS credits_images, the irx image
	placeSubtitles       // a GC subtitle blob: MPEG subtitlesNN
)

func placeOf(n *Node, fam string) place {
	p := n.Parent
	switch {
	case fam == "BONUS" && p != nil && p.Name == "credits_images",
		p != nil && p.parts != nil && p.parts.Layout == discimg.PartsIRX && n.Name == "image":
		return placeRGBA
	case fam == "MPEG" && strings.HasPrefix(n.Name, "subtitles") && n.Kind != Decoded:
		return placeSubtitles
	}
	return placeNone
}

// maybeAsset says whether a file whose first bytes are prefix may have a
// view or a format name: a known magic, or a place where assets without one
// lie.
func maybeAsset(prefix []byte, n *Node, fam string) bool {
	return assets.Sniff(prefix) != assets.KindUnknown || placeOf(n, fam) != placeNone
}

func (b *builder) addView(src *Node, name, kind string, size int64, m *viewMeta) *Node {
	if b.t.opt.NoViews {
		return nil
	}
	v := &Node{Name: name, Kind: View, Parent: src.Parent, tree: b.t, size: size, vm: m}
	src.Parent.Children = append(src.Parent.Children, v)
	return v
}

// subtitleViews gives a subtitle blob NAME.d/ of one SRT per language that
// reads (sizes from the records: SRT times are fixed-width, so the size does
// not depend on the frame rate read at open).
func (b *builder) subtitleViews(n *Node, r io.ReaderAt, size int64) {
	if size > maxSubtitleBlob {
		n.viewErr = fmt.Errorf("no SRT: a %d-byte subtitle blob is larger than %d bytes", size, maxSubtitleBlob)
		return
	}
	blob := make([]byte, size) // bounded by maxSubtitleBlob
	if got, err := r.ReadAt(blob, 0); int64(got) != size {
		n.viewErr = fmt.Errorf("no SRT: reading the blob: %v", err)
		return
	}
	s, err := assets.ParseSubtitles(blob)
	if err != nil {
		n.viewErr = fmt.Errorf("no SRT: %w", err)
		return
	}
	if b.t.opt.NoViews {
		return
	}
	d := &Node{Name: n.Name + ".d", Kind: Dir, Parent: n.Parent, tree: b.t, viewDirOf: n}
	var notes []string
	for l, lang := range assets.Languages {
		srt, err := s.SRT(l, assets.DefaultFrameRate)
		if err != nil {
			notes = append(notes, fmt.Sprintf("no %s.srt: %v", lang, err))
			continue
		}
		if len(srt) == 0 {
			continue // no cue in this language: no file
		}
		d.Children = append(d.Children, &Node{Name: lang + ".srt", Kind: View, Parent: d, tree: b.t, size: int64(len(srt)),
			vm: &viewMeta{source: n, kind: ViewSRT, lang: l}})
	}
	if len(notes) > 0 {
		n.viewErr = errors.New(strings.Join(notes, "; "))
	}
	if len(d.Children) > 0 {
		n.Parent.Children = append(n.Parent.Children, d)
	}
}

// ViewError says why a file that looks like an asset has no view (or no
// view for some languages), or nil.
func (n *Node) ViewError() error {
	if why := n.lazyViewErrors(); why != "" {
		if n.viewErr != nil {
			return fmt.Errorf("%v; %s", n.viewErr, why)
		}
		return errors.New(why)
	}
	return n.viewErr
}

// View is a view node's kind ("png", "wav", "srt") and its source; "" and
// nil for other nodes.
func (n *Node) View() (string, *Node) {
	if n.vm == nil {
		return "", nil
	}
	return n.vm.kind, n.vm.source
}

// openView computes a view's bytes: a reader over them in blocks of the
// tree's cache.
func (n *Node) openView() (Reader, error) {
	m := n.vm
	if m.lazy != nil {
		return n.openLazy()
	}
	if n.lc != nil && n.lc.tex != nil {
		return &viewReader{n: n, lazy: n.lc.openLevelTexture, cache: n.tree.Cache}, nil
	}
	src, err := m.source.openForModel()
	if err != nil {
		return nil, err
	}
	var lazy func() (io.ReaderAt, error)
	switch m.kind {
	case ViewPNG:
		lazy = func() (io.ReaderAt, error) {
			var tex *assets.Texture
			var err error
			if m.rgba {
				tex, err = assets.ReadRGBABlob(src, src.Size())
			} else {
				tex, err = assets.ReadPIF(src, src.Size())
			}
			if err != nil {
				return nil, err
			}
			return assets.NewPNGView(tex)
		}
	case ViewWAV:
		lazy = func() (io.ReaderAt, error) { return assets.NewVAGView(src, src.Size()) }
	case ViewSRT:
		lazy = func() (io.ReaderAt, error) {
			blob := make([]byte, src.Size()) // bounded at build by maxSubtitleBlob
			if got, err := src.ReadAt(blob, 0); int64(got) != src.Size() {
				return nil, fmt.Errorf("reading the subtitle blob: %v", err)
			}
			s, err := assets.ParseSubtitles(blob)
			if err != nil {
				return nil, err
			}
			srt, err := s.SRT(m.lang, m.frameRate())
			if err != nil {
				return nil, err
			}
			if int64(len(srt)) != n.size {
				return nil, fmt.Errorf("SRT is %d bytes, %d at build", len(srt), n.size)
			}
			return bytesReader(srt), nil
		}
	default:
		return nil, fmt.Errorf("%s: unknown view %q", n.path, m.kind)
	}
	c := n.tree.Cache
	return &viewReader{n: n, lazy: lazy, cache: c}, nil
}

// frameRate is the rate of the video that goes with a subtitle blob
// (subtitlesNN ↔ videoNN), read from its sequence header once; 29.97 when
// it cannot be read.
func (m *viewMeta) frameRate() assets.Rate {
	m.once.Do(func() {
		m.rate = assets.DefaultFrameRate
		src := m.source
		num := strings.TrimPrefix(src.Name, "subtitles")
		var video *Node
		for _, c := range src.Parent.Children {
			if c.Name == "video"+num || c.Name == "video"+num+".pss" {
				video = c
			}
		}
		if video == nil {
			m.note = "no video" + num + ": 29.97 fps"
			return
		}
		r, err := video.openForModel()
		if err != nil {
			m.note = fmt.Sprintf("%s: %v: 29.97 fps", video.Name, err)
			return
		}
		rate, err := assets.FindFrameRate(r, r.Size())
		if err != nil {
			m.note = fmt.Sprintf("%s: no sequence header frame rate (%v): 29.97 fps", video.Name, err)
			return
		}
		m.rate = rate
	})
	return m.rate
}

// FrameRate is the frame rate an SRT view is timed at and, when it is the
// default, why ("" and a zero rate for other nodes).
func (n *Node) FrameRate() (assets.Rate, string) {
	if n.vm == nil || n.vm.kind != ViewSRT {
		return assets.Rate{}, ""
	}
	r := n.vm.frameRate()
	return r, n.vm.note
}

type bytesReader []byte

func (b bytesReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off > int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// viewReader reads a view in viewBlock blocks through the tree's cache; the
// view itself (a decoded texture, a VAG's checkpoints) is made on the first
// miss and kept for the reader's life.
type viewReader struct {
	n     *Node
	lazy  func() (io.ReaderAt, error)
	cache *cache.Cache
	once  sync.Once
	v     io.ReaderAt
	err   error
}

func (vr *viewReader) Size() int64 { return vr.n.size }

func (vr *viewReader) view() (io.ReaderAt, error) {
	vr.once.Do(func() {
		vr.v, vr.err = vr.lazy()
		if vr.err != nil {
			vr.err = &ViewError{Path: vr.n.path, Err: vr.err}
		}
	})
	return vr.v, vr.err
}

func (vr *viewReader) block(i int) ([]byte, error) {
	load := func() ([]byte, error) {
		v, err := vr.view()
		if err != nil {
			return nil, err
		}
		off := int64(i) * viewBlock
		b := make([]byte, min(viewBlock, vr.n.size-off)) // inside the view's exact size
		got, err := v.ReadAt(b, off)
		if got != len(b) {
			if err == nil || errors.Is(err, io.EOF) {
				err = fmt.Errorf("view has %d bytes at %d, its size says %d", got, off, len(b))
			}
			return nil, &ViewError{Path: vr.n.path, Err: err}
		}
		return b, nil
	}
	if vr.cache == nil || vr.n.Ino == 0 {
		return load()
	}
	return vr.cache.Get(vr.n.viewBlockKey(i), load)
}

// viewBlockKey is the cache key of block i of view n: a view is always cut
// into viewBlock blocks (one layout), so its inode names them.
func (n *Node) viewBlockKey(i int) cache.Key { return cache.Key{File: n.Ino, Block: i} }

func (vr *viewReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", vr.n.path, off)
	}
	done := 0
	for done < len(p) {
		at := off + int64(done)
		if at >= vr.n.size {
			return done, io.EOF
		}
		i := int(at / viewBlock)
		b, err := vr.block(i)
		if err != nil {
			vr.n.logFile(err)
			return done, err
		}
		done += copy(p[done:], b[at-int64(i)*viewBlock:])
	}
	return done, nil
}

// ViewError says why a view cannot be computed.
type ViewError struct {
	Path string
	Err  error
}

func (e *ViewError) Error() string { return fmt.Sprintf("%s: view: %v", e.Path, e.Err) }
func (e *ViewError) Unwrap() error { return e.Err }
