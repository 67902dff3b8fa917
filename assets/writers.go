package assets

import (
	"encoding/binary"
	"fmt"
	"image/color"
)

// The writers below are what gcfs mkdisc builds its synthetic assets with.
// They are deterministic and panic on arguments outside their documented
// ranges.

// WritePIF writes a PIF texture: w×h (1..MaxDimension), depth 8 (format
// 0x13, 256-colour palette stored swizzled) or 4 (format 0x94, 16 colours,
// pixels low nibble first). palette holds up to 2^depth colours with PS2
// alpha (0..0x80), stored as given (EncodePIF writes a decoded texture,
// 8-bit alpha mapped back with PS2AlphaStored); missing entries are zero. indices holds
// one palette index a pixel, row-major. The header's file_size is the
// texture's size; clut_format and clut_order are 0, mip_levels 1.
func WritePIF(w, h int, depth int, palette []color.RGBA, indices []byte) []byte {
	s := Shape{Width: w, Height: h, Depth: depth}
	if !s.valid() || depth == 32 {
		panic(fmt.Sprintf("assets.WritePIF: bad shape %dx%d depth %d", w, h, depth))
	}
	colors := s.Colors()
	if len(palette) > colors || len(indices) != w*h {
		panic(fmt.Sprintf("assets.WritePIF: %d colours for depth %d, %d indices for %dx%d", len(palette), depth, len(indices), w, h))
	}
	hd := PIFHeader{Width: int32(w), Height: int32(h), Format: PIFFormat8, MipLevels: 1}
	if depth == 4 {
		hd.Format = PIFFormat4
	}
	out := make([]byte, hd.DataSize())
	hd.FileSize = int32(len(out))
	copy(out, "2FIP")
	for i, v := range []int32{hd.FileSize, hd.Width, hd.Height, hd.Format, hd.ClutFormat, hd.ClutOrder, hd.MipLevels} {
		binary.LittleEndian.PutUint32(out[4+4*i:], uint32(v))
	}
	pal := out[PIFHeaderSize:]
	for i, c := range palette {
		j := i
		if depth == 8 {
			j = SwizzlePaletteIndex(i)
		}
		copy(pal[4*j:], []byte{c.R, c.G, c.B, c.A})
	}
	px := out[PIFHeaderSize+hd.PaletteBytes():]
	for n, ix := range indices {
		if int(ix) >= colors {
			panic(fmt.Sprintf("assets.WritePIF: index %d at pixel %d past %d colours", ix, n, colors))
		}
		if depth == 8 {
			px[n] = ix
		} else if n&1 == 0 {
			px[n/2] |= ix
		} else {
			px[n/2] |= ix << 4
		}
	}
	return out
}

// WriteRGBABlob writes a raw RGBA blob: {s32 w, s32 h, 8 zero bytes}, then
// the w*h pixels (RGBA, PS2 alpha 0..0x80, stored as given; EncodeRGBABlob
// writes a decoded texture).
func WriteRGBABlob(w, h int, pix []color.RGBA) []byte {
	s := Shape{Width: w, Height: h, Depth: 32}
	if !s.valid() || len(pix) != w*h {
		panic(fmt.Sprintf("assets.WriteRGBABlob: %d pixels for %dx%d", len(pix), w, h))
	}
	out := make([]byte, RGBABlobHeaderSize+4*len(pix))
	binary.LittleEndian.PutUint32(out, uint32(w))
	binary.LittleEndian.PutUint32(out[4:], uint32(h))
	for i, c := range pix {
		copy(out[RGBABlobHeaderSize+4*i:], []byte{c.R, c.G, c.B, c.A})
	}
	return out
}

