// Package assets owns the formats gcfs shows its views in, and the small
// writers the synthetic disc uses to produce them. It knows nothing of discs,
// trees or FUSE; every reader takes the bytes of one part (an io.ReaderAt and
// its size, or a byte slice) and checks every length and offset against them.
//
// Readers (for the views):
//   - PIF textures (magic "2FIP", 8-bit and 4-bit palettes, the PS2 palette
//     swizzle, PS2 alpha as Wrench maps it, 4-bit pixels in the GS's order)
//     and raw RGBA blobs behind a {w, h} header, to PNG.
//     The PNG is written by hand with stored deflate blocks, so PNGSize gives
//     its exact byte size from the header alone, and PNGView serves any byte
//     range of it without encoding the rest.
//   - VAG sounds (magic "VAGp", PS-ADPCM) to 16-bit mono PCM WAV, decoded
//     lazily frame range by frame range from checkpoints of the decoder's
//     history; WAVSize is exact from the header.
//   - PSS videos: the MPEG pack header, and the frame rate of the MPEG video
//     sequence header (29.97 fps when it cannot be read).
//   - GC subtitle blobs, to one SRT per language.
//   - IOP modules: the ELF magic.
//
// Writers (for gcfs mkdisc): WritePIF, WriteRGBABlob (stored PS2 alpha),
// EncodePIF, EncodeRGBABlob (a decoded texture, alpha mapped back with
// PS2AlphaStored), EncodeVAG and SineSweep, WritePSS, WriteSubtitles,
// WriteIRX. They are deterministic; they panic on arguments outside their
// documented ranges (programmer errors, as bytes.Repeat does), never on data.
//
// Every malformed input is reported as a *FormatError, which wraps ErrFormat
// and one of the sentinels below, so errors.Is tells "refused: too large"
// from "truncated" from an I/O error.
package assets

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every *FormatError matches ErrFormat and exactly one of
// the others with errors.Is.
var (
	ErrFormat    = errors.New("assets: malformed asset")
	ErrMagic     = errors.New("bad magic")
	ErrTruncated = errors.New("declared data runs past the bytes")
	ErrTooLarge  = errors.New("dimensions or sizes out of range")
	ErrValue     = errors.New("field value not supported")
	ErrText      = errors.New("bad subtitle text")
	// ErrNoSequenceHeader: no MPEG video sequence header in the searched
	// prefix, or one whose frame rate is reserved. PSSFrameRate then still
	// returns DefaultFrameRate.
	ErrNoSequenceHeader = errors.New("no usable MPEG sequence header")
)

// FormatError reports what is wrong with an asset and where: Kind is the
// format ("pif", "rgba", "vag", "pss", "subtitles"), Name the file it came
// from when the caller set it (see Named), Offset the byte offset of the
// offending field inside the asset.
type FormatError struct {
	Kind   string
	Name   string
	Offset int64
	Reason string
	Err    error // one of the sentinels
}

func (e *FormatError) Error() string {
	name := ""
	if e.Name != "" {
		name = " " + e.Name
	}
	return fmt.Sprintf("%s%s: %s at offset %#x: %v", e.Kind, name, e.Reason, e.Offset, e.Err)
}

// Unwrap gives ErrFormat and the specific sentinel.
func (e *FormatError) Unwrap() []error { return []error{ErrFormat, e.Err} }

// Named returns err with name set on it when it is (or wraps) a *FormatError,
// else err unchanged. The original is not modified.
func Named(err error, name string) error {
	var fe *FormatError
	if !errors.As(err, &fe) {
		return err
	}
	c := *fe
	c.Name = name
	return &c
}

func ferr(kind string, off int64, sentinel error, format string, args ...any) error {
	return &FormatError{Kind: kind, Offset: off, Reason: fmt.Sprintf(format, args...), Err: sentinel}
}
