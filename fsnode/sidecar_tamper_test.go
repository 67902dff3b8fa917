package fsnode

import (
	"bytes"
	"encoding/binary"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"gcfs/codec"
)

// rewriteSidecar rewrites the entries of the sidecar file with fn and seals
// it again (a valid checksum): the sidecar a hostile or confused writer
// leaves, which only checking against the image can catch.
func rewriteSidecar(t *testing.T, file string, key [32]byte, fn func(k string, e *sideEntry)) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := parseSidecar(b, key)
	if err != nil {
		t.Fatal(err)
	}
	for k, e := range ents {
		if strings.HasPrefix(k, "v") || e.sky != nil {
			continue // a lazily sized view's or a sky table's entry: lazyview_test.go and levelcore_sky_test.go tamper with those
		}
		fn(k, e)
	}
	if err := os.WriteFile(file, marshalSidecar(key, ents), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := parseSidecar(marshalSidecar(key, ents), key); err != nil {
		t.Fatalf("the rewritten sidecar does not parse: %v", err)
	}
}

// shiftCheckpoint moves the input offset of an index's second checkpoint
// by one byte and the third's back by one (every count, bound and total as
// before, so codec.LoadIndex accepts it; the stream decodes to other
// boundaries); nil when the index has fewer than three blocks.
func shiftCheckpoint(data []byte) []byte {
	off := 1
	uv := func() uint64 { v, n := binary.Uvarint(data[off:]); off += n; return v }
	ncps := uv()
	if ncps < 4 {
		return nil
	}
	type cp struct {
		din, dout uint64
		st        byte
	}
	cps := make([]cp, ncps)
	for i := range cps {
		cps[i].din, cps[i].dout = uv(), uv()
		cps[i].st = data[off]
		off++
	}
	rest := data[off:]
	cps[1].din++
	cps[2].din--
	out := []byte{data[0]}
	out = binary.AppendUvarint(out, ncps)
	for _, c := range cps {
		out = binary.AppendUvarint(out, c.din)
		out = binary.AppendUvarint(out, c.dout)
		out = append(out, c.st)
	}
	return append(out, rest...)
}

// shortSet is the cases of a heavy matrix that run under -short (make
// test's race pass); the full pass runs them all.
type shortSet map[string]bool

// shortCases is the shortSet of names, each of which must be one of cases:
// a renamed case cannot drop out of the race pass unseen.
func shortCases[V any](t *testing.T, cases map[string]V, names ...string) shortSet {
	t.Helper()
	set := shortSet{}
	for _, n := range names {
		if _, ok := cases[n]; !ok {
			t.Fatalf("short case %q is not a case", n)
		}
		set[n] = true
	}
	return set
}

// skip skips case name under -short unless it is in the set.
func (s shortSet) skip(t *testing.T, name string) {
	t.Helper()
	if testing.Short() && !s[name] {
		t.Skip("heavy matrix: under -short only", slices.Sorted(maps.Keys(s)))
	}
}

