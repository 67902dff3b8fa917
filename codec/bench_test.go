package codec

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. Benchmarks report
// "cpu-MB/s" (bytes per CPU-second) beside wall-clock MB/s because this
// machine is shared: wall time then measures the neighbours too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuMeter reports cpu-MB/s for n bytes per iteration.
func cpuMeter(b *testing.B, n int64) func() {
	b.ResetTimer()
	t0 := cpuTime()
	return func() {
		b.StopTimer()
		if d := cpuTime() - t0; d > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

// The benchmark corpus: 32 MiB of SampleData, and its default encoding.
var (
	benchOnce sync.Once
	benchRaw  []byte
	benchEnc  []byte
)

func benchCorpus(b *testing.B) ([]byte, []byte) {
	benchOnce.Do(func() {
		benchRaw = SampleData(42, 32<<20)
		benchEnc = Encode(benchRaw, EncodeOptions{Tag: "bench"})
	})
	return benchRaw, benchEnc
}

func BenchmarkDecode(b *testing.B) {
	raw, enc := benchCorpus(b)
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		if _, err := Decode(enc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkAppendDecode: the decode loop alone, into a reused buffer.
func BenchmarkAppendDecode(b *testing.B) {
	raw, enc := benchCorpus(b)
	buf := make([]byte, 0, len(raw)+writeSlack)
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		if _, err := AppendDecode(buf[:0], enc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkDecodeTo: the streaming decoder (the whole-process `gcfs wad
// decompress` path) into io.Discard: the decode loop plus the window's
// slides, without the writes' kernel time.
func BenchmarkDecodeTo(b *testing.B) {
	raw, enc := benchCorpus(b)
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		if _, err := DecodeTo(io.Discard, enc, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

func BenchmarkScan(b *testing.B) {
	raw, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	b.SetBytes(int64(len(raw))) // MB/s of output, comparable with Decode
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		if _, err := Scan(r, int64(len(enc)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

func benchEncode(b *testing.B, best bool) {
	raw, _ := benchCorpus(b)
	b.SetBytes(int64(len(raw)))
	var n int
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		n = len(Encode(raw, EncodeOptions{Best: best}))
	}
	done()
	b.ReportMetric(float64(len(raw))/float64(n), "ratio")
}

func BenchmarkEncode(b *testing.B)     { benchEncode(b, false) }
func BenchmarkEncodeBest(b *testing.B) { benchEncode(b, true) }

// BenchmarkNewIndex: the index alone (a scan: no snapshot bytes yet).
// index-% is its footprint with every snapshot filled (MaxMemSize).
func BenchmarkNewIndex(b *testing.B) {
	raw, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	b.SetBytes(int64(len(raw)))
	var ix *Index
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		var err error
		if ix, err = NewIndex(r, int64(len(enc)), Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
	b.ReportMetric(100*float64(ix.MaxMemSize())/float64(ix.Size()), "index-%")
}

// BenchmarkNewIndexDecode: the index and the output in one pass, against
// the two passes it replaces (NewIndex, then Decode), in MB/s of output.
func BenchmarkNewIndexDecode(b *testing.B) {
	raw, enc := benchCorpus(b)
	b.Run("fused", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		done := cpuMeter(b, int64(len(raw)))
		for b.Loop() {
			if _, _, err := NewIndexDecode(nil, enc, Options{}, 0); err != nil {
				b.Fatal(err)
			}
		}
		done()
	})
	b.Run("NewIndex+Decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		done := cpuMeter(b, int64(len(raw)))
		for b.Loop() {
			if _, err := NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{}); err != nil {
				b.Fatal(err)
			}
			if _, err := Decode(enc, Options{}); err != nil {
				b.Fatal(err)
			}
		}
		done()
	})
}

// BenchmarkNewIndexParallel: NewIndex (from a reader over the stream in
// memory) and NewIndexParallel with 1 worker (that is NewIndex) and 2, on the
// same corpus, in MB/s of output. index-% as BenchmarkNewIndex; taken-% is
// the share of the chunks whose speculative index was taken.
func BenchmarkNewIndexParallel(b *testing.B) {
	raw, enc := benchCorpus(b)
	run := func(name string, build func(*parStats) (*Index, error)) {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var ix *Index
			var ps parStats
			done := cpuMeter(b, int64(len(raw)))
			for b.Loop() {
				var err error
				ps = parStats{}
				if ix, err = build(&ps); err != nil {
					b.Fatal(err)
				}
			}
			done()
			b.ReportMetric(100*float64(ix.MaxMemSize())/float64(ix.Size()), "index-%")
			if ps.chunks > 0 {
				b.ReportMetric(100*float64(ps.taken)/float64(ps.chunks), "taken-%")
			}
		})
	}
	run("NewIndex", func(*parStats) (*Index, error) {
		return NewIndex(bytes.NewReader(enc), int64(len(enc)), Options{})
	})
	for _, w := range []int{1, 2} {
		run(fmt.Sprintf("workers=%d", w), func(ps *parStats) (*Index, error) {
			return newIndexParallel(enc, w, Options{}, ps)
		})
	}
}

// BenchmarkNewIndexFilled: NewIndex then FillSnapshots, what the index cost
// before snapshots were lazy (one decode of the whole stream).
func BenchmarkNewIndexFilled(b *testing.B) {
	raw, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := ix.FillSnapshots(r); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// BenchmarkRandomReadFirst: the first cold 4 KiB read at a random offset on a
// fresh (lazy) index: the block's snapshot is not known yet, so it decodes
// forward from the nearest known one (the stream's start, or a group needing
// none), up to the whole stream before the block. Index building is not
// timed. Reports the median and p99 wall latency.
func BenchmarkRandomReadFirst(b *testing.B) {
	_, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	rng := rand.New(rand.NewPCG(7, 8))
	p := make([]byte, 4096)
	var lat []time.Duration
	b.SetBytes(4096)
	for b.Loop() {
		b.StopTimer()
		ix, err := NewIndex(r, int64(len(enc)), Options{})
		if err != nil {
			b.Fatal(err)
		}
		off := rng.Int64N(ix.Size() - 4096)
		b.StartTimer()
		t0 := time.Now()
		if n, err := ix.ReadAt(r, p, off); err != nil || n != len(p) {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkRandomRead4K: cold 4 KiB reads at random offsets of the 32 MiB
// decoded stream with no cache, as on a cache miss: DecodeBlock with prev ==
// nil (the block is decoded from its group's snapshot), then a 4 KiB copy.
// The index has every snapshot (FillSnapshots), so this is a read's cost
// once the index is ready; see BenchmarkRandomReadFirst for a fresh one.
// Reports median and p99 wall latency, and the mean CPU time per read
// ("cpu-µs": what a read costs when the machine is not shared; per-read CPU
// time is not measurable, thread rusage is tick-sampled).
func BenchmarkRandomRead4K(b *testing.B) {
	_, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	ix, err := NewIndex(r, int64(len(enc)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	if err := ix.FillSnapshots(r); err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 7))
	p := make([]byte, 4096)
	var lat []time.Duration
	b.SetBytes(4096)
	b.ResetTimer()
	c0 := cpuTime()
	for b.Loop() {
		off := rng.Int64N(ix.Size() - 4096)
		t0 := time.Now()
		i := ix.BlockAt(off)
		blk, err := ix.DecodeBlock(r, i, nil)
		if err != nil {
			b.Fatal(err)
		}
		bo, _ := ix.Block(i)
		n := copy(p, blk[off-bo:])
		if n < len(p) { // the read runs into the next block
			nxt, err := ix.DecodeBlock(r, i+1, blk)
			if err != nil {
				b.Fatal(err)
			}
			copy(p[n:], nxt)
		}
		lat = append(lat, time.Since(t0))
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/1e3/float64(len(lat)), "cpu-µs")
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds())/1e3, "p99-µs")
}

// BenchmarkDecodeBlockWarm: a block decoded with its predecessor as the
// window (what the cache does on sequential reads).
func BenchmarkDecodeBlockWarm(b *testing.B) {
	_, enc := benchCorpus(b)
	r := bytes.NewReader(enc)
	ix, err := NewIndex(r, int64(len(enc)), Options{})
	if err != nil {
		b.Fatal(err)
	}
	i := ix.NumBlocks() / 2
	prev, _ := ix.DecodeBlock(r, i-1, nil)
	_, n := ix.Block(i)
	b.SetBytes(int64(n))
	b.ResetTimer()
	for b.Loop() {
		if _, err := ix.DecodeBlock(r, i, prev); err != nil {
			b.Fatal(err)
		}
	}
}

// The physical limits: Go's copy of the same sizes.
func BenchmarkCopy32M(b *testing.B) {
	raw, _ := benchCorpus(b)
	dst := make([]byte, len(raw))
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		copy(dst, raw)
	}
	done()
}

func BenchmarkCopy4K(b *testing.B) {
	raw, _ := benchCorpus(b)
	dst := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(7, 7))
	b.SetBytes(4096)
	b.ResetTimer()
	for b.Loop() {
		copy(dst, raw[rng.IntN(len(raw)-4096):])
	}
}

// BenchmarkDecodeParallel: AppendDecodeParallel into a reused buffer (as
// BenchmarkAppendDecode) with 1 and 2 workers on the 32 MiB corpus. Besides
// MB/s it reports the share of the in-order pass in all the work ("serial-%":
// stitching, markers, the sequential re-decodes; the copies of the chunks'
// tails run beside it), the output decoded a second time for markers
// ("redecode-%"; "marker-%": the output up to each chunk's last marker, whose
// markers are found and resolved), and an estimate of the speedup over the sequential decoder
// on 8 idle cores ("est8x"), from this run's own measurements: the chunk work
// without its second decodes (what one sequential decode costs), over
// max(chunk work / 8, in-order pass) plus one chunk (the pipeline's start).
// Read est8x from workers=2: with one worker the chunks' tails are copied in
// the in-order pass instead of beside it. Wall times on a shared machine
// inflate serial-% and lower est8x.
func BenchmarkDecodeParallel(b *testing.B) {
	raw, enc := benchCorpus(b)
	buf := make([]byte, 0, len(raw)+writeSlack)
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", w), func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			var ps *parStats
			done := cpuMeter(b, int64(len(raw)))
			for b.Loop() {
				ps = &parStats{timed: true}
				if _, err := appendDecodeParallel(buf[:0], enc, w, Options{}, ps); err != nil {
					b.Fatal(err)
				}
			}
			done()
			chunkNs, stNs := float64(ps.chunkNs), float64(ps.stNs)
			redecode := float64(ps.second) / float64(len(raw))
			b.ReportMetric(100*stNs/(chunkNs+stNs), "serial-%")
			b.ReportMetric(100*redecode, "redecode-%")
			b.ReportMetric(100*float64(ps.resolved)/float64(len(raw)), "marker-%")
			b.ReportMetric(chunkNs/(1+redecode)/(max(chunkNs/8, stNs)+chunkNs/float64(ps.chunks)), "est8x")
		})
	}
}

// BenchmarkScanParallel: ScanParallel with 2 workers (with 1 it is Scan).
func BenchmarkScanParallel(b *testing.B) {
	raw, enc := benchCorpus(b)
	b.SetBytes(int64(len(raw)))
	done := cpuMeter(b, int64(len(raw)))
	for b.Loop() {
		if _, err := ScanParallel(enc, 2, Options{}); err != nil {
			b.Fatal(err)
		}
	}
	done()
}

// The small-stream corpus: 32 MiB of SampleData cut into streams of 24 KiB
// (the median decoded file of the retail layout), each encoded alone:
// every byte lies in a stream's first 48 KiB, where the scanner checks
// distances and the index tracks how far matches reach back.
var (
	smallOnce sync.Once
	smallEnc  [][]byte
	smallRaw  int64
)

func smallCorpus(b *testing.B) ([][]byte, int64) {
	raw, _ := benchCorpus(b)
	smallOnce.Do(func() {
		for off := 0; off < len(raw); off += 24 << 10 {
			p := raw[off:min(off+24<<10, len(raw))]
			smallEnc = append(smallEnc, Encode(p, EncodeOptions{Tag: "small"}))
			smallRaw += int64(len(p))
		}
	})
	return smallEnc, smallRaw
}

// BenchmarkSmallStreams: NewIndex and Decode of every stream of the
// small-stream corpus, in MB/s of output.
func BenchmarkSmallStreams(b *testing.B) {
	encs, total := smallCorpus(b)
	b.Run("NewIndex", func(b *testing.B) {
		b.SetBytes(total)
		done := cpuMeter(b, total)
		for b.Loop() {
			for _, e := range encs {
				if _, err := NewIndex(bytes.NewReader(e), int64(len(e)), Options{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		done()
	})
	b.Run("Decode", func(b *testing.B) {
		buf := make([]byte, 0, 64<<10)
		b.SetBytes(total)
		done := cpuMeter(b, total)
		for b.Loop() {
			for _, e := range encs {
				if _, err := AppendDecode(buf[:0], e, Options{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		done()
	})
}
