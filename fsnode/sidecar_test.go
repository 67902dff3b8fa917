package fsnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/fsnode/testdisc"
)

// buildIndexed builds the tree of the image at path with the sidecar in dir,
// counting the image bytes read by the build and what follows it.
func buildIndexed(t testing.TB, path, dir string, opt Options) (*Tree, *countingImage, *testdisc.Log) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	img, err := discimg.Open(f, fi.Size())
	if err != nil {
		t.Fatal(err)
	}
	ci := &countingImage{r: img.R}
	img.R = ci
	l := &testdisc.Log{}
	opt.Logf = l.Logf
	opt.IndexCacheDir, opt.ImageFile = dir, fi
	tree, err := Build(img, opt)
	if err != nil {
		t.Fatal(err)
	}
	return tree, ci, l
}

// stat is find | stat: every node's size, error and warning, as text.
func statAll(t testing.TB, tree *Tree) map[string]string {
	out := map[string]string{}
	_ = tree.Walk(func(n *Node) error {
		out[n.Path()] = fmt.Sprintf("%v %d %v %v %d", n.Kind, n.Size(), n.Err(), n.Warning(), n.Ino)
		return nil
	})
	return out
}

// streamScans counts the decoded files whose index the tree has built: a
// scan of the stream (every decode needs one).
func streamScans(tree *Tree) int {
	k, _ := tree.indexes.stats()
	return k
}

func decodedCount(tree *Tree) int {
	k := 0
	_ = tree.Walk(func(n *Node) error {
		if n.Kind == Decoded {
			k++
		}
		return nil
	})
	return k
}

// TestSidecarRemount: after a build and a find|stat whose results are
// saved, a second build and find|stat of the same image scan no stream
// (no index is built: the build decodes what it reads through the kept
// indexes, and reads no more of the image than the first), and give the
// same tree: names, kinds, sizes, errors, warnings, inodes. The files
// still read the same bytes.
func TestSidecarRemount(t *testing.T) {
	layouts := []mkdisc.Layout{mkdisc.Small}
	if !testing.Short() {
		layouts = append(layouts, mkdisc.Retail)
	}
	for _, layout := range layouts {
		t.Run(string(layout), func(t *testing.T) {
			var path string
			if layout == mkdisc.Small {
				path = copyOf(t)
			} else {
				path = retailImage(t)
			}
			testSidecarRemount(t, path)
		})
	}
}

func testSidecarRemount(t *testing.T, path string) {
	dir := t.TempDir()
	t1, c1, _ := buildIndexed(t, path, dir, Options{})
	if t1.IndexFile() == "" || !strings.HasPrefix(t1.IndexFile(), dir) {
		t.Fatalf("index file %q, want one in %s", t1.IndexFile(), dir)
	}
	if _, err := os.Stat(t1.IndexFile()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a sidecar exists before the first save: %v", err)
	}
	buildBytes := c1.n.Load()
	want := statAll(t, t1)
	first := c1.n.Load()
	if n := decodedCount(t1); n == 0 || streamScans(t1) == 0 {
		t.Fatalf("test setup: %d decoded files, %d scanned", n, streamScans(t1))
	}
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(t1.IndexFile())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first: build read %d image bytes, build+stat %d; sidecar %d bytes, %d decoded files", buildBytes, first, fi.Size(), decodedCount(t1))

	t2, c2, _ := buildIndexed(t, path, dir, Options{})
	if k := t2.scanned.Load(); k != 0 {
		t.Errorf("second build: %d streams scanned, want none", k)
	}
	build2 := c2.n.Load()
	got := statAll(t, t2)
	if k := t2.scanned.Load(); k != 0 {
		t.Errorf("second build and stat: %d streams scanned, want none", k)
	}
	stat2 := c2.n.Load() - build2
	t.Logf("second: build read %d image bytes, stat %d", build2, stat2)
	// The build reads the prefixes of every extent (merged into runs that
	// cover most of a dense image) and the raw tables; the stat, nothing.
	if stat2 != 0 {
		t.Errorf("second find|stat read %d image bytes, want none (the first: %d)", stat2, first-buildBytes)
	}
	if build2 > buildBytes {
		t.Errorf("second build read %d image bytes, the first %d", build2, buildBytes)
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: second tree %q, first %q", p, got[p], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("second tree has %d nodes, the first %d", len(got), len(want))
	}
	// Nothing new learned: SaveIndex writes nothing.
	if err := t2.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	if fi2, err := os.Stat(t1.IndexFile()); err != nil || !fi2.ModTime().Equal(fi.ModTime()) || fi2.Size() != fi.Size() {
		t.Errorf("a save with nothing new rewrote the sidecar: %v", err)
	}
	// The files read as before (indexes built on open now).
	checked := 0
	_ = t1.Walk(func(n *Node) error {
		if n.Kind != Decoded || n.Err() != nil || checked >= 20 {
			return nil
		}
		a := readAll(t, n)
		m := mustLookup(t, t2, n.Path())
		if b := readAll(t, m); !bytes.Equal(a, b) {
			t.Errorf("%s: reads differently with the sidecar", n.Path())
		}
		checked++
		return nil
	})
	if checked == 0 {
		t.Fatal("no decoded file read")
	}
}

