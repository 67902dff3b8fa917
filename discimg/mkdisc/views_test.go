package mkdisc

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"testing"

	"gcfs/assets"
)

// walkEntries calls fn for every entry of every generated file, parts too.
func walkEntries(files []*genFile, fn func(path string, e treeEntry)) {
	var walk func(prefix string, es []treeEntry)
	walk = func(prefix string, es []treeEntry) {
		for _, e := range es {
			p := prefix + "/" + e.name
			fn(p, e)
			walk(p+".d", e.parts)
		}
	}
	for _, f := range files {
		walk(f.path, f.entries)
	}
}

// TestTextureViewsAlpha: every texture the small layout writes stores PS2
// alphas 0..0x80, and the PNG its manifest names (decoded with image/png)
// has, at every pixel, the alpha Wrench maps the stored one to (a < 0x80 →
// 2a, else 255), read here from the stored bytes independently of the
// decoder. The textures between them store every alpha 0..0x80.
func TestTextureViewsAlpha(t *testing.T) {
	files := built(t, Small)
	seen := map[byte]bool{}
	n := 0
	walkEntries(files, func(path string, e treeEntry) {
		if e.asset != assetPIF && e.asset != assetRGBA {
			return
		}
		n++
		vs := views(path, e)
		if len(vs) != 1 {
			t.Fatalf("%s: %d views", path, len(vs))
		}
		decode := assets.DecodePIF
		if e.asset == assetRGBA {
			decode = assets.DecodeRGBABlob
		}
		tex, err := decode(e.data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		pngBytes := assets.EncodePNG(tex)
		if sha1Hex(pngBytes) != vs[0].SHA1 {
			t.Fatalf("%s: the manifest's PNG is not the texture's", path)
		}
		img, err := png.Decode(bytes.NewReader(pngBytes))
		if err != nil {
			t.Fatalf("%s: image/png: %v", path, err)
		}
		d := e.data
		le := binary.LittleEndian
		// storedAlpha reads pixel i's alpha from the stored bytes.
		var storedAlpha func(i int) byte
		w, h := int(le.Uint32(d[8:])), int(le.Uint32(d[12:]))
		if e.asset == assetRGBA {
			w, h = int(le.Uint32(d)), int(le.Uint32(d[4:]))
			storedAlpha = func(i int) byte { return d[16+4*i+3] }
		} else if le.Uint32(d[16:]) == 0x13 {
			storedAlpha = func(i int) byte {
				ix := int(d[0x20+1024+i])
				j := ix&^0x18 | ix>>1&0x08 | ix<<1&0x10
				return d[0x20+4*j+3]
			}
		} else {
			storedAlpha = func(i int) byte {
				ix := int(d[0x20+64+i/2] >> (4 * (i & 1)) & 0x0f)
				return d[0x20+4*ix+3]
			}
		}
		for y := range h {
			for x := range w {
				a := storedAlpha(y*w + x)
				if a > 0x80 {
					t.Fatalf("%s: stored alpha %#x past 0x80", path, a)
				}
				seen[a] = true
				want := byte(255)
				if a < 0x80 {
					want = 2 * a
				}
				if _, _, _, got := img.At(x, y).RGBA(); byte(got>>8) != want {
					t.Fatalf("%s (%d,%d): stored alpha %#x shows %d, want %d", path, x, y, a, got>>8, want)
				}
			}
		}
	})
	if n == 0 {
		t.Fatal("no textures")
	}
	for a := 0; a <= 0x80; a++ {
		if !seen[byte(a)] {
			t.Errorf("no texture stores alpha %#x", a)
		}
	}
}
