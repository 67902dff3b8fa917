package fsnode

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"gcfs/codec"
	"gcfs/discimg"
)

// Parts of a file (SPEC "The tree, second edition"): one mechanism at every
// depth. A file whose content is a list of parts (discimg.PartLayout) gets a
// sibling NAME.d/ of its parts; a part of raw bytes is a range of the image,
// a part of decoded content is a range of the decoded file (Nested), read
// through its index and cache; a part that begins with a WAD stream is
// decoded (with PART.wad beside it), and a part that is itself a list gets
// its own PART.d/.

// readTOC reads RC2.HDR as a table of contents, when the image has one.
func (b *builder) readTOC() {
	hdr := b.t.Root.Child("RC2.HDR")
	if hdr == nil || hdr.Kind != Raw || hdr.staticErr != nil {
		// A damaged RC2.HDR is reported where it is read (its own error);
		// every container's toc attribute says there is no table.
		return
	}
	b.toc = discimg.ReadTOC(b.rawReader(hdr), hdr.size)
	b.t.toc, b.t.tocNode = b.toc, hdr
	if b.toc.Problem != "" {
		b.t.logf("RC2.HDR: %s", b.toc.Problem)
	}
}

// rawReader reads an image-backed node's bytes.
func (b *builder) rawReader(n *Node) *imageRange {
	return &imageRange{r: b.t.Image.R, imgSize: b.t.Image.Size, base: n.off, size: n.size, path: n.path}
}

// detectNested probes the leaves that lie inside decoded content for a WAD
// stream, through the decoded file (a stream inside a stream).
func (b *builder) detectNested(leaves []*Node) {
	for _, l := range leaves {
		if l.Kind != Nested || l.size < codec.HeaderSize {
			continue
		}
		r, err := l.openForModel()
		if err != nil {
			continue
		}
		var prefix [codec.HeaderSize]byte
		if _, err := r.ReadAt(prefix[:], 0); err != nil && !errors.Is(err, io.EOF) {
			// Not known whether it is a stream: an error, not a part
			// served as the stream's compressed bytes.
			if l.staticErr == nil {
				l.staticErr = &ProbeError{Offset: l.woff, Within: l.within.logPath(), Len: len(prefix), Err: err}
			}
			continue
		}
		if !codec.IsStream(prefix[:], l.size) {
			continue
		}
		h, err := codec.ParseHeader(prefix[:])
		if err != nil {
			continue
		}
		raw := &Node{Name: l.Name + ".wad", Kind: Nested, Parent: l.Parent, tree: b.t, within: l.within, woff: l.woff, size: l.size, wadOf: l}
		l.becomeDecoded(h)
		l.Parent.Children = append(l.Parent.Children, raw)
	}
}

// expand reads the part table of l's content and makes l's NAME.d/.
func (b *builder) expand(l *Node, depth int) {
	var r io.ReaderAt
	var size int64
	switch l.Kind {
	case Raw:
		if l.staticErr != nil {
			l.rareOf().partsErr = l.staticErr
			return
		}
		r, size = b.rawReader(l), l.size
	case Decoded, Nested:
		var rd Reader
		var err error
		if l.brokenStream() {
			// The table and the parts wholly before the break read from
			// the clean prefix (cleanprefix.go); a part that reaches past
			// it is left out, as one past the file's end.
			rd, err = l.openForModelBefore(l.Size())
		} else if err = l.Err(); err == nil {
			rd, err = l.openForModel()
		}
		if err != nil {
			l.rareOf().partsErr = err
			return
		}
		r, size = rd, l.Size()
	default:
		return
	}
	parts, err := discimg.ReadParts(l.layout, r, size)
	if err == nil && len(parts.Parts) == 0 {
		// A table that places nothing inside its file is no such table: no
		// NAME.d/ (info says why), rather than an empty directory.
		err = fmt.Errorf("no part of the %s table lies inside its %d bytes (%d slots left out)", l.layout, size, len(parts.Skipped))
	}
	if err != nil {
		l.rareOf().partsErr = err
		if !AlreadyLogged(err) {
			b.t.logf("%s: no %s.d/: %v", l.logPath(), l.Name, err)
		}
		return
	}
	d := &Node{Name: l.Name + ".d", Kind: Dir, Parent: l.Parent, tree: b.t, parts: parts, partsOf: l}
	l.Parent.Children = append(l.Parent.Children, d)
	for i := range parts.Parts {
		p := &parts.Parts[i]
		if b.parts >= maxPartNodes {
			if !b.partsCapped {
				b.t.logf("%s: more than %d parts in the tree: the rest are left out", l.logPath(), maxPartNodes)
				b.partsCapped = true
			}
			return
		}
		b.parts++
		c := &Node{Name: p.Name, Parent: d, tree: b.t, size: p.Size, layout: p.Layout, expected: p.Expected, hasExpected: p.Expected >= 0}
		switch l.Kind {
		case Raw:
			c.Kind, c.hasRange, c.off = Raw, true, l.off+p.Offset
			c.staticErr = b.rangeErr(c, nil)
		case Decoded:
			c.Kind, c.within, c.woff = Nested, l, p.Offset
		case Nested:
			c.Kind, c.within, c.woff = Nested, l.within, l.woff+p.Offset
		}
		d.Children = append(d.Children, c)
		b.leaves = append(b.leaves, c)
	}
}

// logPath names a node before paths are set (during the build).
func (n *Node) logPath() string {
	if n.path != "" {
		return n.path
	}
	var parts []string
	for m := n; m != nil && m.Parent != nil; m = m.Parent {
		parts = append(parts, m.Name)
	}
	for i, j := 0, len(parts)-1; i < j; i, j = i+1, j-1 {
		parts[i], parts[j] = parts[j], parts[i]
	}
	return strings.Join(parts, "/")
}

// Parts is the part table a NAME.d/ directory shows, and the file it is of;
// nil for other nodes.
func (n *Node) Parts() (*discimg.Parts, *Node) { return n.parts, n.partsOf }

// PartsError says why a file whose content should hold parts has no NAME.d/.
func (n *Node) PartsError() error {
	if n.rare == nil {
		return nil
	}
	return n.rare.partsErr
}

// Within is the decoded file whose content holds a nested node's bytes, and
// their offset in it (nil for nodes the image holds).
func (n *Node) Within() (*Node, int64) { return n.within, n.woff }

// Warning is what is wrong with a file that still reads (a decoded size
// other than the one another table records), or nil.
func (n *Node) Warning() error {
	if n.Kind == Decoded {
		n.scan()
	}
	return n.warn
}

// TOC is RC2.HDR read as a table of contents and its node (nil when the image
// has none).
func (t *Tree) TOC() (*discimg.TOC, *Node) { return t.toc, t.tocNode }

// TOCStatus is what RC2.HDR says of a container directory: "matches" or
// where it differs ("" for other nodes).
func (n *Node) TOCStatus() string {
	if n.rare == nil {
		return ""
	}
	return n.rare.toc
}

func expectedErr(got, want int64) error {
	return fmt.Errorf("decodes to %d bytes, core_index+0x8c records %d", got, want)
}
