package imagefile

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/mewkiz/flac/frame"
	"github.com/ulikunitz/xz/lzma"
)

// hunkCodec decodes one compressed hunk into dst, which it must fill exactly.
type hunkCodec interface {
	name() string
	decode(src, dst []byte) error
}

// CD frames as CHD stores them: 2352 bytes of sector data and 96 of subcode.
const (
	cdSectorBytes  = 2352
	cdSubcodeBytes = 96
	cdFrameBytes   = cdSectorBytes + cdSubcodeBytes
)

func newHunkCodec(tag, hunkBytes uint32) (hunkCodec, error) {
	switch tag {
	case tagZlib:
		return zlibCodec{}, nil
	case tagLZMA:
		return newLZMACodec(hunkBytes), nil
	case tagHuff:
		return huffCodec{}, nil
	case tagFLAC:
		return flacCodec{}, nil
	case tagZstd:
		return zstdCodec{}, nil
	case tagCDZL, tagCDLZ, tagCDFL, tagCDZS:
		if hunkBytes%cdFrameBytes != 0 {
			return nil, fmt.Errorf("codec %s needs a hunk size that is a multiple of %d, not %d", tagString(tag), cdFrameBytes, hunkBytes)
		}
		frames := hunkBytes / cdFrameBytes
		cd := cdCodec{tag: tagString(tag), frames: int(frames)}
		switch tag {
		case tagCDZL:
			cd.base, cd.sub = zlibCodec{}, zlibCodec{}
		case tagCDLZ:
			cd.base, cd.sub = newLZMACodec(frames*cdSectorBytes), zlibCodec{}
		case tagCDZS:
			cd.base, cd.sub = zstdCodec{}, zstdCodec{}
		case tagCDFL:
			return cdFLACCodec{frames: int(frames)}, nil
		}
		return cd, nil
	}
	return nil, fmt.Errorf("unsupported CHD codec %q", tagString(tag))
}

// safeDecode runs a codec and turns a panic in it into an error: the codecs
// are fed untrusted bytes and some come from libraries.
func safeDecode(c hunkCodec, src, dst []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	return c.decode(src, dst)
}

var errShort = errors.New("decodes to fewer bytes than the hunk holds")

// zlib: raw deflate (no zlib header).
type zlibCodec struct{}

func (zlibCodec) name() string { return "zlib" }

var flatePool sync.Pool

func (zlibCodec) decode(src, dst []byte) error {
	br := bytes.NewReader(src)
	var fr io.ReadCloser
	if v := flatePool.Get(); v != nil {
		fr = v.(io.ReadCloser)
		if err := fr.(flate.Resetter).Reset(br, nil); err != nil {
			return err
		}
	} else {
		fr = flate.NewReader(br)
	}
	defer flatePool.Put(fr)
	if _, err := io.ReadFull(fr, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errShort
		}
		return fmt.Errorf("deflate: %v", err)
	}
	return nil
}

// lzma: raw LZMA (no header, no end marker) with chdman's properties: lc=3,
// lp=0, pb=2 and the dictionary size the LZMA SDK picks for level 8 reduced to
// the hunk size.
type lzmaCodec struct{ dict uint32 }

func newLZMACodec(hunkBytes uint32) lzmaCodec {
	dict := uint32(1 << 26) // level 8
	if dict > hunkBytes {
		for i := uint(11); i <= 30; i++ {
			if hunkBytes <= 2<<i {
				dict = 2 << i
				break
			}
			if hunkBytes <= 3<<i {
				dict = 3 << i
				break
			}
		}
	}
	if dict < lzma.MinDictCap {
		dict = lzma.MinDictCap
	}
	return lzmaCodec{dict: dict}
}

func (lzmaCodec) name() string { return "lzma" }

