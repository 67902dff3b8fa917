package codec

import (
	"bytes"
	"errors"
	"math"
	"testing"
)

// An index kept as bytes and loaded again reads every block as the one
// NewIndex built (checkIndex with the loaded index), for streams of one
// block, many blocks, groups of every size, and with small blocks.
func TestLoadIndexRoundTrip(t *testing.T) {
	streams := [][]byte{
		Encode(nil, EncodeOptions{}),
		Encode(SampleData(1, 1000), EncodeOptions{}),
		Encode(SampleData(2, 3<<20), EncodeOptions{}),
		Encode(SampleData(3, 700000), EncodeOptions{Best: true}),
		Encode(bytes.Repeat([]byte("ab"), 400000), EncodeOptions{}),
	}
	for i, enc := range streams {
		r := bytes.NewReader(enc)
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		data := ix.AppendBinary(nil)
		lx, err := LoadIndex(r, int64(len(enc)), Options{}, data)
		if err != nil {
			t.Fatalf("stream %d: %v", i, err)
		}
		if lx.Size() != ix.Size() || lx.NumBlocks() != ix.NumBlocks() || lx.maxSnaps != ix.maxSnaps ||
			!bytes.Equal(lx.AppendBinary(nil), data) {
			t.Fatalf("stream %d: loaded index differs", i)
		}
		full, _ := Decode(enc, Options{})
		for b := range lx.NumBlocks() {
			off, n := lx.Block(b)
			got, err := lx.DecodeBlock(r, b, nil)
			if err != nil || !bytes.Equal(got, full[off:off+int64(n)]) {
				t.Fatalf("stream %d block %d: %v", i, b, err)
			}
		}
	}
}

// Every truncation and every single-byte change of an index's bytes either
// fails with ErrIndexData or loads an index that still obeys the rules
// (blocks decode to the stream's bytes or fail): never a panic or a huge
// allocation.
func TestLoadIndexHostile(t *testing.T) {
	sequentialTest(t)
	enc := Encode(SampleData(4, 900000), EncodeOptions{})
	r := bytes.NewReader(enc)
	ix, err := NewIndex(r, int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	data := ix.AppendBinary(nil)
	full, _ := Decode(enc, Options{})
	check := func(what string, d []byte) {
		lx, err := LoadIndex(r, int64(len(enc)), Options{}, d)
		if err != nil {
			if !errors.Is(err, ErrIndexData) {
				t.Fatalf("%s: %v does not wrap ErrIndexData", what, err)
			}
			return
		}
		for b := range lx.NumBlocks() {
			off, n := lx.Block(b)
			got, err := lx.DecodeBlock(r, b, nil)
			if err == nil && (off+int64(n) > int64(len(full)) || !bytes.Equal(got, full[off:off+int64(n)])) {
				t.Fatalf("%s: block %d decoded to other bytes without an error", what, b)
			}
		}
	}
	for n := range len(data) {
		check("truncated", data[:n])
	}
	for i := range data {
		for _, v := range []byte{0, 1, 0x7f, 0x80, 0xff, data[i] ^ 1} {
			d := bytes.Clone(data)
			d[i] = v
			check("changed", d)
		}
	}
	if _, err := LoadIndex(r, int64(len(enc)), Options{MaxOutput: ix.Size() - 1}, data); !errors.Is(err, ErrIndexData) {
		t.Fatalf("an index past MaxOutput: %v", err)
	}
	if _, err := LoadIndex(bytes.NewReader(enc[:10]), 10, Options{}, data); err == nil {
		t.Fatal("a stream without a header: no error")
	}
}

func FuzzLoadIndex(f *testing.F) {
	enc := Encode(SampleData(5, 200000), EncodeOptions{})
	ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(ix.AppendBinary(nil))
	f.Add([]byte{indexFileVersion, 2, 0, 0, 0})
	full, _ := Decode(enc, Options{})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := bytes.Clone(data)
		r := bytes.NewReader(enc)
		dec, end, perr := PeekIndex(data) // must not panic, whatever the bytes
		lx, err := LoadIndex(r, int64(len(enc)), Options{}, data)
		if !bytes.Equal(in, data) {
			t.Fatal("LoadIndex mutated its input")
		}
		if err != nil {
			return
		}
		if perr != nil || dec != lx.Size() || end != int64(len(enc)) {
			t.Fatalf("PeekIndex says %d bytes of a %d-byte stream (%v), LoadIndex accepts %d of %d", dec, end, perr, lx.Size(), len(enc))
		}
		p := make([]byte, lx.Size())
		if n, err := lx.ReadAt(r, p, 0); err == nil && (lx.Size() != int64(len(full)) || !bytes.Equal(p[:n], full)) {
			t.Fatal("a loaded index read other bytes without an error")
		}
	})
}

