package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
)

// decodeAgree decodes s with Decode, Scan and NewIndex and fails unless they
// agree on the clean length and on the error (rule and offset).
func decodeAgree(t *testing.T, s []byte, opt Options) ([]byte, error) {
	t.Helper()
	in := bytes.Clone(s)
	out, err := Decode(s, opt)
	if !bytes.Equal(in, s) {
		t.Fatalf("Decode mutated its input")
	}
	st, serr := Scan(bytes.NewReader(s), int64(len(s)), opt)
	if !sameErr(err, serr) {
		t.Fatalf("Decode err %v, Scan err %v", err, serr)
	}
	if err == nil || !isHeaderErr(err) {
		if st.DecodedSize != int64(len(out)) {
			t.Fatalf("Scan DecodedSize %d, Decode %d bytes (err %v)", st.DecodedSize, len(out), err)
		}
	}
	ix, ierr := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
	if !sameErr(err, ierr) {
		t.Fatalf("Decode err %v, NewIndex err %v", err, ierr)
	}
	if ierr == nil {
		p := make([]byte, len(out))
		n, rerr := ix.ReadAt(bytes.NewReader(s), p, 0)
		if n != len(out) || !bytes.Equal(p, out) || rerr != nil {
			t.Fatalf("index ReadAt: n=%d err=%v", n, rerr)
		}
	}
	dix, dout, derr := NewIndexDecode(nil, s, opt, 0)
	if !sameErr(err, derr) || !bytes.Equal(dout, out) {
		t.Fatalf("NewIndexDecode: %d bytes, err %v; Decode %d bytes, err %v", len(dout), derr, len(out), err)
	}
	if (dix == nil) != (derr != nil) {
		t.Fatalf("NewIndexDecode: index %v with err %v", dix != nil, derr)
	}
	if ierr == nil {
		checkDecodedIndex(t, dix, ix, out)
	}
	checkCleanIndex(t, s, opt, ix, out, err)
	if ierr == nil {
		checkCursor(t, s, opt, out)
	}
	return out, err
}

