package fsnode

import (
	"bytes"
	"testing"
)

// TestReadSourceDecodes: an encode's read of a decoded source none of whose
// blocks is cached decodes it for itself (decodeSource), whether the size
// step has run or not (it then is that step): the stream's bytes, the
// size known after, nothing left in the cache. Once the file's blocks are
// cached (a reader read it), the source is read through them instead.
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
	if ref.sourceDecodes.Load() != 0 {
		t.Fatal("readAll decoded a source for an encode")
	}
	read("unsized", 1)
	if st := tree.Cache.Stats(); st.Entries != 0 || st.Misses != 0 || n.Size() != size || tree.scanned.Load() != 0 {
		t.Errorf("unsized: %d blocks cached, %d misses, size %d, %d scans", st.Entries, st.Misses, n.Size(), tree.scanned.Load())
	}
	read("sized", 2)
	if st := tree.Cache.Stats(); st.Entries != 0 {
		t.Errorf("sized: %d blocks cached", st.Entries)
	}
	readAll(t, n)
	entries := tree.Cache.Stats().Entries
	if entries == 0 {
		t.Fatal("test setup: reading the file cached none of its blocks")
	}
	read("cached", 2)
	if st := tree.Cache.Stats(); st.Entries != entries {
		t.Errorf("cached: %d blocks cached, %d before", st.Entries, entries)
	}
}
