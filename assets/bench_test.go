package assets

import (
	"bytes"
	"image/color"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuMeter reports "cpu-MB/s" (bytes per CPU-second of this process) beside
// the wall-clock MB/s, as the codec benchmarks do: the machine is shared, so
// wall time measures the neighbours too.
func cpuMeter(b *testing.B, n int64) func() {
	cpu := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	b.SetBytes(n)
	b.ResetTimer()
	t0 := cpu()
	return func() {
		b.StopTimer()
		if d := cpu() - t0; d > 0 {
			b.ReportMetric(float64(n)*float64(b.N)/d.Seconds()/1e6, "cpu-MB/s")
		}
	}
}

func benchTextures() map[string]*Texture {
	out := map[string]*Texture{}
	t8, _ := DecodePIF(WritePIF(256, 256, 8, testPalette(256, 1), testIndices(256, 256, 256, 1)))
	out["pif8-256x256"] = t8
	t4, _ := DecodePIF(WritePIF(512, 512, 4, testPalette(16, 2), testIndices(512, 512, 16, 2)))
	out["pif4-512x512"] = t4
	r := rand.New(rand.NewPCG(1, 2))
	pix := make([]color.RGBA, 640*448)
	for i := range pix {
		pix[i] = color.RGBA{uint8(r.UintN(256)), uint8(i), uint8(i >> 8), 0x80}
	}
	tr, _ := DecodeRGBABlob(WriteRGBABlob(640, 448, pix))
	out["rgba-640x448"] = tr
	return out
}

// BenchmarkPNGEncode: whole-PNG encodes; MB/s of PNG output.
func BenchmarkPNGEncode(b *testing.B) {
	for name, tex := range benchTextures() {
		b.Run(name, func(b *testing.B) {
			done := cpuMeter(b, PNGSize(tex.Shape))
			for b.Loop() {
				if EncodePNG(tex) == nil {
					b.Fatal("nil")
				}
			}
			done()
		})
	}
}

// BenchmarkPNGViewRange: 64 KiB reads at random offsets of one PNG (view
// made once, as a mount keeps it); MB/s of bytes served.
func BenchmarkPNGViewRange(b *testing.B) {
	tex := benchTextures()["rgba-640x448"]
	v, _ := NewPNGView(tex)
	r := rand.New(rand.NewPCG(3, 3))
	buf := make([]byte, 64<<10)
	done := cpuMeter(b, int64(len(buf)))
	for b.Loop() {
		v.ReadAt(buf, r.Int64N(v.Size()-int64(len(buf))))
	}
	done()
}

var benchVAG = func() []byte {
	return EncodeVAG(SineSweep(44100*20, 44100, 40, 8000, 20000), 44100, "bench") // 20 s
}()

// BenchmarkWAVDecode: the whole WAV of a 20-second VAG through a fresh
// VAGView in 128 KiB reads; MB/s of WAV output.
func BenchmarkWAVDecode(b *testing.B) {
	v0, _ := NewVAGView(bytes.NewReader(benchVAG), int64(len(benchVAG)))
	buf := make([]byte, 128<<10)
	done := cpuMeter(b, v0.Size())
	for b.Loop() {
		v, _ := NewVAGView(bytes.NewReader(benchVAG), int64(len(benchVAG)))
		for off := int64(0); off < v.Size(); off += int64(len(buf)) {
			v.ReadAt(buf, off)
		}
	}
	done()
}

// BenchmarkWAVRandom: 4 KiB reads at random offsets of a WAV whose
// checkpoints are all known (after a first pass); MB/s of bytes served.
func BenchmarkWAVRandom(b *testing.B) {
	v, _ := NewVAGView(bytes.NewReader(benchVAG), int64(len(benchVAG)))
	v.ReadAt(make([]byte, 16), v.Size()-16)
	r := rand.New(rand.NewPCG(4, 4))
	buf := make([]byte, 4<<10)
	done := cpuMeter(b, int64(len(buf)))
	for b.Loop() {
		v.ReadAt(buf, r.Int64N(v.Size()-int64(len(buf))))
	}
	done()
}

// BenchmarkVAGEncode: the writer's speed (mkdisc); MB/s of PCM input.
func BenchmarkVAGEncode(b *testing.B) {
	sig := SineSweep(44100, 44100, 40, 8000, 20000)
	done := cpuMeter(b, int64(2*len(sig)))
	for b.Loop() {
		EncodeVAG(sig, 44100, "")
	}
	done()
}
