package assets

import (
	"encoding/binary"
	"errors"
	"hash/adler32"
	"hash/crc32"
	"io"
	"sync"
)

// The PNG layout every view uses, so that its size is a function of the
// shape alone:
//
//	signature, IHDR, [PLTE with all 16 or 256 entries, tRNS with as many],
//	IDAT chunks each holding pngChunkData bytes of the zlib stream (the last
//	one the rest), IEND.
//
// The zlib stream is a 2-byte header (0x78 0x01), the raw scanlines (filter
// byte 0, then the row) in stored deflate blocks of at most 65535 bytes
// (5-byte block headers), and the Adler-32 of the scanlines.
const (
	pngChunkData = 1 << 16
	storedMax    = 65535
	pngSigIHDR   = 8 + 12 + 13
	pngIEND      = 12
)

// pngLayout is the arithmetic of one shape's PNG.
type pngLayout struct {
	s        Shape
	rowBytes int64 // bytes of a row's pixels, without the filter byte
	rawLen   int64 // all scanlines
	zLen     int64 // the zlib stream
	pre      int64 // bytes before the first IDAT
	chunks   int64
	size     int64
}

func layoutOf(s Shape) pngLayout {
	l := pngLayout{s: s}
	switch s.Depth {
	case 4:
		l.rowBytes = (int64(s.Width) + 1) / 2
	case 8:
		l.rowBytes = int64(s.Width)
	default:
		l.rowBytes = 4 * int64(s.Width)
	}
	l.rawLen = int64(s.Height) * (1 + l.rowBytes)
	blocks := (l.rawLen + storedMax - 1) / storedMax
	l.zLen = 2 + 5*blocks + l.rawLen + 4
	l.pre = pngSigIHDR
	if c := int64(s.Colors()); c > 0 {
		l.pre += 12 + 3*c + 12 + c
	}
	l.chunks = (l.zLen + pngChunkData - 1) / pngChunkData
	l.size = l.pre + 12*l.chunks + l.zLen + pngIEND
	return l
}

// PNGSize is the exact byte size of the PNG EncodePNG and PNGView produce for
// an image of this shape; 0 for a shape outside the accepted range (see
// MaxDimension; Depth 4, 8 or 32).
func PNGSize(s Shape) int64 {
	if !s.valid() {
		return 0
	}
	return layoutOf(s).size
}

// ErrShape is returned by NewPNGView for a texture whose shape, palette or
// pixels do not agree (a programming error: readers never produce one).
var ErrShape = errors.New("assets: texture shape, palette and pixels disagree")

// PNGView serves the bytes of a texture's PNG at any offset without encoding
// the rest: a range costs the IDAT chunks it touches (to 64 KiB each, for
// their CRCs) plus, once per view, one pass over the scanlines for the
// Adler-32 at the end. Safe for concurrent use.
type PNGView struct {
	t      *Texture
	l      pngLayout
	prefix []byte // signature to tRNS
	once   sync.Once
	adler  uint32
}

// NewPNGView prepares t's PNG. t is not copied and must not change.
func NewPNGView(t *Texture) (*PNGView, error) {
	if !t.valid() {
		return nil, ErrShape
	}
	v := &PNGView{t: t, l: layoutOf(t.Shape)}
	v.prefix = v.buildPrefix()
	return v, nil
}

func (t *Texture) valid() bool {
	if t == nil || !t.Shape.valid() {
		return false
	}
	n := t.Width * t.Height
	if t.Depth == 32 {
		return len(t.Pix) == 4*n && t.Palette == nil
	}
	if len(t.Pix) != n || len(t.Palette) != t.Colors() {
		return false
	}
	for _, p := range t.Pix {
		if int(p) >= len(t.Palette) {
			return false
		}
	}
	return true
}

// EncodePNG encodes t as a PNG of exactly PNGSize(t.Shape) bytes. It returns
// nil for an inconsistent texture (see ErrShape).
func EncodePNG(t *Texture) []byte {
	v, err := NewPNGView(t)
	if err != nil {
		return nil
	}
	return v.encode()
}

// pngOffset maps an offset in the zlib stream to its place in the PNG.
func (l *pngLayout) pngOffset(z int64) int64 {
	return l.pre + z/pngChunkData*(pngChunkData+12) + 8 + z%pngChunkData
}

