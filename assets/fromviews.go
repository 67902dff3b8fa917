package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"sort"
)

// Views taken back (SPEC "Editing": what an edit of a view becomes): a PNG
// written over a texture's NAME.png becomes the texture again at the same
// size and depth, a WAV over a sound's NAME.wav a VAG at the WAV's rate.

// ErrEdit is wrapped by every error about a view's edit that cannot be taken
// back to the disc's format.
var ErrEdit = errors.New("assets: the edit cannot be stored in the disc's format")

func editErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrEdit, fmt.Sprintf(format, args...))
}

// PS2AlphaFrom8 is PS2Alpha's inverse: the PS2 alpha (0..0x80) whose 8-bit
// value is nearest a. It gives back every PS2 alpha PS2Alpha maps.
func PS2AlphaFrom8(a uint8) uint8 {
	best, bestD := uint8(0), 1<<10
	for v := 0; v <= 0x80; v++ {
		d := int(PS2Alpha(uint8(v))) - int(a)
		if d < 0 {
			d = -d
		}
		if d < bestD {
			best, bestD = uint8(v), d
		}
	}
	return best
}

// decodePNGAt decodes png and checks it is w×h.
func decodePNGAt(b []byte, w, h int) (image.Image, error) {
	cfg, err := png.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, editErr("not a PNG (%v): write a PNG image", err)
	}
	if cfg.Width != w || cfg.Height != h {
		return nil, editErr("the PNG is %dx%d, the texture %dx%d: the disc's texture keeps its size", cfg.Width, cfg.Height, w, h)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, editErr("the PNG does not decode: %v", err)
	}
	return img, nil
}

func nrgbaAt(img image.Image, x, y int) color.NRGBA {
	b := img.Bounds()
	return color.NRGBAModel.Convert(img.At(b.Min.X+x, b.Min.Y+y)).(color.NRGBA)
}

// PIFFromPNG makes the texture orig (a PIF) show the PNG pic: same width,
// height and depth. When every colour of pic is in orig's palette, the
// palette and header are kept (a PNG written back unchanged gives orig's
// bytes back); otherwise the palette is rebuilt from pic's colours,
// quantised by median cut when there are more than the depth holds (note
// says so). Alpha goes back to PS2's 0..0x80; an 8-bit palette is stored
// swizzled. Bytes after the first level (further mip levels) are kept.
func PIFFromPNG(orig, pic []byte) (out []byte, note string, err error) {
	t, err := DecodePIF(orig)
	if err != nil {
		return nil, "", err
	}
	h, _ := ParsePIFHeader(orig)
	img, err := decodePNGAt(pic, t.Width, t.Height)
	if err != nil {
		return nil, "", err
	}
	palette, index, kept, note := fitPNG(t, img)
	out = append([]byte(nil), orig...)
	if !kept { // (kept: the stored bytes stay as they are)
		storePalette(out[PIFHeaderSize:PIFHeaderSize+h.PaletteBytes()], palette, t.Depth == 8)
	}
	pix := out[PIFHeaderSize+h.PaletteBytes() : h.DataSize()]
	if t.Depth == 8 {
		copy(pix, index)
	} else {
		clear(pix)
		for i, ix := range index {
			if i&1 == 0 {
				pix[i/2] |= ix & 0x0f
			} else {
				pix[i/2] |= ix << 4
			}
		}
	}
	return out, note, nil
}

// Indexed8FromPNG makes a level texture (LEVEL-CORE §1.5: width × height
// 8-bit indices pix, a stored 256-colour palette) show the PNG pic, as
// PIFFromPNG does a PIF's 8-bit texture: the same size; the palette kept
// when every colour of pic is in it (a PNG written back unchanged gives
// the same bytes), else rebuilt (quantised where pic has more than 256
// colours, note says so), swizzled and in PS2 alpha. A palette other
// textures share (sharedPalette) is never rebuilt: each colour it lacks
// becomes its nearest colour in it, and note says how many did.
func Indexed8FromPNG(width, height int, pix, palette, pic []byte, sharedPalette bool) (newPix, newPalette []byte, note string, err error) {
	t, err := DecodeIndexed8(width, height, pix, palette)
	if err != nil {
		return nil, nil, "", err
	}
	img, err := decodePNGAt(pic, width, height)
	if err != nil {
		return nil, nil, "", err
	}
	pal, index, kept, note := fitPNG(t, img)
	if !kept && sharedPalette {
		index, note = nearestIndices(img, t)
		return index, append([]byte(nil), palette...), note, nil
	}
	newPalette = append([]byte(nil), palette...)
	if !kept {
		storePalette(newPalette, pal, true)
	}
	return index, newPalette, note, nil
}