// checkCursor fails unless decoding every block in order through one
// cursor (DecodeNextTo) on a fresh index (no snapshots) gives Decode's
// output, the cursor at the next block after each, none after the last;
// and unless a cursor asked for a block it is not at (one skipped) still
// gives that block's bytes.
func checkCursor(t *testing.T, s []byte, opt Options, out []byte) {
	t.Helper()
	ix, err := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
	if err != nil {
		t.Fatal(err)
	}
	r := bytes.NewReader(s)
	var cur *Cursor
	nb := ix.NumBlocks()
	for i := range nb {
		bo, bn := ix.Block(i)
		var b []byte
		b, cur, err = ix.DecodeNextTo(r, cur, i, nil, nil)
		if err != nil || !bytes.Equal(b, out[bo:bo+int64(bn)]) {
			t.Fatalf("cursor block %d of %d: %d bytes, %v", i, nb, len(b), err)
		}
		if i+1 < nb && (cur == nil || cur.Next() != i+1) {
			t.Fatalf("after block %d of %d the cursor is not at block %d", i, nb, i+1)
		}
		if i+1 == nb && cur != nil {
			t.Fatalf("a cursor past the last block")
		}
	}
	if nb < 3 {
		return
	}
	// At block 1, asked for block 2: decoded afresh, right all the same.
	ix2, _ := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
	_, cur, err = ix2.DecodeNextTo(r, nil, 0, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	bo, bn := ix2.Block(2)
	b, cur, err := ix2.DecodeNextTo(r, cur, 2, nil, nil)
	if err != nil || !bytes.Equal(b, out[bo:bo+int64(bn)]) {
		t.Fatalf("cursor at block 1 asked for block 2: %d bytes, %v", len(b), err)
	}
	cur.Release()
}

// checkCleanIndex fails unless NewCleanIndex gives NewIndex's index on a
// sound stream and, on a broken one, Decode's error and an index whose
// every block and whole range read as Decode's clean prefix.
func checkCleanIndex(t *testing.T, s []byte, opt Options, ix *Index, out []byte, err error) {
	t.Helper()
	cix, cerr := NewCleanIndex(bytes.NewReader(s), int64(len(s)), opt)
	if !sameErr(err, cerr) {
		t.Fatalf("Decode err %v, NewCleanIndex err %v", err, cerr)
	}
	var ce *CorruptError
	switch {
	case err == nil:
		if cix == nil || !sameIndex(cix, ix) {
			t.Fatalf("NewCleanIndex of a sound stream differs from NewIndex's")
		}
		return
	case len(out) == 0 || !errors.As(err, &ce):
		if cix != nil {
			t.Fatalf("NewCleanIndex: an index of %d bytes with %d clean (err %v)", cix.Size(), len(out), err)
		}
		return
	case cix == nil:
		t.Fatalf("NewCleanIndex: no index of the %d clean bytes (err %v)", len(out), err)
	}
	if cix.Size() != int64(len(out)) {
		t.Fatalf("NewCleanIndex: %d bytes, Decode's clean prefix %d", cix.Size(), len(out))
	}
	r := bytes.NewReader(s)
	for i := range cix.NumBlocks() {
		bo, bn := cix.Block(i)
		b, berr := cix.DecodeBlock(r, i, nil)
		if berr != nil || !bytes.Equal(b, out[bo:bo+int64(bn)]) {
			t.Fatalf("clean index block %d of %d: %v", i, cix.NumBlocks(), berr)
		}
	}
	p := make([]byte, len(out)+1)
	n, rerr := cix.ReadAt(r, p, 0)
	if n != len(out) || !bytes.Equal(p[:n], out) || rerr != io.EOF {
		t.Fatalf("clean index ReadAt: n=%d err=%v", n, rerr)
	}
}

// checkDecodedIndex fails unless got (NewIndexDecode's) has want's
// (NewIndex's) checkpoints, groups and snapshot lengths, and every snapshot
// filled with the output's bytes.
func checkDecodedIndex(t *testing.T, got, want *Index, out []byte) {
	t.Helper()
	if !sameIndex(got, want) {
		t.Fatalf("NewIndexDecode's index differs from NewIndex's:\n%v %v %v\n%v %v %v", got.cps, got.groupFirst, got.snapLen, want.cps, want.groupFirst, want.snapLen)
	}
	if got.MemSize() != got.MaxMemSize() {
		t.Fatalf("NewIndexDecode left snapshots unfilled: %d of %d bytes", got.MemSize(), got.MaxMemSize())
	}
	for g := 1; g < len(got.groupFirst); g++ {
		w, ok := got.snapshot(g)
		end := got.cps[got.groupFirst[g]].out
		if !ok || !bytes.Equal(w, out[end-int64(len(w)):end]) || len(w) != int(got.snapLen[g]) {
			t.Fatalf("group %d's snapshot is not the output before it", g)
		}
	}
}

func isHeaderErr(err error) bool {
	var ce *CorruptError
	return errors.As(err, &ce) && ce.Offset < HeaderSize
}

func sameErr(a, b error) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	if a == nil {
		return true
	}
	var ca, cb *CorruptError
	if errors.As(a, &ca) != errors.As(b, &cb) {
		return false
	}
	if ca != nil {
		return *ca == *cb
	}
	return true
}

func wantRule(t *testing.T, name string, err error, rule Rule, off int64) {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) || ce.Rule != rule || (off >= 0 && ce.Offset != off) {
		t.Errorf("%s: err %v, want %q at %#x", name, err, rule, off)
	}
	if err != nil && !errors.Is(err, ErrFormat) {
		t.Errorf("%s: error does not wrap ErrFormat", name)
	}
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// bigPrefix is packet data producing n >= 4 bytes of distinct-ish output:
// long literals separated by dummies. Returns the packets and the output.
func bigPrefix(n int) ([]byte, []byte) {
	var pk, out []byte
	i := 0
	for n > 0 {
		c := min(n, 273)
		if n-c > 0 && n-c < 4 {
			c = n - 4
		}
		chunk := make([]byte, c)
		for k := range chunk {
			chunk[k] = byte(i*7 + k*13 + k>>8)
		}
		i++
		if len(pk) > 0 {
			pk = append(pk, 0x11, 0, 0)
		}
		if c <= 18 {
			pk = append(pk, byte(c-3))
		} else {
			pk = append(pk, 0, byte(c-18))
		}
		pk = append(pk, chunk...)
		out = append(out, chunk...)
		n -= c
	}
	return pk, out
}