// TestSidecarRewritten: a sidecar with a valid checksum whose entries lie
// (sizes 4096 too large, sizes of 16, good streams marked corrupt under a
// rule string with ESC and a newline, indexes whose checkpoints disagree
// with the stream) changes nothing: the tree is the
// one built without a sidecar (every node, size and error), every good file
// reads its bytes, what was refused is logged in at most two lines, and
// the save rewrites the sidecar with the true entries.
func TestSidecarRewritten(t *testing.T) {
	path := copyOf(t)
	ref, _ := openDisc(t, path, -1, Options{})
	want := statAll(t, ref)
	wantBytes := map[string][]byte{}
	_ = ref.Walk(func(n *Node) error {
		if (n.Kind == Decoded || n.Kind == Nested || n.Kind == View) && n.Err() == nil {
			wantBytes[n.Path()] = readAll(t, n)
		}
		return nil
	})
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	statAll(t, t1)
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	file, key := t1.IndexFile(), t1.side.key
	good, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	goodEnts, _ := parseSidecar(good, key)

	shift := func(k string, e *sideEntry) {
		if s := shiftCheckpoint(e.index); s != nil {
			e.index = s
		}
	}
	type tamper struct {
		fn  func(k string, e *sideEntry)
		opt Options
		// indexes not decoded through may stay: a whole decode (every
		// core) cuts the stream's output by the index's offsets, which it
		// checks, but does not use its checkpoints' input offsets.
		unusedStay bool
	}
	cases := map[string]tamper{
		// A cache of 256 KiB: no file is decoded whole, every block is
		// decoded through the index.
		"checkpoints":        {fn: shift, opt: Options{CacheSize: 256 << 10}},
		"checkpoints, whole": {fn: shift, unusedStay: true},
		"size+4096": {fn: func(k string, e *sideEntry) {
			if e.sized && !e.corrupt {
				e.size += 4096
			}
		}},
		"size16": {fn: func(k string, e *sideEntry) {
			if e.sized && !e.corrupt {
				e.size = 16
			}
		}},
		"marked corrupt": {fn: func(k string, e *sideEntry) {
			if e.sized && !e.corrupt {
				e.corrupt, e.cOff, e.rule, e.index = true, 0x20, "\x1b[2J\nforged: all well", nil
			}
		}},
	}
	// A tree built, statted and read whole each case: under -short, one
	// case through the index and one of the refusal log.
	short := shortCases(t, cases, "checkpoints", "marked corrupt")
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			short.skip(t, name)
			if err := os.WriteFile(file, good, 0o600); err != nil {
				t.Fatal(err)
			}
			rewriteSidecar(t, file, key, tc.fn)
			t2, _, logs := buildIndexed(t, path, dir, tc.opt)
			got := statAll(t, t2)
			bad := 0
			for p, w := range want {
				if got[p] != w && bad < 10 {
					bad++
					t.Errorf("%s: %q, without a sidecar %q", p, got[p], w)
				}
			}
			if len(got) != len(want) {
				t.Errorf("%d nodes, without a sidecar %d", len(got), len(want))
			}
			bad = 0
			for p, w := range wantBytes {
				n, err := t2.Lookup(p)
				if err != nil {
					continue // (counted above)
				}
				r, err := n.Open()
				var b []byte
				if err == nil {
					b = make([]byte, r.Size())
					var k int
					k, err = r.ReadAt(b, 0)
					b = b[:k]
				}
				if (err != nil && err.Error() != "EOF") || !bytes.Equal(b, w) {
					if bad++; bad <= 10 {
						t.Errorf("%s: reads %d bytes (%v), without a sidecar %d", p, len(b), err, len(w))
					}
				}
			}
			if bad > 10 {
				t.Errorf("and %d more files read wrong", bad-10)
			}
			if err := t2.SaveIndex(); err != nil {
				t.Fatal(err)
			}
			t2.FlushLog()
			var lines []string
			for _, l := range logs.Lines() {
				if strings.Contains(l, "index sidecar") {
					lines = append(lines, l)
				}
				if strings.ContainsAny(l, "\x1b\n") {
					t.Errorf("raw control characters logged: %q", l)
				}
			}
			t.Logf("scans %d; log: %q", t2.scanned.Load(), lines)
			if len(lines) < 1 || len(lines) > 2 {
				t.Errorf("%d log lines about the sidecar, want one or two: %q", len(lines), lines[:min(len(lines), 5)])
			}
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ents, err := parseSidecar(b, key)
			if err != nil {
				t.Fatal(err)
			}
			wrong := 0
			for k, g := range goodEnts {
				e := ents[k]
				if e == nil || e.sized != g.sized || e.size != g.size || e.corrupt != g.corrupt || e.cOff != g.cOff || e.rule != g.rule {
					if wrong++; wrong <= 5 {
						t.Errorf("rewritten sidecar: %s: %+v, want %+v", k, e, g)
					}
					continue
				}
				if g.index != nil && !bytes.Equal(e.index, g.index) && !(tc.unusedStay && bytes.Equal(e.index, shiftCheckpoint(g.index))) {
					if wrong++; wrong <= 5 {
						t.Errorf("rewritten sidecar: %s: index differs", k)
					}
				}
			}
			if wrong > 0 {
				t.Errorf("%d of %d entries not rewritten true", wrong, len(goodEnts))
			}
		})
	}
}

