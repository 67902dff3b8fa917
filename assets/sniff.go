package assets

import "fmt"

// Kind is what a part's first bytes say it is.
type Kind int

const (
	KindUnknown Kind = iota
	KindPIF          // "2FIP": a texture, view NAME.png
	KindVAG          // "VAGp": a sound, NAME.vag with view NAME.wav
	KindPSS          // 00 00 01 BA: a video, NAME.pss
	KindELF          // 7F "ELF": an IOP module, NAME.irx
)

func (k Kind) String() string {
	switch k {
	case KindPIF:
		return "pif"
	case KindVAG:
		return "vag"
	case KindPSS:
		return "pss"
	case KindELF:
		return "elf"
	}
	return "unknown"
}

// Sniff tells a part's kind from its first 4 bytes (more are ignored). Raw
// RGBA blobs and subtitle blobs have no magic: their place in the tree says
// what they are.
func Sniff(prefix []byte) Kind {
	switch {
	case IsPIF(prefix):
		return KindPIF
	case IsVAG(prefix):
		return KindVAG
	case IsPSS(prefix):
		return KindPSS
	case IsELF(prefix):
		return KindELF
	}
	return KindUnknown
}

// String describes a texture header for an info line.
func (h PIFHeader) String() string {
	return fmt.Sprintf("PIF %dx%d, %d-bit (%d colours), %d mip levels", h.Width, h.Height, h.Shape().Depth, h.Shape().Colors(), h.MipLevels)
}

// String describes a raw RGBA blob header for an info line.
func (h RGBABlobHeader) String() string { return fmt.Sprintf("RGBA %dx%d", h.Width, h.Height) }

// String describes a VAG header for an info line.
func (h VAGHeader) String() string {
	return fmt.Sprintf("VAG %q, %d Hz, %d frames (%d samples, %.3f s)", h.Name, h.SampleRate, h.Frames(), h.Samples(),
		float64(h.Samples())/float64(max(h.SampleRate, 1)))
}