func TestDecodePacketKinds(t *testing.T) {
	lit20 := rep("0123456789", 2)
	cases := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty stream", nil, ""},
		{"literal 4", b(0x01, "abcd"), "abcd"},
		{"literal 18", b(0x0F, rep("x", 18)), rep("x", 18)},
		{"long literal 20", b(0x00, 0x02, lit20), lit20},
		{"long literal 273", b(0x00, 0xFF, rep("q", 273)), rep("q", 273)},
		{"short match len 3 dist 4", b(0x01, "abcd", 0x4C, 0x00), "abcdabc"},
		{"short match len 8 dist 2 overlap", b(0x01, "abcd", 0xE4, 0x00), "abcdcdcdcdcd"},
		{"short match little literals 3", b(0x01, "abcd", 0x43, 0x00, "xyz"), "abcdddd" + "xyz"},
		{"match len 33 flag form", b(0x01, "abcd", 0x3F, 0x0C, 0x00), "abcd" + rep("abcd", 8) + "a"},
		{"match ext len 33", b(0x01, "abcd", 0x20, 0x00, 0x0C, 0x00), "abcd" + rep("abcd", 8) + "a"},
		{"match ext len 288", b(0x01, "abcd", 0x20, 0xFF, 0x00, 0x00), "abcd" + rep("d", 288)},
		{"match dist 3 overlap", b(0x01, "abcd", 0x25, 0x08, 0x00), "abcd" + "bcdbcdb"},
		{"dummy no literals between literals", b(0x01, "abcd", 0x11, 0x00, 0x00, 0x01, "efgh"), "abcdefgh"},
		{"dummy first packet", b(0x11, 0x03, 0x00, "abc"), "abc"},
		{"dummy little literal bits ignore high", b(0x01, "abcd", 0x11, 0x01, 0x00, "e"), "abcde"},
		{"marker then literal", b(0x01, "abcd", 0x12, 0x00, 0x00, bytes.Repeat([]byte{0xEE}, 0x1000-8), 0x01, "efgh"), "abcdefgh"},
		{"marker long form ignores literal bits", b(0x01, "abcd", 0x10, 0x05, 0x03, 0x00), "abcd"},
		{"marker at end without filler", b(0x01, "abcd", 0x17, 0x00, 0x00), "abcd"},
		{"LZO first byte 4 literals", b(0x15, "abcd", 0x4C, 0x00), "abcdabc"},
		{"LZO first byte 1 literal", b(0x12, "a", 0x01, "bcde"), "abcde"},
		{"trailing junk past declared size is ignored", nil, ""},
	}
	for _, tc := range cases {
		got, err := decodeAgree(t, stream(tc.in), Options{})
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	// Bytes past the declared size never change the result.
	s := stream(b(0x01, "abcd", 0xC0, 0x00))
	junk := append(bytes.Clone(s), 0x01, 'z', 'z', 'z', 'z')
	if got, err := decodeAgree(t, junk, Options{}); err != nil || string(got) != "abcdddddddd" {
		t.Errorf("junk past declared size: %q %v", got, err)
	}
}

