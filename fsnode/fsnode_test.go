package fsnode

import (
	"bytes"
	"errors"
	"fmt"
	"gcfs/cache"
	"io"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"

	"gcfs/codec"
	"gcfs/discimg"
	"gcfs/fsnode/testdisc"
)

func openDisc(t testing.TB, path string, size int64, opt Options) (*Tree, *testdisc.Log) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	if size < 0 {
		st, _ := f.Stat()
		size = st.Size()
	}
	img, err := discimg.Open(f, size)
	if err != nil {
		t.Fatalf("discimg.Open: %v", err)
	}
	l := &testdisc.Log{}
	if opt.Logf == nil {
		opt.Logf = l.Logf
	}
	tree, err := Build(img, opt)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return tree, l
}

func writeDisc(t testing.TB) *testdisc.Disc {
	t.Helper()
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func readAll(t testing.TB, n *Node) []byte {
	t.Helper()
	r, err := n.Open()
	if err != nil {
		t.Fatalf("%s: Open: %v", n.Path(), err)
	}
	b := make([]byte, r.Size())
	if got, err := r.ReadAt(b, 0); got != len(b) || (err != nil && err != io.EOF) {
		t.Fatalf("%s: ReadAt whole: %d of %d bytes, %v", n.Path(), got, len(b), err)
	}
	return b
}

func TestTreeShape(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	var paths []string
	kinds := map[string]Kind{}
	if err := tree.Walk(func(n *Node) error {
		paths = append(paths, n.Path())
		kinds[n.Path()] = n.Kind
		for i := 1; i < len(n.Children); i++ {
			if n.Children[i-1].Name >= n.Children[i].Name {
				t.Errorf("%s: children not sorted: %q before %q", n.Path(), n.Children[i-1].Name, n.Children[i].Name)
			}
		}
		for _, c := range n.Children {
			if c.Parent != n {
				t.Errorf("%s: parent pointer wrong", c.Path())
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for p := range d.Files {
		want[p] = true
	}
	for p := range d.Corrupt {
		want[p] = true
	}
	for _, p := range d.Dirs {
		want[p] = true
	}
	for _, p := range paths {
		if !want[p] {
			t.Errorf("unexpected node %q", p)
		}
		delete(want, p)
	}
	for p := range want {
		t.Errorf("missing node %q", p)
	}
	if paths[0] != "" || tree.Root.Ino != 1 {
		t.Errorf("walk starts at %q, root ino %d", paths[0], tree.Root.Ino)
	}
	for p, k := range map[string]Kind{
		"G/MISC.WAD": Dir, "G/MPEG1.WAD": Raw, "G/BROKEN.WAD": Raw, "G/MISC.WAD/frontend": Decoded,
		"G/MISC.WAD/frontend.wad": Raw, "G/MISC.WAD/frontbin": Decoded, "G/MISC.WAD/debug_font": Raw,
	} {
		if kinds[p] != k {
			t.Errorf("%s: kind %v, want %v", p, kinds[p], k)
		}
	}
	for _, p := range []string{"G/MISC.WAD/frontend", "/G/MISC.WAD/frontend", "G/MISC.WAD/frontend/", "./G/./MISC.WAD/frontend"} {
		n, err := tree.Lookup(p)
		if err != nil || n.Path() != "G/MISC.WAD/frontend" {
			t.Errorf("Lookup(%q) = %v, %v", p, n, err)
		}
	}
	for _, p := range []string{"G/NOPE", "SYSTEM.CNF/x", "G/MISC.WAD/frontend/x", ".."} {
		if _, err := tree.Lookup(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("Lookup(%q): err %v, want ErrNotExist", p, err)
		}
	}
}

func TestFilesReadExactly(t *testing.T) {
	d := writeDisc(t)
	tree, logs := openDisc(t, d.Path, -1, Options{})
	for p, want := range d.Files {
		n, err := tree.Lookup(p)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if n.Size() != int64(len(want)) {
			t.Errorf("%s: Size %d before reading, want %d", p, n.Size(), len(want))
		}
		if err := n.Err(); err != nil {
			t.Errorf("%s: Err %v", p, err)
		}
		if got := readAll(t, n); !bytes.Equal(got, want) {
			t.Errorf("%s: content differs (%d bytes, want %d)", p, len(got), len(want))
		}
	}
	// frontbin, the corrupt stream beside frontend, may be sized in the
	// background once a sibling's size is asked: at most its one line.
	if n := len(logs.Lines()); logs.Count("BROKEN.WAD") != 1 || n-1 != logs.Count("frontbin") || n > 2 {
		t.Errorf("log lines %q, want one about BROKEN.WAD (and at most one about frontbin)", logs.Lines())
	}
}

func TestDecodedRandomAndConcurrent(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 1 << 20})
	n, err := tree.Lookup("G/MISC.WAD/frontend")
	if err != nil {
		t.Fatal(err)
	}
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	want := d.Sample
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			rng := rand.New(rand.NewSource(seed))
			for i := 0; i < 40; i++ {
				off := rng.Int63n(int64(len(want)) + 10)
				buf := make([]byte, rng.Intn(70000)+1)
				got, err := r.ReadAt(buf, off)
				end := off + int64(len(buf))
				if end > int64(len(want)) {
					end = int64(len(want))
				}
				wantN := int(max(0, end-off))
				if got != wantN || (got < len(buf) && err != io.EOF) || (got == len(buf) && err != nil) {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d) = %d, %v; want %d", len(buf), off, got, err, wantN)
					return
				}
				if wantN > 0 && !bytes.Equal(buf[:got], want[off:end]) {
					errs <- fmt.Errorf("ReadAt(%d bytes at %d): bytes differ", len(buf), off)
					return
				}
			}
		}(int64(g))
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if st := tree.Cache.Stats(); st.Hits+st.Misses == 0 {
		t.Errorf("reads did not go through the cache: %+v", st)
	}
}

func TestCorruptStream(t *testing.T) {
	d := writeDisc(t)
	tree, logs := openDisc(t, d.Path, -1, Options{})
	for p, clean := range d.Corrupt {
		n, err := tree.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		if n.Size() != clean {
			t.Errorf("%s: Size %d, want the clean length %d", p, n.Size(), clean)
		}
		for i := 0; i < 3; i++ {
			if _, err := n.Open(); err == nil {
				t.Fatalf("%s: Open succeeded on a corrupt stream", p)
			}
		}
		_, err = n.Open()
		var se *StreamError
		var ce *codec.CorruptError
		if !errors.As(err, &se) || !errors.As(err, &ce) || !errors.Is(err, codec.ErrFormat) {
			t.Fatalf("%s: Open error %v (%T): want *StreamError wrapping *codec.CorruptError", p, err, err)
		}
		if ce.Rule != codec.RuleLiteralPair {
			t.Errorf("%s: rule %q, want %q", p, ce.Rule, codec.RuleLiteralPair)
		}
		off, _, _ := n.ImageRange()
		if se.ImageOffset != off || se.Path != p {
			t.Errorf("%s: StreamError %+v, want image offset %d", p, se, off)
		}
		msg := err.Error()
		for _, s := range []string{p, fmt.Sprintf("%#x", off), string(codec.RuleLiteralPair), "stream offset"} {
			if !strings.Contains(msg, s) {
				t.Errorf("%s: error %q does not name %q", p, msg, s)
			}
		}
		if v, ok := n.Xattr("user.gcfs.error"); !ok || !strings.Contains(v, string(codec.RuleLiteralPair)) {
			t.Errorf("%s: user.gcfs.error = %q, %v", p, v, ok)
		}
		if got := logs.Count(p + ":"); got != 1 {
			t.Errorf("%s: logged %d times, want once: %q", p, got, logs.Lines())
		}
		raw, _ := tree.Lookup(p + ".wad")
		if raw == nil || !bytes.Equal(readAll(t, raw), d.Files[p+".wad"]) {
			t.Errorf("%s.wad does not read the stream's bytes", p)
		}
	}
}

func TestXattrs(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	misc, _ := tree.Lookup("G/MISC.WAD")
	miscOff, _, _ := misc.ImageRange()
	irx, _ := tree.Lookup("G/MISC.WAD/frontend")
	irxOff, irxLen, _ := irx.ImageRange()
	// debug_font (2 sectors), save_game, frontbin and frontbin_net (1 each)
	if irxOff != miscOff+6*2048 {
		t.Errorf("frontend at image offset %d, want the MISC.WAD offset %d + 6 sectors", irxOff, miscOff)
	}
	want := map[string]map[string]string{
		"G/MISC.WAD": {"family": "MISC", "table": "pairs-sectors", "skipped": fmt.Sprint(d.MiscSkipped)},
		"G/MISC.WAD/frontend": {"offset": fmt.Sprint(irxOff), "lba": fmt.Sprint(irxOff / 2048), "disc_size": fmt.Sprint(irxLen),
			"wad_tag": "frontend", "compressed_size": fmt.Sprint(tree.Root.Child("G").Child("MISC.WAD").Child("frontend").StreamHeader().Size)},
		"G/MISC.WAD/frontend.wad": {"offset": fmt.Sprint(irxOff), "disc_size": fmt.Sprint(irxLen)},
		"SYSTEM.CNF":              {"disc_size": fmt.Sprint(len(d.Files["SYSTEM.CNF"]))},
	}
	for p, attrs := range want {
		n, _ := tree.Lookup(p)
		for k, v := range attrs {
			if got, ok := n.Xattr(XattrPrefix + k); !ok || got != v {
				t.Errorf("%s: %s = %q (%v), want %q", p, k, got, ok, v)
			}
		}
		if _, ok := n.Xattr("user.gcfs.error"); ok {
			t.Errorf("%s: has user.gcfs.error", p)
		}
	}
	if _, ok := irx.Xattr("user.gcfs.level_id"); ok {
		t.Error("irx has level attributes")
	}
}

func TestTableFailureStaysPlain(t *testing.T) {
	d := writeDisc(t)
	tree, logs := openDisc(t, d.Path, -1, Options{})
	for _, p := range []string{"G/BROKEN.WAD", "G/MPEG1.WAD"} {
		n, _ := tree.Lookup(p)
		if n.Kind != Raw || n.TableError() == nil {
			t.Errorf("%s: kind %v, table error %v: want a plain file with the reason", p, n.Kind, n.TableError())
		}
	}
	if !errors.Is(mustLookup(t, tree, "G/BROKEN.WAD").TableError(), discimg.ErrNoReading) {
		t.Errorf("BROKEN.WAD: %v, want ErrNoReading", mustLookup(t, tree, "G/BROKEN.WAD").TableError())
	}
	if logs.Count("BROKEN.WAD") != 1 || logs.Count("MPEG1.WAD") != 0 {
		t.Errorf("logs %q: want BROKEN.WAD once, MPEG1.WAD (no table at all) never", logs.Lines())
	}
}

func mustLookup(t testing.TB, tree *Tree, p string) *Node {
	t.Helper()
	n, err := tree.Lookup(p)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestInodesStableAndUnique(t *testing.T) {
	d := writeDisc(t)
	a, _ := openDisc(t, d.Path, -1, Options{})
	b, _ := openDisc(t, d.Path, -1, Options{})
	seen := map[uint64]string{}
	_ = a.Walk(func(n *Node) error {
		if prev, dup := seen[n.Ino]; dup {
			t.Errorf("ino %d of %q and %q", n.Ino, prev, n.Path())
		}
		seen[n.Ino] = n.Path()
		if m := mustLookup(t, b, n.Path()); m.Ino != n.Ino {
			t.Errorf("%s: ino %d, then %d in a second build", n.Path(), n.Ino, m.Ino)
		}
		if n.Ino == 0 || (n.Ino == 1) != (n.Parent == nil) {
			t.Errorf("%s: ino %d", n.Path(), n.Ino)
		}
		return nil
	})
}

func TestTruncatedImage(t *testing.T) {
	d := writeDisc(t)
	whole, _ := openDisc(t, d.Path, -1, Options{})
	tail := mustLookup(t, whole, "ZTAIL.DUP")
	off, _, _ := tail.ImageRange()
	cut := off + 1000
	if err := os.Truncate(d.Path, cut); err != nil {
		t.Fatal(err)
	}
	tree, logs := openDisc(t, d.Path, -1, Options{})
	if got := readAll(t, mustLookup(t, tree, "SYSTEM.CNF")); !bytes.Equal(got, d.Files["SYSTEM.CNF"]) {
		t.Error("SYSTEM.CNF changed")
	}
	if got := readAll(t, mustLookup(t, tree, "G/MISC.WAD/frontend")); !bytes.Equal(got, d.Sample) {
		t.Error("irx changed")
	}
	n := mustLookup(t, tree, "ZTAIL.DUP")
	if n.Size() != int64(len(d.Files["ZTAIL.DUP"])) {
		t.Errorf("ZTAIL.DUP: size %d, want the recorded %d", n.Size(), len(d.Files["ZTAIL.DUP"]))
	}
	if !errors.Is(n.Err(), ErrShortImage) {
		t.Errorf("ZTAIL.DUP: Err %v, want ErrShortImage", n.Err())
	}
	if v, ok := n.Xattr("user.gcfs.error"); !ok || !strings.Contains(v, "image") {
		t.Errorf("ZTAIL.DUP: user.gcfs.error %q, %v", v, ok)
	}
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 500)
	if got, err := r.ReadAt(buf, 0); got != 500 || err != nil {
		t.Errorf("read inside the image: %d, %v", got, err)
	}
	if !bytes.Equal(buf, d.Files["ZTAIL.DUP"][:500]) {
		t.Error("bytes inside the image differ")
	}
	buf = make([]byte, 2000)
	got, err := r.ReadAt(buf, 0)
	var se *ShortImageError
	if got != 1000 || !errors.As(err, &se) || se.Offset != cut {
		t.Errorf("read across the end: %d, %v; want 1000 bytes and a ShortImageError at %d", got, err, cut)
	}
	for i := 0; i < 3; i++ {
		r.ReadAt(buf, 1500)
	}
	if logs.Count("ZTAIL.DUP") != 1 {
		t.Errorf("short reads logged %d times, want once: %q", logs.Count("ZTAIL.DUP"), logs.Lines())
	}
}

func TestMaxDecoded(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{MaxDecoded: 100000})
	n := mustLookup(t, tree, "G/MISC.WAD/frontend")
	_, err := n.Open()
	var ce *codec.CorruptError
	if !errors.As(err, &ce) || ce.Rule != codec.RuleOutputLimit {
		t.Fatalf("Open past MaxDecoded: %v, want RuleOutputLimit", err)
	}
	if n.Size() > 100000 {
		t.Errorf("size %d past the limit", n.Size())
	}
	if got := readAll(t, mustLookup(t, tree, "G/MISC.WAD/frontbin_net")); string(got) != "abcdddddddd" {
		t.Errorf("small stream under the limit: %q", got)
	}
}