func (c lzmaCodec) decode(src, dst []byte) error {
	var hdr [13]byte
	hdr[0] = (2*5+0)*9 + 3
	binary.LittleEndian.PutUint32(hdr[1:], c.dict)
	binary.LittleEndian.PutUint64(hdr[5:], uint64(len(dst)))
	cfg := lzma.ReaderConfig{DictCap: int(c.dict)}
	r, err := cfg.NewReader(io.MultiReader(bytes.NewReader(hdr[:]), bytes.NewReader(src)))
	if err != nil {
		return fmt.Errorf("lzma: %v", err)
	}
	if _, err := io.ReadFull(r, dst); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return errShort
		}
		return fmt.Errorf("lzma: %v", err)
	}
	return nil
}

// zstd: one zstd frame.
type zstdCodec struct{}

func (zstdCodec) name() string { return "zstd" }

var zstdDec = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(64<<20), zstd.WithDecoderMaxWindow(64<<20))
})

func (zstdCodec) decode(src, dst []byte) error {
	d, err := zstdDec()
	if err != nil {
		return err
	}
	out, err := d.DecodeAll(src, make([]byte, 0, len(dst)))
	if err != nil {
		return fmt.Errorf("zstd: %v", err)
	}
	if len(out) != len(dst) {
		return fmt.Errorf("zstd: decodes to %d bytes, hunk holds %d", len(out), len(dst))
	}
	copy(dst, out)
	return nil
}

// huff: CHD's 8-bit Huffman codec: a Huffman-coded tree, then one symbol per byte.
type huffCodec struct{}

func (huffCodec) name() string { return "huff" }

// huffPool keeps decoders: each holds a 256 KiB lookup table.
var huffPool = sync.Pool{New: func() any {
	h := new(huffDecoder)
	_ = h.init(256, 16)
	return h
}}

func (huffCodec) decode(src, dst []byte) error {
	h := huffPool.Get().(*huffDecoder)
	defer huffPool.Put(h)
	clear(h.bits)
	br := newBitReader(src)
	if err := h.importTreeHuffman(br); err != nil {
		return fmt.Errorf("huff: %v", err)
	}
	for i := range dst {
		dst[i] = byte(h.decode(br))
	}
	if br.overflow() {
		return errors.New("huff: data runs out before the hunk is full")
	}
	return nil
}

// flac: a byte 'L' or 'B' (sample byte order), then FLAC frames of 16-bit
// stereo without a stream header.
type flacCodec struct{}

func (flacCodec) name() string { return "flac" }

func (flacCodec) decode(src, dst []byte) error {
	if len(src) < 1 {
		return errors.New("flac: empty")
	}
	var big bool
	switch src[0] {
	case 'L':
	case 'B':
		big = true
	default:
		return fmt.Errorf("flac: byte order mark %#02x", src[0])
	}
	_, err := decodeFLACFrames(src[1:], dst, big)
	return err
}

// decodeFLACFrames decodes FLAC frames (2 channels, 16 bits) from src until dst
// holds len(dst)/4 interleaved sample pairs, written big- or little-endian. It
// returns the number of bytes of src the frames took.
func decodeFLACFrames(src, dst []byte, bigEndian bool) (int, error) {
	if len(dst)%4 != 0 {
		return 0, errors.New("flac: hunk size not a multiple of 4")
	}
	r := bytes.NewReader(src)
	out := 0
	for out < len(dst) {
		f, err := frame.New(r)
		if err != nil {
			return 0, fmt.Errorf("flac: frame header at byte %d: %v", len(src)-r.Len(), err)
		}
		if f.BitsPerSample == 0 {
			f.BitsPerSample = 16
		}
		if f.BitsPerSample != 16 || f.Channels.Count() != 2 {
			return 0, fmt.Errorf("flac: frame is %d-bit, %d channels; want 16-bit stereo", f.BitsPerSample, f.Channels.Count())
		}
		if int(f.BlockSize)*4 > len(dst)-out {
			return 0, fmt.Errorf("flac: frame of %d samples overruns the hunk", f.BlockSize)
		}
		if err := f.Parse(); err != nil {
			return 0, fmt.Errorf("flac: %v", err)
		}
		l, rr := f.Subframes[0].Samples, f.Subframes[1].Samples
		if len(l) < int(f.BlockSize) || len(rr) < int(f.BlockSize) {
			return 0, errors.New("flac: short subframe")
		}
		for i := 0; i < int(f.BlockSize); i++ {
			a, b := uint16(int16(l[i])), uint16(int16(rr[i]))
			if bigEndian {
				binary.BigEndian.PutUint16(dst[out:], a)
				binary.BigEndian.PutUint16(dst[out+2:], b)
			} else {
				binary.LittleEndian.PutUint16(dst[out:], a)
				binary.LittleEndian.PutUint16(dst[out+2:], b)
			}
			out += 4
		}
	}
	return len(src) - r.Len(), nil
}