// encode writes the whole PNG in one pass over the scanlines: the Adler-32
// is taken from the scanlines already written rather than from a second
// pass (ReadAt's way, which serves ranges without the rest).
func (v *PNGView) encode() []byte {
	l := &v.l
	out := make([]byte, l.size)
	copy(out, v.prefix)
	for c := int64(0); c < l.chunks; c++ {
		at := l.pre + c*(pngChunkData+12)
		dlen := min(int64(pngChunkData), l.zLen-c*pngChunkData)
		binary.BigEndian.PutUint32(out[at:], uint32(dlen))
		copy(out[at+4:], "IDAT")
		end := min(c*pngChunkData+dlen, l.zLen-4) // the Adler-32 comes later
		if end > c*pngChunkData {
			v.zFill(out[at+8:at+8+end-c*pngChunkData], c*pngChunkData)
		}
	}
	h := adler32.New()
	for r := int64(0); r < l.rawLen; {
		z := 2 + r/storedMax*(storedMax+5) + 5 + r%storedMax
		n := min(storedMax-r%storedMax, pngChunkData-z%pngChunkData, l.rawLen-r)
		p := l.pngOffset(z)
		h.Write(out[p : p+n])
		r += n
	}
	sum := h.Sum32()
	v.once.Do(func() { v.adler = sum })
	for k := int64(0); k < 4; k++ {
		out[l.pngOffset(l.zLen-4+k)] = byte(sum >> (24 - 8*k))
	}
	for c := int64(0); c < l.chunks; c++ {
		at := l.pre + c*(pngChunkData+12)
		dlen := min(int64(pngChunkData), l.zLen-c*pngChunkData)
		binary.BigEndian.PutUint32(out[at+8+dlen:], crc32.ChecksumIEEE(out[at+4:at+8+dlen]))
	}
	copy(out[l.size-pngIEND:], pngIENDBytes)
	return out
}

// Size is the PNG's exact size.
func (v *PNGView) Size() int64 { return v.l.size }

func chunk(dst []byte, typ string, data []byte) []byte {
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	start := len(dst)
	dst = append(dst, typ...)
	dst = append(dst, data...)
	return binary.BigEndian.AppendUint32(dst, crc32.ChecksumIEEE(dst[start:]))
}

func (v *PNGView) buildPrefix() []byte {
	t := v.t
	b := make([]byte, 0, v.l.pre)
	b = append(b, "\x89PNG\r\n\x1a\n"...)
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr, uint32(t.Width))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(t.Height))
	if t.Depth == 32 {
		ihdr[8], ihdr[9] = 8, 6 // 8 bits, RGBA
	} else {
		ihdr[8], ihdr[9] = byte(t.Depth), 3 // 4 or 8 bits, palette
	}
	b = chunk(b, "IHDR", ihdr)
	if t.Depth != 32 {
		plte := make([]byte, 0, 3*len(t.Palette))
		trns := make([]byte, 0, len(t.Palette))
		for _, c := range t.Palette {
			plte = append(plte, c.R, c.G, c.B)
			trns = append(trns, c.A)
		}
		b = chunk(b, "PLTE", plte)
		b = chunk(b, "tRNS", trns)
	}
	return b
}

var pngIENDBytes = []byte{0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82}