func TestIndexLRUEvicts(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	irx := mustLookup(t, tree, "G/MISC.WAD/frontend")
	tiny := mustLookup(t, tree, "G/MISC.WAD/frontbin_net")
	readAll(t, irx)
	readAll(t, tiny)
	if n, _ := tree.indexes.stats(); n != 2 {
		t.Fatalf("%d indexes remembered, want 2", n)
	}
	ixIrx := tree.indexes.get(irx)
	l := newIndexLRU(ixIrx.MemSize()) // room for irx's alone
	l.put(irx, ixIrx)
	l.put(tiny, tree.indexes.get(tiny))
	if l.get(irx) != nil || l.get(tiny) == nil {
		t.Error("the older index was not evicted")
	}
	if n, used := l.stats(); n != 1 || used > ixIrx.MemSize() {
		t.Errorf("after eviction: %d indexes, %d bytes", n, used)
	}
	// An evicted index is rebuilt on the next Open.
	tree.indexes = newIndexLRU(1)
	readAll(t, tiny)
	if got := readAll(t, irx); !bytes.Equal(got, d.Sample) {
		t.Error("irx after its index was evicted")
	}
}

func TestHostileNames(t *testing.T) {
	d := writeDisc(t)
	for old, bad := range map[string]string{"SYSTEM.CNF": "..", "ZTAIL.DUP": "../../etc", "G/MPEG1.WAD": "A\x00/B"} {
		if i := strings.LastIndex(old, "/"); i >= 0 {
			old = old[i+1:]
		}
		if err := testdisc.PatchName(d.Path, old, bad); err != nil {
			t.Fatal(err)
		}
	}
	tree, logs := openDisc(t, d.Path, -1, Options{})
	_ = tree.Walk(func(n *Node) error {
		if n.Parent != nil && !SafeName(n.Name) {
			t.Errorf("unsafe name %q in the tree", n.Name)
		}
		return nil
	})
	// discimg leaves such records out; the rest of the tree is still served.
	for _, p := range []string{"SYSTEM.CNF", "ZTAIL.DUP", "G/MPEG1.WAD"} {
		if _, err := tree.Lookup(p); err == nil {
			t.Errorf("%s still listed after its record was renamed", p)
		}
	}
	if got := readAll(t, mustLookup(t, tree, "G/MISC.WAD/frontend")); !bytes.Equal(got, d.Sample) {
		t.Error("irx differs in the hostile image")
	}
	_ = logs
}