// cdCodec is cdzl/cdlz/cdzs: an ECC bitmap (one bit a frame), the base
// stream's length (2 or 3 bytes), the base-compressed sector data of every
// frame, then the compressed subcode. A frame whose bit is set had its sync
// header and ECC removed: both are regenerated.
type cdCodec struct {
	tag       string
	frames    int
	base, sub hunkCodec
}

func (c cdCodec) name() string { return c.tag }

func (c cdCodec) decode(src, dst []byte) error {
	frames := c.frames
	if len(dst) != frames*cdFrameBytes {
		return errors.New("hunk size mismatch")
	}
	eccBytes := (frames + 7) / 8
	lenBytes := 2
	if len(dst) >= 65536 {
		lenBytes = 3
	}
	hdr := eccBytes + lenBytes
	if len(src) < hdr {
		return fmt.Errorf("%d bytes is too short for the CD header", len(src))
	}
	baseLen := 0
	for i := 0; i < lenBytes; i++ {
		baseLen = baseLen<<8 | int(src[eccBytes+i])
	}
	if baseLen > len(src)-hdr {
		return fmt.Errorf("sector data of %d bytes overruns the hunk's %d", baseLen, len(src))
	}
	sectors := make([]byte, frames*cdSectorBytes)
	if err := c.base.decode(src[hdr:hdr+baseLen], sectors); err != nil {
		return fmt.Errorf("sector data: %v", err)
	}
	sub := make([]byte, frames*cdSubcodeBytes)
	if err := c.sub.decode(src[hdr+baseLen:], sub); err != nil {
		return fmt.Errorf("subcode: %v", err)
	}
	for f := 0; f < frames; f++ {
		fr := dst[f*cdFrameBytes : (f+1)*cdFrameBytes]
		copy(fr, sectors[f*cdSectorBytes:(f+1)*cdSectorBytes])
		copy(fr[cdSectorBytes:], sub[f*cdSubcodeBytes:(f+1)*cdSubcodeBytes])
		if src[f/8]&(1<<(f%8)) != 0 {
			copy(fr, cdSync[:])
			eccGenerate(fr[:cdSectorBytes])
		}
	}
	return nil
}

// cdfl: FLAC frames of the sector data (big-endian samples), then the
// deflated subcode; no ECC bitmap.
type cdFLACCodec struct{ frames int }

func (cdFLACCodec) name() string { return "cdfl" }

func (c cdFLACCodec) decode(src, dst []byte) error {
	frames := c.frames
	if len(dst) != frames*cdFrameBytes {
		return errors.New("hunk size mismatch")
	}
	sectors := make([]byte, frames*cdSectorBytes)
	used, err := decodeFLACFrames(src, sectors, true)
	if err != nil {
		return err
	}
	sub := make([]byte, frames*cdSubcodeBytes)
	if err := (zlibCodec{}).decode(src[used:], sub); err != nil {
		return fmt.Errorf("subcode: %v", err)
	}
	for f := 0; f < frames; f++ {
		fr := dst[f*cdFrameBytes : (f+1)*cdFrameBytes]
		copy(fr, sectors[f*cdSectorBytes:(f+1)*cdSectorBytes])
		copy(fr[cdSectorBytes:], sub[f*cdSubcodeBytes:(f+1)*cdSubcodeBytes])
	}
	return nil
}