// ReadAt implements io.ReaderAt over the PNG's bytes.
func (v *PNGView) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("assets: PNGView.ReadAt: negative offset")
	}
	if off >= v.l.size {
		return 0, io.EOF
	}
	var err error
	if rest := v.l.size - off; int64(len(p)) > rest {
		p, err = p[:rest], io.EOF
	}
	n := len(p)
	var scratch []byte
	for len(p) > 0 {
		var k int
		switch {
		case off < v.l.pre:
			k = copy(p, v.prefix[off:])
		case off >= v.l.size-pngIEND:
			k = copy(p, pngIENDBytes[off-(v.l.size-pngIEND):])
		default:
			c := (off - v.l.pre) / (pngChunkData + 12)
			cstart := v.l.pre + c*(pngChunkData+12)
			dlen := min(int64(pngChunkData), v.l.zLen-c*pngChunkData)
			in := off - cstart
			switch {
			case in < 8:
				var h [8]byte
				binary.BigEndian.PutUint32(h[:], uint32(dlen))
				copy(h[4:], "IDAT")
				k = copy(p, h[in:])
			case in < 8+dlen:
				k = int(min(int64(len(p)), 8+dlen-in))
				v.zFill(p[:k], c*pngChunkData+in-8)
				if in == 8 && int64(k) == dlen && len(p) > k {
					// The whole chunk's data is in p: its CRC follows at once.
					var crc [4]byte
					binary.BigEndian.PutUint32(crc[:], v.crcOf(p[:k]))
					k += copy(p[k:], crc[:])
				}
			default:
				if scratch == nil {
					scratch = make([]byte, pngChunkData)
				}
				d := scratch[:dlen]
				v.zFill(d, c*pngChunkData)
				var crc [4]byte
				binary.BigEndian.PutUint32(crc[:], v.crcOf(d))
				k = copy(p, crc[in-8-dlen:])
			}
		}
		p = p[k:]
		off += int64(k)
	}
	return n, err
}

var idatCRC = crc32.ChecksumIEEE([]byte("IDAT"))

func (v *PNGView) crcOf(data []byte) uint32 { return crc32.Update(idatCRC, crc32.IEEETable, data) }

// zFill writes the zlib stream's bytes [off, off+len(dst)).
func (v *PNGView) zFill(dst []byte, off int64) {
	for len(dst) > 0 {
		var k int
		switch {
		case off < 2:
			k = copy(dst, []byte{0x78, 0x01}[off:])
		case off >= v.l.zLen-4:
			var a [4]byte
			binary.BigEndian.PutUint32(a[:], v.adler32())
			k = copy(dst, a[off-(v.l.zLen-4):])
		default:
			q := off - 2
			blk := q / (storedMax + 5)
			in := q % (storedMax + 5)
			blen := min(storedMax, v.l.rawLen-blk*storedMax)
			if in < 5 {
				final := byte(0)
				if (blk+1)*storedMax >= v.l.rawLen {
					final = 1
				}
				h := [5]byte{final, byte(blen), byte(blen >> 8), ^byte(blen), ^byte(blen >> 8)}
				k = copy(dst, h[in:])
			} else {
				k = int(min(int64(len(dst)), 5+blen-in))
				v.rawFill(dst[:k], blk*storedMax+in-5)
			}
		}
		dst = dst[k:]
		off += int64(k)
	}
}

func (v *PNGView) adler32() uint32 {
	v.once.Do(func() {
		h := adler32.New()
		buf := make([]byte, min(v.l.rawLen, 1<<16))
		for off := int64(0); off < v.l.rawLen; {
			b := buf[:min(int64(len(buf)), v.l.rawLen-off)]
			v.rawFill(b, off)
			h.Write(b)
			off += int64(len(b))
		}
		v.adler = h.Sum32()
	})
	return v.adler
}

// rawFill writes the scanlines' bytes [off, off+len(dst)).
func (v *PNGView) rawFill(dst []byte, off int64) {
	stride := 1 + v.l.rowBytes
	t := v.t
	for len(dst) > 0 {
		row, col := off/stride, off%stride
		if col == 0 {
			dst[0] = 0 // filter type None
			dst = dst[1:]
			off++
			continue
		}
		k := int(min(int64(len(dst)), stride-col))
		b := col - 1 // first byte of the row wanted
		switch t.Depth {
		case 8:
			copy(dst[:k], t.Pix[row*int64(t.Width)+b:])
		case 32:
			copy(dst[:k], t.Pix[row*4*int64(t.Width)+b:])
		case 4:
			w := int64(t.Width)
			src := t.Pix[row*w+2*b : (row+1)*w]
			d := dst[:k]
			pairs := min(len(d), len(src)/2)
			for i := range pairs {
				d[i] = src[2*i]<<4 | src[2*i+1]&0x0f
			}
			if pairs < len(d) { // odd width: the last byte's low nibble is padding
				d[pairs] = src[2*pairs] << 4
			}
		}
		dst = dst[k:]
		off += int64(k)
	}
}
