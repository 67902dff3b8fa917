package assets

import (
	"encoding/binary"
	"errors"
	"io"
	"sync"
)

// VAG sounds: a 0x30-byte big-endian header ("VAGp", version, reserved, data
// size at +0x0c, sample rate at +0x10, reserved, a 16-byte name at +0x20),
// then PS-ADPCM frames of 16 bytes: a shift/filter byte (filter in the high
// nibble, shift in the low), a flags byte, 14 bytes of 28 4-bit samples (low
// nibble first).
//
// What the WAV holds: every whole frame of the declared data size, decoded in
// order; the flags (loop start, loop repeat, loop end / end of sound) are not
// acted on, so a sound is neither cut at an end flag nor looped, and a
// trailing partial frame (data size not a multiple of 16) is left out. The
// reserved filter values 5..15 decode as filter 0 and the reserved shifts
// 13..15 as shift 9, so every byte string decodes to something; predictions
// use an arithmetic shift: (s1*f0 + s2*f1 + 32) >> 6.
const (
	VAGHeaderSize = 0x30
	VAGFrameSize  = 16
	VAGFrameSamp  = 28
	WAVHeaderSize = 44
	// MaxSampleRate bounds the sample rate a VAG may declare (0 is refused too).
	MaxSampleRate = 192000
)

// VAGHeader is a VAG's parsed header.
type VAGHeader struct {
	Version    uint32
	DataSize   uint32 // bytes of ADPCM after the header, as declared
	SampleRate uint32
	Name       string // the name field up to its first NUL
}

// Frames is the number of whole frames in the declared data.
func (h VAGHeader) Frames() int64 { return int64(h.DataSize) / VAGFrameSize }

// Samples is the number of samples the WAV holds.
func (h VAGHeader) Samples() int64 { return h.Frames() * VAGFrameSamp }

// WAVSize is the exact size of the sound's WAV.
func (h VAGHeader) WAVSize() int64 { return WAVHeaderSize + 2*h.Samples() }

// WAVSize is the exact size of the WAV of a VAG with header h.
func WAVSize(h VAGHeader) int64 { return h.WAVSize() }

// IsVAG reports whether b begins with the VAG magic.
func IsVAG(b []byte) bool { return len(b) >= 4 && string(b[:4]) == "VAGp" }

// ParseVAGHeader parses and checks a VAG header against the size of its
// extent: the magic, a sample rate in 1..MaxSampleRate, and the whole
// (0x30 + data size) within size.
func ParseVAGHeader(b []byte, size int64) (VAGHeader, error) {
	if len(b) < VAGHeaderSize || size < VAGHeaderSize {
		return VAGHeader{}, ferr("vag", min(int64(len(b)), size), ErrTruncated, "header needs %#x bytes", VAGHeaderSize)
	}
	if !IsVAG(b) {
		return VAGHeader{}, ferr("vag", 0, ErrMagic, "magic %q is not \"VAGp\"", b[:4])
	}
	h := VAGHeader{
		Version:    binary.BigEndian.Uint32(b[4:]),
		DataSize:   binary.BigEndian.Uint32(b[0xc:]),
		SampleRate: binary.BigEndian.Uint32(b[0x10:]),
	}
	name := b[0x20:0x30]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	h.Name = string(name)
	if h.SampleRate == 0 || h.SampleRate > MaxSampleRate {
		return h, ferr("vag", 0x10, ErrValue, "sample rate %d outside 1..%d", h.SampleRate, MaxSampleRate)
	}
	if whole := VAGHeaderSize + int64(h.DataSize); whole > size {
		return h, ferr("vag", 0xc, ErrTruncated, "data size %#x makes the sound %#x bytes, its extent has %#x", h.DataSize, whole, size)
	}
	if h.WAVSize()-8 > 0xffffffff {
		return h, ferr("vag", 0xc, ErrTooLarge, "data size %#x decodes past the 4 GiB a WAV can hold", h.DataSize)
	}
	return h, nil
}

// StatVAG reads and checks the header of the VAG in r (size bytes).
func StatVAG(r io.ReaderAt, size int64) (VAGHeader, error) {
	var b [VAGHeaderSize]byte
	if size < VAGHeaderSize {
		return VAGHeader{}, ferr("vag", size, ErrTruncated, "header needs %#x bytes, have %#x", VAGHeaderSize, size)
	}
	if err := readAt(r, b[:], 0); err != nil {
		return VAGHeader{}, err
	}
	return ParseVAGHeader(b[:], size)
}