// EncodePIF writes a texture of depth 4 or 8 (8-bit alpha, as DecodePIF
// gives it) as a PIF, each alpha stored with PS2AlphaStored: DecodePIF's
// inverse, byte for byte, for every PIF WritePIF writes with alphas in
// 0..0x80. It returns ErrShape for a texture whose shape, palette and pixels
// disagree or whose depth is 32.
func EncodePIF(t *Texture) ([]byte, error) {
	if !t.valid() || t.Depth == 32 {
		return nil, ErrShape
	}
	pal := make([]color.RGBA, len(t.Palette))
	for i, c := range t.Palette {
		pal[i] = color.RGBA{c.R, c.G, c.B, PS2AlphaStored(c.A)}
	}
	return WritePIF(t.Width, t.Height, t.Depth, pal, t.Pix), nil
}

// EncodeRGBABlob writes a depth-32 texture (8-bit alpha) as a raw RGBA blob,
// each alpha stored with PS2AlphaStored: DecodeRGBABlob's inverse for every
// blob WriteRGBABlob writes with alphas in 0..0x80. ErrShape as EncodePIF.
func EncodeRGBABlob(t *Texture) ([]byte, error) {
	if !t.valid() || t.Depth != 32 {
		return nil, ErrShape
	}
	pix := make([]color.RGBA, t.Width*t.Height)
	for i := range pix {
		p := t.Pix[4*i : 4*i+4]
		pix[i] = color.RGBA{p[0], p[1], p[2], PS2AlphaStored(p[3])}
	}
	return WriteRGBABlob(t.Width, t.Height, pix), nil
}

// EncodeVAG encodes 16-bit mono PCM as a VAG at rate (1..MaxSampleRate)
// named name (at most 16 bytes kept). Each frame of 28 samples (the last one
// padded with silence) takes the filter (0..4) and shift (0..12) whose
// decoded samples have the least squared error, quantising with rounding
// against the decoder's own reconstruction, so errors do not accumulate. For
// each filter the shifts tried are the three around the one its open-loop
// residual needs (every shift would cost four times as much for a gain too
// small to measure on the test signals). No
// silent lead-in frame is written: decoded sample i is sample i. Every
// frame's flags byte is 0 except the last's, 1 (end). Version 0x20.
func EncodeVAG(samples []int16, rate int, name string) []byte {
	if rate < 1 || rate > MaxSampleRate {
		panic(fmt.Sprintf("assets.EncodeVAG: sample rate %d", rate))
	}
	frames := (len(samples) + VAGFrameSamp - 1) / VAGFrameSamp
	if int64(frames)*VAGFrameSize > 0xffffffff-VAGHeaderSize {
		panic("assets.EncodeVAG: too many samples")
	}
	out := make([]byte, VAGHeaderSize+frames*VAGFrameSize)
	copy(out, "VAGp")
	binary.BigEndian.PutUint32(out[4:], 0x20)
	binary.BigEndian.PutUint32(out[0xc:], uint32(frames*VAGFrameSize))
	binary.BigEndian.PutUint32(out[0x10:], uint32(rate))
	copy(out[0x20:0x30], name)
	var h History
	var block [VAGFrameSamp]int16
	for f := 0; f < frames; f++ {
		block = [VAGFrameSamp]int16{}
		copy(block[:], samples[f*VAGFrameSamp:])
		fr := out[VAGHeaderSize+f*VAGFrameSize:][:VAGFrameSize]
		h = encodeFrame(fr, &block, h)
		if f == frames-1 {
			fr[1] = 1
		}
	}
	return out
}