func TestSafeName(t *testing.T) {
	for name, safe := range map[string]bool{"a": true, "LEVEL0.WAD": true, "": false, ".": false, "..": false,
		"a/b": false, "a\x00": false, "x\ny": false, "...": true} {
		if SafeName(name) != safe {
			t.Errorf("SafeName(%q) = %v", name, !safe)
		}
	}
}

// TestTruncatedInsideContainer: a container cut short still lists its
// table; extents wholly inside read, the others report the missing bytes.
func TestTruncatedInsideContainer(t *testing.T) {
	d := writeDisc(t)
	whole, _ := openDisc(t, d.Path, -1, Options{})
	cutOff, _, _ := mustLookup(t, whole, "G/MISC.WAD/frontend").ImageRange()
	if err := os.Truncate(d.Path, cutOff+10); err != nil {
		t.Fatal(err)
	}
	tree, _ := openDisc(t, d.Path, -1, Options{})
	misc := mustLookup(t, tree, "G/MISC.WAD")
	if misc.Kind != Dir {
		t.Fatalf("MISC.WAD cut short: kind %v, table error %v", misc.Kind, misc.TableError())
	}
	if v, ok := misc.Xattr("user.gcfs.error"); !ok || !strings.Contains(v, "image") {
		t.Errorf("MISC.WAD: user.gcfs.error %q, %v", v, ok)
	}
	for _, p := range []string{"G/MISC.WAD/debug_font", "G/MISC.WAD/save_game", "G/MISC.WAD/frontbin_net", "G/MISC.WAD/frontbin_net.wad"} {
		if got := readAll(t, mustLookup(t, tree, p)); !bytes.Equal(got, d.Files[p]) {
			t.Errorf("%s differs", p)
		}
	}
	for _, p := range []string{"G/MISC.WAD/exit", "ZTAIL.DUP"} {
		n := mustLookup(t, tree, p)
		if !errors.Is(n.Err(), ErrShortImage) {
			t.Errorf("%s: Err %v, want ErrShortImage", p, n.Err())
		}
		r, _ := n.Open()
		if _, err := r.ReadAt(make([]byte, n.Size()), 0); !errors.Is(err, ErrShortImage) {
			t.Errorf("%s: read %v, want ErrShortImage", p, err)
		}
	}
	// A stream past the end is found by its header probe failing: it stays raw.
	if n, err := tree.Lookup("G/MISC.WAD/frontend"); err != nil || n.Kind != Raw || n.Err() == nil {
		t.Errorf("frontend past the end: %v, %v", n, err)
	}
}