// fitPNG is texture t (decoded from the disc) showing img (a PNG's, at
// t's size): its palette and each pixel's index. kept: every colour of pic is
// in t's palette, which is kept (each pixel keeps its index where its
// colour is still the index's); else the palette is rebuilt from pic's
// colours, quantised to t's depth where there are more (note says so).
// Alpha is what the disc can hold (PS2's 0..0x80 and back).
func fitPNG(t *Texture, img image.Image) (palette []color.NRGBA, index []byte, kept bool, note string) {
	n := t.Width * t.Height
	px := make([]color.NRGBA, n)
	for y := 0; y < t.Height; y++ {
		for x := 0; x < t.Width; x++ {
			c := nrgbaAt(img, x, y)
			c.A = PS2Alpha(PS2AlphaFrom8(c.A)) // the alpha the disc can hold
			px[y*t.Width+x] = c
		}
	}
	index = make([]byte, n)
	inPal := map[color.NRGBA]int{}
	for i := len(t.Palette) - 1; i >= 0; i-- {
		inPal[t.Palette[i]] = i
	}
	for i, c := range px {
		if t.Palette[t.Pix[i]] == c {
			index[i] = t.Pix[i] // the original index, where it still fits
			continue
		}
		j, ok := inPal[c]
		if !ok {
			palette, index, note = quantise(px, t.Colors())
			return palette, index, false, note
		}
		index[i] = byte(j)
	}
	return t.Palette, index, true, ""
}

// nearestIndices maps each pixel of img to the nearest colour of t's
// palette (squared distance over R, G, B and A, A as the disc holds it).
func nearestIndices(img image.Image, t *Texture) ([]byte, string) {
	index := make([]byte, t.Width*t.Height)
	memo := map[color.NRGBA]byte{}
	inPal := map[color.NRGBA]bool{}
	for _, c := range t.Palette {
		inPal[c] = true
	}
	mapped := map[color.NRGBA]bool{}
	for y := 0; y < t.Height; y++ {
		for x := 0; x < t.Width; x++ {
			c := nrgbaAt(img, x, y)
			c.A = PS2Alpha(PS2AlphaFrom8(c.A))
			ix, ok := memo[c]
			if !ok {
				best := -1
				for i, p := range t.Palette {
					dr, dg, db, da := int(c.R)-int(p.R), int(c.G)-int(p.G), int(c.B)-int(p.B), int(c.A)-int(p.A)
					if d := dr*dr + dg*dg + db*db + da*da; best < 0 || d < best {
						best, ix = d, byte(i)
					}
				}
				memo[c] = ix
				if !inPal[c] {
					mapped[c] = true
				}
			}
			index[y*t.Width+x] = ix
		}
	}
	return index, fmt.Sprintf("the palette is shared with other textures and kept: %d colours not in it became its nearest", len(mapped))
}

// storePalette writes a rebuilt palette into a stored palette dst (4 bytes
// a colour, PS2 alpha; swizzled for 8-bit textures), zeroing the entries
// past it.
func storePalette(dst []byte, palette []color.NRGBA, swizzled bool) {
	colours := len(dst) / 4
	put := func(i int, b []byte) {
		j := i
		if swizzled {
			j = SwizzlePaletteIndex(i)
		}
		copy(dst[4*j:4*j+4], b)
	}
	for i, c := range palette[:min(len(palette), colours)] {
		put(i, []byte{c.R, c.G, c.B, PS2AlphaFrom8(c.A)})
	}
	for i := len(palette); i < colours; i++ {
		put(i, []byte{0, 0, 0, 0})
	}
}

// quantise builds a palette of at most k colours for px (median cut over
// the distinct colours, weighted by how often each is used) and each
// pixel's index into it.
func quantise(px []color.NRGBA, k int) ([]color.NRGBA, []byte, string) {
	count := map[color.NRGBA]int{}
	for _, c := range px {
		count[c]++
	}
	distinct := make([]color.NRGBA, 0, len(count))
	for c := range count {
		distinct = append(distinct, c)
	}
	sort.Slice(distinct, func(i, j int) bool { return less(distinct[i], distinct[j]) })
	note := ""
	var palette []color.NRGBA
	if len(distinct) <= k {
		palette = distinct
	} else {
		note = fmt.Sprintf("%d colours quantised to the %d the texture's depth holds", len(distinct), k)
		boxes := [][]color.NRGBA{distinct}
		for len(boxes) < k {
			// split the box with the widest channel range
			bi, ch, width := -1, 0, -1
			for i, b := range boxes {
				if len(b) < 2 {
					continue
				}
				for c := 0; c < 4; c++ {
					lo, hi := 255, 0
					for _, col := range b {
						v := channel(col, c)
						lo, hi = min(lo, v), max(hi, v)
					}
					if hi-lo > width {
						bi, ch, width = i, c, hi-lo
					}
				}
			}
			if bi < 0 {
				break
			}
			b := boxes[bi]
			sort.Slice(b, func(i, j int) bool { return channel(b[i], ch) < channel(b[j], ch) })
			total := 0
			for _, col := range b {
				total += count[col]
			}
			cut, acc := 1, 0
			for i, col := range b[:len(b)-1] {
				acc += count[col]
				cut = i + 1
				if 2*acc >= total {
					break
				}
			}
			boxes[bi] = b[:cut]
			boxes = append(boxes, b[cut:])
		}
		for _, b := range boxes {
			var s [4]int
			w := 0
			for _, col := range b {
				n := count[col]
				for c := 0; c < 4; c++ {
					s[c] += n * channel(col, c)
				}
				w += n
			}
			palette = append(palette, color.NRGBA{uint8(s[0] / w), uint8(s[1] / w), uint8(s[2] / w), PS2Alpha(PS2AlphaFrom8(uint8(s[3] / w)))})
		}
	}
	index := make([]byte, len(px))
	memo := map[color.NRGBA]byte{}
	for i, c := range px {
		j, ok := memo[c]
		if !ok {
			bestD := -1
			for pi, p := range palette {
				d := 0
				for ch := 0; ch < 4; ch++ {
					e := channel(c, ch) - channel(p, ch)
					d += e * e
				}
				if bestD < 0 || d < bestD {
					j, bestD = byte(pi), d
				}
			}
			memo[c] = j
		}
		index[i] = j
	}
	return palette, index, note
}

