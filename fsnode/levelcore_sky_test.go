package fsnode

import (
	"bytes"
	"image/png"
	"strings"
	"testing"
)

// TestSkyTexturesLazy: sky.d/ is there with the sky block; walking the
// core (as listing it does) leaves sky.d/textures/ unlisted and decodes
// nothing; its first listing reads the sky block's header range of
// core_data (the cache misses, no stream is scanned twice) and makes one
// PNG a texture def, with the width the PNG has; its xattrs say it lists
// core_data and left nothing out.
func TestSkyTexturesLazy(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	core := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core")
	scanned, misses := tree.scanned.Load(), tree.Cache.Stats().Misses
	sawSky := false
	_ = WalkFrom(core, func(n *Node) error {
		if n.Name == "sky.d" {
			sawSky = true
		}
		if !strings.HasSuffix(n.Name, ".glb") { // sized by encoding, by design
			_ = n.Size()
		}
		return nil
	})
	tex := core.Child("sky.d").Children[0]
	if !sawSky || tex.Name != "textures" || !tex.Lazy() || tex.Listed() || len(tex.Children) != 0 {
		t.Fatalf("sky.d seen %v, textures %q lazy %v listed %v", sawSky, tex.Name, tex.Lazy(), tex.Listed())
	}
	if s, m := tree.scanned.Load(), tree.Cache.Stats().Misses; s != scanned || m != misses {
		t.Fatalf("walking the core scanned %d streams, missed the cache %d times", s-scanned, m-misses)
	}
	if v, _ := tex.Xattr(XattrPrefix + "lists_core_data"); v != "true" {
		t.Errorf("lists_core_data %q", v)
	}
	if ok, _, _ := tex.SkyTextures(); ok {
		t.Error("listed before its listing")
	}
	kids := tex.List()
	if tree.Cache.Stats().Misses == misses {
		t.Error("listing sky.d/textures/ read nothing of core_data")
	}
	listed, declared, skipped := tex.SkyTextures()
	if !listed || declared != len(kids) || len(kids) != 3 || len(skipped) != 0 {
		t.Fatalf("listed %v, declared %d, %d textures, skipped %v", listed, declared, len(kids), skipped)
	}
	for i, k := range kids {
		if want := []string{"00.png", "01.png", "02.png"}[i]; k.Name != want || k.Path() != tex.Path()+"/"+want || k.Ino <= 1 {
			t.Errorf("texture %d: %q %q ino %d", i, k.Name, k.Path(), k.Ino)
		}
		b := readAll(t, k)
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil || int64(len(b)) != k.Size() {
			t.Fatalf("%s: %v (%d bytes, listed %d)", k.Path(), err, len(b), k.Size())
		}
		if w, _ := k.Xattr(XattrPrefix + "width"); w != itoa(int64(img.Bounds().Dx())) {
			t.Errorf("%s: width %q, PNG %d", k.Name, w, img.Bounds().Dx())
		}
		if v, _ := k.Xattr(XattrPrefix + "texture_table"); v != "sky" {
			t.Errorf("%s: texture_table %q", k.Name, v)
		}
	}
	if n, err := tree.Lookup("G/LEVEL2.WAD/data.d/core/sky.d/textures/01.png"); err != nil || n.Kind != View {
		t.Errorf("lookup inside an unlisted sky.d/textures/: %v", err)
	}
	if v, _ := tex.Xattr(XattrPrefix + "skipped"); v != "0" {
		t.Errorf("skipped %q", v)
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

// TestSkyTexturesUnreadable: a core_data that cannot be decoded (here past
// --max-decoded): sky.d/textures/ lists nothing, counts the table left out
// in user.gcfs.skipped with core_data's error as the reason, and logs
// nothing of its own (core_data's error is reported with core_data).
func TestSkyTexturesUnreadable(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{MaxDecoded: 4 << 10})
	tex := mustLookup(t, tree, "G/LEVEL1.WAD/data.d/core/sky.d/textures")
	if kids := tex.List(); len(kids) != 0 {
		t.Fatalf("%d textures listed", len(kids))
	}
	_, _, skipped := tex.SkyTextures()
	if v, _ := tex.Xattr(XattrPrefix + "skipped"); v != "1" || len(skipped) != 1 || !strings.Contains(skipped[0], "core_data") {
		t.Errorf("skipped %q: %v", v, skipped)
	}
	if n := logs.Count("sky.d"); n != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}
