package fsnode

import (
	"errors"
	"fmt"
	"slices"

	"gcfs/assets"
	"gcfs/codec"
)

// Derived files of an edit (SPEC "Editing": reads of an edited file, and of
// views computed from it, show the edit at once). A node is computed from
// another: a view from its source (NAME.png from a PIF, NAME.wav from a VAG,
// NAME.d/LANG.srt from a subtitle blob), a decoded file from its NAME.wad.
// With an overlay, the bytes a node is computed from may be an edit's; one
// mechanism serves every kind: the node's current bytes are its edit's, or
// else computed from the current bytes of what it is computed from, or else
// the disc's. Enclosing files (a lump, a container) are not computed from
// their parts here: they show an edit only in the rebuilt image. A lazily
// sized view (gameplay.json, a glb) is derived by its own encode, reading
// each of its inputs (its source, its textures, level.glb's core_data and
// chunks: lazyView.deps) through an encodeCtx that gives an input's edit
// where it has one; a part of an input (a class block inside core_data that
// level.glb slices out itself) is not one of its inputs.

// EditedFunc gives the edited bytes of a node (its overlay copy), ok false
// when it has none.
type EditedFunc func(n *Node) (b []byte, ok bool, err error)

// maxDerived bounds a view computed from an edit's bytes (a WAV of a VAG
// is four times the VAG's size; no view of the disc is near this).
const maxDerived = 1 << 30

// ErrNotDerived is wrapped by Derived's errors for a node whose source's
// edit cannot give it (the edit is not of the source's format).
var ErrNotDerived = errors.New("cannot be computed from the edit")

// Derived is n's current bytes when n is computed from an edited node (ok
// true), or ok false when nothing n is computed from is edited (the disc's
// bytes, n.Open, are current). n's own edit is not looked at: that is the
// caller's (an edit of n is its bytes, whatever n is).
func (n *Node) Derived(edited EditedFunc) ([]byte, bool, error) {
	return n.derived(edited, 0)
}

// current is n's bytes with the edits: its own edit, or derived, or ok
// false for the disc's.
func (n *Node) current(edited EditedFunc, depth int) ([]byte, bool, error) {
	if b, ok, err := edited(n); ok || err != nil {
		return b, ok, err
	}
	return n.derived(edited, depth+1)
}