func TestDecodeFarMatches(t *testing.T) {
	pk, out := bigPrefix(0xC000 + 100)
	// Far match: length 3 (flag 0x11), dd = 1 -> distance 0x4001.
	s := stream(pk, b(0x11, 0x04, 0x00))
	want := append(bytes.Clone(out), out[len(out)-0x4001:len(out)-0x4001+3]...)
	got, err := decodeAgree(t, s, Options{})
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("far len 3: err %v equal %v", err, bytes.Equal(got, want))
	}
	// Long far match: 10 FF -> length 264, distance 0x4000 + 0x3F*0x40 + 0x3F, 2 little literals.
	d := 0x4000 + 0x3F*0x40 + 0x3F
	s = stream(pk, b(0x10, 0xFF, 0x3F<<2|2, 0x3F, "!?"))
	want = append(bytes.Clone(out), out[len(out)-d:len(out)-d+264]...)
	want = append(want, "!?"...)
	if got, err := decodeAgree(t, s, Options{}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("far len 264: err %v", err)
	}
	// Bit 3 adds 0x4000: flag 0x19, dd fields = 5 -> distance 0x8005.
	d = 0x8005
	s = stream(pk, b(0x19, 0x05<<2, 0x00))
	want = append(bytes.Clone(out), out[len(out)-d:len(out)-d+3]...)
	if got, err := decodeAgree(t, s, Options{}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("far bit 3: err %v", err)
	}
	// Bit 3 with zero fields is a match at distance 0x8000, not a marker.
	d = 0x8000
	s = stream(pk, b(0x1A, 0x00, 0x00))
	want = append(bytes.Clone(out), out[len(out)-d:len(out)-d+4]...)
	if got, err := decodeAgree(t, s, Options{}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("far bit 3, zero fields: err %v", err)
	}
	// The farthest a stream can reach: 0x8000 + 0x3FFF = 49151.
	d = maxWindow
	s = stream(pk, b(0x19, 0xFC, 0xFF))
	want = append(bytes.Clone(out), out[len(out)-d:len(out)-d+3]...)
	if got, err := decodeAgree(t, s, Options{}); err != nil || !bytes.Equal(got, want) {
		t.Errorf("far max distance: err %v", err)
	}
	// Distance exactly the output length is fine; one more is not.
	pk2, out2 := bigPrefix(0x4001)
	if got, err := decodeAgree(t, stream(pk2, b(0x11, 0x04, 0x00)), Options{}); err != nil || !bytes.Equal(got[:len(out2)], out2) || len(got) != len(out2)+3 {
		t.Errorf("far at distance == output: err %v", err)
	}
	_, err = decodeAgree(t, stream(pk2, b(0x11, 0x08, 0x00)), Options{})
	wantRule(t, "far one past start", err, RuleDistance, int64(HeaderSize+len(pk2)))
}

func TestDecodeBlockMarkerAlign(t *testing.T) {
	// A marker early in the stream: the 0x1000 reader resumes at 0x1010, the
	// 0x2000 reader at 0x2010; each finds a different literal there.
	pk := b(0x01, "abcd", 0x12, 0x00, 0x00)
	pad1 := make([]byte, 0x1000-len(pk))
	at1 := b(0x01, "1111", 0x12, 0x00, 0x00)
	pad2 := make([]byte, 0x1000-len(at1))
	at2 := b(0x01, "2222")
	s := stream(pk, pad1, at1, pad2, at2)
	got, err := decodeAgree(t, s, Options{})
	if err != nil || string(got) != "abcd11112222" {
		t.Errorf("align 0x1000: %q %v", got, err)
	}
	got, err = decodeAgree(t, s, Options{Align: 0x2000})
	if err != nil || string(got) != "abcd2222" {
		t.Errorf("align 0x2000: %q %v", got, err)
	}
	// A marker ending exactly on a boundary skips nothing.
	pre := make([]byte, 0, 0x1000)
	pre = append(pre, 0x00, 0xFF)
	pre = append(pre, bytes.Repeat([]byte{'z'}, 273)...)
	for len(pre) < 0x1000-3 {
		pre = append(pre, 0x40, 0x00) // 275 + 2k reaches 0x1000-3 exactly
	}
	if len(pre) != 0x1000-3 {
		t.Fatalf("setup: %d", len(pre))
	}
	s = stream(pre, b(0x12, 0, 0), b(0x01, "wxyz"))
	got, err = decodeAgree(t, s, Options{})
	if err != nil || !strings.HasSuffix(string(got), "wxyz") {
		t.Errorf("marker ending on a boundary: %v", err)
	}
}

