package fsnode

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"
)

// The tests below read the views with readers of their own (image/png, a WAV
// header parser, a PS-ADPCM decoder and a PIF decoder written here), not with
// package assets, and compare with the stored bytes mkdisc wrote.

// pifPixel decodes pixel (x, y) of a PIF texture as DISC-FACTS describes it:
// 8-bit palettes stored with bits 3 and 4 of the index swapped, 4-bit pixels
// low nibble first, PS2 alpha mapped as Wrench maps it (wrenchAlpha).
func pifPixel(b []byte, x, y int) (r, g, bl, a uint8) {
	le := binary.LittleEndian
	w := int(le.Uint32(b[8:]))
	format := le.Uint32(b[16:])
	colours, pix := 256, 0x20+4*256
	var idx int
	if format == 0x94 {
		colours, pix = 16, 0x20+4*16
		v := b[pix+(y*w+x)/2]
		if (y*w+x)%2 == 0 {
			idx = int(v & 0xf)
		} else {
			idx = int(v >> 4)
		}
	} else {
		idx = int(b[pix+y*w+x])
		idx = idx&^0x18 | (idx&0x08)<<1 | (idx&0x10)>>1
	}
	_ = colours
	p := b[0x20+4*idx:]
	return p[0], p[1], p[2], wrenchAlpha(p[3])
}

// wrenchAlpha is DISC-FACTS's alpha rule: a stored a < 0x80 is 2a, anything
// from 0x80 up opaque.
func wrenchAlpha(a uint8) uint8 {
	if a >= 0x80 {
		return 255
	}
	return 2 * a
}

func TestPNGViewPixels(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	checked := 0
	for _, p := range []string{"G/ARMOR.WAD/armor0_textures.d/00", "G/ARMOR.WAD/wrench5_textures.d/01",
		"G/BONUS.WAD/goodies_images/00", "G/LEVEL1.WAD/data.d/transition_textures.d/00", "G/MISC.WAD/debug_font"} {
		src := readAll(t, mustLookup(t, tree, p))
		view := mustLookup(t, tree, p+".png")
		if k, s := view.View(); k != ViewPNG || s.Path() != p {
			t.Fatalf("%s.png: view %q of %v", p, k, s)
		}
		// A 4-bit texture's PNG says its pixel order (the GS's, not Wrench's).
		order, has := view.Xattr(XattrPrefix + "pixel_order")
		if four := binary.LittleEndian.Uint32(src[16:]) == 0x94; four != has || four && !strings.Contains(order, "low nibble") {
			t.Fatalf("%s.png: pixel_order %q (%v), 4-bit %v", p, order, has, four)
		}
		pngBytes := readAll(t, view)
		img, err := png.Decode(bytes.NewReader(pngBytes))
		if err != nil {
			t.Fatalf("%s.png: %v", p, err)
		}
		w, h := int(binary.LittleEndian.Uint32(src[8:])), int(binary.LittleEndian.Uint32(src[12:]))
		if img.Bounds() != image.Rect(0, 0, w, h) {
			t.Fatalf("%s.png: bounds %v, PIF %dx%d", p, img.Bounds(), w, h)
		}
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				r, g, b, a := pifPixel(src, x, y)
				c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
				if c.A != a || a != 0 && (c.R != r || c.G != g || c.B != b) {
					t.Fatalf("%s (%d,%d): %v, want %d %d %d %d", p, x, y, c, r, g, b, a)
				}
			}
		}
		checked++
	}
	// a raw RGBA blob behind its {w, h} header
	blob := readAll(t, mustLookup(t, tree, "G/MISC.WAD/irx.d/image"))
	img, err := png.Decode(bytes.NewReader(readAll(t, mustLookup(t, tree, "G/MISC.WAD/irx.d/image.png"))))
	if err != nil {
		t.Fatal(err)
	}
	w, h := int(binary.LittleEndian.Uint32(blob)), int(binary.LittleEndian.Uint32(blob[4:]))
	if img.Bounds() != image.Rect(0, 0, w, h) {
		t.Fatalf("RGBA blob png %v, header %dx%d", img.Bounds(), w, h)
	}
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			px := blob[16+4*(y*w+x):]
			a := wrenchAlpha(px[3])
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.A != a || a != 0 && (c.R != px[0] || c.G != px[1] || c.B != px[2]) {
				t.Fatalf("RGBA blob (%d,%d): png %v, blob % x", x, y, c, px[:4])
			}
		}
	}
	if checked != 5 {
		t.Fatal("not every texture checked")
	}
}

// adpcm decodes PS-ADPCM frames as the PS2's SPU does: each 16-byte frame a
// shift/filter byte, a flags byte, 28 4-bit samples.
func adpcm(data []byte) []int16 {
	coef := [5][2]int{{0, 0}, {60, 0}, {115, -52}, {98, -55}, {122, -60}}
	var out []int16
	s1, s2 := 0, 0
	for f := 0; f+16 <= len(data); f += 16 {
		shift, filter := int(data[f]&0xf), int(data[f]>>4)
		if filter > 4 {
			filter = 0
		}
		if shift > 12 {
			shift = 9
		}
		for i := 0; i < 28; i++ {
			nib := int(data[f+2+i/2])
			if i%2 == 0 {
				nib &= 0xf
			} else {
				nib >>= 4
			}
			s := int(int16(nib<<12)) >> shift
			s += (s1*coef[filter][0] + s2*coef[filter][1] + 32) >> 6
			s = max(-32768, min(32767, s))
			s2, s1 = s1, s
			out = append(out, int16(s))
		}
	}
	return out
}

