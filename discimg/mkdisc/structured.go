package mkdisc

import (
	"encoding/binary"
	"fmt"
	"image/color"
	"math/rand/v2"
	"strings"

	"gcfs/assets"
)

// Structured contents: the parts DISC-FACTS "Formats of the parts" describes,
// with real magic, so that the tree's NAME.d/ directories have something true
// to show: PIF textures, texlists and matlists, the irx bundle of IOP
// modules, RGBA blobs behind a {w, h} header, credits text blobs.

// pifTexture is a PIF texture (assets.EncodePIF: the 0x20-byte header, the
// palette, 8-bit palettes stored in the PS2's swizzled order, PS2 alpha
// 0..0x80, the pixels), w×h at depth 4 or 8, of a pattern drawn from rng.
// Its colours are drawn as the PNG shows them (8-bit alpha) and stored with
// the inverse of the view's alpha mapping, so that the stored alphas run
// 0..0x80 and the PNG's are exactly what was drawn.
func pifTexture(rng *rand.Rand, w, h, depth int) []byte {
	colours := 1 << depth
	base := rng.IntN(256)
	tex := &assets.Texture{Shape: assets.Shape{Width: w, Height: h, Depth: depth}, Palette: make([]color.NRGBA, colours), Pix: make([]byte, w*h)}
	for i := range tex.Palette {
		stored := byte(min(0x80, i*0x80/(colours-1)))
		tex.Palette[i] = color.NRGBA{R: byte(base + i*3), G: byte(255 - i), B: byte(i * 7), A: assets.PS2Alpha(stored)}
	}
	for y := range h {
		for x := range w {
			tex.Pix[y*w+x] = byte((x*3 + y*5 + base) % colours)
		}
	}
	b, err := assets.EncodePIF(tex)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: pifTexture %dx%d depth %d: %v", w, h, depth, err))
	}
	return b
}

// randomTexture is a PIF of a size drawn from rng, both depths.
func randomTexture(rng *rand.Rand, small bool) []byte {
	sides := []int{16, 32, 64, 128}
	if small {
		sides = sides[:3]
	}
	w, h := sides[rng.IntN(len(sides))], sides[rng.IntN(len(sides))]
	depth := 8
	if rng.IntN(3) == 0 {
		depth = 4
	}
	return pifTexture(rng, w, h, depth)
}

// rgbaBlob is raw RGBA behind a 16-byte {s32 width, s32 height, 8 bytes}
// header (BONUS credits_images, the irx image), PS2 alpha: every stored
// value 0..0x80 in turn, written from the 8-bit alpha the PNG shows
// (assets.EncodeRGBABlob).
func rgbaBlob(rng *rand.Rand, w, h int) []byte {
	seed := rng.IntN(256)
	tex := &assets.Texture{Shape: assets.Shape{Width: w, Height: h, Depth: 32}, Pix: make([]byte, 4*w*h)}
	for i := range w * h {
		copy(tex.Pix[4*i:], []byte{byte(i%w*4 + seed), byte(i / w * 4), byte(seed), assets.PS2Alpha(byte(i % 0x81))})
	}
	b, err := assets.EncodeRGBABlob(tex)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: rgbaBlob %dx%d: %v", w, h, err))
	}
	return b
}

// iopModule is an IOP module (an IRX: a MIPS ELF of type 0xff80), n bytes.
func iopModule(rng *rand.Rand, name string, n int) []byte {
	return assets.WriteIRX(max(n, 0x100), name)
}

// vagSound is a VAG of a sine sweep drawn from rng (20 to 60 frames), at
// most n bytes: the audio families and the scenes' speech hold VAGs.
func vagSound(rng *rand.Rand, label string, n int64) []byte {
	rate := []int{11025, 22050, 24000, 44100, 48000}[rng.IntN(5)]
	frames := 20 + rng.IntN(41)
	if max := (n - assets.VAGHeaderSize) / 16; int64(frames) > max {
		frames = int(max)
	}
	if frames < 1 {
		return nil
	}
	f0 := 200 + rng.IntN(800)
	name := label
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	return assets.EncodeVAG(assets.SineSweep(frames*28, rate, f0, f0*4, 12000), rate, name)
}

// videoRateCode is the frame_rate_code of video NN's sequence header: its
// subtitles are timed at that rate.
func videoRateCode(nn int) int { return [3]int{4, 3, 5}[nn%3] } // 29.97, 25, 30

