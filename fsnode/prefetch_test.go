package fsnode

import (
	"runtime"
	"testing"
	"time"
)

// TestStreamSpans: the prefetch ranges of a directory's decoded files
// cover every file's stream, lie inside the image, are sorted and
// disjoint, and stay within the budget.
func TestStreamSpans(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	dir := mustLookup(t, tree, "G/MISC.WAD")
	var decoded []*Node
	for _, c := range dir.Children {
		if c.Kind == Decoded && c.staticErr == nil {
			decoded = append(decoded, c)
		}
	}
	if len(decoded) < 2 {
		t.Fatalf("test disc has %d decoded files in MISC.WAD, want at least 2", len(decoded))
	}
	spans := streamSpans(decoded, prefetchMax)
	var total int64
	for i, s := range spans {
		if s.lo >= s.hi || s.lo < 0 || s.hi > tree.Image.Size {
			t.Errorf("span %d [%d, %d) empty or outside the image (%d bytes)", i, s.lo, s.hi, tree.Image.Size)
		}
		if i > 0 && s.lo <= spans[i-1].hi {
			t.Errorf("span %d [%d, %d) not after span %d [%d, %d)", i, s.lo, s.hi, i-1, spans[i-1].lo, spans[i-1].hi)
		}
		total += s.hi - s.lo
	}
	if total > prefetchMax {
		t.Errorf("spans total %d bytes, budget %d", total, prefetchMax)
	}
	for _, c := range decoded {
		sr := c.streamRange()
		lo, hi := sr.base, min(sr.base+sr.size, sr.imgSize)
		covered := false
		for _, s := range spans {
			if s.lo <= lo && hi <= s.hi {
				covered = true
			}
		}
		if !covered {
			t.Errorf("%s: stream [%d, %d) not covered by %v", c.path, lo, hi, spans)
		}
	}
	// No files, nothing; a smaller budget, fewer bytes.
	if s := streamSpans(nil, prefetchMax); s != nil {
		t.Errorf("no files: spans %v, want none", s)
	}
	var small int64
	for _, s := range streamSpans(decoded, 1000) {
		small += s.hi - s.lo
	}
	if small == 0 || small > 1000 {
		t.Errorf("a budget of 1000 bytes: spans of %d bytes", small)
	}
	// Prefetching is advice only: reading afterwards gives the same bytes.
	decoded[0].prefetchSiblings()
	for _, c := range decoded {
		want, ok := d.Files[c.path]
		if !ok {
			continue // a corrupt stream
		}
		if got := readAll(t, c); string(got) != string(want) {
			t.Errorf("%s: %d bytes after prefetch, want %d", c.path, len(got), len(want))
		}
	}
}

// TestScanSiblings: the first size asked in a directory sizes the other
// decoded files there in the background (each scanned once: the
// foreground and the background share every file's one scan), and the
// sizes agree with a tree that sized each file itself.
func TestScanSiblings(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	if tree.scanSem == nil { // one core: give the test a spare one
		tree.scanSem = make(chan struct{}, 1)
	}
	dir := mustLookup(t, tree, "G/MISC.WAD")
	var decoded []*Node
	for _, c := range dir.Children {
		if c.Kind == Decoded && c.staticErr == nil {
			decoded = append(decoded, c)
		}
	}
	if len(decoded) < 3 {
		t.Fatalf("test setup: %d decoded files in MISC.WAD", len(decoded))
	}
	before := tree.scanned.Load()
	decoded[0].Size()
	// The background holds a slot of scanSem while it runs.
	deadline := time.Now().Add(time.Minute)
	for {
		tree.scanSem <- struct{}{}
		if tree.scanned.Load()-before >= int64(len(decoded)) {
			break
		}
		<-tree.scanSem
		if time.Now().After(deadline) {
			t.Fatalf("after a minute, %d of %d decoded files scanned", tree.scanned.Load()-before, len(decoded))
		}
		runtime.Gosched()
	}
	<-tree.scanSem
	if got := tree.scanned.Load() - before; got != int64(len(decoded)) {
		t.Errorf("%d scans for %d decoded files", got, len(decoded))
	}
	ref, _ := openDisc(t, d.Path, -1, Options{})
	for _, c := range decoded {
		if c.Size() != mustLookup(t, ref, c.Path()).Size() {
			t.Errorf("%s: background size %d differs", c.Path(), c.Size())
		}
	}
	if got := tree.scanned.Load() - before; got != int64(len(decoded)) {
		t.Errorf("sizes asked after the background scan: %d scans for %d files", got, len(decoded))
	}
}
