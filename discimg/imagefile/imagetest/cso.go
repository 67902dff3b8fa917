// Package imagetest writes the compressed image containers the tests read
// (CSO v1 and v2, ZSO), laid out as maxcso writes them. It is test support:
// nothing in gcfs writes these formats.
package imagetest

import (
	"bytes"
	"compress/flate"
	"encoding/binary"

	"github.com/pierrec/lz4/v4"
)

const (
	csoHeaderLen = 24
	csoFlag      = 0x80000000 // index bit: stored (v1, ZSO) or LZ4 (v2)
)

// WriteCSO returns a CSO v1 (kind "cso1": deflate), CSO v2 ("cso2": deflate
// and LZ4 blocks in turn) or ZSO ("zso": LZ4) image of data, in blocks of
// blockSize bytes, each padded to a multiple of 1<<shift. A block that does
// not shrink is stored.
func WriteCSO(data []byte, kind string, blockSize int, shift uint) []byte {
	blocks := (len(data) + blockSize - 1) / blockSize
	out := make([]byte, csoHeaderLen+4*(blocks+1))
	magic := "CISO"
	ver := byte(1)
	switch kind {
	case "zso":
		magic = "ZISO"
	case "cso2":
		ver = 2
	}
	copy(out, magic)
	binary.LittleEndian.PutUint32(out[4:], csoHeaderLen)
	binary.LittleEndian.PutUint64(out[8:], uint64(len(data)))
	binary.LittleEndian.PutUint32(out[16:], uint32(blockSize))
	out[20], out[21] = ver, byte(shift)
	pad := func() {
		for len(out)%(1<<shift) != 0 {
			out = append(out, 0)
		}
	}
	pad()
	// One compressor of each kind for the whole image: a new flate writer
	// per block costs more than compressing the block.
	var (
		bb    bytes.Buffer
		fw, _ = flate.NewWriter(&bb, flate.BestSpeed)
		lz    lz4.Compressor
		lzBuf = make([]byte, lz4.CompressBlockBound(blockSize))
	)
	for i := 0; i < blocks; i++ {
		blk := data[i*blockSize : min(len(data), (i+1)*blockSize)]
		var c []byte
		useLZ4 := kind == "zso" || (kind == "cso2" && i%2 == 1)
		if useLZ4 {
			n, _ := lz.CompressBlock(blk, lzBuf)
			c = lzBuf[:n]
		} else {
			bb.Reset()
			fw.Reset(&bb)
			fw.Write(blk)
			fw.Close()
			c = bb.Bytes()
		}
		idx := uint32(len(out) >> shift)
		padded := (len(c) + 1<<shift - 1) &^ (1<<shift - 1)
		if len(c) == 0 || len(c) >= len(blk) || (kind == "cso2" && padded >= blockSize) { // stored
			c = blk
			if kind != "cso2" {
				idx |= csoFlag
			} else if len(c) < blockSize {
				// v2 marks a stored block by its length alone: fill a
				// short last block to the block size.
				c = append(append([]byte(nil), blk...), make([]byte, blockSize-len(blk))...)
			}
		} else if useLZ4 && kind == "cso2" {
			idx |= csoFlag
		}
		binary.LittleEndian.PutUint32(out[csoHeaderLen+4*i:], idx)
		out = append(out, c...)
		pad()
	}
	binary.LittleEndian.PutUint32(out[csoHeaderLen+4*blocks:], uint32(len(out)>>shift))
	return out
}
