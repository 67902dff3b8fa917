package imagefile

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/pierrec/lz4/v4"

	"gcfs/discimg/imagefile/imagetest"
)

func TestCSOZSO(t *testing.T) {
	_, iso := sourceISO(t)
	// Each kind reads the whole disc once; its other block sizes and
	// shifts read a prefix (compressing the disc again is most of the time).
	whole := map[string]bool{}
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
		src := iso[:min(len(iso), 6<<20)]
		if !whole[tc.kind] && !testing.Short() {
			src, whole[tc.kind] = iso, true
		}
		b := imagetest.WriteCSO(src, tc.kind, tc.bs, tc.shift)
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
	good := imagetest.WriteCSO(src, "cso1", 2048, 0)
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