// TestSidecarCorruptStream: a corrupt stream's error is kept, but never
// served from the sidecar: the next build scans each corrupt stream again
// (and nothing else) and finds the same error (offset and rule, errors.Is
// ErrFormat), so the sidecar is not rewritten.
func TestSidecarCorruptStream(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, d.Path, dir, Options{})
	want := statAll(t, t1)
	var bad []string
	_ = t1.Walk(func(n *Node) error {
		if n.Kind == Decoded && errors.Is(n.Err(), codec.ErrFormat) {
			bad = append(bad, n.Path())
		}
		return nil
	})
	if len(bad) == 0 {
		t.Fatal("test setup: the test disc has no corrupt stream")
	}
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	t2, _, logs := buildIndexed(t, d.Path, dir, Options{})
	got := statAll(t, t2)
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s: %q, first build %q", p, got[p], w)
		}
	}
	for _, p := range bad {
		n := mustLookup(t, t2, p)
		var ce *codec.CorruptError
		if !errors.As(n.Err(), &ce) || !errors.Is(n.Err(), codec.ErrFormat) {
			t.Errorf("%s: error %v from the sidecar is not a *codec.CorruptError", p, n.Err())
		}
		if _, err := n.Open(); err == nil {
			t.Errorf("%s: opens", p)
		}
		if !strings.Contains(strings.Join(logs.Lines(), "\n"), p) {
			t.Errorf("%s: the corrupt stream is not logged on the second build", p)
		}
	}
	if k := t2.scanned.Load(); k != int64(len(bad)) {
		t.Errorf("%d streams scanned, want the %d corrupt ones", k, len(bad))
	}
	before, _ := os.Stat(t1.IndexFile())
	if err := t2.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(t1.IndexFile()); !after.ModTime().Equal(before.ModTime()) {
		t.Error("the corrupt streams' errors, found again, rewrote the sidecar")
	}
	if n := logs.Count("index sidecar"); n != 0 {
		t.Errorf("%d log lines about the sidecar, want none: %q", n, logs.Lines())
	}
}

