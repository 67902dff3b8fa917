package codec

import (
	"bytes"
	"errors"
	"testing"
)

// decodeToAgree checks that DecodeTo writes exactly what Decode returns
// (the clean prefix on error) and fails as it does, with the window slid
// every flush bytes.
func decodeToAgree(t *testing.T, s []byte, opt Options, flush int) {
	t.Helper()
	old := decodeToFlush
	decodeToFlush = flush
	defer func() { decodeToFlush = old }()
	want, werr := Decode(s, opt)
	var got bytes.Buffer
	n, err := DecodeTo(&got, s, opt)
	if !sameErr(err, werr) || n != int64(got.Len()) || !bytes.Equal(got.Bytes(), want) {
		t.Fatalf("flush %d: DecodeTo wrote %d bytes (said %d), %v; Decode %d bytes, %v", flush, got.Len(), n, err, len(want), werr)
	}
}

// TestDecodeToMatchesDecode: the streaming decoder's output is Decode's,
// window slides included, on whole streams, corrupt ones and past the
// output limit.
func TestDecodeToMatchesDecode(t *testing.T) {
	sequentialTest(t)
	raw := SampleData(7, 3<<20)
	s := Encode(raw, EncodeOptions{Tag: "t"})
	for _, flush := range []int{1, 300, 4096, 65536, 512 << 10} {
		decodeToAgree(t, s, Options{}, flush)
	}
	// Far matches: a repeat 40 KiB back, near the farthest a match reaches.
	far := append(SampleData(8, 40<<10), SampleData(8, 40<<10)...)
	decodeToAgree(t, Encode(far, EncodeOptions{Tag: "far", Best: true}), Options{}, 1000)
	// A corrupt stream: a byte of the middle changed.
	bad := bytes.Clone(s)
	for i := len(bad) / 2; i < len(bad)/2+64; i++ {
		bad[i] = 0x00
	}
	decodeToAgree(t, bad, Options{}, 4096)
	decodeToAgree(t, s, Options{MaxOutput: 1<<20 + 7}, 4096)
	if _, err := DecodeTo(&bytes.Buffer{}, s[:10], Options{}); err == nil {
		t.Fatal("a cut header decoded")
	}
}

type failWriter struct{ left int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errors.New("disk full")
	}
	w.left -= len(p)
	return len(p), nil
}

// TestDecodeToWriteError: a failed write ends the decode with its error and
// the count the writer took.
func TestDecodeToWriteError(t *testing.T) {
	s := Encode(SampleData(9, 2<<20), EncodeOptions{Tag: "t"})
	n, err := DecodeTo(&failWriter{left: 1<<20 + 5}, s, Options{})
	if err == nil || err.Error() != "disk full" || n != 1<<20+5 {
		t.Fatalf("DecodeTo: %d, %v", n, err)
	}
}

func FuzzDecodeTo(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s, uint8(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, body []byte, flags uint8, flush uint16) {
		decodeToAgree(t, fuzzStream(body, flags&1 != 0), fuzzOptions(flags), 1+int(flush))
	})
}
