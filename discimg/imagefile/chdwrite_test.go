package imagefile

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// A minimal CHD v5 writer for tests: every hunk compressed with one codec
// (slot 0) or stored when that does not shrink it, the map Huffman-coded
// with a flat 4-bit code, optional metadata. It lets tests cover codecs this
// host's chdman lacks (zstd, cdzs) and build hostile variants.

type bitWriter struct {
	b    []byte
	nbit uint
}

func (w *bitWriter) write(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		if w.nbit%8 == 0 {
			w.b = append(w.b, 0)
		}
		if v>>uint(i)&1 != 0 {
			w.b[len(w.b)-1] |= 0x80 >> (w.nbit % 8)
		}
		w.nbit++
	}
}

type testCHD struct {
	hunkBytes, unitBytes uint32
	codec                uint32
	compress             func([]byte) []byte
	meta                 [][]byte // CHT2 text entries
	parentSHA1           [20]byte
}

func (tc testCHD) build(data []byte) []byte {
	hb := int(tc.hunkBytes)
	hunks := (len(data) + hb - 1) / hb
	out := make([]byte, chdV5HdrLen)
	// metadata chain
	metaOff := uint64(0)
	if len(tc.meta) > 0 {
		metaOff = uint64(len(out))
	}
	for i, m := range tc.meta {
		var h [16]byte
		binary.BigEndian.PutUint32(h[0:], metaCHT2)
		h[4] = 1
		h[5], h[6], h[7] = byte(len(m)>>16), byte(len(m)>>8), byte(len(m))
		next := uint64(0)
		if i+1 < len(tc.meta) {
			next = uint64(len(out) + 16 + len(m))
		}
		binary.BigEndian.PutUint64(h[8:], next)
		out = append(out, h[:]...)
		out = append(out, m...)
	}
	first := uint64(len(out))
	types := make([]uint32, hunks)
	lens := make([]uint32, hunks)
	crcs := make([]uint16, hunks)
	for i := 0; i < hunks; i++ {
		h := make([]byte, hb)
		copy(h, data[i*hb:])
		crcs[i] = crc16(h)
		c := tc.compress(h)
		if len(c) < hb {
			types[i], lens[i] = compType0, uint32(len(c))
			out = append(out, c...)
		} else {
			types[i], lens[i] = compNone, uint32(hb)
			out = append(out, h...)
		}
	}
	mapOff := uint64(len(out))
	var bw bitWriter
	for range 16 {
		bw.write(4, 4) // all 16 symbols 4 bits long: symbol s is code s
	}
	for _, t := range types {
		bw.write(t, 4)
	}
	raw := make([]byte, 12*hunks)
	cur := first
	for i := range types {
		if types[i] == compType0 {
			bw.write(lens[i], 24)
		}
		bw.write(uint32(crcs[i]), 16)
		r := raw[12*i:]
		r[0] = byte(types[i])
		r[1], r[2], r[3] = byte(lens[i]>>16), byte(lens[i]>>8), byte(lens[i])
		r[4], r[5] = byte(cur>>40), byte(cur>>32)
		binary.BigEndian.PutUint32(r[6:], uint32(cur))
		binary.BigEndian.PutUint16(r[10:], crcs[i])
		cur += uint64(lens[i])
	}
	var mh [16]byte
	binary.BigEndian.PutUint32(mh[0:], uint32(len(bw.b)))
	mh[4], mh[5] = byte(first>>40), byte(first>>32)
	binary.BigEndian.PutUint32(mh[6:], uint32(first))
	binary.BigEndian.PutUint16(mh[10:], crc16(raw))
	mh[12], mh[13], mh[14] = 24, 0, 0
	out = append(out, mh[:]...)
	out = append(out, bw.b...)

	h := out[:chdV5HdrLen]
	copy(h, chdMagic)
	binary.BigEndian.PutUint32(h[8:], chdV5HdrLen)
	binary.BigEndian.PutUint32(h[12:], 5)
	binary.BigEndian.PutUint32(h[16:], tc.codec)
	binary.BigEndian.PutUint64(h[32:], uint64(len(data)))
	binary.BigEndian.PutUint64(h[40:], mapOff)
	binary.BigEndian.PutUint64(h[48:], metaOff)
	binary.BigEndian.PutUint32(h[56:], tc.hunkBytes)
	binary.BigEndian.PutUint32(h[60:], tc.unitBytes)
	sum := sha1.Sum(data)
	copy(h[64:], sum[:])
	all := sha1.Sum(append(sum[:], bytes.Join(tc.meta, nil)...))
	copy(h[84:], all[:])
	copy(h[104:], tc.parentSHA1[:])
	return out
}

func zstdCompress(b []byte) []byte {
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest))
	defer enc.Close()
	return enc.EncodeAll(b, nil)
}

// cdzsCompress encodes a hunk of CD frames as cdzs (no ECC removal).
func cdzsCompress(h []byte) []byte {
	frames := len(h) / cdFrameBytes
	sec := make([]byte, 0, frames*cdSectorBytes)
	sub := make([]byte, 0, frames*cdSubcodeBytes)
	for f := 0; f < frames; f++ {
		fr := h[f*cdFrameBytes:]
		sec = append(sec, fr[:cdSectorBytes]...)
		sub = append(sub, fr[cdSectorBytes:cdFrameBytes]...)
	}
	base := zstdCompress(sec)
	out := make([]byte, (frames+7)/8)
	if len(h) < 65536 {
		out = append(out, byte(len(base)>>8), byte(len(base)))
	} else {
		out = append(out, byte(len(base)>>16), byte(len(base)>>8), byte(len(base)))
	}
	out = append(out, base...)
	return append(out, zstdCompress(sub)...)
}

// cdFrames lays out 2048-byte sectors as cooked MODE1 CD frames (data then
// zero fill to 2448), padded to a multiple of 4 frames, with its CHT2 entry.
func cdFrames(iso []byte) ([]byte, []byte) {
	n := (len(iso) + SectorSize - 1) / SectorSize
	padded := (n + 3) / 4 * 4
	out := make([]byte, padded*cdFrameBytes)
	for i := 0; i < n; i++ {
		copy(out[i*cdFrameBytes:], iso[i*SectorSize:min(len(iso), (i+1)*SectorSize)])
	}
	meta := fmt.Sprintf("TRACK:1 TYPE:MODE1 SUBTYPE:NONE FRAMES:%d PREGAP:0 PGTYPE:MODE1 PGSUB:RW POSTGAP:0\x00", n)
	return out, []byte(meta)
}
