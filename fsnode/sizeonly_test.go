package fsnode

import (
	"fmt"
	"testing"

	"gcfs/discimg/mkdisc"
)

// TestSizeOnlyEncodesMatch: on every lazily sized view of a generated disc
// (the retail layout; the small one under -short), a size-only encode
// (what a listing's sizing runs) gives the full encode's length and
// attributes, and fails exactly where it fails; and the view so sized then
// reads as many bytes as its size. A wrong size-only length would list a
// file whose read fails.
func TestSizeOnlyEncodesMatch(t *testing.T) {
	layout := mkdisc.Retail
	if testing.Short() {
		layout = mkdisc.Small
	}
	path, _ := sharedImage(t, layout)
	tree, _ := openDisc(t, path, -1, Options{})
	kinds := map[string]int{}
	failed, checked := 0, 0
	var sizedOnly []*Node
	_ = tree.Walk(func(v *Node) error {
		if v.Kind != View || v.vm == nil || v.vm.lazy == nil {
			return nil
		}
		full, ferr := v.runEncode(false)
		part, perr := v.runEncode(true)
		checked++
		switch {
		case (ferr == nil) != (perr == nil):
			t.Errorf("%s: full encode error %v, size-only %v", v.Path(), ferr, perr)
		case ferr != nil:
			failed++
		case full.length() != part.length() || full.data == nil:
			t.Errorf("%s: full encode %d bytes, size-only %d", v.Path(), full.length(), part.length())
		case fmt.Sprint(full.attrs) != fmt.Sprint(part.attrs):
			t.Errorf("%s: attributes %v, size-only %v", v.Path(), full.attrs, part.attrs)
		default:
			if part.data == nil {
				kinds[v.Name]++
			}
			if len(sizedOnly) < 64 {
				sizedOnly = append(sizedOnly, v)
			}
		}
		return nil
	})
	// each kind that sizes without its bytes did so
	for _, name := range []string{"mesh.glb", "gameplay.json", "level.glb", "tfrags.glb", "collision.glb", "sky.glb"} {
		if kinds[name] == 0 {
			t.Errorf("no %s sized without its bytes (%v)", name, kinds)
		}
	}
	if layout == mkdisc.Retail && failed != 0 {
		t.Errorf("%d views of the retail layout fail to encode", failed)
	}
	// a fresh tree, its views sized as a listing sizes them, then read
	tree2, _ := openDisc(t, path, -1, Options{})
	for _, v := range sizedOnly {
		v2 := mustLookup(t, tree2, v.Path())
		v2.sizeLazy(false)
		if got := int64(len(readAll(t, v2))); got != v2.Size() || v2.Size() == 0 {
			t.Errorf("%s: sized %d, read %d bytes", v.Path(), v2.Size(), got)
		}
	}
	t.Logf("%d lazily sized views, %d that do not encode; sized without their bytes: %v", checked, failed, kinds)
}