func TestWAVViewSamples(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	for _, p := range []string{"G/AUDIO.WAD/vendor/000", "G/AUDIO3.WAD/bin_data/000", "G/SCENE1.WAD/scene00/speech_english_left"} {
		vag := readAll(t, mustLookup(t, tree, p+".vag"))
		wav := readAll(t, mustLookup(t, tree, p+".wav"))
		be := binary.BigEndian
		dataSize, rate := int(be.Uint32(vag[0x0c:])), be.Uint32(vag[0x10:])
		le := binary.LittleEndian
		if string(wav[0:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || le.Uint16(wav[20:]) != 1 || le.Uint16(wav[22:]) != 1 ||
			le.Uint32(wav[24:]) != rate || le.Uint16(wav[34:]) != 16 || string(wav[36:40]) != "data" ||
			int(le.Uint32(wav[4:])) != len(wav)-8 || int(le.Uint32(wav[40:])) != len(wav)-44 {
			t.Fatalf("%s.wav: header % x", p, wav[:44])
		}
		want := adpcm(vag[0x30 : 0x30+dataSize/16*16])
		if len(wav)-44 != 2*len(want) {
			t.Fatalf("%s.wav: %d PCM bytes, %d samples decoded", p, len(wav)-44, len(want))
		}
		for i, s := range want {
			if got := int16(le.Uint16(wav[44+2*i:])); got != s {
				t.Fatalf("%s.wav: sample %d = %d, want %d", p, i, got, s)
			}
		}
	}
}

// Sizes of views are known without encoding anything: listing every texture
// misses the cache not once.
func TestViewSizesWithoutEncoding(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{})
	n := 0
	_ = tree.Walk(func(v *Node) error {
		if k, _ := v.View(); k != "" {
			if v.vm.lazy != nil {
				return nil // sized by one encode by design (lazyview.go; gameplay.json, level.glb)
			}
			if v.Size() <= 0 {
				t.Errorf("%s: size %d", v.Path(), v.Size())
			}
			n++
		}
		return nil
	})
	if st := tree.Cache.Stats(); st.Misses != 0 || st.Entries != 0 || n < 100 {
		t.Errorf("%d views listed: cache %+v", n, st)
	}
}

func TestNoViews(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{NoViews: true})
	_ = tree.Walk(func(v *Node) error {
		if k, _ := v.View(); k != "" || strings.HasSuffix(v.Name, ".png") || strings.HasSuffix(v.Name, ".wav") || strings.HasSuffix(v.Name, ".srt") {
			t.Errorf("--no-views shows %s", v.Path())
		}
		return nil
	})
	mustLookup(t, tree, "G/AUDIO.WAD/vendor/000.vag") // stored bytes keep their format name
}

// A texture whose header does not fit its bytes, a VAG whose declared size
// runs past its extent, a subtitle text outside its blob: no view (for that
// language), the reason in ViewError, the stored bytes still read.
func TestBadViews(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	tex := mustLookup(t, tree, "G/ARMOR.WAD/armor1_textures.d/00")
	vag := mustLookup(t, tree, "G/AUDIO.WAD/vendor/001.vag")
	sub := mustLookup(t, tree, "G/MPEG.WAD/subtitles02")
	texOff, _, _ := tex.ImageRange()
	vagOff, vagSize, _ := vag.ImageRange()
	subOff, _, _ := sub.ImageRange()
	patchImage(t, path, texOff+8, le32(16384)) // width 16384
	var be [4]byte
	binary.BigEndian.PutUint32(be[:], uint32(vagSize)) // data past the extent
	patchImage(t, path, vagOff+0x0c, be[:])
	patchImage(t, path, subOff+4+2*1, []byte{0xff, 0x7f}) // record 0's French text at 32767
	tree, _ = openDisc(t, path, -1, Options{})
	for _, c := range []struct{ src, gone, why string }{
		{"G/ARMOR.WAD/armor1_textures.d/00", "G/ARMOR.WAD/armor1_textures.d/00.png", "no PNG"},
		{"G/AUDIO.WAD/vendor/001.vag", "G/AUDIO.WAD/vendor/001.wav", "no WAV"},
		{"G/MPEG.WAD/subtitles02", "G/MPEG.WAD/subtitles02.d/french.srt", "no french.srt"},
	} {
		if _, err := tree.Lookup(c.gone); err == nil {
			t.Errorf("%s still listed", c.gone)
		}
		n := mustLookup(t, tree, c.src)
		if err := n.ViewError(); err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%s: view error %v, want %q", c.src, err, c.why)
		}
		readAll(t, n)
	}
	mustLookup(t, tree, "G/MPEG.WAD/subtitles02.d/english.srt")
	mustLookup(t, tree, "G/ARMOR.WAD/armor1_textures.d/01.png")
}