// A parallel-built index (short last blocks of each chunk, groups forced at
// chunk starts) is kept and loaded like NewIndex's.
func TestLoadIndexParallelBuilt(t *testing.T) {
	setChunking(t, 0x2000, 2)
	enc := Encode(SampleData(6, 2<<20), EncodeOptions{})
	ix, err := NewIndexParallel(enc, 2, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(enc)
	lx, err := LoadIndex(r, int64(len(enc)), Options{}, ix.AppendBinary(nil))
	if err != nil {
		t.Fatal(err)
	}
	full, _ := Decode(enc, Options{})
	p := make([]byte, len(full))
	if n, err := lx.ReadAt(r, p, 0); n != len(full) || !bytes.Equal(p, full) {
		t.Fatalf("loaded parallel index: %d bytes, %v", n, err)
	}
}

// PeekIndex reads the decoded size and stream length an index ends at,
// from its bytes alone: those LoadIndex and the index agree on, for indexes
// of one block and of many, sequential and parallel; a truncated or foreign
// encoding is an error wrapping ErrIndexData.
func TestPeekIndex(t *testing.T) {
	for _, n := range []int{0, 1, 5000, 300000, 2 << 20} {
		enc := Encode(SampleData(int64(n)+1, n), EncodeOptions{})
		seq, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
		if err != nil {
			t.Fatal(err)
		}
		par, err := NewIndexParallel(enc, 2, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ix := range []*Index{seq, par} {
			data := ix.AppendBinary(nil)
			dec, end, err := PeekIndex(data)
			if err != nil || dec != ix.Size() || end != int64(len(enc)) {
				t.Errorf("%d bytes: PeekIndex %d, %d, %v; want %d, %d", n, dec, end, err, ix.Size(), len(enc))
			}
			for _, bad := range [][]byte{nil, data[:len(data)/2], append([]byte{9}, data[1:]...)} {
				if _, _, err := PeekIndex(bad); !errors.Is(err, ErrIndexData) {
					t.Errorf("%d bytes: PeekIndex of %d bad bytes: %v", n, len(bad), err)
				}
			}
		}
	}
}

// MaxDecodedSize bounds what any stream decodes to, and tightly: a stream
// of nothing but the longest matches (288 bytes from 4) decodes to just
// under it; the encoder's best on zeros stays under it.
func TestMaxDecodedSize(t *testing.T) {
	const packets = 20000
	s := make([]byte, HeaderSize, HeaderSize+5+4*packets)
	s = append(s, 0x01, 'a', 'b', 'c', 'd') // a literal of 4
	for range packets {
		s = append(s, 0x20, 0xff, 0x00, 0x00) // a match of 288 at distance 1
	}
	putHeader(s, len(s), "bound")
	st, err := Scan(bytes.NewReader(s), int64(len(s)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	lim := MaxDecodedSize(int64(len(s)))
	if want := int64(4 + 288*packets); st.DecodedSize != want || st.DecodedSize > lim || st.DecodedSize < lim*99/100 {
		t.Errorf("longest matches: %d decoded bytes (want %d), bound %d", st.DecodedSize, want, lim)
	}
	enc := Encode(make([]byte, 8<<20), EncodeOptions{Best: true})
	if got, lim := int64(8<<20), MaxDecodedSize(int64(len(enc))); got > lim {
		t.Errorf("8 MiB of zeros in %d bytes: past the bound %d", len(enc), lim)
	}
	if MaxDecodedSize(HeaderSize) != 0 || MaxDecodedSize(0) != 0 || MaxDecodedSize(math.MaxInt64) != math.MaxInt64 {
		t.Error("MaxDecodedSize at its ends")
	}
}
