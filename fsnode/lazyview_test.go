package fsnode

import (
	"bytes"
	"errors"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"gcfs/cache"
)

// lazyData is a lazily sized view's content for the tests: n bytes of a
// pattern, over more than one view block.
func lazyData(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>9)
	}
	return b
}

// addTestLazyView adds name beside the tree's first raw file, as a build
// adds one (path, inode, sorted siblings), encoded by enc; it counts the
// encodes in calls.
func addTestLazyView(t *testing.T, tree *Tree, name string, enc viewEncoder) (*Node, *Node) {
	t.Helper()
	var src *Node
	_ = tree.Walk(func(n *Node) error {
		if src == nil && n.Kind == Raw && n.Parent != nil {
			src = n
		}
		return nil
	})
	if src == nil {
		t.Fatal("no raw file in the test disc")
	}
	b := &builder{t: tree}
	v := b.addLazyView(src, name, "test", enc)
	v.path = pathJoin(src.Parent.path, name)
	v.Ino = pathHash(v.path, 0)
	d := src.Parent
	sort.Slice(d.Children, func(i, j int) bool { return d.Children[i].Name < d.Children[j].Name })
	return v, src
}

func countingEncoder(data []byte, calls *atomic.Int64) viewEncoder {
	return func(*encodeCtx) (encodedView, error) {
		calls.Add(1)
		return encodedView{data: bytes.Clone(data), attrs: []Attr{{"vertices", "12"}}}, nil
	}
}

// TestLazyViewSize: nothing is encoded at build; the first Size encodes
// once and gives the encoded length; later Sizes do not encode; a read
// after it serves the same bytes from the blocks that encode left in the
// cache, encoding nothing more.
func TestLazyViewSize(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{})
	data := lazyData(3*viewBlock + 123)
	var calls atomic.Int64
	v, src := addTestLazyView(t, tree, "x.test", countingEncoder(data, &calls))
	if calls.Load() != 0 || tree.ViewEncodes() != 0 {
		t.Fatalf("encoded %d times before any Size", calls.Load())
	}
	if got := v.Size(); got != int64(len(data)) {
		t.Fatalf("Size %d, want the encoded length %d", got, len(data))
	}
	v.Size()
	if v.Err() != nil || v.ViewFailed() {
		t.Fatalf("Err %v, ViewFailed %v", v.Err(), v.ViewFailed())
	}
	if calls.Load() != 1 {
		t.Fatalf("two Sizes encoded %d times, want 1", calls.Load())
	}
	if got := readAll(t, v); !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the encoded ones", len(got))
	}
	if calls.Load() != 1 || tree.ViewEncodes() != 1 {
		t.Fatalf("stat then read: %d encodes (tree: %d), want 1", calls.Load(), tree.ViewEncodes())
	}
	if val, ok := v.Xattr(XattrPrefix + "vertices"); !ok || val != "12" {
		t.Errorf("user.gcfs.vertices = %q, %v", val, ok)
	}
	if val, _ := v.Xattr(XattrPrefix + "view"); val != "test" {
		t.Errorf("user.gcfs.view = %q", val)
	}
	if val, _ := v.Xattr(XattrPrefix + "source"); val != src.Path() {
		t.Errorf("user.gcfs.source = %q, want %q", val, src.Path())
	}
	if calls.Load() != 1 {
		t.Errorf("xattrs encoded again (%d): their values were known", calls.Load())
	}
}

