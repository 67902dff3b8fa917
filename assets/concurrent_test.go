package assets

import (
	"bytes"
	"image/color"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestViewsConcurrent reads both views from several goroutines at once (run
// under -race): checkpoints and the PNG's Adler-32 are filled in by whoever
// comes first, and every range still matches the whole.
func TestViewsConcurrent(t *testing.T) {
	vag := EncodeVAG(SineSweep(28*3000, 22050, 30, 3000, 16000), 22050, "c")
	ref := refDecode(vag[0x30:])
	vv, err := NewVAGView(bytes.NewReader(vag), int64(len(vag)))
	if err != nil {
		t.Fatal(err)
	}
	wav := make([]byte, vv.Size())
	copy(wav, WAVHeader(22050, int64(len(ref))))
	for i, s := range ref {
		wav[44+2*i], wav[45+2*i] = byte(s), byte(uint16(s)>>8)
	}
	tex, _ := DecodeRGBABlob(WriteRGBABlob(200, 300, make([]color.RGBA, 200*300)))
	full := EncodePNG(tex)
	pv, _ := NewPNGView(tex)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for range 100 {
				off := r.Int64N(vv.Size())
				buf := make([]byte, 1+r.IntN(20000))
				n, _ := vv.ReadAt(buf, off)
				if !bytes.Equal(buf[:n], wav[off:min(int(off)+len(buf), len(wav))]) {
					errs <- "WAV range differs"
					return
				}
				off = r.Int64N(pv.Size())
				n, _ = pv.ReadAt(buf, off)
				if !bytes.Equal(buf[:n], full[off:min(int(off)+len(buf), len(full))]) {
					errs <- "PNG range differs"
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
}