func TestDecodeRules(t *testing.T) {
	lp := int64(HeaderSize + 5) // offset of the packet after "01 abcd"
	cases := []struct {
		name string
		in   []byte
		opt  Options
		rule Rule
		off  int64
		good string
	}{
		{"literal pair", b(0x01, "abcd", 0x01, "efgh"), Options{}, RuleLiteralPair, lp, "abcd"},
		{"long literal pair", b(0x01, "abcd", 0x00, 0x00, rep("e", 18)), Options{}, RuleLiteralPair, lp, "abcd"},
		{"literal after LZO first run", b(0x15, "abcd", 0x01, "efgh"), Options{}, RuleLiteralPair, lp, "abcd"},
		{"literal across marker is a pair? no: marker resets", nil, Options{}, "", 0, ""},
		{"distance before start", b(0x01, "abcd", 0x21, 0xFC, 0x00), Options{}, RuleDistance, lp, "abcd"},
		{"short distance before start", b(0x01, "abcd", 0x50, 0x00), Options{}, RuleDistance, lp, "abcd"},
		{"match at the very start", b(0x11, 0x00, 0x00, 0x40, 0x00), Options{}, RuleDistance, HeaderSize + 3, ""},
		{"first byte 0x40 is an LZO run of 47", b(0x40, 0x00), Options{}, RuleTruncated, HeaderSize, ""},
		{"truncated literal", b(0x01, "ab"), Options{}, RuleTruncated, HeaderSize, ""},
		{"truncated long literal length", b(0x00), Options{}, RuleTruncated, HeaderSize, ""},
		{"truncated short match", b(0x01, "abcd", 0x40), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated match", b(0x01, "abcd", 0x21, 0x00), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated match ext", b(0x01, "abcd", 0x20), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated far", b(0x01, "abcd", 0x11, 0x00), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated little literals", b(0x01, "abcd", 0x43, 0x00, "x"), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated dummy literals", b(0x01, "abcd", 0x11, 0x03, 0x00, "x"), Options{}, RuleTruncated, lp, "abcd"},
		{"truncated LZO first run", b(0x20, "abc"), Options{}, RuleTruncated, HeaderSize, ""},
		{"output limit", b(0x01, "abcd", 0xC0, 0x00), Options{MaxOutput: 10}, RuleOutputLimit, lp, "abcd"},
		{"output limit on literal", b(0x01, "abcd"), Options{MaxOutput: 3}, RuleOutputLimit, HeaderSize, ""},
		{"output limit on little literals", b(0x01, "abcd", 0x42, 0x00, "xy"), Options{MaxOutput: 8}, RuleOutputLimit, lp, "abcd"},
		{"strict literal after little literals", b(0x01, "abcd", 0x41, 0x00, "x", 0x01, "efgh"), Options{Strict: true}, RuleStrictLiteral, lp + 3, "abcdddd" + "x"},
		{"strict after dummy with literals", b(0x11, 0x02, 0x00, "ab", 0x01, "efgh"), Options{Strict: true}, RuleStrictLiteral, HeaderSize + 5, "ab"},
		{"strict after LZO 1-literal first run", b(0x12, "a", 0x01, "bcde"), Options{Strict: true}, RuleStrictLiteral, HeaderSize + 2, "a"},
	}
	for _, tc := range cases {
		if tc.in == nil {
			continue
		}
		got, err := decodeAgree(t, stream(tc.in), tc.opt)
		wantRule(t, tc.name, err, tc.rule, tc.off)
		if string(got) != tc.good {
			t.Errorf("%s: clean prefix %q, want %q", tc.name, got, tc.good)
		}
	}
	// Limits that are just met pass.
	if got, err := decodeAgree(t, stream(b(0x01, "abcd", 0xC0, 0x00)), Options{MaxOutput: 11}); err != nil || len(got) != 11 {
		t.Errorf("output limit met: %v", err)
	}
	if got, err := decodeAgree(t, stream(b(0x01, "abcd", 0x41, 0x00, "x", 0x01, "efgh")), Options{}); err != nil || string(got) != "abcdddd"+"x"+"efgh" {
		t.Errorf("non-strict literal after little literals: %q %v", got, err)
	}
	// A literal after a marker that followed a literal is fine (the marker
	// is a match packet without literals).
	s := stream(b(0x01, "abcd", 0x12, 0x00, 0x00, bytes.Repeat([]byte{0xEE}, 0x1000-8), 0x01, "efgh"))
	if got, err := decodeAgree(t, s, Options{Strict: true}); err != nil || string(got) != "abcdefgh" {
		t.Errorf("literal, marker, literal: %q %v", got, err)
	}
}

func TestDecodeHeaderErrors(t *testing.T) {
	good := stream(b(0x01, "abcd"))
	badMagic := bytes.Clone(good)
	badMagic[1] = 'X'
	_, err := decodeAgree(t, badMagic, Options{})
	wantRule(t, "bad magic", err, RuleMagic, 0)

	over := bytes.Clone(good)
	over[3]++ // declares one byte more than there is
	_, err = decodeAgree(t, over, Options{})
	wantRule(t, "declared past buffer", err, RuleDeclaredSize, 3)

	under := bytes.Clone(good)
	under[3], under[4], under[5], under[6] = 15, 0, 0, 0
	_, err = decodeAgree(t, under, Options{})
	wantRule(t, "declared below header", err, RuleDeclaredSize, 3)

	huge := bytes.Clone(good)
	huge[3], huge[4], huge[5], huge[6] = 0, 0, 0, 0x40 // 1 GiB
	_, err = decodeAgree(t, huge, Options{})
	wantRule(t, "declared 1 GiB", err, RuleDeclaredSize, 3)

	_, err = Decode([]byte("WAD\x10\x00"), Options{})
	wantRule(t, "short header", err, RuleTruncated, -1)
	_, err = Decode([]byte("WA"), Options{})
	wantRule(t, "short header prefix", err, RuleTruncated, -1)
	_, err = Decode([]byte("XA"), Options{})
	wantRule(t, "short bad magic", err, RuleMagic, 0)

	h, err := ParseHeader(stream(nil))
	if err != nil || h.Size != 16 || h.Tag != "test" {
		t.Errorf("ParseHeader: %+v %v", h, err)
	}
	if !IsStream(good, int64(len(good))) || IsStream(good, int64(len(good))-1) || IsStream(good[:15], 100) || IsStream(badMagic, 100) {
		t.Errorf("IsStream wrong")
	}
}

// errReader fails every read past failAt.
type errReader struct {
	r      io.ReaderAt
	failAt int64
}

var errDisk = errors.New("disk on fire")

func (e errReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > e.failAt {
		n := max(0, int(e.failAt-off))
		e.r.ReadAt(p[:n], off)
		return n, errDisk
	}
	return e.r.ReadAt(p, off)
}

func TestScanIOError(t *testing.T) {
	enc := Encode(SampleData(3, 2<<20), EncodeOptions{})
	r := errReader{bytes.NewReader(enc), int64(len(enc)) / 2}
	_, err := Scan(r, int64(len(enc)), Options{})
	if !errors.Is(err, errDisk) || errors.Is(err, ErrFormat) {
		t.Errorf("Scan I/O error: %v", err)
	}
	if _, err := NewIndex(r, int64(len(enc)), Options{}); !errors.Is(err, errDisk) {
		t.Errorf("NewIndex I/O error: %v", err)
	}
	ix, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.DecodeBlock(r, ix.NumBlocks()-1, nil); !errors.Is(err, errDisk) {
		t.Errorf("DecodeBlock I/O error: %v", err)
	}
	// A shorter reader than the size claims.
	if _, err := Scan(bytes.NewReader(enc[:len(enc)-10]), int64(len(enc)), Options{}); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("Scan short reader: %v", err)
	}
}

