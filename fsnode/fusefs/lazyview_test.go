package fusefs

import (
	"errors"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"

	"gcfs/fsnode"
)

// lazyFake is a model view sized at its first Size, which finds it does not
// encode (fsnode's lazily sized views: ViewFailed after Size).
type lazyFake struct {
	fakeEntry
	sized atomic.Bool
}

func (e *lazyFake) Size() int64      { e.sized.Store(true); return 0 }
func (e *lazyFake) ViewFailed() bool { return e.sized.Load() }

// TestLazyViewFailedIsNoFile: a view that does not encode answers ENOENT at
// its lookup and is left out of the listings made after.
func TestLazyViewFailedIsNoFile(t *testing.T) {
	bad := &lazyFake{fakeEntry: fakeEntry{known: errors.New("no mesh: packet past its block")}}
	bad.path = "core/tfrags.glb"
	root := dir("", "", nil,
		dir("core", "core", nil,
			file("tfrags", "core/tfrags", fsnode.Nested, &fakeEntry{data: []byte("bytes")}),
			&mnode{name: "tfrags.glb", kind: fsnode.View, ino: inoOf(bad.path), e: bad},
		))
	img, _ := imageFile(t)
	mnt, _ := mountFake(t, root, Options{}, img, 8192)
	names := func() []string {
		ents, err := os.ReadDir(filepath.Join(mnt, "core"))
		if err != nil {
			t.Fatal(err)
		}
		var n []string
		for _, e := range ents {
			n = append(n, e.Name())
		}
		return n
	}
	if _, err := os.Stat(filepath.Join(mnt, "core", "tfrags.glb")); !errors.Is(err, syscall.ENOENT) {
		t.Fatalf("stat of a view that does not encode: %v, want ENOENT", err)
	}
	if got := names(); len(got) != 1 || got[0] != "tfrags" {
		t.Errorf("listing after the failed lookup: %q, want only tfrags", got)
	}
	if _, err := os.Stat(filepath.Join(mnt, "core", "tfrags")); err != nil {
		t.Errorf("its source: %v", err)
	}
}