// TestLazyViewKeptEvicted: the bytes a stat's encode keeps are the cache's
// blocks, bounded by its budget. Evicted (other blocks pushed them out), a
// read encodes again and serves the right bytes; under a budget too small
// to keep the view at all (a view over an eighth of it is not kept) every
// stat-then-read encodes twice and reads right, and the cache never holds
// more than its budget.
func TestLazyViewKeptEvicted(t *testing.T) {
	d := writeDisc(t)
	data := lazyData(3*viewBlock + 123)
	t.Run("evicted", func(t *testing.T) {
		tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 4 << 20})
		var calls atomic.Int64
		v, _ := addTestLazyView(t, tree, "x.test", countingEncoder(data, &calls))
		v.Size()
		for i := 0; i < 4<<20/viewBlock+1; i++ {
			tree.Cache.Put(cache.Key{File: 1, Block: i}, make([]byte, viewBlock))
		}
		if _, ok := tree.Cache.Peek(v.viewBlockKey(0)); ok {
			t.Fatal("test setup: the view's first block is still cached")
		}
		if got := readAll(t, v); !bytes.Equal(got, data) {
			t.Fatal("read after eviction: other bytes")
		}
		if calls.Load() != 2 {
			t.Errorf("stat, eviction, read: %d encodes, want 2", calls.Load())
		}
	})
	t.Run("tiny budget", func(t *testing.T) {
		const budget = 96 << 10
		tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: budget})
		var calls atomic.Int64
		v, _ := addTestLazyView(t, tree, "x.test", countingEncoder(data, &calls))
		v.Size()
		if st := tree.Cache.Stats(); st.Bytes > budget {
			t.Errorf("cache holds %d bytes, budget %d", st.Bytes, budget)
		}
		for k := 0; k < 2; k++ {
			if got := readAll(t, v); !bytes.Equal(got, data) {
				t.Fatalf("read %d: other bytes", k)
			}
		}
		if calls.Load() < 2 {
			t.Errorf("%d encodes: a view past an eighth of the budget was kept", calls.Load())
		}
		if st := tree.Cache.Stats(); st.Bytes > budget {
			t.Errorf("cache holds %d bytes, budget %d", st.Bytes, budget)
		}
	})
}

// TestLazyViewFails: a view that does not encode has no file: Size 0, Err
// and ViewFailed, its source's ViewError says why, one log line.
func TestLazyViewFails(t *testing.T) {
	d := writeDisc(t)
	tree, logs := openDisc(t, d.Path, -1, Options{})
	v, src := addTestLazyView(t, tree, "bad.test", func(*encodeCtx) (encodedView, error) {
		return encodedView{}, errors.New("packet 3 runs past its block")
	})
	if v.ViewFailed() {
		t.Fatal("ViewFailed before the view was sized")
	}
	before := len(logs.Lines())
	if v.Size() != 0 || v.Err() == nil || !v.ViewFailed() {
		t.Fatalf("Size %d, Err %v, ViewFailed %v", v.Size(), v.Err(), v.ViewFailed())
	}
	if _, err := v.Open(); err == nil {
		t.Error("Open of a view that does not encode succeeded")
	}
	v.Size()
	if err := src.ViewError(); err == nil || !strings.Contains(err.Error(), "no bad.test: packet 3 runs past its block") {
		t.Errorf("source's ViewError %v", err)
	}
	if n := logs.Count("packet 3 runs past its block"); n != 1 || len(logs.Lines()) != before+1 {
		t.Errorf("log %q: want one line", logs.Lines())
	}
	if tree.ViewEncodes() != 1 {
		t.Errorf("%d encodes, want 1", tree.ViewEncodes())
	}
}

// TestLazyViewSidecar: the size an encode found is recorded in the sidecar;
// the next build of the same image sizes the view from it without encoding,
// and a read encodes and serves the bytes.
func TestLazyViewSidecar(t *testing.T) {
	d := writeDisc(t)
	dir := t.TempDir()
	data := lazyData(2*viewBlock + 5)
	var calls atomic.Int64
	t1, _, _ := buildIndexed(t, d.Path, dir, Options{})
	v1, _ := addTestLazyView(t, t1, "x.test", countingEncoder(data, &calls))
	if v1.Size() != int64(len(data)) || calls.Load() != 1 {
		t.Fatalf("first tree: Size %d after %d encodes", v1.Size(), calls.Load())
	}
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	calls.Store(0)
	t2, _, _ := buildIndexed(t, d.Path, dir, Options{})
	v2, _ := addTestLazyView(t, t2, "x.test", countingEncoder(data, &calls))
	if got := v2.Size(); got != int64(len(data)) {
		t.Fatalf("second tree: Size %d, want %d", got, len(data))
	}
	if calls.Load() != 0 || t2.ViewEncodes() != 0 {
		t.Fatalf("second tree encoded %d times to size the view, want 0 (the sidecar has it)", calls.Load())
	}
	if got := readAll(t, v2); !bytes.Equal(got, data) {
		t.Fatal("second tree reads other bytes")
	}
	if calls.Load() != 1 {
		t.Errorf("read: %d encodes, want 1", calls.Load())
	}
}

