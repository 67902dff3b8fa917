package codec

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestScanFastLoopsAgree: NewIndex and ScanParallel's chunk scans with the
// scanner's fast loops (scanFast, scanFastTrack) give the same index (the
// same checkpoints, groups and snapshot lengths), stats and first error as
// with the checked path alone, on streams of every size (where the tracked
// loop covers a stream's first 48 KiB and each group's start) and on
// corrupt versions of them.
func TestScanFastLoopsAgree(t *testing.T) {
	sequentialTest(t)
	old := blockTarget
	defer func() { blockTarget = old }()
	rng := rand.New(rand.NewPCG(7, 11))
	var streams [][]byte
	for _, n := range []int{10, 300, 5000, 24 << 10, 60 << 10, 200 << 10, 1 << 20} {
		streams = append(streams, Encode(SampleData(int64(n), n), EncodeOptions{Tag: "agree"}))
	}
	streams = append(streams, fuzzSeeds()...)
	for _, s := range streams[:7] {
		for k := 0; k < 40; k++ {
			c := bytes.Clone(s)
			for m := 0; m < 1+k%3; m++ {
				if len(c) > HeaderSize {
					c[HeaderSize+rng.IntN(len(c)-HeaderSize)] ^= byte(1 + rng.IntN(255))
				}
			}
			streams = append(streams, c)
		}
	}
	index := func(s []byte, opt Options) (*Index, Stats, error) {
		ix, err := NewIndex(bytes.NewReader(s), int64(len(s)), opt)
		st, serr := Scan(bytes.NewReader(s), int64(len(s)), opt)
		if (err == nil) != (serr == nil) {
			t.Fatalf("NewIndex says %v, Scan %v", err, serr)
		}
		return ix, st, err
	}
	for _, bt := range []int64{64 << 10, 4 << 10} {
		blockTarget = bt
		for i, s := range streams {
			for _, opt := range []Options{{}, {Strict: true}, {MaxOutput: 100 << 10}} {
				scanCheckedOnly = false
				ix, st, err := index(s, opt)
				scanCheckedOnly = true
				rix, rst, rerr := index(s, opt)
				scanCheckedOnly = false
				var ce, rce *CorruptError
				if errors.As(err, &ce) != errors.As(rerr, &rce) || ce != nil && *ce != *rce || (err == nil) != (rerr == nil) {
					t.Fatalf("stream %d, %+v: error %v, checked path %v", i, opt, err, rerr)
				}
				if err != nil {
					continue
				}
				if st != rst {
					t.Errorf("stream %d, %+v: stats %+v, checked path %+v", i, opt, st, rst)
				}
				if !reflect.DeepEqual(ix.cps, rix.cps) || !reflect.DeepEqual(ix.groupFirst, rix.groupFirst) || !reflect.DeepEqual(ix.snapLen, rix.snapLen) {
					t.Errorf("stream %d, %+v, blocks of %d: the index differs from the checked path's", i, opt, bt)
				}
			}
		}
	}
}