// TestInoCollisions: when paths hash alike, inode numbers are still unique,
// never 0 or 1, and the same in every build.
func TestInoCollisions(t *testing.T) {
	d := writeDisc(t)
	defer func(h func(string, int) uint64) { inoHash = h }(inoHash)
	inoHash = func(p string, k int) uint64 {
		if k < 3 {
			return uint64(k) // 0, 1, 2 for everyone: taken or reserved
		}
		return pathHash(p, k)
	}
	inos := func() map[string]uint64 {
		tree, _ := openDisc(t, d.Path, -1, Options{})
		m := map[string]uint64{}
		seen := map[uint64]bool{}
		_ = tree.Walk(func(n *Node) error {
			if seen[n.Ino] || n.Ino == 0 || (n.Ino == 1 && n.Parent != nil) {
				t.Errorf("%s: ino %d reused or reserved", n.Path(), n.Ino)
			}
			seen[n.Ino] = true
			m[n.Path()] = n.Ino
			return nil
		})
		return m
	}
	a, b := inos(), inos()
	for p, ino := range a {
		if b[p] != ino {
			t.Errorf("%s: ino %d then %d", p, ino, b[p])
		}
	}
	if a["G"] != pathHash("G", 3) && a["G"] != 2 {
		t.Errorf("G: ino %d, want one of the rehashes", a["G"])
	}
}