// TestSidecarIgnored: a sidecar that is truncated, damaged, of another
// version or of another image is ignored with one log line, and rebuilt
// (the tree is the same; the next save replaces it).
func TestSidecarIgnored(t *testing.T) {
	path := copyOf(t)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	want := statAll(t, t1)
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(t1.IndexFile())
	if err != nil {
		t.Fatal(err)
	}
	flip := func(i int) []byte { b := bytes.Clone(good); b[i] ^= 0x40; return b }
	// The previous format's file (no sky tables), sealed as it wrote it.
	format4 := bytes.Clone(good)
	binary.LittleEndian.PutUint32(format4[8:], 4)
	binary.LittleEndian.PutUint32(format4[len(format4)-4:], crc32.Checksum(format4[:len(format4)-4], castagnoli))
	cases := map[string][]byte{
		"truncated":     good[:len(good)/2],
		"empty":         {},
		"version":       flip(8),
		"format 4":      format4,
		"other image":   flip(20),
		"damaged":       flip(len(good) / 2),
		"checksum":      flip(len(good) - 1),
		"not a sidecar": bytes.Repeat([]byte("x"), 100),
	}
	// A tree built and statted each case: under -short three of them.
	short := shortCases(t, cases, "truncated", "other image", "damaged")
	for name, b := range cases {
		t.Run(name, func(t *testing.T) {
			short.skip(t, name)
			if err := os.WriteFile(t1.IndexFile(), b, 0o600); err != nil {
				t.Fatal(err)
			}
			t2, _, logs := buildIndexed(t, path, dir, Options{})
			var lines []string
			for _, l := range logs.Lines() {
				if strings.Contains(l, "index sidecar") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "ignored") {
				t.Errorf("log lines about the sidecar: %q, want one saying it is ignored", lines)
			}
			got := statAll(t, t2)
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s: %q, want %q", p, got[p], w)
				}
			}
			if streamScans(t2) == 0 {
				t.Error("no stream scanned: the bad sidecar was trusted")
			}
			if err := t2.SaveIndex(); err != nil {
				t.Fatal(err)
			}
			if b2, _ := os.ReadFile(t1.IndexFile()); !bytes.Equal(b2, good) {
				t.Errorf("the rebuilt sidecar (%d bytes) differs from the first (%d bytes)", len(b2), len(good))
			}
		})
	}
	// Another modification time: another key, so another file; the old one
	// is not read.
	tm := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, tm, tm); err != nil {
		t.Fatal(err)
	}
	t3, _, _ := buildIndexed(t, path, dir, Options{})
	if t3.IndexFile() == t1.IndexFile() {
		t.Error("an image with another mtime has the same sidecar name")
	}
	// Another decoded-size limit: another key.
	t4, _, _ := buildIndexed(t, path, dir, Options{MaxDecoded: 1 << 20})
	if t4.IndexFile() == t3.IndexFile() {
		t.Error("another --max-decoded has the same sidecar name")
	}
}

// TestSidecarOff: without IndexCacheDir nothing is written.
func TestSidecarOff(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	statAll(t, tree)
	if tree.IndexFile() != "" {
		t.Errorf("index file %q without IndexCacheDir", tree.IndexFile())
	}
	if err := tree.SaveIndex(); err != nil {
		t.Error(err)
	}
}

// TestSidecarRoundTrip: marshal then parse gives the entries back; a
// different key is refused.
func TestSidecarRoundTrip(t *testing.T) {
	key := [32]byte{1, 2, 3}
	ents := map[string]*sideEntry{
		"i4096+100":          {sized: true, size: 5000, index: []byte{1, 2, 3}},
		"i4096+100/16+50":    {sized: true, size: 30, corrupt: true, cOff: 0x20, rule: string(codec.RuleTruncated)},
		"i9000+16/0+16/4+4":  {sized: true},
		"si4096+100@16+4480": {sky: &skyTable{header: bytes.Repeat([]byte{3}, 0x40), defs: make([]byte, 32)}},
		"si4096+100@0+8":     {sky: &skyTable{header: []byte{1, 2, 3, 4, 5, 6, 7, 8}}},
	}
	b := marshalSidecar(key, ents)
	got, err := parseSidecar(b, key)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ents) {
		t.Fatalf("%d entries, want %d", len(got), len(ents))
	}
	for k, e := range ents {
		g := got[k]
		if g == nil || g.sized != e.sized || g.size != e.size || g.corrupt != e.corrupt || g.cOff != e.cOff || g.rule != e.rule || !bytes.Equal(g.index, e.index) {
			t.Errorf("%s: %+v, want %+v", k, g, e)
		}
		if (g.sky == nil) != (e.sky == nil) || e.sky != nil && !g.sky.equal(*e.sky) {
			t.Errorf("%s: sky table %+v, want %+v", k, g.sky, e.sky)
		}
	}
	if _, err := parseSidecar(b, [32]byte{9}); !errors.Is(err, ErrSidecar) {
		t.Errorf("another key: %v", err)
	}
	var se *SidecarError
	if _, err := parseSidecar(b[:len(b)-10], key); !errors.As(err, &se) {
		t.Errorf("truncated: %v", err)
	}
}

