package fsnode

import (
	"bytes"
	"testing"

	"gcfs/cache"
	"gcfs/codec"
)

// TestCursorsFollowInOrderReads: a decoded file's blocks read in order
// leave the tree a cursor at the next block, which the next block's decode
// takes; the bytes are the file's; the set keeps one cursor per file and at
// most cursorMax.
func TestCursorsFollowInOrderReads(t *testing.T) {
	defer func(v int64) { wholeMax = v }(wholeMax)
	wholeMax = 0 // block by block: no whole-stream decode of the first read
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20})
	n := mustLookup(t, tree, "G/MISC.WAD/frontend")
	dr := openDecodedReader(t, n)
	nb := dr.ix.NumBlocks()
	if nb < 3 {
		t.Fatalf("the sample decodes to %d blocks; the test wants 3 or more", nb)
	}
	var got []byte
	for i := range nb {
		b, err := dr.block(i)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b...)
		dr.release(b)
		// The block's own cache entry goes, so that the next decode has
		// no predecessor to copy a window from: only the cursor.
		tree.Cache.Drop(cache.Key{File: dr.key, Block: i})
		if i+1 < nb {
			if c := tree.cursors.take(dr.key, i+1); c == nil {
				t.Fatalf("after block %d no cursor at block %d", i, i+1)
			} else {
				tree.cursors.put(dr.key, c)
			}
		}
	}
	if !bytes.Equal(got, d.Sample) {
		t.Fatal("blocks read through cursors: bytes differ")
	}
	if len(tree.cursors.ents) != 0 {
		t.Errorf("%d cursors kept after the last block, want 0", len(tree.cursors.ents))
	}

	// One per file, at most cursorMax.
	var s cursorSet
	for k := range cursorMax + 3 {
		_, cur := cursorAt(t, dr, 1)
		s.put(uint64(k%(cursorMax+1)), cur)
	}
	if len(s.ents) != cursorMax {
		t.Errorf("%d cursors kept, want %d", len(s.ents), cursorMax)
	}
	seen := map[uint64]bool{}
	for _, e := range s.ents {
		if seen[e.key] {
			t.Errorf("two cursors for file %d", e.key)
		}
		seen[e.key] = true
	}
	if s.take(uint64(cursorMax), 2) != nil {
		t.Error("took a cursor at block 1 for block 2")
	}
}

// cursorAt decodes block i-1 of dr's file afresh and returns the cursor
// left at block i.
func cursorAt(t *testing.T, dr *decodedReader, i int) ([]byte, *codec.Cursor) {
	t.Helper()
	b, cur, err := dr.ix.DecodeNextTo(dr.src, nil, i-1, nil, nil)
	if err != nil || cur == nil {
		t.Fatalf("block %d: cursor %v, %v", i-1, cur != nil, err)
	}
	return b, cur
}
