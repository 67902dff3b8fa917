package assets_test

import (
	"bytes"
	"fmt"
	"image/color"

	"gcfs/assets"
)

// A texture's PNG size comes from its header alone (what stat needs); the
// bytes come from a PNGView at any offset.
func Example_texture() {
	pif := assets.WritePIF(64, 32, 4, []color.RGBA{{255, 0, 0, 0x80}, {0, 0, 255, 0x40}}, make([]byte, 64*32))
	h, err := assets.StatPIF(bytes.NewReader(pif), int64(len(pif)))
	if err != nil {
		fmt.Println(err)
		return
	}
	tex, _ := assets.ReadPIF(bytes.NewReader(pif), int64(len(pif)))
	v, _ := assets.NewPNGView(tex)
	head := make([]byte, 8)
	v.ReadAt(head, 0)
	fmt.Println(h.Width, h.Height, h.PNGSize() == v.Size(), bytes.Equal(head, []byte("\x89PNG\r\n\x1a\n")))
	// Output: 64 32 true true
}

// A sound's WAV is read lazily through a VAGView; its size is exact from the
// VAG header.
func Example_sound() {
	vag := assets.EncodeVAG(assets.SineSweep(2800, 22050, 100, 1000, 10000), 22050, "beep")
	v, err := assets.NewVAGView(bytes.NewReader(vag), int64(len(vag)))
	if err != nil {
		fmt.Println(err)
		return
	}
	hdr := make([]byte, 12)
	v.ReadAt(hdr, 0)
	fmt.Println(v.Header().Name, v.Header().SampleRate, v.Size(), string(hdr[8:12]))
	// Output: beep 22050 5644 WAVE
}

// Subtitles are timed from the video's sequence header, or 29.97 fps when it
// cannot be read.
func Example_subtitles() {
	video := assets.WritePSS(4096, 3) // 25 fps
	rate, err := assets.FindFrameRate(bytes.NewReader(video), int64(len(video)))
	if err != nil {
		fmt.Println("no frame rate:", err)
	}
	blob := assets.WriteSubtitles([]assets.SubtitleCue{{Start: 25, Stop: 75, Text: [5]string{"Hi", "Salut", "Hallo", "Hola", "Ciao"}}})
	s, _ := assets.ParseSubtitles(blob)
	srt, _ := s.SRT(1, rate)
	fmt.Print(assets.Sniff(video), " ", rate, "\n", string(srt))
	// Output:
	// pss 25
	// 1
	// 00:00:01,000 --> 00:00:03,000
	// Salut
}
