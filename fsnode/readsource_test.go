package fsnode

import (
	"bytes"
	"io"
	"testing"

	"gcfs/cache"
)

// TestReadSourceDecodes: an encode's read of a decoded source none of whose
// blocks is cached decodes it for itself (decodeSource), whether the size
// step has run or not (it then is that step), and keeps a copy of its
// blocks in the cache's cold segment: the next encode's read copies them.
// A reader's read of the file takes them from there into the main LRU.
func TestReadSourceDecodes(t *testing.T) {
	const size = 1 << 20
	_, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	_, ref, rn := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	want := readAll(t, rn)
	read := func(step string, decodes int64) {
		t.Helper()
		b, done, err := readSource(n)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: %d bytes, not the stream's %d", step, len(b), len(want))
		}
		done()
		if got := tree.sourceDecodes.Load(); got != decodes {
			t.Errorf("%s: %d sources decoded for the encode, want %d", step, got, decodes)
		}
	}
	cold := func(step string, want int64) {
		t.Helper()
		if st := tree.Cache.Stats(); st.ColdBytes != want || st.Bytes != size || st.Misses != 0 {
			t.Errorf("%s: %d bytes cached, %d cold (want %d of %d), %d misses", step, st.Bytes, st.ColdBytes, want, size, st.Misses)
		}
	}
	if ref.sourceDecodes.Load() != 0 {
		t.Fatal("readAll decoded a source for an encode")
	}
	read("unsized", 1)
	cold("unsized", size)
	if n.Size() != size || tree.scanned.Load() != 0 {
		t.Errorf("unsized: size %d, %d scans", n.Size(), tree.scanned.Load())
	}
	read("again", 1)
	cold("again", size)
	ix, err := n.index()
	if err != nil {
		t.Fatal(err)
	}
	for j := range ix.NumBlocks() {
		tree.Cache.Drop(cache.Key{File: n.cacheKey(n.Ino, ix), Block: j})
	}
	read("sized", 2)
	cold("sized", size)
	readAll(t, n)
	cold("read", 0)
	read("cached", 2)
	cold("cached", 0)
}

// TestModelReadsCold: the model's reads of a decoded file (openForModel: a
// view's encode, a listing's sizing) leave its blocks in the cache's cold
// segment, whole decode and block path alike; a reader's read of the file
// then takes them from there (decoding nothing) and keeps them in the main
// LRU.
func TestModelReadsCold(t *testing.T) {
	const size = 1 << 20
	_, tree, n := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	_, _, rn := sampleDisc(t, size, Options{CacheSize: 64 << 20})
	want := readAll(t, rn)
	r, err := n.openForModel()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]byte, size)
	if k, err := r.ReadAt(got, 0); k != size || err != nil && err != io.EOF || !bytes.Equal(got, want) {
		t.Fatalf("the model's read: %d bytes, %v, or other bytes", k, err)
	}
	st := tree.Cache.Stats()
	if st.Bytes != size || st.ColdBytes != size || tree.wholeDecodes.Load() != 1 {
		t.Fatalf("after the model's read: %d bytes cached, %d cold, %d whole decodes; want all %d cold, 1", st.Bytes, st.ColdBytes, tree.wholeDecodes.Load(), size)
	}
	misses := st.Misses
	if !bytes.Equal(readAll(t, n), want) {
		t.Fatal("the reader's read: other bytes")
	}
	if st := tree.Cache.Stats(); st.Misses != misses || st.ColdBytes != 0 || st.Bytes != size {
		t.Fatalf("after the reader's read: %d misses more, %d cold bytes, %d cached", st.Misses-misses, st.ColdBytes, st.Bytes)
	}
}

// TestReadSourcePart: an encode's read of a part of a decoded stream (a
// class's block in core_data) decodes the stream whole for itself once
// (decodeSource: its size step too, not a scan and then a decode), into the
// cold segment, and reads the part from there.
func TestReadSourcePart(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	ref, _ := openDisc(t, path, -1, Options{})
	var part *Node
	_ = tree.Walk(func(n *Node) error {
		if part == nil && n.Kind == Nested && n.within != nil && n.within.Kind == Decoded && n.within.within == nil && n.within.Name == "core_data" {
			part = n
		}
		return nil
	})
	if part == nil {
		t.Fatal("test setup: no part of a core_data")
	}
	want := readAll(t, mustLookup(t, ref, part.Path()))
	scans := tree.scanned.Load()
	b, done, err := readSource(part)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("%s: %d bytes, not the part's %d", part.Path(), len(b), len(want))
	}
	done()
	cd := part.within
	st := tree.Cache.Stats()
	if tree.sourceDecodes.Load() != 1 || tree.wholeDecodes.Load() != 0 || tree.scanned.Load() != scans || st.ColdBytes != cd.Size() || st.Bytes != st.ColdBytes {
		t.Errorf("%d sources decoded for the encode (want 1), %d whole decodes (want 0), %d scans more (want 0), %d bytes cached, %d cold (want %s's %d)",
			tree.sourceDecodes.Load(), tree.wholeDecodes.Load(), tree.scanned.Load()-scans, st.Bytes, st.ColdBytes, cd.Name, cd.Size())
	}
}
