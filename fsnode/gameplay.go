package fsnode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"gcfs/discimg"
	"gcfs/discimg/gameplay"
)

// ViewJSON is gameplay.json's user.gcfs.view.
const ViewJSON = "json"

// Gameplay decoded (SPEC "The tree, third edition"): beside a level's
// decoded gameplay, gameplay.d/ holds its blocks as files named as
// LEVEL-CORE §3.1 names them, each a range of the decoded stream from its
// offset to the next greater block offset (or the stream's end), read
// through the stream's index and cache like any part of decoded content.
// Only the stream's 39-offset header is read at build (its first decoded
// block); the blocks themselves are decoded by package gameplay when
// gameplay.json is made.

// gameplays adds gameplay.d/ beside every level's decoded gameplay.
func (b *builder) gameplays() {
	found := nodesWhere(b.t.Root, isLevelGameplay)
	for _, n := range found {
		b.gameplayBlocks(n)
	}
}

// isLevelGameplay: n is the decoded gameplay lump of a LEVEL container.
func isLevelGameplay(n *Node) bool {
	return n.Kind == Decoded && n.Name == "gameplay" && n.Parent != nil && n.Parent.Container() != nil && n.Parent.Container().Family == "LEVEL"
}

func (b *builder) gameplayBlocks(n *Node) {
	where := n.logPath()
	if n.Err() != nil {
		return // the stream's own error says why, where the file is read
	}
	if childNamed(n.Parent, "gameplay.json") == nil {
		var logOnce sync.Once
		b.addLazyView(n, "gameplay.json", ViewJSON, func(ec *encodeCtx) (encodedView, error) { return n.gameplayJSON(&logOnce, ec) })
	}
	if childNamed(n.Parent, "gameplay.d") != nil {
		return
	}
	r, err := n.openForModel()
	if err != nil {
		b.t.logf("%s: no gameplay.d/: %v", where, err)
		return
	}
	size := r.Size()
	var hdr [gameplay.HeaderSize]byte
	if size >= gameplay.HeaderSize {
		if got, err := r.ReadAt(hdr[:], 0); got < len(hdr) {
			if err == nil || errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			b.t.logf("%s: no gameplay.d/: reading the header: %v", where, err)
			return
		}
	}
	_, blocks, probs, err := gameplay.HeaderBlocks(hdr[:], size)
	if err != nil {
		b.t.logf("%s: no gameplay.d/: %v", where, err)
		return
	}
	for _, p := range probs {
		b.t.logf("%s: gameplay: left out: %s", where, p)
	}
	if len(blocks) == 0 {
		b.t.logf("%s: no gameplay.d/: no block offset lies in the stream", where)
		return
	}
	// a part table like any NAME.d/ (info shows it; the rebuild knows the
	// blocks are gameplay's bytes)
	parts := &discimg.Parts{Layout: discimg.PartsGameplay, HeaderSize: gameplay.HeaderSize}
	for _, bl := range blocks {
		parts.Parts = append(parts.Parts, discimg.Part{Index: bl.Slot, Name: bl.Name, Offset: bl.Offset, Size: bl.Size, Expected: -1})
	}
	for _, p := range probs {
		parts.Skipped = append(parts.Skipped, discimg.Skip{Index: int(p.Offset / 4), Name: p.Block, Reason: p.Reason})
	}
	d := &Node{Name: "gameplay.d", Kind: Dir, Parent: n.Parent, tree: b.t, parts: parts, partsOf: n}
	for _, bl := range blocks {
		if b.parts >= maxPartNodes { // the tree's bound on part nodes, as expand keeps it
			if !b.partsCapped {
				b.t.logf("%s: more than %d parts in the tree: the rest are left out", where, maxPartNodes)
				b.partsCapped = true
			}
			break
		}
		b.parts++
		d.Children = append(d.Children, &Node{Name: bl.Name, Kind: Nested, Parent: d, tree: b.t, within: n, woff: bl.Offset, size: bl.Size})
	}
	n.Parent.Children = append(n.Parent.Children, d)
}

// gameplayJSON encodes gameplay.json: the whole decoded stream read by
// package gameplay, its document written in key order. Every block, record
// or field left undecoded is logged once (the first encode), one line each.
func (n *Node) gameplayJSON(logOnce *sync.Once, ec *encodeCtx) (encodedView, error) {
	sizeOnly := ec.sizeOnly
	b, done, err := ec.source(n)
	if err != nil {
		return encodedView{}, fmt.Errorf("reading the gameplay: %w", err)
	}
	defer done() // (the document holds b: written out before this returns)
	g, err := gameplay.Read(b)
	if err != nil {
		return encodedView{}, err
	}
	logOnce.Do(func() {
		for _, p := range g.Problems {
			if !p.InHeader { // logged at build
				n.tree.logf("%s: gameplay: undecoded: %s", n.path, p)
			}
		}
	})
	var e encodedView
	if sizeOnly {
		e.size = gameplay.JSONSize(g.Doc)
	} else {
		var out bytes.Buffer
		if err := gameplay.WriteJSON(&out, g.Doc); err != nil {
			return encodedView{}, err
		}
		e.data = out.Bytes()
	}
	e.attrs = []Attr{
		{Name: "undecoded", Value: strconv.Itoa(len(g.Problems))},
		{Name: "moby_instances", Value: strconv.Itoa(len(g.Mobies))},
		{Name: "tie_instances", Value: strconv.Itoa(len(g.Ties))},
		{Name: "shrub_instances", Value: strconv.Itoa(len(g.Shrubs))},
	}
	return e, nil
}
