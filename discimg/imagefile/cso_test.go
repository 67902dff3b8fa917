package imagefile

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/pierrec/lz4/v4"
)

// writeCSO writes a CSO v1 (deflate), CSO v2 (deflate or LZ4 per block) or
// ZSO (LZ4) image of data, as maxcso lays them out. shift pads each block
// to a multiple of 1<<shift.
func writeCSO(data []byte, kind string, blockSize int, shift uint) []byte {
	blocks := (len(data) + blockSize - 1) / blockSize
	out := make([]byte, csoHdrLen+4*(blocks+1))
	magic := "CISO"
	ver := byte(1)
	switch kind {
	case "zso":
		magic = "ZISO"
	case "cso2":
		ver = 2
	}
	copy(out, magic)
	binary.LittleEndian.PutUint32(out[4:], csoHdrLen)
	binary.LittleEndian.PutUint64(out[8:], uint64(len(data)))
	binary.LittleEndian.PutUint32(out[16:], uint32(blockSize))
	out[20], out[21] = ver, byte(shift)
	pad := func() {
		for len(out)%(1<<shift) != 0 {
			out = append(out, 0)
		}
	}
	pad()
	for i := 0; i < blocks; i++ {
		blk := data[i*blockSize : min(len(data), (i+1)*blockSize)]
		var c []byte
		useLZ4 := kind == "zso" || (kind == "cso2" && i%2 == 1)
		if useLZ4 {
			buf := make([]byte, lz4.CompressBlockBound(len(blk)))
			n, _ := lz4.CompressBlock(blk, buf, nil)
			c = buf[:n]
		} else {
			var bb bytes.Buffer
			w, _ := flate.NewWriter(&bb, flate.BestSpeed)
			w.Write(blk)
			w.Close()
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
		binary.LittleEndian.PutUint32(out[csoHdrLen+4*i:], idx)
		out = append(out, c...)
		pad()
	}
	binary.LittleEndian.PutUint32(out[csoHdrLen+4*blocks:], uint32(len(out)>>shift))
	return out
}

func TestCSOZSO(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso
	if testing.Short() {
		src = iso[:6<<20]
	}
	for _, tc := range []struct {
		kind  string
		bs    int
		shift uint
		want  Kind
	}{
		{"cso1", 2048, 0, KindCSO},
		{"cso1", 16384, 2, KindCSO},
		{"cso2", 2048, 0, KindCSO},
		{"cso2", 8192, 3, KindCSO},
		{"zso", 2048, 0, KindZSO},
		{"zso", 2048, 2, KindZSO}, // padded LZ4 blocks
	} {
		b := writeCSO(src, tc.kind, tc.bs, tc.shift)
		im, err := openBytes(t, b, Options{})
		if err != nil {
			t.Fatalf("%s/%d/%d: %v", tc.kind, tc.bs, tc.shift, err)
		}
		if im.Kind() != tc.want || im.Plain() {
			t.Fatalf("%s: kind %v", tc.kind, im.Kind())
		}
		sameBytes(t, im, src)
	}
}

func TestCSOHostile(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso[:64<<10]
	good := writeCSO(src, "cso1", 2048, 0)
	mut := func(f func(b []byte)) []byte { b := append([]byte(nil), good...); f(b); return b }
	for name, b := range map[string][]byte{
		"not ascending":  mut(func(b []byte) { binary.LittleEndian.PutUint32(b[csoHdrLen+4*3:], 1000) }),
		"past the end":   mut(func(b []byte) { binary.LittleEndian.PutUint32(b[csoHdrLen+4*32:], 1<<30) }),
		"block size 0":   mut(func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 0) }),
		"block size odd": mut(func(b []byte) { binary.LittleEndian.PutUint32(b[16:], 3000) }),
		"huge total":     mut(func(b []byte) { binary.LittleEndian.PutUint64(b[8:], 1<<40) }),
		"version 9":      mut(func(b []byte) { b[20] = 9 }),
		"truncated":      good[:30],
	} {
		if _, err := openBytes(t, b, Options{}); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	// A corrupt block reads as an error; its neighbours read.
	start := binary.LittleEndian.Uint32(good[csoHdrLen+4*5:]) &^ csoFlag
	b := mut(func(b []byte) {
		for i := 0; i < 8; i++ {
			b[int(start)+i] = 0xff
		}
	})
	im, err := openBytes(t, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 2048)
	if _, err := im.ReadAt(buf, 5*2048); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("corrupt block 5: %v", err)
	}
	if _, err := im.ReadAt(buf, 6*2048); err != nil || !bytes.Equal(buf, src[6*2048:7*2048]) {
		t.Fatalf("block 6: %v", err)
	}
}

func TestLZ4PartialMatchesLibrary(t *testing.T) {
	_, iso := sourceISO(t)
	for off := 0; off < 8<<20; off += 777 * 1024 {
		blk := iso[off : off+65536]
		buf := make([]byte, lz4.CompressBlockBound(len(blk)))
		n, err := lz4.CompressBlock(blk, buf, nil)
		if err != nil || n == 0 {
			continue
		}
		got := make([]byte, len(blk))
		if err := lz4Partial(append(buf[:n], 0, 0, 0), got); err != nil || !bytes.Equal(got, blk) {
			t.Fatalf("offset %d: %v", off, err)
		}
	}
}

func flateWriter(w *bytes.Buffer) (*flate.Writer, error) { return flate.NewWriter(w, flate.BestSpeed) }