// TestOddNames: names discimg passes on but a filesystem cannot show as
// they are (control characters) are made safe, and logged; duplicate names in
// one directory get a suffix.
func TestOddNames(t *testing.T) {
	d := writeDisc(t)
	if err := testdisc.PatchName(d.Path, "BROKEN.WAD", "BRO\nKEN"); err != nil {
		t.Fatal(err)
	}
	tree, lg := openDisc(t, d.Path, -1, Options{})
	_ = tree.Walk(func(n *Node) error {
		if n.Parent != nil && !SafeName(n.Name) {
			t.Errorf("unsafe name %q", n.Name)
		}
		return nil
	})
	if n := mustLookup(t, tree, "G/BRO_KEN"); !bytes.Equal(readAll(t, n), d.Files["G/BROKEN.WAD"]) {
		t.Error("G/BRO_KEN differs")
	}
	if lg.Count("not a safe file name") != 1 {
		t.Errorf("logs: %q", lg.Lines())
	}

	// Duplicates, straight through the builder (discimg joins equal adjacent
	// names as one multi-extent file, so an image cannot easily hold them).
	l := &testdisc.Log{}
	b := &builder{t: &Tree{opt: Options{Logf: l.Logf}}}
	root := &Node{Kind: Dir, tree: b.t}
	for _, name := range []string{"x", "x", "x~2", "..", "x"} {
		root.Children = append(root.Children, &Node{Name: name, Kind: Raw, Parent: root, tree: b.t})
	}
	b.finish(root)
	var got []string
	for _, c := range root.Children {
		got = append(got, c.Name)
	}
	if want := []string{"_..", "x", "x~2", "x~3", "x~4"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("names %q, want %q", got, want)
	}
}