// WAVHeader is the 44-byte RIFF header of a 16-bit mono PCM WAV.
func WAVHeader(rate uint32, samples int64) []byte {
	data := uint32(2 * samples)
	b := make([]byte, 0, WAVHeaderSize)
	b = append(b, "RIFF"...)
	b = binary.LittleEndian.AppendUint32(b, 36+data)
	b = append(b, "WAVEfmt "...)
	b = binary.LittleEndian.AppendUint32(b, 16)
	b = binary.LittleEndian.AppendUint16(b, 1) // PCM
	b = binary.LittleEndian.AppendUint16(b, 1) // mono
	b = binary.LittleEndian.AppendUint32(b, rate)
	b = binary.LittleEndian.AppendUint32(b, 2*rate)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 16)
	b = append(b, "data"...)
	return binary.LittleEndian.AppendUint32(b, data)
}

// History is the PS-ADPCM decoder's state between frames: the last two
// samples.
type History struct{ S1, S2 int32 }

var vagFilters = [5][2]int32{{0, 0}, {60, 0}, {115, -52}, {98, -55}, {122, -60}}

func clamp16(v int32) int32 { return max(-32768, min(32767, v)) }

// DecodeFrames decodes the len(src)/16 whole frames of src into dst (which
// must hold 28 samples a frame) starting from history h, and returns the
// history after them. dst may be nil to only advance the history.
func DecodeFrames(dst []int16, src []byte, h History) History {
	s1, s2 := h.S1, h.S2
	for f := 0; f+VAGFrameSize <= len(src); f += VAGFrameSize {
		fr := src[f : f+VAGFrameSize]
		shift := uint(fr[0] & 0x0f)
		if shift > 12 {
			shift = 9
		}
		filt := int(fr[0] >> 4)
		if filt > 4 {
			filt = 0
		}
		c0, c1 := vagFilters[filt][0], vagFilters[filt][1]
		var out *[VAGFrameSamp]int16
		if dst != nil {
			out = (*[VAGFrameSamp]int16)(dst[f/VAGFrameSize*VAGFrameSamp:])
		}
		data := (*[14]byte)(fr[2:])
		for j, b := range data {
			t0 := int32(int16(uint16(b)<<12)) >> shift
			t1 := int32(int16(uint16(b&0xf0)<<8)) >> shift
			s := clamp16(t0 + (s1*c0+s2*c1+32)>>6)
			s2, s1 = s1, s
			u := clamp16(t1 + (s1*c0+s2*c1+32)>>6)
			s2, s1 = s1, u
			if out != nil {
				out[2*j], out[2*j+1] = int16(s), int16(u)
			}
		}
	}
	return History{s1, s2}
}

// DecodeVAG decodes a whole VAG held in memory.
func DecodeVAG(b []byte) (VAGHeader, []int16, error) {
	h, err := ParseVAGHeader(b, int64(len(b)))
	if err != nil {
		return h, nil, err
	}
	out := make([]int16, h.Samples())
	DecodeFrames(out, b[VAGHeaderSize:VAGHeaderSize+h.Frames()*VAGFrameSize], History{})
	return h, out, nil
}

// CheckpointFrames is how many frames lie between two of a VAGView's
// checkpoints: once the checkpoints before a range are known, a read of it
// decodes fewer than this many frames it does not return.
const CheckpointFrames = 128

// VAGView serves the bytes of a VAG's WAV at any offset, decoding the frames
// the range touches plus fewer than CheckpointFrames before them: the
// decoder's history is kept at every CheckpointFrames-th frame (8 bytes
// each), filled in as reads pass them; the first read beyond the known ones
// runs the decoder (history only, no output) up to it. Safe for concurrent
// use.
type VAGView struct {
	r   io.ReaderAt
	h   VAGHeader
	hdr []byte

	mu  sync.Mutex
	cps []History // cps[k]: history before frame k*CheckpointFrames
}

// NewVAGView checks the VAG in r (size bytes) and prepares its WAV.
func NewVAGView(r io.ReaderAt, size int64) (*VAGView, error) {
	h, err := StatVAG(r, size)
	if err != nil {
		return nil, err
	}
	return &VAGView{r: r, h: h, hdr: WAVHeader(h.SampleRate, h.Samples()), cps: []History{{}}}, nil
}

// Header is the VAG's header.
func (v *VAGView) Header() VAGHeader { return v.h }

// Size is the WAV's exact size.
func (v *VAGView) Size() int64 { return v.h.WAVSize() }

// Checkpoints is how many checkpoints are known so far (for tests and stats).
func (v *VAGView) Checkpoints() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return len(v.cps)
}

// readFrames reads frames [f, f+n) of ADPCM into buf.
func (v *VAGView) readFrames(buf []byte, f int64) error {
	return readAt(v.r, buf, VAGHeaderSize+f*VAGFrameSize)
}