// encodeFrame picks the best filter and shift for one frame, writes it into
// fr (flags 0) and returns the decoder's history after it.
func encodeFrame(fr []byte, x *[VAGFrameSamp]int16, h History) History {
	bestErr := int64(-1)
	var best [VAGFrameSamp]int8
	var bestF, bestS int
	var bestH History
	var q [VAGFrameSamp]int8
	for filt := 0; filt < 5; filt++ {
		c0, c1 := vagFilters[filt][0], vagFilters[filt][1]
		// The open-loop prediction residual sets the shift to start from:
		// the largest whose step still reaches the peak residual with a
		// nibble; the shifts one either side of it are tried too (the
		// closed-loop residual differs a little).
		peak := int32(0)
		p1, p2 := h.S1, h.S2
		for _, v := range x {
			d := int32(v) - (p1*c0+p2*c1+32)>>6
			peak = max(peak, d, -d)
			p2, p1 = p1, int32(v)
		}
		est := 12
		for est > 0 && peak > 7<<(12-est) {
			est--
		}
		for shift := max(0, est-1); shift <= min(12, est+1); shift++ {
			step := int32(1) << (12 - shift)
			s1, s2 := h.S1, h.S2
			var e int64
			for i, v := range x {
				pred := (s1*c0 + s2*c1 + 32) >> 6
				d := int32(v) - pred
				// round d/step to nearest (ties away from zero), clamp to a nibble
				var n int32
				if d >= 0 {
					n = (d + step/2) / step
				} else {
					n = -((-d + step/2) / step)
				}
				n = max(-8, min(7, n))
				s := clamp16(n*step + pred)
				q[i] = int8(n)
				diff := int64(s) - int64(v)
				e += diff * diff
				s2, s1 = s1, s
			}
			if bestErr < 0 || e < bestErr {
				bestErr, best, bestF, bestS, bestH = e, q, filt, shift, History{s1, s2}
			}
		}
	}
	fr[0] = byte(bestF<<4 | bestS)
	fr[1] = 0
	for i := 0; i < VAGFrameSamp; i += 2 {
		fr[2+i/2] = byte(best[i])&0x0f | byte(best[i+1])<<4
	}
	return bestH
}

// SineSweep is the known test signal: n samples of a sine whose frequency
// runs linearly from f0 to f1 Hz at rate, peak amp. It is computed in
// integers only (a phase accumulator and Bhaskara's rational sine, within
// about 0.2% of a true sine), so it is the same on every machine.
func SineSweep(n, rate, f0, f1 int, amp int16) []int16 {
	if n < 0 || rate < 1 || f0 < 0 || f1 < 0 || f0 > 1<<20 || f1 > 1<<20 {
		panic("assets.SineSweep: bad arguments")
	}
	out := make([]int16, n)
	var phase uint32
	const P = 1 << 16 // half a turn
	for i := range out {
		p := int64(phase&0x7fffffff) >> 15 // 0..P-1 across half a turn
		q := p * (P - p)
		v := int64(amp) * 4 * q / (5*P*P/4 - q)
		if phase&0x80000000 != 0 {
			v = -v
		}
		out[i] = int16(v)
		mhz := int64(f0)*1000 + (int64(f1)-int64(f0))*1000*int64(i)/int64(max(n, 1))
		phase += uint32((mhz << 32) / (int64(rate) * 1000))
	}
	return out
}

// WritePSS writes a PSS video of exactly size bytes: an MPEG-2 program
// stream of EncodeMPEG2(rateCode) (a real PSSWidth×PSSHeight video of
// PSSPictures I pictures; rateCode 1..8, see FrameRateOfCode), one pack per
// picture (pack header, video PES packet with PTS), padding packets (0xff)
// for the rest, and the program end code as its last 4 bytes. size must be
// at least MinPSSSize.
func WritePSS(size int, rateCode int) []byte { return WritePSSPadding(size, rateCode, nil) }