// tamperViewSize rewrites the sidecar of dir with the view entry of path
// recording size.
func tamperViewSize(t *testing.T, tree *Tree, path string, size int64) {
	t.Helper()
	file := tree.IndexFile()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ents, err := parseSidecar(raw, tree.side.key)
	if err != nil {
		t.Fatal(err)
	}
	e := ents["v"+path]
	if e == nil {
		t.Fatalf("sidecar has no entry for view %s", path)
	}
	e.size = size
	if err := os.WriteFile(file, marshalSidecar(tree.side.key, ents), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestLazyViewSidecarTampered: a recorded size the encoder does not
// reproduce is served as a stat's size (nothing is encoded at a stat) but
// a read of it fails, never serving cut or padded bytes, and the sidecar is
// corrected; a size past the bound is refused at the stat and the view
// encoded.
func TestLazyViewSidecarTampered(t *testing.T) {
	d := writeDisc(t)
	dir := t.TempDir()
	data := lazyData(viewBlock + 77)
	var calls atomic.Int64
	t1, _, _ := buildIndexed(t, d.Path, dir, Options{})
	v1, _ := addTestLazyView(t, t1, "x.test", countingEncoder(data, &calls))
	v1.Size()
	if err := t1.SaveIndex(); err != nil {
		t.Fatal(err)
	}
	for _, wrong := range []int64{int64(len(data)) + 10, int64(len(data)) - 1} {
		tamperViewSize(t, t1, v1.Path(), wrong)
		t2, _, logs := buildIndexed(t, d.Path, dir, Options{})
		v2, _ := addTestLazyView(t, t2, "x.test", countingEncoder(data, &calls))
		if v2.Size() != wrong {
			t.Fatalf("Size %d, want the recorded %d (a stat encodes nothing)", v2.Size(), wrong)
		}
		r, err := v2.Open()
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, r.Size())
		got, err := r.ReadAt(buf, 0)
		if err == nil || !strings.Contains(err.Error(), "index sidecar") {
			t.Fatalf("recorded %d: read %d bytes, err %v: want an error naming the sidecar", wrong, got, err)
		}
		if got > viewBlock {
			t.Errorf("recorded %d: %d bytes served past the first block", wrong, got)
		}
		if logs.Count("refused") != 1 {
			t.Errorf("log %q: want one refused line", logs.Lines())
		}
		if err := t2.SaveIndex(); err != nil {
			t.Fatal(err)
		}
		calls.Store(0)
		t3, _, _ := buildIndexed(t, d.Path, dir, Options{})
		v3, _ := addTestLazyView(t, t3, "x.test", countingEncoder(data, &calls))
		if v3.Size() != int64(len(data)) || calls.Load() != 0 {
			t.Errorf("after the correction: Size %d with %d encodes, want %d with 0", v3.Size(), calls.Load(), len(data))
		}
	}
	// A size past --max-decoded is refused at the stat: the view is encoded.
	tamperViewSize(t, t1, v1.Path(), DefaultMaxDecoded+1)
	calls.Store(0)
	t4, _, logs := buildIndexed(t, d.Path, dir, Options{})
	v4, _ := addTestLazyView(t, t4, "x.test", countingEncoder(data, &calls))
	if v4.Size() != int64(len(data)) || calls.Load() != 1 || logs.Count("refused") != 1 {
		t.Errorf("recorded past the bound: Size %d, %d encodes, log %q", v4.Size(), calls.Load(), logs.Lines())
	}
}
