package mkdisc

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
)

// Structured contents: the parts DISC-FACTS "Formats of the parts" describes,
// with real magic, so that the tree's NAME.d/ directories have something true
// to show: PIF textures, texlists and matlists, the irx bundle of IOP
// modules, RGBA blobs behind a {w, h} header, credits text blobs.

// pifTexture is a PIF texture: the 0x20-byte header (magic "2FIP", file
// size, width, height, format 0x13 (8-bit) or 0x94 (4-bit), clut format,
// clut order, mip levels), the RGBA32 palette (8-bit palettes in the PS2's
// swizzled order), then the pixels (4-bit: low nibble first).
func pifTexture(rng *rand.Rand, w, h, depth int) []byte {
	colours, format := 256, uint32(0x13)
	if depth == 4 {
		colours, format = 16, 0x94
	}
	pixels := w * h * depth / 8
	b := make([]byte, 0x20+4*colours+pixels)
	le := binary.LittleEndian
	copy(b, "2FIP")
	le.PutUint32(b[4:], uint32(len(b)))
	le.PutUint32(b[8:], uint32(w))
	le.PutUint32(b[12:], uint32(h))
	le.PutUint32(b[16:], format)
	le.PutUint32(b[20:], 0)
	le.PutUint32(b[24:], 0)
	le.PutUint32(b[28:], 1)
	pal := b[0x20 : 0x20+4*colours]
	base := rng.IntN(256)
	for i := range colours {
		at := i
		if depth == 8 {
			at = i&^0x18 | (i&0x08)<<1 | (i&0x10)>>1 // bits 3 and 4 swapped
		}
		pal[4*at] = byte(base + i*3)
		pal[4*at+1] = byte(255 - i)
		pal[4*at+2] = byte(i * 7)
		pal[4*at+3] = byte(min(0x80, i*0x80/(colours-1))) // PS2 alpha 0..0x80
	}
	px := b[0x20+4*colours:]
	for y := range h {
		for x := range w {
			v := (x*3 + y*5 + base) % colours
			if depth == 8 {
				px[y*w+x] = byte(v)
			} else if i := y*w + x; i%2 == 0 {
				px[i/2] |= byte(v)
			} else {
				px[i/2] |= byte(v) << 4
			}
		}
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
// header (BONUS credits_images, the irx image).
func rgbaBlob(rng *rand.Rand, w, h int) []byte {
	b := make([]byte, 16+4*w*h)
	binary.LittleEndian.PutUint32(b[0:], uint32(w))
	binary.LittleEndian.PutUint32(b[4:], uint32(h))
	seed := rng.IntN(256)
	for i := 0; i < w*h; i++ {
		p := b[16+4*i:]
		p[0], p[1], p[2], p[3] = byte(i%w*4+seed), byte(i/w*4), byte(seed), 0x80
	}
	return b
}

// iopModule is an IOP module: an ELF32 little-endian MIPS header (type 0xff80,
// IRX) and a body of n bytes in all.
func iopModule(rng *rand.Rand, name string, n int) []byte {
	n = max(n, 0x100)
	b := make([]byte, n)
	le := binary.LittleEndian
	copy(b, "\x7fELF\x01\x01\x01")
	le.PutUint16(b[16:], 0xff80) // ET_SCE_IOPRELEXEC
	le.PutUint16(b[18:], 8)      // EM_MIPS
	le.PutUint32(b[20:], 1)
	le.PutUint16(b[40:], 52)
	copy(b[0x80:], "GCFS synthetic IOP module "+name)
	for i := 0xc0; i+4 <= n; i += 4 {
		le.PutUint32(b[i:], 0x24020000|rng.Uint32()&0xffff)
	}
	return b
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
		e := treeEntry{name: fmt.Sprintf("%0*d", w, i), off: offs[i], n: next - offs[i]}
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
		parts = append(parts, treeEntry{name: it.name, off: pos, n: int64(len(it.b)), sum: sha1Hex(it.b)})
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