// FuzzSidecar: no input makes the parser panic or allocate past the file's
// size; what parses marshals back to bytes that parse to the same.
func FuzzSidecar(f *testing.F) {
	key := [32]byte{7}
	f.Add(marshalSidecar(key, map[string]*sideEntry{}))
	f.Add(marshalSidecar(key, map[string]*sideEntry{
		"i1+2":       {sized: true, size: 9},
		"i1+2/3":     {sized: true, size: 2, corrupt: true, cOff: 5, rule: "x"},
		"i9+4":       {sized: true, size: 4, index: []byte{1, 2, 0, 0, 0, 4, 4, 0, 1, 0, 0}},
		"si9+4@0+64": {sky: &skyTable{header: make([]byte, 0x40), defs: make([]byte, 16)}},
	}))
	f.Add([]byte("GCFSIDX\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The fuzzer cannot find the checksum: seal what it gives.
		if len(b) >= 4 {
			b = append(bytes.Clone(b[:len(b)-4]), 0, 0, 0, 0)
			body := b[:len(b)-4]
			if len(body) >= 44 {
				copy(body[12:44], key[:])
			}
			binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(body, castagnoli))
		}
		ents, err := parseSidecar(b, key)
		if err != nil {
			if !errors.Is(err, ErrSidecar) {
				t.Fatalf("error %v is not ErrSidecar", err)
			}
			return
		}
		b2 := marshalSidecar(key, ents)
		ents2, err := parseSidecar(b2, key)
		if err != nil {
			t.Fatalf("re-marshalled sidecar does not parse: %v", err)
		}
		if !bytes.Equal(marshalSidecar(key, ents2), b2) {
			t.Fatal("marshal is not stable")
		}
	})
}

// TestSidecarIndexKept: the sidecar keeps each decoded file's index, so that
// after a remount opening and reading every decoded file scans no stream
// (only its header is read); the bytes are the same. An index the codec
// refuses is dropped with one log line, the stream is scanned again, the
// file reads the same, and the next save keeps the good index again.
func TestSidecarIndexKept(t *testing.T) {
	path := copyOf(t)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	want := map[string][]byte{}
	_ = t1.Walk(func(n *Node) error {
		if n.Kind == Decoded && n.Err() == nil {
			want[n.Path()] = readAll(t, n)
		}
		return nil
	})
	if len(want) == 0 {
		t.Fatal("test setup: no decoded file")
	}
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	t2, _, _ := buildIndexed(t, path, dir, Options{})
	for p, w := range want {
		if got := readAll(t, mustLookup(t, t2, p)); !bytes.Equal(got, w) {
			t.Errorf("%s: reads differently with the kept index", p)
		}
	}
	if k := t2.scanned.Load(); k != 0 {
		t.Errorf("reading %d decoded files after a remount scanned %d streams, want none", len(want), k)
	}

	t3, _, l3 := buildIndexed(t, path, dir, Options{})
	var victim *Node
	_ = t3.Walk(func(n *Node) error {
		// (One whose index the build has not loaded: it read none of it.)
		if victim == nil && n.Kind == Decoded && n.Err() == nil && n.within == nil && t3.indexes.get(n) == nil {
			victim = n
		}
		return nil
	})
	if victim == nil {
		t.Fatal("test setup: every decoded file's index is loaded")
	}
	t3.side.mu.Lock()
	e := t3.side.entries[victim.sideKey()]
	if e == nil || len(e.index) == 0 {
		t3.side.mu.Unlock()
		t.Fatalf("%s: no index kept", victim.Path())
	}
	good := e.index
	e.index = append([]byte{9}, good[1:]...) // another version
	t3.side.mu.Unlock()
	before := len(l3.Lines())
	if got := readAll(t, victim); !bytes.Equal(got, want[victim.Path()]) {
		t.Fatalf("%s: reads differently after a refused index", victim.Path())
	}
	lines := l3.Lines()[before:]
	if len(lines) != 1 || !strings.Contains(lines[0], "index sidecar") || !strings.Contains(lines[0], victim.logPath()) {
		t.Errorf("a refused index logged %q, want one line naming the file and the sidecar", lines)
	}
	if k := t3.scanned.Load(); k != 1 {
		t.Errorf("a refused index: %d streams scanned, want 1", k)
	}
	t3.side.mu.Lock()
	again := bytes.Equal(t3.side.entries[victim.sideKey()].index, good)
	t3.side.mu.Unlock()
	if !again {
		t.Error("the index scanned again is not kept in place of the refused one")
	}
}