// TestDecodedSlices: Slices hands out the same bytes as ReadAt, in pieces no
// longer than a block, with io.EOF exactly when the range runs past the end.
func TestDecodedSlices(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 1 << 20})
	r, err := mustLookup(t, tree, "G/MISC.WAD/frontend").Open()
	if err != nil {
		t.Fatal(err)
	}
	sr, ok := r.(interface {
		Slices(off int64, n int) ([][]byte, error)
	})
	if !ok {
		t.Fatalf("decoded reader %T has no Slices", r)
	}
	want := d.Sample
	size := int64(len(want))
	rng := rand.New(rand.NewSource(7))
	cases := [][2]int64{{0, size}, {0, 1}, {size - 1, 1}, {size - 1, 2}, {size, 1}, {size + 5, 3}, {0, 0}}
	for i := 0; i < 60; i++ {
		cases = append(cases, [2]int64{rng.Int63n(size + 10), rng.Int63n(300000) + 1})
	}
	for _, c := range cases {
		off, n := c[0], int(c[1])
		vecs, err := sr.Slices(off, n)
		var got []byte
		for _, v := range vecs {
			if len(v) == 0 || len(v) > 1<<20 {
				t.Errorf("Slices(%d, %d): a piece of %d bytes", off, n, len(v))
			}
			got = append(got, v...)
		}
		end := min(off+int64(n), size)
		wantN := int(max(0, end-off))
		if len(got) != wantN || (wantN < n && err != io.EOF) || (wantN == n && err != nil) {
			t.Errorf("Slices(%d, %d) = %d bytes, %v; want %d", off, n, len(got), err, wantN)
			continue
		}
		if wantN > 0 && !bytes.Equal(got, want[off:end]) {
			t.Errorf("Slices(%d, %d): bytes differ", off, n)
		}
	}
	if _, err := sr.Slices(-1, 10); err == nil {
		t.Errorf("Slices at a negative offset: no error")
	}
}