// WritePSSPadding is WritePSS with pad's bytes (then 0xff) in its padding
// packets, which players skip: a generator's label and noise go there, inside
// the program stream.
func WritePSSPadding(size int, rateCode int, pad []byte) []byte {
	if _, ok := FrameRateOfCode(rateCode); !ok || size < MinPSSSize {
		panic(fmt.Sprintf("assets.WritePSS: size %d, frame_rate_code %d", size, rateCode))
	}
	fill := size - MinPSSSize
	stuff := 0
	if fill > 0 && fill < 6 {
		stuff, fill = fill, 0 // pack header stuffing (up to 7 bytes) instead of a padding packet
	}
	out := make([]byte, 0, size)
	out = append(out, pssVideoPacks(rateCode, stuff)...)
	for fill > 0 {
		k := min(fill, 6+0xffff)
		if r := fill - k; r > 0 && r < 6 {
			k = fill - 6
		}
		out = append(out, 0, 0, 1, 0xbe)
		out = binary.BigEndian.AppendUint16(out, uint16(k-6))
		body := len(out)
		out = append(out, pad[:min(len(pad), k-6)]...)
		pad = pad[len(out)-body:]
		for len(out) < body+k-6 {
			out = append(out, 0xff)
		}
		fill -= k
	}
	return append(out, 0, 0, 1, 0xb9)
}

// MinPSSSize is the smallest video WritePSS writes: its video packs and the
// program end code (4).
var MinPSSSize = len(pssVideoPacks(1, 0)) + 4

// SubtitleCue is one subtitle for WriteSubtitles: frames and the text in
// each of Languages.
type SubtitleCue struct {
	Start, Stop int16
	Text        [5]string
}

// WriteSubtitles writes a GC subtitle blob: one record a cue, a terminating
// record {-1, -1, 0...}, then every text NUL-terminated in cue order, each
// language in Languages order. Panics when a text holds a NUL, a cue has a
// negative frame or stops before it starts, or the blob passes 32767 bytes
// (offsets are s16).
func WriteSubtitles(cues []SubtitleCue) []byte {
	table := (len(cues) + 1) * SubtitleRecordSize
	out := make([]byte, table)
	for i, c := range cues {
		if c.Start < 0 || c.Stop < c.Start {
			panic(fmt.Sprintf("assets.WriteSubtitles: cue %d frames %d..%d", i, c.Start, c.Stop))
		}
		r := i * SubtitleRecordSize // an index: out grows below
		binary.LittleEndian.PutUint16(out[r:], uint16(c.Start))
		binary.LittleEndian.PutUint16(out[r+2:], uint16(c.Stop))
		for l, t := range c.Text {
			for j := 0; j < len(t); j++ {
				if t[j] == 0 {
					panic("assets.WriteSubtitles: NUL in a text")
				}
			}
			if len(out) > 0x7fff {
				panic("assets.WriteSubtitles: blob past 32767 bytes")
			}
			binary.LittleEndian.PutUint16(out[r+4+2*l:], uint16(len(out)))
			out = append(out, t...)
			out = append(out, 0)
		}
	}
	end := out[len(cues)*SubtitleRecordSize:]
	binary.LittleEndian.PutUint16(end, 0xffff)
	binary.LittleEndian.PutUint16(end[2:], 0xffff)
	return out
}

// WriteIRX writes a minimal IOP module of exactly size bytes: a 32-bit
// little-endian MIPS ELF header of type 0xff80 (an IRX, relocatable IOP
// executable) with no program or section headers, then name NUL-terminated,
// then zeros. size must be at least 52 + len(name) + 1.
func WriteIRX(size int, name string) []byte {
	if size < 52+len(name)+1 {
		panic(fmt.Sprintf("assets.WriteIRX: size %d too small for %q", size, name))
	}
	out := make([]byte, size)
	copy(out, "\x7fELF")
	out[4], out[5], out[6] = 1, 1, 1 // ELFCLASS32, little-endian, version 1
	le := binary.LittleEndian
	le.PutUint16(out[16:], 0xff80) // e_type: IRX
	le.PutUint16(out[18:], 8)      // e_machine: MIPS
	le.PutUint32(out[20:], 1)      // e_version
	le.PutUint16(out[40:], 52)     // e_ehsize
	le.PutUint16(out[42:], 32)     // e_phentsize
	le.PutUint16(out[46:], 40)     // e_shentsize
	copy(out[52:], name)
	return out
}