func channel(c color.NRGBA, i int) int { return int([4]uint8{c.R, c.G, c.B, c.A}[i]) }

func less(a, b color.NRGBA) bool {
	return binary.BigEndian.Uint32([]byte{a.R, a.G, a.B, a.A}) < binary.BigEndian.Uint32([]byte{b.R, b.G, b.B, b.A})
}

// RGBABlobFromPNG makes the raw RGBA blob orig show pic (same size; its
// 16-byte header kept; alpha back to PS2's range).
func RGBABlobFromPNG(orig, pic []byte) ([]byte, error) {
	t, err := DecodeRGBABlob(orig)
	if err != nil {
		return nil, err
	}
	img, err := decodePNGAt(pic, t.Width, t.Height)
	if err != nil {
		return nil, err
	}
	out := append([]byte(nil), orig...)
	for y := 0; y < t.Height; y++ {
		for x := 0; x < t.Width; x++ {
			c := nrgbaAt(img, x, y)
			copy(out[RGBABlobHeaderSize+4*(y*t.Width+x):], []byte{c.R, c.G, c.B, PS2AlphaFrom8(c.A)})
		}
	}
	return out, nil
}

// maxWAVChunks bounds the RIFF chunks walked.
const maxWAVChunks = 64

// VAGFromWAV encodes a WAV (16-bit mono PCM, 1..MaxSampleRate Hz) as a VAG
// at the WAV's rate, keeping orig's name.
func VAGFromWAV(orig, wav []byte) ([]byte, error) {
	if len(wav) < 12 || string(wav[:4]) != "RIFF" || string(wav[8:12]) != "WAVE" {
		return nil, editErr("not a WAV file (no RIFF WAVE header): write a 16-bit mono PCM WAV")
	}
	var rate uint32
	var fmtSeen bool
	var data []byte
	for off, n := 12, 0; off+8 <= len(wav) && n < maxWAVChunks; n++ {
		id := string(wav[off : off+4])
		size := int(binary.LittleEndian.Uint32(wav[off+4:]))
		body := wav[off+8:]
		if size < 0 || size > len(body) {
			if id == "data" {
				size = len(body) // a writer that did not patch the size
			} else {
				return nil, editErr("WAV chunk %q at %d runs past the file", id, off)
			}
		}
		body = body[:size]
		switch id {
		case "fmt ":
			if len(body) < 16 {
				return nil, editErr("WAV fmt chunk of %d bytes", len(body))
			}
			format := binary.LittleEndian.Uint16(body)
			channels := binary.LittleEndian.Uint16(body[2:])
			rate = binary.LittleEndian.Uint32(body[4:])
			bits := binary.LittleEndian.Uint16(body[14:])
			if format == 0xfffe && len(body) >= 26 {
				format = binary.LittleEndian.Uint16(body[24:])
			}
			switch {
			case format != 1:
				return nil, editErr("WAV format %d is not PCM: write 16-bit mono PCM", format)
			case channels != 1:
				return nil, editErr("the WAV has %d channels: a VAG is mono, write one channel", channels)
			case bits != 16:
				return nil, editErr("the WAV is %d-bit: write 16-bit samples", bits)
			case rate < 1 || rate > MaxSampleRate:
				return nil, editErr("the WAV's rate %d Hz is outside 1..%d", rate, MaxSampleRate)
			}
			fmtSeen = true
		case "data":
			data = body
		}
		off += 8 + size + size&1
	}
	if !fmtSeen || data == nil {
		return nil, editErr("the WAV has no fmt or no data chunk")
	}
	samples := make([]int16, len(data)/2)
	for i := range samples {
		samples[i] = int16(binary.LittleEndian.Uint16(data[2*i:]))
	}
	if int64(len(samples)+VAGFrameSamp)/VAGFrameSamp*VAGFrameSize > 1<<31 {
		return nil, editErr("the WAV is too long for a VAG")
	}
	name := ""
	if len(orig) >= VAGHeaderSize && IsVAG(orig) {
		name = string(bytes.TrimRight(orig[0x20:0x30], "\x00"))
	}
	return EncodeVAG(samples, int(rate), name), nil
}
