package fsnode

import (
	"testing"
	"time"
)

// lazyViewsBelow lists the lazily sized views below d, and how many are sized.
func lazyViewsBelow(d *Node) (all, sized int) {
	var walk func(*Node)
	walk = func(n *Node) {
		for _, c := range n.listed() {
			switch {
			case c.Kind == Dir:
				walk(c)
			case c.Kind == View && c.vm != nil && c.vm.lazy != nil:
				all++
				if c.vm.lazy.sized.Load() {
					sized++
				}
			}
		}
	}
	walk(d)
	return
}

// TestSizeChildren: listing a directory sizes every lazily sized view in it
// (in parallel), the same sizes a lookup's Size gives, with each encoded
// once; and the size-ahead worker sizes views below the listed directory,
// no more than its bound, without a lookup asking.
func TestSizeChildren(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	cls := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/mobies")
	var moby *Node
	for _, c := range cls.Children {
		if c.Kind == Dir && c.Child("mesh.glb") != nil && c.Child("mesh_low.glb") != nil {
			moby = c
			break
		}
	}
	if moby == nil {
		t.Fatal("no moby class with both glbs in LEVEL1")
	}
	before := tree.ViewEncodes()
	if _, sized := lazyViewsBelow(tree.Root); sized != 0 {
		t.Fatalf("%d views sized before any listing", sized)
	}
	moby.SizeChildren()
	for _, name := range []string{"mesh.glb", "mesh_low.glb"} {
		v := moby.Child(name)
		if !v.vm.lazy.sized.Load() {
			t.Fatalf("%s not sized by its directory's listing", name)
		}
		if v.Size() <= 0 {
			t.Errorf("%s: size %d", name, v.Size())
		}
		if _, ok := tree.Cache.Peek(v.viewBlockKey(0)); ok {
			t.Errorf("%s: a listing's sizing left its bytes in the block cache", name)
		}
	}
	// The listing also started the size-ahead worker, which sizes views
	// past the class; once it is done, every view sized anywhere was
	// encoded exactly once, and sizing the two again encodes nothing.
	waitSizeAhead(t, tree)
	_, sizedAll := lazyViewsBelow(tree.Root)
	for _, name := range []string{"mesh.glb", "mesh_low.glb"} {
		moby.Child(name).Size()
	}
	if got := tree.ViewEncodes() - before; got != int64(sizedAll) {
		t.Errorf("%d encodes for %d views sized (two listed, the rest ahead), then two sized again", got, sizedAll)
	}

	// The level's directory: its own level.glb, and views below it ahead.
	lvl := mustLookup(t, tree, "G/LEVEL2.WAD")
	all, sized := lazyViewsBelow(lvl)
	if sized != 0 || all < 4 {
		t.Fatalf("LEVEL2 before its listing: %d of %d views below it sized", sized, all)
	}
	lvl.SizeChildren()
	deadline := time.Now().Add(20 * time.Second)
	want := min(all, sizeAheadViews)
	for {
		tree.sizing.mu.Lock()
		running := tree.sizing.running
		tree.sizing.mu.Unlock()
		_, sized = lazyViewsBelow(lvl)
		if !running && sized >= want {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("size-ahead: %d of %d views below LEVEL2 sized (want %d), worker running %v", sized, all, want, running)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Listings in quick succession (a walk) are served by one worker, not
	// one started (a thread made and ended) for each.
	started := tree.sizing.started.Load()
	for _, c := range lvl.Children {
		if c.Kind == Dir {
			c.SizeChildren()
		}
	}
	lvl.SizeChildren()
	if got := tree.sizing.started.Load() - started; got > 1 {
		t.Errorf("%d size-ahead workers started for listings in quick succession", got)
	}
	if sized > sizeAheadViews+2 { // the worker's bound, and the listing's own
		t.Errorf("size-ahead sized %d views for one listing; its bound is %d", sized, sizeAheadViews)
	}
}

// waitSizeAhead waits for the size-ahead worker to end its run.
func waitSizeAhead(t *testing.T, tree *Tree) {
	t.Helper()
	waitUntil(t, "the size-ahead worker to end its run", 20*time.Second, func() bool {
		tree.sizing.mu.Lock()
		defer tree.sizing.mu.Unlock()
		return !tree.sizing.running
	})
}

// TestSizeAheadGoesOn: the worker's cursor goes on past the listed
// directory in tree order (into the next levels, which a walk lists next),
// sizes nothing before it, and sizes at most its bound past one listing.
func TestSizeAheadGoesOn(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	g := mustLookup(t, tree, "G")
	var levels []*Node // the level directories, in tree order
	for _, c := range g.Children {
		if all, _ := lazyViewsBelow(c); c.Kind == Dir && all > 0 {
			levels = append(levels, c)
		}
	}
	if len(levels) < 5 {
		t.Fatalf("%d level directories with views", len(levels))
	}
	listed := levels[1]
	direct := 0
	for _, c := range listed.Children {
		if c.Kind == View && c.vm != nil && c.vm.lazy != nil {
			direct++
		}
	}
	listed.SizeChildren()
	waitSizeAhead(t, tree)
	total := 0
	for i, lv := range levels {
		all, sized := lazyViewsBelow(lv)
		total += sized
		switch {
		case i == 0 && sized != 0:
			t.Errorf("%s, before the listed directory: %d of %d views sized", lv.Path(), sized, all)
		case i == 1 && sized != all:
			t.Errorf("%s, the listed directory: %d of %d views sized", lv.Path(), sized, all)
		case i == 2 && sized != all:
			t.Errorf("%s, the next after it: %d of %d views sized", lv.Path(), sized, all)
		}
	}
	if total > sizeAheadViews+direct {
		t.Errorf("%d views sized for one listing; the bound is %d past it (and its own %d)", total, sizeAheadViews, direct)
	}
	if total < min(sizeAheadViews, 40) {
		t.Errorf("only %d views sized ahead of one listing", total)
	}
}