// subtitleBlob is subtitles NN: a few cues in the five languages, at most n
// bytes (fewer cues when n is small).
func subtitleBlob(rng *rand.Rand, nn int, n int64) []byte {
	var cues []assets.SubtitleCue
	frame := int16(30 + rng.IntN(60))
	for c := 0; c < 2+rng.IntN(5); c++ {
		cue := assets.SubtitleCue{Start: frame, Stop: frame + int16(40+rng.IntN(120))}
		for l, lang := range assets.Languages {
			cue.Text[l] = fmt.Sprintf("[%s] Line %d of video %02d", lang, c+1, nn)
		}
		if c == 1 {
			cue.Text[2] = "" // a cue one language does not carry
		}
		next := append(append([]assets.SubtitleCue(nil), cues...), cue)
		if int64(len(assets.WriteSubtitles(next))) > n {
			break
		}
		cues = next
		frame = cue.Stop + int16(10+rng.IntN(50))
	}
	return assets.WriteSubtitles(cues)
}

// itemList lays items out as a texlist/matlist: s32 count, s32
// offsets[count] relative to the list, each item 16-aligned. With sums the
// parts carry their SHA-1 and exact sizes (decoded content); without, the last
// item runs "to the end" (size -1, resolved when the list's extent is known).
func itemList(items [][]byte, sums bool) ([]byte, []treeEntry) {
	hs := align(int64(4+4*len(items)), 16)
	offs := make([]int64, len(items))
	end := hs
	for i, it := range items {
		offs[i] = end
		end = align(end+int64(len(it)), 16)
	}
	b := make([]byte, end)
	binary.LittleEndian.PutUint32(b, uint32(len(items)))
	w := max(2, len(fmt.Sprint(len(items)-1)))
	var parts []treeEntry
	for i, it := range items {
		binary.LittleEndian.PutUint32(b[4+4*i:], uint32(offs[i]))
		copy(b[offs[i]:], it)
		next := end
		if i+1 < len(items) {
			next = offs[i+1]
		}
		e := treeEntry{name: fmt.Sprintf("%0*d", w, i), off: offs[i], n: next - offs[i], asset: assetPIF, data: it}
		if sums {
			e.sum = sha1Hex(b[offs[i]:next])
		} else if i == len(items)-1 {
			e.n = -1
		}
		parts = append(parts, e)
	}
	return b, parts
}

// textureList is a texlist of count textures (decoded content: parts summed).
func textureList(small bool) func(rng *rand.Rand, n int) ([]byte, []treeEntry) {
	return func(rng *rand.Rand, n int) ([]byte, []treeEntry) {
		var items [][]byte
		total := 0
		for len(items) < 2 || (total < n && len(items) < 64) {
			t := randomTexture(rng, small)
			items = append(items, t)
			total += len(t)
		}
		return itemList(items, true)
	}
}

// irxNames: the decoded MISC irx bundle's ranges after the image and two
// unused slots.
var irxModules = []string{"sio2man", "mcman", "mcserv", "dbcman", "sio2d", "ds2u", "stash", "libsd", "989snd"}

// irxBundle is the decoded MISC irx: 0x60 bytes of {s32 offset, s32 size}
// (image, two unused, nine IOP modules), then the parts, 16-aligned.
func irxBundle(rng *rand.Rand, n int) ([]byte, []treeEntry) {
	type item struct {
		name string
		b    []byte
	}
	items := []item{{"image", rgbaBlob(rng, 32, 16)}}
	per := max(0x400, (n-0x60)/len(irxModules))
	for _, m := range irxModules {
		items = append(items, item{m, iopModule(rng, m, per*(60+rng.IntN(80))/100)})
	}
	pos := int64(0x60)
	var out []byte = make([]byte, 0x60)
	var parts []treeEntry
	slot := 0
	for i, it := range items {
		if i == 1 {
			slot = 3 // slots 1 and 2 are unused: {0, 0}
		}
		out = append(out, it.b...)
		binary.LittleEndian.PutUint32(out[8*slot:], uint32(pos))
		binary.LittleEndian.PutUint32(out[8*slot+4:], uint32(len(it.b)))
		kind := assetELF
		if i == 0 {
			kind = assetRGBA
		}
		parts = append(parts, treeEntry{name: it.name, off: pos, n: int64(len(it.b)), sum: sha1Hex(it.b), asset: kind, data: it.b})
		pos += int64(len(it.b))
		for pos%16 != 0 {
			out = append(out, 0)
			pos++
		}
		slot++
	}
	return out, parts
}

// creditsText is BONUS credits_text: s32 offsets[8] relative to the extent,
// each blob running to the next.
func creditsText(g *gen, rng *rand.Rand) ([]byte, []treeEntry) {
	b := make([]byte, 32)
	for i := range 8 {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(len(b)))
		b = append(b, fmt.Sprintf("CREDITS %d\x00Going Commando synthetic credits, page %d of 8\x00", i, i+1)...)
		for j := 0; j < 20+rng.IntN(60); j++ {
			b = append(b, fmt.Sprintf("Name %d-%d\x00", i, j)...)
		}
	}
	return b, nil
}