// TestPruneSidecars: past the newest keep (the current one among them),
// the oldest sidecars go; other files, and the current sidecar however
// old, stay.
func TestPruneSidecars(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	var paths []string
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("%02d.idx", i))
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		// 00.idx is the oldest.
		if err := os.Chtimes(p, now, now.Add(time.Duration(i-10)*time.Hour)); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	other := filepath.Join(dir, "notes.txt")
	os.WriteFile(other, []byte("x"), 0o600)
	tmp := filepath.Join(dir, ".tmp-1.idx")
	os.WriteFile(tmp, []byte("x"), 0o600)
	pruneSidecars(dir, paths[0], 3) // keep the current (the oldest) and the 2 newest
	for i, p := range paths {
		_, err := os.Stat(p)
		if kept := err == nil; kept != (i == 0 || i >= 4) {
			t.Errorf("%s: kept %v", filepath.Base(p), kept)
		}
	}
	for _, p := range []string{other, tmp} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s removed", filepath.Base(p))
		}
	}
}

// TestSidecarNotRegular: a FIFO, a directory or a symbolic link at the
// sidecar's path is refused without blocking (the build returns within a
// deadline, a FIFO with no writer would hang an open) or following it, with
// one warning; the tree is the one built without it, and the save replaces
// what is there with the sidecar (by a rename: the link's target is left as
// it was), except a directory, which it cannot replace.
func TestSidecarNotRegular(t *testing.T) {
	path := copyOf(t)
	dir := t.TempDir()
	t1, _, _ := buildIndexed(t, path, dir, Options{})
	want := statAll(t, t1)
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	side := t1.IndexFile()
	target := filepath.Join(t.TempDir(), "target")
	cases := map[string]func() error{
		"fifo":    func() error { return syscall.Mkfifo(side, 0o600) },
		"dir":     func() error { return os.Mkdir(side, 0o700) },
		"symlink": func() error { os.WriteFile(target, []byte("kept"), 0o600); return os.Symlink(target, side) },
		"dangling": func() error {
			return os.Symlink(filepath.Join(t.TempDir(), "nothing"), side)
		},
	}
	for name, mk := range cases {
		t.Run(name, func(t *testing.T) {
			if err := os.RemoveAll(side); err != nil {
				t.Fatal(err)
			}
			if err := mk(); err != nil {
				t.Fatal(err)
			}
			type built struct {
				tree *Tree
				logs *testdisc.Log
			}
			done := make(chan built, 1)
			go func() {
				t2, _, logs := buildIndexed(t, path, dir, Options{})
				statAll(t, t2)
				done <- built{t2, logs}
			}()
			var b built
			select {
			case b = <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the build blocked on the sidecar's path")
			}
			var lines []string
			for _, l := range b.logs.Lines() {
				if strings.Contains(l, "index sidecar") {
					lines = append(lines, l)
				}
			}
			if len(lines) != 1 || !strings.Contains(lines[0], "not a regular file") {
				t.Errorf("log lines about the sidecar: %q, want one saying it is not a regular file", lines)
			}
			got := statAll(t, b.tree)
			for p, w := range want {
				if got[p] != w {
					t.Errorf("%s: %q, want %q", p, got[p], w)
				}
			}
			err := b.tree.SaveIndex()
			fi, lerr := os.Lstat(side)
			if name == "dir" {
				if err == nil || lerr != nil || !fi.IsDir() {
					t.Errorf("a directory at the path: save %v, then %v", err, fi.Mode())
				}
				return
			}
			if err != nil || lerr != nil || !fi.Mode().IsRegular() {
				t.Errorf("save %v: the path is %v (%v), want the sidecar", err, fi.Mode(), lerr)
			}
			if kept, _ := os.ReadFile(target); name == "symlink" && string(kept) != "kept" {
				t.Errorf("the link's target was written: %q", kept)
			}
		})
	}
	// The cleanup keeping 32 sidecars opens none and leaves a FIFO alone.
	os.RemoveAll(side)
	fifo := filepath.Join(dir, "0000.idx")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { pruneSidecars(dir, side, 1); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("pruneSidecars blocked on a FIFO")
	}
	if _, err := os.Lstat(fifo); err != nil {
		t.Errorf("the FIFO was removed: %v", err)
	}
}
