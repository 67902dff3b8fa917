package imagefile

import (
	"bytes"
	"io"
	"testing"

	"gcfs/cache"
	"gcfs/discimg/imagefile/imagetest"
)

// readAll reads the whole presented image in odd-sized pieces; errors are
// fine, panics and over-long reads are not.
func readAllPieces(t *testing.T, im *Image) {
	buf := make([]byte, 5000)
	for off := int64(0); off < im.Size() && off < 4<<20; off += int64(len(buf)) {
		n, err := im.ReadAt(buf, off)
		if n > len(buf) || (err == nil && int64(n) != min(int64(len(buf)), im.Size()-off)) {
			t.Fatalf("ReadAt(%d) = %d, %v", off, n, err)
		}
	}
}

func fuzzSeedData() []byte {
	b := make([]byte, 40<<10)
	for i := range b {
		b[i] = byte(i * 7 / 5)
	}
	copy(b[8192:], bytes.Repeat([]byte("gcfs CHD fuzz seed "), 200))
	return b
}

// FuzzCHD: the CHD header, map, metadata and hunk reader.
func FuzzCHD(f *testing.F) {
	d := fuzzSeedData()
	f.Add(testCHD{hunkBytes: 4096, unitBytes: 2048, codec: tagZstd, compress: zstdCompress}.build(d))
	frames, meta := cdFrames(d)
	f.Add(testCHD{hunkBytes: 4 * cdFrameBytes, unitBytes: cdFrameBytes, codec: tagCDZS, compress: cdzsCompress, meta: [][]byte{meta}}.build(frames))
	f.Add(testCHD{hunkBytes: 2048, unitBytes: 2048, codec: tagZlib, compress: func(b []byte) []byte {
		var z zlibCodec
		_ = z
		return deflateBytes(b)
	}}.build(d))
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := Open(bytes.NewReader(b), int64(len(b)), Options{Cache: cache.New(4 << 20)})
		if err != nil {
			return
		}
		_ = im.Info()
		readAllPieces(t, im)
	})
}

// FuzzCSO: the CSO v1/v2 and ZSO header, index and blocks.
func FuzzCSO(f *testing.F) {
	d := fuzzSeedData()
	f.Add(imagetest.WriteCSO(d, "cso1", 2048, 0))
	f.Add(imagetest.WriteCSO(d, "cso2", 2048, 1))
	f.Add(imagetest.WriteCSO(d, "zso", 4096, 2))
	f.Fuzz(func(t *testing.T, b []byte) {
		im, err := Open(bytes.NewReader(b), int64(len(b)), Options{Cache: cache.New(4 << 20)})
		if err != nil {
			return
		}
		readAllPieces(t, im)
	})
}

// FuzzHuffman: CHD's Huffman codec on arbitrary input.
func FuzzHuffman(f *testing.F) {
	f.Add([]byte{0x12, 0x34, 0x56, 0x78, 0x9a})
	f.Fuzz(func(t *testing.T, b []byte) {
		dst := make([]byte, 4096)
		_ = safeDecode(huffCodec{}, b, dst)
		var h huffDecoder
		_ = h.init(16, 8)
		_ = h.importTreeRLE(newBitReader(b))
	})
}

func deflateBytes(b []byte) []byte {
	var bb bytes.Buffer
	w, _ := flateWriter(&bb)
	w.Write(b)
	w.Close()
	return bb.Bytes()
}

var _ = io.EOF
