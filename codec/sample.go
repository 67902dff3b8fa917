package codec

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// SampleData returns n bytes of deterministic asset-like content for seed:
// a mix of structured records (vertex arrays, index lists, fixed-size structs
// with few changing fields), ASCII text (names, script-like lines), runs of
// one byte, noise (as in already-compressed textures and audio) and edited
// copies of earlier output from near and far back (up to ~48 KiB, so every
// match kind has work). Tests, benchmarks and mkdisc use it.
func SampleData(seed int64, n int) []byte {
	if n <= 0 {
		return []byte{}
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15))
	out := make([]byte, 0, n)
	for len(out) < n {
		segLen := 256 + rng.IntN(12*1024)
		if segLen > n-len(out) {
			segLen = n - len(out)
		}
		switch k := rng.IntN(100); {
		case k < 22:
			out = sampleVertices(rng, out, segLen)
		case k < 34:
			out = sampleIndices(rng, out, segLen)
		case k < 50:
			out = sampleRecords(rng, out, segLen)
		case k < 66:
			out = sampleText(rng, out, segLen)
		case k < 74:
			out = sampleRun(rng, out, segLen)
		case k < 84:
			out = sampleNoise(rng, out, segLen)
		default:
			out = sampleRepeat(rng, out, segLen)
		}
	}
	return out[:n]
}

func sampleVertices(rng *rand.Rand, out []byte, n int) []byte {
	end := len(out) + n
	x, y, z := rng.Float32()*100, rng.Float32()*100, rng.Float32()*100
	var b [16]byte
	for len(out) < end {
		x += float32(rng.IntN(9)-4) * 0.125
		y += float32(rng.IntN(9)-4) * 0.125
		z += float32(rng.IntN(3)-1) * 0.5
		binary.LittleEndian.PutUint32(b[0:], math.Float32bits(x))
		binary.LittleEndian.PutUint32(b[4:], math.Float32bits(y))
		binary.LittleEndian.PutUint32(b[8:], math.Float32bits(z))
		binary.LittleEndian.PutUint32(b[12:], math.Float32bits(1))
		out = appendMax(out, b[:], end)
	}
	return out
}

func sampleIndices(rng *rand.Rand, out []byte, n int) []byte {
	end := len(out) + n
	base := uint16(rng.IntN(4000))
	var b [6]byte
	for len(out) < end {
		binary.LittleEndian.PutUint16(b[0:], base)
		binary.LittleEndian.PutUint16(b[2:], base+1)
		binary.LittleEndian.PutUint16(b[4:], base+2+uint16(rng.IntN(2)))
		base += uint16(1 + rng.IntN(2))
		out = appendMax(out, b[:], end)
	}
	return out
}

func sampleRecords(rng *rand.Rand, out []byte, n int) []byte {
	end := len(out) + n
	size := 16 << rng.IntN(3) // 16, 32 or 64-byte structs
	tmpl := make([]byte, size)
	for i := range tmpl {
		if rng.IntN(3) == 0 {
			tmpl[i] = byte(rng.IntN(256))
		}
	}
	id := uint32(rng.IntN(1 << 16))
	for len(out) < end {
		binary.LittleEndian.PutUint32(tmpl[0:], id)
		id++
		if rng.IntN(4) == 0 {
			tmpl[4+rng.IntN(size-4)] = byte(rng.IntN(256))
		}
		out = appendMax(out, tmpl, end)
	}
	return out
}

var sampleWords = []string{
	"ratchet", "clank", "level", "moby", "tfrag", "shrub", "tie", "texture", "gameplay",
	"chunk", "collision", "sound", "bank", "gadget", "armor", "wrench", "oozla", "endako",
	"barlow", "notak", "siberius", "tabora", "dobbo", "joba", "todano", "boldan", "gorn",
	"the", "a", "of", "and", "to", "spawn", "trigger", "camera", "spline", "path", "enemy",
	"crate", "bolt", "vendor", "ship", "planet", "mission", "cutscene", "subtitle", "0", "1",
}

func sampleText(rng *rand.Rand, out []byte, n int) []byte {
	end := len(out) + n
	for len(out) < end {
		w := sampleWords[rng.IntN(len(sampleWords))]
		out = appendMax(out, []byte(w), end)
		var sep byte = ' '
		switch rng.IntN(12) {
		case 0:
			sep = '\n'
		case 1:
			sep = '_'
		case 2:
			sep = 0
		}
		out = appendMax(out, []byte{sep}, end)
	}
	return out
}

func sampleRun(rng *rand.Rand, out []byte, n int) []byte {
	var v byte
	switch rng.IntN(4) {
	case 1:
		v = 0xFF
	case 2:
		v = byte(rng.IntN(256))
	}
	for i := 0; i < n; i++ {
		out = append(out, v)
	}
	return out
}

func sampleNoise(rng *rand.Rand, out []byte, n int) []byte {
	for i := 0; i < n; i++ {
		out = append(out, byte(rng.Uint32()))
	}
	return out
}

// sampleRepeat copies earlier output from up to ~48 KiB back, in pieces with
// a few bytes changed between them.
func sampleRepeat(rng *rand.Rand, out []byte, n int) []byte {
	if len(out) < 64 {
		return sampleNoise(rng, out, n)
	}
	end := len(out) + n
	for len(out) < end {
		back := 1 + rng.IntN(min(len(out), 48*1024))
		l := min(4+rng.IntN(300), end-len(out), back)
		out = append(out, out[len(out)-back:len(out)-back+l]...)
		if len(out) < end {
			out = append(out, byte(rng.IntN(256)))
		}
	}
	return out[:end]
}

func appendMax(out, b []byte, end int) []byte {
	if len(out)+len(b) > end {
		b = b[:end-len(out)]
	}
	return append(out, b...)
}
