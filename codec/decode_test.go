package codec

import (
	"bytes"
	"errors"
	"testing"
)

// stream puts a correct header in front of packet bytes.
func stream(packets ...[]byte) []byte {
	body := bytes.Join(packets, nil)
	s := make([]byte, HeaderSize, HeaderSize+len(body))
	s = append(s, body...)
	putHeader(s, len(s), "test")
	return s
}

func b(s ...any) []byte {
	var out []byte
	for _, x := range s {
		switch v := x.(type) {
		case int:
			out = append(out, byte(v))
		case string:
			out = append(out, v...)
		case []byte:
			out = append(out, v...)
		}
	}
	return out
}

func TestDecodeIssueVectors(t *testing.T) {
	ok := []struct {
		name string
		in   []byte
		want string
	}{
		{"short match run", b(0x01, "abcd", 0xC0, 0x00), "abcdddddddd"},
		{"match with little literals", b(0x01, "xyzw", 0x21, 0x02, 0x00, "!?"), "xyzwwww!?"},
		{"dummy with little literals", b(0x01, "abcd", 0x11, 0x02, 0x00, "ef"), "abcdef"},
		{"block marker", b(0x01, "abcd", 0x12, 0x00, 0x00, 0xEE), "abcd"},
	}
	for _, tc := range ok {
		got, err := Decode(stream(tc.in), Options{})
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	bad := []struct {
		name string
		in   []byte
		rule Rule
		off  int64
		good string
	}{
		{"literal pair", b(0x01, "abcd", 0x01, "efgh"), RuleLiteralPair, 21, "abcd"},
		{"distance before start", b(0x01, "abcd", 0x21, 0xFC, 0x00), RuleDistance, 21, "abcd"},
	}
	for _, tc := range bad {
		got, err := Decode(stream(tc.in), Options{})
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.Rule != tc.rule || ce.Offset != tc.off || !errors.Is(err, ErrFormat) {
			t.Errorf("%s: err %v, want %s at %d", tc.name, err, tc.rule, tc.off)
		}
		if string(got) != tc.good {
			t.Errorf("%s: clean prefix %q, want %q", tc.name, got, tc.good)
		}
	}
}

func TestRoundTripQuick(t *testing.T) {
	for _, n := range []int{0, 1, 2, 3, 4, 5, 17, 18, 19, 273, 274, 276, 277, 1000, 70000, 300000} {
		src := SampleData(int64(n), n)
		for _, best := range []bool{false, true} {
			enc := Encode(src, EncodeOptions{Tag: "t", Best: best})
			got, err := Decode(enc, Options{})
			if err != nil || !bytes.Equal(got, src) {
				t.Fatalf("n=%d best=%v: err %v, equal %v", n, best, err, bytes.Equal(got, src))
			}
		}
	}
}

func TestAppendDecode(t *testing.T) {
	src := SampleData(4, 100000)
	enc := Encode(src, EncodeOptions{})
	prefix := []byte("already here")
	for _, capx := range []int{0, 200000} {
		dst := make([]byte, len(prefix), len(prefix)+capx)
		copy(dst, prefix)
		got, err := AppendDecode(dst, enc, Options{})
		if err != nil || !bytes.Equal(got[:len(prefix)], prefix) || !bytes.Equal(got[len(prefix):], src) {
			t.Fatalf("cap %d: err %v", capx, err)
		}
		if capx > 0 && &got[0] != &dst[0] {
			t.Errorf("cap %d: reallocated although the buffer was large enough", capx)
		}
	}
	// A match may not reach into what dst held before.
	dst := []byte("xyzw")
	_, err := AppendDecode(dst, stream(b(0x11, 0x00, 0x00, 0x40, 0x00)), Options{})
	wantRule(t, "reach into dst", err, RuleDistance, HeaderSize+3)
	// The limit counts only the new output.
	if _, err := AppendDecode(make([]byte, 100), stream(b(0x01, "abcd", 0xC0, 0x00)), Options{MaxOutput: 11}); err != nil {
		t.Errorf("limit counted dst: %v", err)
	}
}
