package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
)

// cutReader has only the first n bytes of a stream; reads past them return
// what there is and errMissing, as fsnode's reader of a short image does.
type cutReader struct {
	b []byte
	n int64
}

var errMissing = errors.New("bytes missing from the image")

func (c cutReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= c.n {
		return 0, errMissing
	}
	k := copy(p, c.b[off:c.n])
	if k < len(p) {
		return k, errMissing
	}
	return k, nil
}

// A stream cut short still reports the length its whole packets decode to,
// and the error is the read error, not a format error.
func TestScanCutStream(t *testing.T) {
	plain := SampleData(3, 1<<20)
	stream := Encode(plain, EncodeOptions{Tag: "cut"})
	old := scanChunk
	defer func() { scanChunk = old }()
	for _, chunk := range []int64{old, 4 << 10} {
		scanChunk = chunk
		last := int64(-1)
		for _, cut := range []int64{HeaderSize + 1, int64(len(stream)) / 3, int64(len(stream)) - 1} {
			st, err := Scan(cutReader{stream, cut}, int64(len(stream)), Options{})
			if !errors.Is(err, errMissing) {
				t.Fatalf("chunk %d cut %d: err %v, want the read error", chunk, cut, err)
			}
			if errors.Is(err, ErrFormat) {
				t.Fatalf("cut %d: a missing tail reported as a format error: %v", cut, err)
			}
			// The clean length grows with the bytes present and never
			// exceeds the plain text.
			if cut > HeaderSize+1 && st.DecodedSize <= last {
				t.Errorf("chunk %d cut %d: clean length %d, not above %d of a shorter cut", chunk, cut, st.DecodedSize, last)
			}
			if st.DecodedSize > int64(len(plain)) {
				t.Errorf("cut %d: clean length %d past the plain text", cut, st.DecodedSize)
			}
			last = st.DecodedSize
			if _, err := NewIndex(cutReader{stream, cut}, int64(len(stream)), Options{}); !errors.Is(err, errMissing) {
				t.Errorf("cut %d: NewIndex err %v, want the read error", cut, err)
			}
		}
	}
	// Nothing missing: the reader is not consulted past the stream.
	if st, err := Scan(cutReader{stream, int64(len(stream))}, int64(len(stream)), Options{}); err != nil || st.DecodedSize != int64(len(plain)) {
		t.Fatalf("whole stream: %d, %v", st.DecodedSize, err)
	}
	_ = io.EOF
}

// A stream whose declared size cuts a packet breaks a rule there; the clean
// index still reads every byte before the break, through many blocks and
// groups, and its last block ends at the broken packet.
func TestCleanIndexBrokenTail(t *testing.T) {
	plain := SampleData(5, 1<<20)
	stream := Encode(plain, EncodeOptions{Tag: "tail"})
	broken := 0
	for _, cut := range []int{len(stream) / 3, len(stream)/2 + 1, len(stream) - 2} {
		s := append([]byte{}, stream[:cut]...)
		binary.LittleEndian.PutUint32(s[3:], uint32(cut))
		out, err := Decode(s, Options{})
		if err == nil {
			continue // the cut fell between packets: a sound, shorter stream
		}
		broken++
		ix, _ := NewIndex(bytes.NewReader(s), int64(cut), Options{})
		if ix != nil {
			t.Fatalf("cut %d: NewIndex gave an index with %v", cut, err)
		}
		checkCleanIndex(t, s, Options{}, nil, out, err)
		cix, _ := NewCleanIndex(bytes.NewReader(s), int64(cut), Options{})
		if cix.NumBlocks() < 4 || len(out) < len(plain)/4 {
			t.Fatalf("cut %d: %d clean bytes in %d blocks", cut, len(out), cix.NumBlocks())
		}
	}
	if broken == 0 {
		t.Fatal("no cut broke a packet")
	}
}
