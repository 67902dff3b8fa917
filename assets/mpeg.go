package assets

import (
	"bytes"
	"fmt"
	"io"
)

// Rate is a frame rate as an exact fraction, frames per second = Num/Den.
type Rate struct{ Num, Den int64 }

// FPS is the rate as a float, for display.
func (r Rate) FPS() float64 { return float64(r.Num) / float64(r.Den) }

func (r Rate) String() string {
	if r.Den == 1 {
		return fmt.Sprintf("%d", r.Num)
	}
	return fmt.Sprintf("%d/%d", r.Num, r.Den)
}

func (r Rate) valid() bool { return r.Num > 0 && r.Den > 0 }

// DefaultFrameRate is NTSC's 29.97 fps, the rate subtitles are timed at when a
// video's sequence header cannot be read.
var DefaultFrameRate = Rate{30000, 1001}

// frameRates are the MPEG-1/2 frame_rate_code values 1..8; 0 and 9..15 are
// reserved.
var frameRates = [9]Rate{{}, {24000, 1001}, {24, 1}, {25, 1}, {30000, 1001}, {30, 1}, {50, 1}, {60000, 1001}, {60, 1}}

// FrameRateOfCode is the frame rate of an MPEG frame_rate_code (1..8).
func FrameRateOfCode(code int) (Rate, bool) {
	if code < 1 || code > 8 {
		return Rate{}, false
	}
	return frameRates[code], true
}

// IsPSS reports whether b begins with an MPEG program stream pack header
// (00 00 01 BA), as PS2 PSS videos do.
func IsPSS(b []byte) bool { return len(b) >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 1 && b[3] == 0xba }

// SequenceSearchLimit is how far into a video FindFrameRate looks for the
// first sequence header.
const SequenceSearchLimit = 256 << 10

// SequenceHeader is what gcfs reads of an MPEG video sequence header (and of
// the MPEG-2 sequence extension right after it, when there is one).
type SequenceHeader struct {
	Width, Height int
	Aspect        int
	RateCode      int
	// Extension: MPEG-2 frame_rate_extension_n and _d (0 when absent).
	ExtN, ExtD int
	Rate       Rate // RateCode's rate times (ExtN+1)/(ExtD+1)
}

// ParseSequenceHeader parses the sequence header at the start of b (b begins
// with 00 00 01 B3). A reserved frame_rate_code is ErrNoSequenceHeader.
func ParseSequenceHeader(b []byte) (SequenceHeader, error) {
	if len(b) < 12 {
		return SequenceHeader{}, ferr("pss", int64(len(b)), ErrTruncated, "sequence header needs 12 bytes")
	}
	if !bytes.Equal(b[:4], []byte{0, 0, 1, 0xb3}) {
		return SequenceHeader{}, ferr("pss", 0, ErrMagic, "no sequence header start code")
	}
	s := SequenceHeader{
		Width:    int(b[4])<<4 | int(b[5]>>4),
		Height:   int(b[5]&0x0f)<<8 | int(b[6]),
		Aspect:   int(b[7] >> 4),
		RateCode: int(b[7] & 0x0f),
	}
	r, ok := FrameRateOfCode(s.RateCode)
	if !ok {
		return s, ferr("pss", 7, ErrNoSequenceHeader, "reserved frame_rate_code %d", s.RateCode)
	}
	// Quantiser matrices: load_intra is bit 1 of byte 11; when set, the
	// 64-byte matrix follows and load_non_intra is the last bit of its last
	// byte; else load_non_intra is bit 0 of byte 11.
	end := 12
	if b[11]&2 != 0 {
		end += 64
		if len(b) >= end && b[end-1]&1 != 0 {
			end += 64
		}
	} else if b[11]&1 != 0 {
		end += 64
	}
	if len(b) >= end+10 && bytes.Equal(b[end:end+4], []byte{0, 0, 1, 0xb5}) && b[end+4]>>4 == 1 {
		x := b[end+9]
		s.ExtN, s.ExtD = int(x>>5&3), int(x&31)
	}
	s.Rate = Rate{r.Num * int64(s.ExtN+1), r.Den * int64(s.ExtD+1)}
	return s, nil
}

// FindFrameRate looks for the first MPEG video sequence header within the
// first SequenceSearchLimit bytes of the video in r (size bytes) and returns
// its frame rate. When there is none, or its rate is reserved, it returns
// DefaultFrameRate and an error matching ErrNoSequenceHeader (say so), or the
// reader's error.
func FindFrameRate(r io.ReaderAt, size int64) (Rate, error) {
	n := min(size, SequenceSearchLimit)
	if n < 0 {
		n = 0
	}
	buf := make([]byte, n)
	if err := readAt(r, buf, 0); err != nil {
		return DefaultFrameRate, err
	}
	return FrameRateIn(buf)
}

// FrameRateIn is FindFrameRate over bytes in memory (all of b is searched).
func FrameRateIn(b []byte) (Rate, error) {
	i := bytes.Index(b, []byte{0, 0, 1, 0xb3})
	if i < 0 {
		return DefaultFrameRate, ferr("pss", int64(len(b)), ErrNoSequenceHeader, "no sequence header in the first %#x bytes", len(b))
	}
	s, err := ParseSequenceHeader(b[i:])
	if err != nil {
		var fe *FormatError
		if asFormat(err, &fe) {
			fe.Offset += int64(i)
			if fe.Err == ErrTruncated {
				fe.Err = ErrNoSequenceHeader
			}
		}
		return DefaultFrameRate, err
	}
	return s.Rate, nil
}

func asFormat(err error, fe **FormatError) bool {
	f, ok := err.(*FormatError)
	if ok {
		*fe = f
	}
	return ok
}

// IsELF reports whether b begins with the ELF magic, as IOP modules do.
func IsELF(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "\x7fELF" }