func TestScanStats(t *testing.T) {
	pk, _ := bigPrefix(0x8000 + 300)
	s := stream(pk, b(0x19, 0x04, 0x00), b(0x11, 0x04, 0x00), b(0x21, 0x00, 0x00), b(0x40, 0x01, 0x01, "abcd"),
		b(0x12, 0, 0))
	st, err := Scan(bytes.NewReader(s), int64(len(s)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	litPackets := (0x8000 + 300 + 272) / 273
	if st.FarMatches != 2 || st.Matches != 1 || st.ShortMatches != 1 || st.BlockMarkers != 1 ||
		st.Literals != litPackets+1 || st.Dummies != litPackets-1 || st.Header.Tag != "test" {
		t.Errorf("stats %+v (literals want %d)", st, litPackets+1)
	}
}

func TestMaxOutputBoundsMemory(t *testing.T) {
	// A bomb: far matches of 264 bytes from 4 input bytes, 64 KiB of them.
	pk, _ := bigPrefix(0x4001)
	body := bytes.Repeat(b(0x10, 0xFF, 0x04, 0x00), 16384)
	s := stream(pk, body)
	out, err := Decode(s, Options{MaxOutput: 1 << 20})
	wantRule(t, "bomb", err, RuleOutputLimit, -1)
	if len(out) > 1<<20 || cap(out) > 1<<20+writeSlack {
		t.Errorf("bomb: %d bytes, cap %d", len(out), cap(out))
	}
	st, serr := Scan(bytes.NewReader(s), int64(len(s)), Options{MaxOutput: 1 << 20})
	if !sameErr(err, serr) || st.DecodedSize != int64(len(out)) {
		t.Errorf("bomb scan: %v %d", serr, st.DecodedSize)
	}
	full, err := Decode(s, Options{})
	if err != nil || len(full) != 0x4001+16384*264 {
		t.Errorf("bomb without limit: %d %v", len(full), err)
	}
}

func TestHeaderTag(t *testing.T) {
	s := stream(nil)
	copy(s[7:16], "hud\x00\x00junk")
	if h, err := ParseHeader(s); err != nil || h.Tag != "hud" {
		t.Errorf("tag %q %v", h.Tag, err)
	}
	copy(s[7:16], "chnktfrag") // all nine bytes
	if h, _ := ParseHeader(s); h.Tag != "chnktfrag" {
		t.Errorf("tag %q", h.Tag)
	}
	enc := Encode([]byte("x"), EncodeOptions{Tag: "longer-than-nine"})
	if h, _ := ParseHeader(enc); h.Tag != "longer-th" {
		t.Errorf("long tag written as %q", h.Tag)
	}
}

func TestAlignExtremes(t *testing.T) {
	s := stream(b(0x01, "abcd", 0x12, 0x00, 0x00, 0x01, "efgh"))
	for _, a := range []int64{-5, 1, 1 << 40, 1<<63 - 1} {
		got, err := decodeAgree(t, s, Options{Align: a})
		want := "abcd" // the marker skips to the end
		if a == 1 {
			want = "abcdefgh" // every offset is aligned: the marker skips nothing
		}
		if a == -5 {
			want = "abcd"
		}
		if err != nil || string(got) != want {
			t.Errorf("align %d: %q %v", a, got, err)
		}
	}
}

// bombReader is a 1 GiB stream, generated on the fly: a header declaring
// all of it, one literal, then short matches repeating it (8 bytes out per
// 2 in).
type bombReader struct{ size int64 }

func (br bombReader) ReadAt(p []byte, off int64) (int, error) {
	head := stream(b(0x01, "abcd"))
	for i := range p {
		o := off + int64(i)
		switch {
		case o >= br.size:
			return i, io.EOF
		case o < 3 || o >= 7 && o < int64(len(head)):
			p[i] = head[o]
		case o < 7:
			p[i] = byte(br.size >> (8 * (o - 3)))
		default:
			if (o-int64(len(head)))%2 == 0 {
				p[i] = 0xE0
			} else {
				p[i] = 0x00
			}
		}
	}
	return len(p), nil
}

func TestHostileSizeBoundedMemory(t *testing.T) {
	br := bombReader{size: 1 << 30}
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	st, err := Scan(br, br.size, Options{MaxOutput: 8 << 20})
	runtime.ReadMemStats(&m1)
	wantRule(t, "scan bomb", err, RuleOutputLimit, -1)
	if st.DecodedSize > 8<<20 || st.DecodedSize < 8<<20-8 {
		t.Errorf("clean size %d", st.DecodedSize)
	}
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 2<<20 {
		t.Errorf("Scan allocated %d bytes for a 1 GiB declared stream", grew)
	}
	runtime.ReadMemStats(&m0)
	_, err = NewIndex(br, br.size, Options{MaxOutput: 8 << 20})
	runtime.ReadMemStats(&m1)
	wantRule(t, "index bomb", err, RuleOutputLimit, -1)
	if grew := m1.TotalAlloc - m0.TotalAlloc; grew > 4<<20 {
		t.Errorf("NewIndex allocated %d bytes", grew)
	}
}

// Long literals (flag 0x00) are counted apart from short ones.
func TestScanCountsLongLiterals(t *testing.T) {
	body := []byte{0x00, 0x01} // long literal: 1 + 18 = 19 bytes
	body = append(body, []byte("abcdefghijklmnopqrs")...)
	body = append(body, 0xC0, 0x00) // short match, 7 bytes at distance 1
	body = append(body, 0x01)       // literal, 4 bytes
	body = append(body, []byte("tuvw")...)
	stream := make([]byte, HeaderSize, HeaderSize+len(body))
	copy(stream, "WAD")
	stream = append(stream, body...)
	binary.LittleEndian.PutUint32(stream[3:], uint32(len(stream)))
	st, err := Scan(bytes.NewReader(stream), int64(len(stream)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Literals != 2 || st.LongLiterals != 1 || st.ShortMatches != 1 || st.DecodedSize != 19+7+4 {
		t.Fatalf("stats %+v", st)
	}
}