// growLastBlock adds d bytes to the output of an index's last block (its
// size with it), every other field as it was.
func growLastBlock(data []byte, d uint64) []byte {
	off := 1
	uv := func() uint64 { v, n := binary.Uvarint(data[off:]); off += n; return v }
	ncps := uv()
	out := binary.AppendUvarint([]byte{data[0]}, ncps)
	for i := uint64(0); i < ncps; i++ {
		din, dout := uv(), uv()
		if i == ncps-1 {
			dout += d
		}
		out = binary.AppendUvarint(binary.AppendUvarint(out, din), dout)
		out = append(out, data[off])
		off++
	}
	return append(out, data[off:]...)
}

// TestSidecarForgedSizeAndIndex: a size and an index forged to agree with
// each other (and within the stream's bounds) cannot be caught without
// reading the stream, so the stat gives the forged size; but the first
// decode through the index fails its checkpoints, the fresh scan finds
// the stream's size, and the file reads an error, never wrong bytes; the
// save corrects the entry, and the next tree is the one built without a
// sidecar. A size forged past what the stream's length can decode to is
// refused at once.
func TestSidecarForgedSizeAndIndex(t *testing.T) {
	path := copyOf(t)
	ref, _ := openDisc(t, path, -1, Options{})
	want := statAll(t, ref)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	statAll(t, t1)
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	var victim, huge *Node
	_ = t1.Walk(func(n *Node) error {
		if n.Kind == Decoded && n.Err() == nil && n.within == nil && t1.indexes.get(n) != nil {
			if victim == nil {
				victim = n
			} else if huge == nil {
				huge = n
			}
		}
		return nil
	})
	if huge == nil {
		t.Fatal("test setup: no decoded files")
	}
	hugeBy := uint64(codec.MaxDecodedSize(huge.streamLen()) - huge.Size() + 1)
	rewriteSidecar(t, t1.IndexFile(), t1.side.key, func(k string, e *sideEntry) {
		switch k {
		case victim.sideKey():
			e.size += 4096
			e.index = growLastBlock(e.index, 4096)
		case huge.sideKey():
			e.size += int64(hugeBy)
			e.index = growLastBlock(e.index, hugeBy)
		}
	})
	t2, _, _ := buildIndexed(t, path, dir, Options{})
	v2 := mustLookup(t, t2, victim.Path())
	if v2.Size() != victim.Size()+4096 {
		t.Fatalf("test setup: the forged size is not served (%d, true %d)", v2.Size(), victim.Size())
	}
	if h2 := mustLookup(t, t2, huge.Path()); h2.Size() != huge.Size() {
		t.Errorf("%s: size %d past its stream's bound served (true %d)", huge.Path(), h2.Size(), huge.Size())
	}
	if r, err := v2.Open(); err == nil {
		b := make([]byte, r.Size())
		if k, err := r.ReadAt(b, 0); err == nil {
			t.Errorf("%s: read %d bytes of a forged size with no error", v2.Path(), k)
		}
	}
	if err := t2.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	t3, _, _ := buildIndexed(t, path, dir, Options{})
	got := statAll(t, t3)
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: the next tree has %q, without a sidecar %q", p, got[p], w)
		}
	}
	if b := readAll(t, mustLookup(t, t3, victim.Path())); !bytes.Equal(b, readAll(t, victim)) {
		t.Errorf("%s: reads differently in the next tree", victim.Path())
	}
}