// TestServeSlicesDrops: blocks the mount hands out whole leave the tree's
// cache (the kernel's page cache holds them), each once the next block is
// cached or it is the last; Slices (and a block only partly handed out)
// keeps them; the bytes are the file's either way, and again after.
func TestServeSlicesDrops(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20})
	n := mustLookup(t, tree, "G/MISC.WAD/frontend")
	open := func() *decodedReader { return openDecodedReader(t, n) }
	dr := open()
	nb := dr.ix.NumBlocks()
	if nb < 3 {
		t.Fatalf("the sample decodes to %d blocks; the test wants 3 or more", nb)
	}
	cached := func() (k int) {
		for i := range nb {
			if tree.Cache.Has(cache.Key{File: dr.key, Block: i}) {
				k++
			}
		}
		return k
	}
	read := func(get func(int64, int) ([][]byte, error), chunk int) []byte {
		var got []byte
		for off := int64(0); off < dr.Size(); off += int64(chunk) {
			vecs, err := get(off, chunk)
			if err != nil && err != io.EOF {
				t.Fatal(err)
			}
			for _, v := range vecs {
				got = append(got, v...)
			}
		}
		return got
	}
	var dones []func()
	defer func() {
		for _, done := range dones {
			done()
		}
	}()
	serve := func(dr *decodedReader) func(int64, int) ([][]byte, error) {
		return func(off int64, n int) ([][]byte, error) {
			vecs, done, err := dr.ServeSlices(off, n)
			dones = append(dones, done)
			return vecs, err
		}
	}
	if got := read(dr.Slices, 100_000); !bytes.Equal(got, d.Sample) {
		t.Fatal("Slices: bytes differ")
	}
	if k := cached(); k != nb {
		t.Fatalf("after Slices %d of %d blocks cached, want all", k, nb)
	}
	// Serve all but the last half block's worth: every block before the
	// one the range ends in is served whole.
	_, bn := dr.ix.Block(1)
	end := dr.ix.Size() - int64(bn)/2
	if _, err := serve(dr)(0, int(end)); err != nil {
		t.Fatal(err)
	}
	partly := dr.ix.BlockAt(end - 1)
	if k := cached(); k != nb-partly {
		t.Fatalf("after serving [0, %d): %d of %d blocks cached, want %d (block %d partly served stays)", end, k, nb, nb-partly, partly)
	}
	if st := tree.Cache.Stats(); st.Dropped != int64(partly) {
		t.Fatalf("dropped %d blocks, want %d", st.Dropped, partly)
	}
	if got := read(serve(open()), 65536); !bytes.Equal(got, d.Sample) {
		t.Fatal("ServeSlices after drops: bytes differ")
	}
	if k := cached(); k != 0 {
		t.Fatalf("after a second reader served the whole file %d blocks cached, want 0", k)
	}
	// The model's own reads keep what they decode.
	r, err := n.openForModel()
	if err != nil {
		t.Fatal(err)
	}
	if got := read(serve(r.(*decodedReader)), 1<<20); !bytes.Equal(got, d.Sample) {
		t.Fatal("model reader: bytes differ")
	}
	if k := cached(); k != nb {
		t.Fatalf("after the model's read %d of %d blocks cached, want all", k, nb)
	}
}

// openDecodedReader opens a decoded file's reader (its Open, through the
// tree's cache).
func openDecodedReader(t *testing.T, n *Node) *decodedReader {
	t.Helper()
	r, err := n.Open()
	if err != nil {
		t.Fatal(err)
	}
	dr, ok := r.(*decodedReader)
	if !ok {
		t.Fatalf("decoded reader is %T", r)
	}
	return dr
}

// The blocks a read served stay as they were until its done, however many
// buffers the cache hands out meanwhile; after it, their buffers are
// recycled.
func TestServeSlicesHold(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20})
	dr := openDecodedReader(t, mustLookup(t, tree, "G/MISC.WAD/frontend"))
	vecs, done, err := dr.ServeSlices(0, int(dr.Size()))
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if k := tree.Cache.Stats().Entries; k != 0 {
		t.Fatalf("%d blocks cached after the whole file was served, want 0", k)
	}
	c := tree.Cache
	for range 4 * dr.ix.NumBlocks() {
		b := c.NewBuffer(cache.BufferSize)
		for i := range b {
			b[i] = 0xee
		}
	}
	if c.Stats().Recycled != 0 {
		t.Fatal("buffers recycled while a read held them")
	}
	if got := bytes.Join(vecs, nil); !bytes.Equal(got, d.Sample) {
		t.Fatal("served bytes changed before the read was done with them")
	}
	done()
	for range dr.ix.NumBlocks() {
		c.NewBuffer(1000)
	}
	// (Block 0, the first read's own decode, too: its load decodes into a
	// buffer of the cache's, GetRecyclable.)
	if got, want := c.Stats().Recycled, int64(dr.ix.NumBlocks()); got != want {
		t.Fatalf("recycled %d buffers after the read was done, want %d", got, want)
	}
}
