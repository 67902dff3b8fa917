package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestNewIndexDecode: on streams of every size, with blocks of every size
// against the 48 KiB of each group the decoder tracks (smaller, larger,
// about equal), and on corrupt versions of them, NewIndexDecode gives
// Decode's output and first error and NewIndex's index, snapshots filled
// (decodeAgree checks it on every test vector and fuzz input too).
func TestNewIndexDecode(t *testing.T) {
	sequentialTest(t)
	old := blockTarget
	defer func() { blockTarget = old }()
	rng := rand.New(rand.NewPCG(3, 5))
	var streams [][]byte
	for _, n := range []int{0, 10, 5000, 24 << 10, 100 << 10, 700 << 10, 2 << 20} {
		streams = append(streams, Encode(SampleData(int64(n), n), EncodeOptions{Tag: "dix"}))
	}
	streams = append(streams, Encode(make([]byte, 1<<20), EncodeOptions{Tag: "zeros"}))
	// Packets of no output at the end (dummies: the last checkpoint would
	// start an empty block, which both trim).
	for _, s := range streams[1:4] {
		streams = append(streams, withTail(s, 0x11, 0, 0, 0x11, 0, 0))
	}
	for _, s := range streams[:6] {
		for k := 0; k < 12; k++ {
			c := bytes.Clone(s)
			if len(c) > HeaderSize {
				c[HeaderSize+rng.IntN(len(c)-HeaderSize)] ^= byte(1 + rng.IntN(255))
			}
			streams = append(streams, c)
		}
	}
	scratch := make([]byte, 1<<20)
	bts := []int64{64 << 10, 1, 1000, 30 << 10, maxWindow, 200 << 10}
	if raceEnabled {
		bts = []int64{64 << 10, 1000, maxWindow} // (decoding is ~10x slower)
	}
	for _, bt := range bts {
		blockTarget = bt
		for i, s := range streams {
			for _, opt := range []Options{{}, {Strict: true}, {MaxOutput: 100 << 10}} {
				out, err := Decode(s, opt)
				ix, ierr := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
				dix, dout, derr := NewIndexDecode(nil, s, opt, 0)
				if !sameErr(derr, err) || !bytes.Equal(dout, out) {
					t.Fatalf("stream %d, %+v, blocks of %d: %d bytes, %v; Decode %d bytes, %v", i, opt, bt, len(dout), derr, len(out), err)
				}
				if !sameErr(derr, ierr) {
					t.Fatalf("stream %d, %+v, blocks of %d: error %v, NewIndex %v", i, opt, bt, derr, ierr)
				}
				if derr == nil {
					checkDecodedIndex(t, dix, ix, out)
				}
				// Into a reused buffer holding another stream's bytes.
				rix, rout, rerr := NewIndexDecode(scratch[:len(scratch)/2], s, opt, 0)
				if !sameErr(rerr, derr) || !bytes.Equal(rout, out) {
					t.Fatalf("stream %d, %+v, blocks of %d, into a reused buffer: %d bytes, %v", i, opt, bt, len(rout), rerr)
				}
				if rerr == nil {
					checkDecodedIndex(t, rix, ix, out)
				}
				if len(rout) > 0 && len(rout)+writeSlack <= cap(scratch) && &rout[0] != &scratch[0] {
					t.Fatalf("stream %d: decoded elsewhere than the reused buffer it fits in", i)
				}
				copy(scratch, bytes.Repeat([]byte{0xA5}, len(scratch)))
			}
		}
	}
}

// withTail is stream s with bytes appended to its packets (the declared
// size grown to match).
func withTail(s []byte, tail ...byte) []byte {
	h, err := ParseHeader(s)
	if err != nil {
		panic(err)
	}
	c := append(bytes.Clone(s[:h.Size]), tail...)
	binary.LittleEndian.PutUint32(c[3:7], uint32(len(c)))
	return c
}

// TestNewIndexDecodeBudget: a budget under the output fails with
// ErrOverBudget (not a CorruptError: the stream is fine), one at or over it
// changes nothing, and MaxOutput under the budget is still the stream's
// RuleOutputLimit.
func TestNewIndexDecodeBudget(t *testing.T) {
	raw := SampleData(9, 300<<10)
	s := Encode(raw, EncodeOptions{Tag: "budget"})
	if _, _, err := NewIndexDecode(nil, s, Options{}, 100<<10); !errors.Is(err, ErrOverBudget) || errors.Is(err, ErrFormat) {
		t.Errorf("budget under the output: %v", err)
	}
	for _, b := range []int64{int64(len(raw)), 1 << 30} {
		if ix, out, err := NewIndexDecode(nil, s, Options{}, b); err != nil || !bytes.Equal(out, raw) || ix.Size() != int64(len(raw)) {
			t.Errorf("budget %d: %v", b, err)
		}
	}
	var ce *CorruptError
	if _, _, err := NewIndexDecode(nil, s, Options{MaxOutput: 50 << 10}, 100<<10); !errors.As(err, &ce) || ce.Rule != RuleOutputLimit {
		t.Errorf("MaxOutput under the budget: %v", err)
	}
}