// historyAt returns the decoder's history before frame f. Missing
// checkpoints are decoded outside the lock, so readers never wait on
// another's I/O (two may decode the same span; the first to finish keeps it).
func (v *VAGView) historyAt(f int64) (History, error) {
	k := f / CheckpointFrames
	var buf []byte
	var h History
	for {
		v.mu.Lock()
		have := int64(len(v.cps))
		if have > k {
			h = v.cps[k]
			v.mu.Unlock()
			break
		}
		last := v.cps[have-1]
		v.mu.Unlock()
		if buf == nil {
			buf = make([]byte, CheckpointFrames*VAGFrameSize)
		}
		if err := v.readFrames(buf, (have-1)*CheckpointFrames); err != nil {
			return History{}, err
		}
		v.passed(have*CheckpointFrames, DecodeFrames(nil, buf, last))
	}
	if skip := f - k*CheckpointFrames; skip > 0 {
		buf := make([]byte, skip*VAGFrameSize)
		if err := v.readFrames(buf, k*CheckpointFrames); err != nil {
			return History{}, err
		}
		h = DecodeFrames(nil, buf, h)
	}
	return h, nil
}

// passed keeps h as the history before frame f when f is the next
// checkpoint not yet known.
func (v *VAGView) passed(f int64, h History) {
	if f%CheckpointFrames != 0 {
		return
	}
	v.mu.Lock()
	if int64(len(v.cps)) == f/CheckpointFrames {
		v.cps = append(v.cps, h)
	}
	v.mu.Unlock()
}

// DecodeRange decodes frames [first, first+len(dst)/28) into dst.
func (v *VAGView) DecodeRange(dst []int16, first int64) error {
	n := int64(len(dst)) / VAGFrameSamp
	if first < 0 || n < 0 || first+n > v.h.Frames() {
		return errors.New("assets: VAGView.DecodeRange: frames out of range")
	}
	h, err := v.historyAt(first)
	if err != nil {
		return err
	}
	buf := make([]byte, min(n, CheckpointFrames)*VAGFrameSize)
	for n > 0 {
		m := min(n, CheckpointFrames-first%CheckpointFrames)
		if err := v.readFrames(buf[:m*VAGFrameSize], first); err != nil {
			return err
		}
		h = DecodeFrames(dst[:m*VAGFrameSamp], buf[:m*VAGFrameSize], h)
		v.passed(first+m, h)
		dst = dst[m*VAGFrameSamp:]
		first += m
		n -= m
	}
	return nil
}

// ReadAt implements io.ReaderAt over the WAV's bytes. Errors other than
// io.EOF are the underlying reader's.
func (v *VAGView) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("assets: VAGView.ReadAt: negative offset")
	}
	size := v.Size()
	if off >= size {
		return 0, io.EOF
	}
	var eof error
	if rest := size - off; int64(len(p)) > rest {
		p, eof = p[:rest], io.EOF
	}
	n := len(p)
	done := 0 // bytes of p filled, for a short count on error
	if off < WAVHeaderSize {
		done = copy(p, v.hdr[off:])
		p, off = p[done:], off+int64(done)
	}
	if len(p) == 0 {
		return n, eof
	}
	s0 := (off - WAVHeaderSize) / 2
	s1 := (off + int64(len(p)) - 1 - WAVHeaderSize) / 2 // last sample touched
	f0, f1 := s0/VAGFrameSamp, s1/VAGFrameSamp
	h, err := v.historyAt(f0)
	if err != nil {
		return done, err
	}
	// Frames are decoded up to a checkpoint at a time, and the history at
	// each checkpoint passed is kept, so reading on decodes nothing twice.
	const step = CheckpointFrames
	adpcm := make([]byte, min(f1-f0+1, step)*VAGFrameSize)
	pcm := make([]int16, min(f1-f0+1, step)*VAGFrameSamp)
	var two [2]byte
	for f := f0; f <= f1; {
		m := min(f1+1-f, step-f%step)
		if err := v.readFrames(adpcm[:m*VAGFrameSize], f); err != nil {
			return done + int(max(0, WAVHeaderSize+2*f*VAGFrameSamp-off)), err
		}
		h = DecodeFrames(pcm, adpcm[:m*VAGFrameSize], h)
		v.passed(f+m, h)
		// The WAV bytes of these frames: [a, b).
		a := WAVHeaderSize + 2*f*VAGFrameSamp
		b := a + 2*m*VAGFrameSamp
		for o := max(a, off); o < min(b, off+int64(len(p))); {
			si := (o - a) / 2
			binary.LittleEndian.PutUint16(two[:], uint16(pcm[si]))
			if (o-a)&1 == 0 && o+1 < off+int64(len(p)) {
				p[o-off], p[o-off+1] = two[0], two[1]
				o += 2
			} else {
				p[o-off] = two[(o-a)&1]
				o++
			}
		}
		f += m
	}
	return n, eof
}
