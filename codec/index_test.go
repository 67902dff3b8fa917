package codec

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// checkIndex compares every block (with and without prev) and random ranges
// of the index against a full decode.
func checkIndex(t *testing.T, enc []byte, opt Options, ranges int, seed uint64) {
	t.Helper()
	full, err := Decode(enc, opt)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	r := bytes.NewReader(enc)
	ix, err := NewIndex(r, int64(len(enc)), opt)
	if err != nil {
		t.Fatalf("NewIndex: %v", err)
	}
	if ix.Size() != int64(len(full)) {
		t.Fatalf("Size %d, decode %d", ix.Size(), len(full))
	}
	var prev []byte
	var sum int64
	for i := 0; i < ix.NumBlocks(); i++ {
		off, n := ix.Block(i)
		if off != sum {
			t.Fatalf("block %d at %d, want %d", i, off, sum)
		}
		sum += int64(n)
		if i < ix.NumBlocks()-1 && int64(n) < blockTarget {
			t.Fatalf("block %d has %d bytes, below %d", i, n, blockTarget)
		}
		if ix.BlockAt(off) != i || ix.BlockAt(off+int64(n)-1) != i {
			t.Fatalf("BlockAt disagrees at block %d", i)
		}
		cold, err := ix.DecodeBlock(r, i, nil)
		if err != nil || !bytes.Equal(cold, full[off:off+int64(n)]) {
			t.Fatalf("block %d cold: err %v equal %v", i, err, bytes.Equal(cold, full[off:off+int64(n)]))
		}
		if i > 0 {
			warm, err := ix.DecodeBlock(r, i, prev)
			if err != nil || !bytes.Equal(warm, cold) {
				t.Fatalf("block %d with prev: err %v", i, err)
			}
		}
		prev = cold
	}
	if sum != ix.Size() {
		t.Fatalf("blocks sum to %d, size %d", sum, ix.Size())
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	for k := 0; k < ranges && len(full) > 0; k++ {
		off := rng.Int64N(int64(len(full)))
		n := 1 + rng.IntN(200000)
		p := make([]byte, n)
		got, err := ix.ReadAt(r, p, off)
		want := full[off:min(int64(len(full)), off+int64(n))]
		if got != len(want) || !bytes.Equal(p[:got], want) {
			t.Fatalf("ReadAt(%d, %d): n=%d err=%v", off, n, got, err)
		}
		if (got < n) != (err != nil) {
			t.Fatalf("ReadAt(%d, %d): n=%d err=%v", off, n, got, err)
		}
	}
}

func TestIndexMatchesDecode(t *testing.T) {
	for _, n := range []int{0, 1, 5, 65535, 65536, 65537, 300000, 3 << 20} {
		src := SampleData(int64(n)+7, n)
		enc := Encode(src, EncodeOptions{})
		checkIndex(t, enc, Options{}, 50, uint64(n))
	}
}
