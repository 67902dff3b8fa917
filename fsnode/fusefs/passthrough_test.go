package fusefs

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
	"gcfs/overlay"
)

// buildTree builds the tree of the image file at path (closed when the
// test ends).
func buildTree(t *testing.T, path string, fopt fsnode.Options) *fsnode.Tree {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	img, err := discimg.Open(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(img, fopt)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// mountTreeOf builds the tree of the image at path with fopt and really
// mounts it with opt (unmounted when the test ends); the log gets the
// model's and the mount's lines, as gcfs mount's log does.
func mountTreeOf(t *testing.T, path string, fopt fsnode.Options, opt Options) (string, *fsnode.Tree, *dirNode, *testdisc.Log) {
	t.Helper()
	requireFUSE(t)
	lr := &testdisc.Log{}
	fopt.Logf = lr.Logf
	tree := buildTree(t, path, fopt)
	mnt := t.TempDir()
	opt.Logf = lr.Logf
	opt.Debug, opt.FuseLogf = traceOnVerbose(t)
	srv, root, err := mountTree(mnt, tree, opt)
	if err != nil {
		t.Fatalf("mount: %v", err)
	}
	unmountAtEnd(t, srv, mnt)
	return mnt, tree, root, lr
}

// requirePassthrough fails under CI (root, a kernel that has FUSE
// passthrough) and skips elsewhere when the mount got no store of files
// for the kernel.
func requirePassthrough(t *testing.T, tree *fsnode.Tree) {
	t.Helper()
	if tree.MemFiles() != nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("no FUSE passthrough under CI (root, Linux 6.9 on)")
	}
	t.Skip("the kernel refused FUSE passthrough (not root, or before Linux 6.9)")
}

// TestPassthroughDecoded: on a read-only mount that passes decoded files
// through, every decoded file of the small layout reads (read(2) and mmap)
// as mkdisc wrote it, and no read of one reaches the server: the kernel
// reads the file the store made. A second read makes nothing, and the
// file-ahead worker makes files ahead of the one opened.
func TestPassthroughDecoded(t *testing.T) {
	requireFUSE(t)
	path := filepath.Join(t.TempDir(), "small.iso")
	res, err := mkdisctest.Generate(path, mkdisc.Small, 1)
	if err != nil {
		t.Fatal(err)
	}
	sums := map[string]string{}
	for _, e := range res.Manifest {
		sums[e.Path] = e.SHA1
	}
	mnt, tree, root, _ := mountTreeOf(t, path, fsnode.Options{ReadAhead: 4}, Options{MemFiles: 64 << 20})
	requirePassthrough(t, tree)
	store := tree.MemFiles()

	var decoded []string
	_ = tree.Walk(func(n *fsnode.Node) error {
		if n.Kind == fsnode.Decoded && sums[n.Path()] != "" && n.Size() <= 16<<20 {
			decoded = append(decoded, n.Path())
		}
		return nil
	})
	if len(decoded) < 50 {
		t.Fatalf("test setup: %d decoded files", len(decoded))
	}
	sum := func(b []byte) string { h := sha1.Sum(b); return hex.EncodeToString(h[:]) }
	for _, p := range decoded {
		got, err := os.ReadFile(filepath.Join(mnt, p))
		if err != nil || sum(got) != sums[p] {
			t.Fatalf("%s: %d bytes (%v), not mkdisc's", p, len(got), err)
		}
	}
	if n := root.sys.decodedReads.Load(); n != 0 {
		t.Fatalf("%d reads of decoded files reached the server", n)
	}
	st := store.Stats()
	if st.Made < int64(len(decoded)) || st.Files < len(decoded) {
		t.Fatalf("store %+v after reading %d decoded files", st, len(decoded))
	}
	if tree.MemAhead() == 0 {
		t.Error("the file-ahead worker made no file ahead of the reader")
	}

	// Read again through a mapping: nothing made anew, nothing served.
	for _, p := range decoded {
		f, err := os.Open(filepath.Join(mnt, p))
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := f.Stat()
		if fi.Size() > 0 {
			m, err := unix.Mmap(int(f.Fd()), 0, int(fi.Size()), unix.PROT_READ, unix.MAP_SHARED)
			if err != nil {
				t.Fatalf("%s: mmap: %v", p, err)
			}
			if sum(m) != sums[p] {
				t.Errorf("%s: mapped bytes differ", p)
			}
			_ = unix.Munmap(m)
		}
		f.Close()
	}
	if again := store.Stats(); again.Made != st.Made {
		t.Errorf("reading the files again made %d files", again.Made-st.Made)
	}
	if n := root.sys.decodedReads.Load(); n != 0 {
		t.Fatalf("%d reads of decoded files reached the server", n)
	}
}

// TestPassthroughSmallBudget: with a store far smaller than the decoded
// files, files past its MaxFile are served, the rest passed through and
// evicted as others come, and every file still reads as mkdisc wrote it,
// from two readers at once, each twice.
func TestPassthroughSmallBudget(t *testing.T) {
	requireFUSE(t)
	path := filepath.Join(t.TempDir(), "small.iso")
	res, err := mkdisctest.Generate(path, mkdisc.Small, 1)
	if err != nil {
		t.Fatal(err)
	}
	mnt, tree, root, _ := mountTreeOf(t, path, fsnode.Options{ReadAhead: 4}, Options{MemFiles: 1 << 20})
	requirePassthrough(t, tree)
	var decoded []mkdisc.ManifestEntry
	big := 0
	for _, e := range res.Manifest {
		if n, err := tree.Lookup(e.Path); err == nil && n.Kind == fsnode.Decoded {
			decoded = append(decoded, e)
			if e.Size > tree.MemFiles().MaxFile() {
				big++
			}
		}
	}
	if len(decoded) < 50 || big == 0 {
		t.Fatalf("test setup: %d decoded files, %d past the store's %d bytes", len(decoded), big, tree.MemFiles().MaxFile())
	}
	errs := make(chan error, 2)
	for r := 0; r < 2; r++ {
		go func() {
			for pass := 0; pass < 2; pass++ {
				for i := range decoded {
					e := decoded[(i*(r+1))%len(decoded)] // the two readers in different orders
					b, err := os.ReadFile(filepath.Join(mnt, e.Path))
					h := sha1.Sum(b)
					if err != nil || hex.EncodeToString(h[:]) != e.SHA1 {
						errs <- fmt.Errorf("%s: %d bytes (%v), not mkdisc's %d", e.Path, len(b), err, e.Size)
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for r := 0; r < 2; r++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	st := tree.MemFiles().Stats()
	if st.Evicted == 0 || st.Bytes > 1<<20 {
		t.Errorf("store %+v: want evictions and at most 1 MiB held", st)
	}
	if root.sys.decodedReads.Load() == 0 {
		t.Error("no read of the files past the store's bound reached the server")
	}
}

// TestPassthroughOpenBound: past the bound on opens passed through, an
// open of a file open already rides on its backing file (the kernel would
// refuse a second open of it in its caching mode), an open of another file
// is served, both read as mkdisc wrote them, and the count comes back to
// zero as the files close.
func TestPassthroughOpenBound(t *testing.T) {
	requireFUSE(t)
	path := filepath.Join(t.TempDir(), "small.iso")
	res, err := mkdisctest.Generate(path, mkdisc.Small, 1)
	if err != nil {
		t.Fatal(err)
	}
	mnt, tree, root, _ := mountTreeOf(t, path, fsnode.Options{}, Options{MemFiles: 64 << 20})
	requirePassthrough(t, tree)
	var decoded []mkdisc.ManifestEntry
	for _, e := range res.Manifest {
		if n, err := tree.Lookup(e.Path); err == nil && n.Kind == fsnode.Decoded && e.Size > 0 && e.Size <= 1<<20 {
			decoded = append(decoded, e)
		}
	}
	if len(decoded) < 2 {
		t.Fatalf("test setup: %d decoded files", len(decoded))
	}
	check := func(f *os.File, e mkdisc.ManifestEntry) {
		t.Helper()
		b := make([]byte, e.Size)
		n, err := f.ReadAt(b, 0)
		h := sha1.Sum(b[:n])
		if err != nil || hex.EncodeToString(h[:]) != e.SHA1 {
			t.Fatalf("%s: %d bytes (%v), not mkdisc's", e.Path, n, err)
		}
	}
	a, b := decoded[0], decoded[1]
	first, err := os.Open(filepath.Join(mnt, a.Path))
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	check(first, a)
	if n := root.sys.passOpen.Load(); n != 1 {
		t.Fatalf("%d opens passed through, want 1", n)
	}
	max := root.sys.passMax.Load()
	root.sys.passMax.Store(1)
	defer root.sys.passMax.Store(max)
	again, err := os.Open(filepath.Join(mnt, a.Path))
	if err != nil {
		t.Fatalf("%s opened again past the bound: %v", a.Path, err)
	}
	check(again, a)
	other, err := os.Open(filepath.Join(mnt, b.Path))
	if err != nil {
		t.Fatal(err)
	}
	check(other, b)
	if root.sys.decodedReads.Load() == 0 {
		t.Errorf("%s, opened past the bound, was not served", b.Path)
	}
	if n := root.sys.passOpen.Load(); n != 1 {
		t.Errorf("%d opens passed through, want 1 (the bound's opens hold none)", n)
	}
	again.Close()
	other.Close()
	first.Close()
	deadline := time.Now().Add(10 * time.Second)
	for root.sys.passOpen.Load() != 0 { // (RELEASE is asynchronous)
		if time.Now().After(deadline) {
			t.Fatalf("%d opens passed through after every file closed", root.sys.passOpen.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestPassthroughCorrupt: a decoded file whose stream breaks a rule is not
// the store's: its open fails with EIO, logged once, as without a store,
// and the other decoded files pass through.
func TestPassthroughCorrupt(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mnt, tree, root, lr := mountTreeOf(t, d.Path, fsnode.Options{ReadAhead: 4}, Options{MemFiles: 64 << 20})
	requirePassthrough(t, tree)
	if len(d.Corrupt) == 0 {
		t.Fatal("test setup: no corrupt stream")
	}
	for p := range d.Corrupt {
		if _, err := os.ReadFile(filepath.Join(mnt, p)); !errors.Is(err, syscall.EIO) {
			t.Errorf("%s (corrupt): %v, want EIO", p, err)
		}
		if got := lr.Count(p + ":"); got != 1 {
			t.Errorf("%s: logged %d times, want once: %q", p, got, lr.Lines())
		}
	}
	p := "G/MISC.WAD/frontend"
	if got, err := os.ReadFile(filepath.Join(mnt, p)); err != nil || !bytes.Equal(got, d.Files[p]) {
		t.Fatalf("%s: %d bytes, %v", p, len(got), err)
	}
	if n := root.sys.decodedReads.Load(); n != 0 {
		t.Errorf("%d reads of decoded files reached the server", n)
	}
	if st := tree.MemFiles().Stats(); st.Files == 0 {
		t.Errorf("store %+v: %s not passed through", st, p)
	}
}

// TestPassthroughUnmountClosesStore: the store lets go of its files when
// the mount ends.
func TestPassthroughUnmountClosesStore(t *testing.T) {
	requireFUSE(t)
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tree := buildTree(t, d.Path, fsnode.Options{ReadAhead: 4})
	mnt := t.TempDir()
	srv, err := Mount(mnt, tree, Options{MemFiles: 64 << 20, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	unmounted := false
	defer func() {
		if !unmounted {
			_ = srv.Unmount()
		}
	}()
	requirePassthrough(t, tree)
	store := tree.MemFiles()
	if _, err := os.ReadFile(filepath.Join(mnt, "G/MISC.WAD/frontend")); err != nil {
		t.Fatal(err)
	}
	if store.Stats().Files == 0 {
		t.Fatal("reading a decoded file left no file in the store")
	}
	if err := srv.Unmount(); err != nil {
		t.Fatal(err)
	}
	unmounted = true
	deadline := time.Now().Add(10 * time.Second)
	for tree.MemFiles() != nil || store.Stats().Files != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the unmount: tree's store %v, %+v", tree.MemFiles() != nil, store.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestNoPassthroughWithOverlay: a writable mount (an overlay) serves every
// read itself, whatever MemFiles says: an edit changes a file's bytes.
func TestNoPassthroughWithOverlay(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	requireFUSE(t)
	tree := buildTree(t, d.Path, fsnode.Options{ReadAhead: 4})
	ov, err := overlay.New(tree, t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	srv, root, err := mountTree(mnt, tree, Options{MemFiles: 64 << 20, Overlay: ov, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Unmount()
	p := "G/MISC.WAD/frontend"
	if got, err := os.ReadFile(filepath.Join(mnt, p)); err != nil || !bytes.Equal(got, d.Files[p]) {
		t.Fatalf("%s: %d bytes, %v", p, len(got), err)
	}
	if tree.MemFiles() != nil {
		t.Error("an overlay mount has a store of files for the kernel")
	}
	if root.sys.decodedReads.Load() == 0 {
		t.Error("an overlay mount's decoded read did not reach the server")
	}
}