func (n *Node) derived(edited EditedFunc, depth int) ([]byte, bool, error) {
	if depth > 4 {
		return nil, false, nil // no chain is this long (a view of a decoded file of a .wad is 2)
	}
	if n.vm != nil {
		if n.lc != nil && n.lc.tex != nil {
			// Level textures (the level core) are computed from the core's
			// blocks; their edits follow with the level core's rebuild.
			return nil, false, nil
		}
		if l := n.vm.lazy; l != nil {
			ec := &encodeCtx{edited: edited, depth: depth}
			e, err := l.encode(ec)
			switch {
			case len(ec.readEdited) == 0:
				return nil, false, nil // (an encode that fails on the disc's bytes fails as the view)
			case err != nil:
				return nil, true, fmt.Errorf("%s from the edits it is made of: %w: %w", n.Name, ErrNotDerived, err)
			case int64(len(e.data)) > maxDerived:
				return nil, true, fmt.Errorf("%s from the edits it is made of: %w: %d bytes, more than %d", n.Name, ErrNotDerived, len(e.data), int64(maxDerived))
			}
			return e.data, true, nil
		}
		src, ok, err := n.vm.source.current(edited, depth)
		if !ok || err != nil {
			return nil, ok, err
		}
		b, err := n.viewOf(src)
		if err != nil {
			return nil, true, fmt.Errorf("%s from the edit of %s: %w: %w", n.Name, n.vm.source.path, ErrNotDerived, err)
		}
		return b, true, nil
	}
	if n.Kind == Decoded && n.Parent != nil {
		w := n.Parent.Child(n.Name + ".wad")
		if w == nil || w.wadOf != n {
			return nil, false, nil
		}
		s, ok, err := edited(w)
		if !ok || err != nil {
			return nil, ok, err
		}
		h, err := codec.ParseHeader(s)
		if err != nil {
			return nil, true, fmt.Errorf("%s from the edit of %s: %w: %w", n.Name, w.path, ErrNotDerived, err)
		}
		if h.Size > int64(len(s)) {
			return nil, true, fmt.Errorf("%s from the edit of %s: %w: the stream's header says %d bytes, the file has %d", n.Name, w.path, ErrNotDerived, h.Size, len(s))
		}
		b, err := codec.Decode(s[:h.Size], n.codecOptions())
		if err != nil {
			return nil, true, fmt.Errorf("%s from the edit of %s: %w: %w", n.Name, w.path, ErrNotDerived, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// viewOf computes view n from src, the bytes of its source.
func (n *Node) viewOf(src []byte) ([]byte, error) {
	m := n.vm
	size := int64(len(src))
	switch m.kind {
	case ViewPNG:
		var tex *assets.Texture
		var err error
		if m.rgba {
			tex, err = assets.DecodeRGBABlob(src)
		} else {
			tex, err = assets.DecodePIF(src)
		}
		if err != nil {
			return nil, err
		}
		return assets.EncodePNG(tex), nil
	case ViewWAV:
		v, err := assets.NewVAGView(bytesReader(src), size)
		if err != nil {
			return nil, err
		}
		if v.Size() > maxDerived {
			return nil, fmt.Errorf("a %d-byte WAV is larger than %d bytes", v.Size(), maxDerived)
		}
		out := make([]byte, v.Size()) // bounded above
		if got, err := v.ReadAt(out, 0); int64(got) != v.Size() {
			return nil, fmt.Errorf("WAV has %d of %d bytes: %v", got, v.Size(), err)
		}
		return out, nil
	case ViewSRT:
		if size > maxSubtitleBlob {
			return nil, fmt.Errorf("a %d-byte subtitle blob is larger than %d bytes", size, maxSubtitleBlob)
		}
		s, err := assets.ParseSubtitles(src)
		if err != nil {
			return nil, err
		}
		return s.SRT(m.lang, m.frameRate())
	}
	return nil, fmt.Errorf("unknown view %q", m.kind)
}

// Dependents are the nodes computed from n (its views, the decoded file of
// a NAME.wad, and theirs, outward): what shows an edit of n at once.
func (n *Node) Dependents() []*Node {
	var out []*Node
	seen := map[*Node]bool{}
	var add func(m *Node, depth int)
	add = func(m *Node, depth int) {
		if depth > 4 || m.Parent == nil {
			return
		}
		for _, c := range m.Parent.Children {
			switch {
			case c.vm != nil && c.vm.source == m && !seen[c]:
				seen[c] = true
				out = append(out, c)
				add(c, depth+1)
			case c.viewDirOf == m:
				for _, v := range c.Children {
					if v.vm != nil && v.vm.source == m && !seen[v] {
						seen[v] = true
						out = append(out, v)
					}
				}
			}
		}
		if m.wadOf != nil && !seen[m.wadOf] {
			seen[m.wadOf] = true
			out = append(out, m.wadOf)
			add(m.wadOf, depth+1)
		}
	}
	add(n, 0)
	// The lazily sized views that read n or one of those besides their
	// source (lazyView.deps): in n's top container (G/X.WAD), where every
	// view's inputs lie.
	reads := append([]*Node{n}, out...)
	top := n
	for top.Parent != nil && top.Parent.Parent != nil && top.Parent.Parent.Parent != nil {
		top = top.Parent
	}
	_ = walk(top, func(v *Node) error {
		if v.vm == nil || v.vm.lazy == nil || v.vm.lazy.deps == nil || seen[v] {
			return nil
		}
		for _, d := range v.vm.lazy.deps() {
			if slices.Contains(reads, d) {
				seen[v] = true
				out = append(out, v)
				break
			}
		}
		return nil
	})
	return out
}

// Sources are the nodes n is computed from, nearest first (a view's
// source, a decoded file's NAME.wad, theirs): the edits n shows.
func (n *Node) Sources() []*Node {
	if n.vm != nil && n.vm.lazy != nil && n.vm.lazy.deps != nil {
		// the source and every other input, and what each is computed from
		var out []*Node
		seen := map[*Node]bool{}
		for _, d := range append([]*Node{n.vm.source}, n.vm.lazy.deps()...) {
			for _, m := range append([]*Node{d}, d.Sources()...) {
				if m != nil && !seen[m] {
					seen[m] = true
					out = append(out, m)
				}
			}
		}
		return out
	}
	var out []*Node
	for m, i := n, 0; m != nil && i < 4; i++ {
		var next *Node
		switch {
		case m.vm != nil && (m.lc == nil || m.lc.tex == nil):
			next = m.vm.source
		case m.Kind == Decoded && m.Parent != nil:
			if w := m.Parent.Child(m.Name + ".wad"); w != nil && w.wadOf == m {
				next = w
			}
		}
		if next == nil {
			break
		}
		out = append(out, next)
		m = next
	}
	return out
}
