package assets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SRT back to subtitle records: the inverse of Subtitles.SRT, for an edited
// LANG.srt view (SPEC "Editing": an SRT becomes the subtitle records, frames
// at the video's rate).

// SRTCue is one cue of an SRT file: times in milliseconds.
type SRTCue struct {
	StartMS, StopMS int64
	Text            string
}

// maxSRTTime bounds a cue time (a subtitle frame is s16: no cue of a GC
// blob is past 32767 frames, about 18 minutes at 29.97).
const maxSRTTime = 100 * 3600 * 1000

// ParseSRT reads an SRT file: cues of an index line, a "start --> stop"
// line (HH:MM:SS,mmm; '.' taken for ','), text lines, a blank line. A UTF-8
// BOM and CR line ends are accepted. Errors name the line.
func ParseSRT(b []byte) ([]SRTCue, error) {
	b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(b) {
		return nil, fmt.Errorf("srt: not UTF-8 text")
	}
	lines := strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n")
	var cues []SRTCue
	i := 0
	for {
		for i < len(lines) && strings.TrimSpace(lines[i]) == "" {
			i++
		}
		if i >= len(lines) {
			return cues, nil
		}
		if _, err := strconv.Atoi(strings.TrimSpace(lines[i])); err != nil {
			return nil, fmt.Errorf("srt: line %d: %q is no cue number", i+1, clip(lines[i]))
		}
		i++
		if i >= len(lines) {
			return nil, fmt.Errorf("srt: line %d: cue %d has no times", i, len(cues)+1)
		}
		start, stop, err := parseSRTTimes(lines[i])
		if err != nil {
			return nil, fmt.Errorf("srt: line %d: %w", i+1, err)
		}
		i++
		var text []string
		for i < len(lines) && strings.TrimSpace(lines[i]) != "" {
			text = append(text, strings.TrimRight(lines[i], " \t"))
			i++
		}
		if len(text) == 0 {
			return nil, fmt.Errorf("srt: line %d: cue %d has no text", i, len(cues)+1)
		}
		cues = append(cues, SRTCue{StartMS: start, StopMS: stop, Text: strings.Join(text, "\n")})
	}
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

func parseSRTTimes(l string) (int64, int64, error) {
	a, b, ok := strings.Cut(l, "-->")
	if !ok {
		return 0, 0, fmt.Errorf("%q is no \"start --> stop\" line", clip(l))
	}
	start, err := parseSRTTime(strings.TrimSpace(a))
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(b) // a position after the stop time is ignored
	if len(f) == 0 {
		return 0, 0, fmt.Errorf("%q has no stop time", clip(l))
	}
	stop, err := parseSRTTime(f[0])
	if err != nil {
		return 0, 0, err
	}
	if stop < start {
		return 0, 0, fmt.Errorf("the cue stops (%s) before it starts (%s)", f[0], strings.TrimSpace(a))
	}
	return start, stop, nil
}

// parseSRTTime reads HH:MM:SS,mmm.
func parseSRTTime(s string) (int64, error) {
	bad := fmt.Errorf("%q is no time HH:MM:SS,mmm", clip(s))
	hms, ms, ok := strings.Cut(strings.ReplaceAll(s, ".", ","), ",")
	p := strings.Split(hms, ":")
	if !ok || len(p) != 3 || len(ms) == 0 || len(ms) > 3 {
		return 0, bad
	}
	var v [4]int64
	for i, f := range append(p, ms) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil || n < 0 || len(f) > 3 {
			return 0, bad
		}
		v[i] = n
	}
	if v[1] > 59 || v[2] > 59 {
		return 0, bad
	}
	for len(ms) < 3 {
		ms += "0"
		v[3] *= 10
	}
	t := ((v[0]*60+v[1])*60+v[2])*1000 + v[3]
	if t > maxSRTTime {
		return 0, bad
	}
	return t, nil
}

// msToFrame is the frame nearest to ms at rate r (the inverse of srtTime's
// rounding: a frame is far longer than a millisecond, so frame -> ms ->
// frame is exact).
func msToFrame(ms int64, r Rate) int64 {
	return (ms*r.Num + 500*r.Den) / (1000 * r.Den)
}

// SubtitlesFromSRT rebuilds subtitle blob orig with language l's cues from
// an edited SRT of it, timed at rate: the SRT's cues are the records with
// text in l, in order, so their number must not change; a cue's times
// become its record's frames (shared by every language: the game shows all
// of them at once) and its text the record's text in l. Texts that did not
// change keep their bytes; a new one is written in Latin-1 (the discs'
// encoding). The other languages' texts are kept as stored. Errors say
// which cue and why (a text past Latin-1 or holding a NUL, a time past a
// record's s16 frame, a blob past the 32767 bytes its offsets reach).
func SubtitlesFromSRT(orig []byte, l int, srt []byte, rate Rate) ([]byte, error) {
	if l < 0 || l >= len(Languages) {
		return nil, fmt.Errorf("assets: no subtitle language %d", l)
	}
	if !rate.valid() {
		return nil, fmt.Errorf("assets: frame rate %v", rate)
	}
	s, err := ParseSubtitles(orig)
	if err != nil {
		return nil, err
	}
	if err := s.Err(l); err != nil {
		return nil, fmt.Errorf("the blob's %s texts do not read: %w", Languages[l], err)
	}
	cues, err := ParseSRT(srt)
	if err != nil {
		return nil, err
	}
	var shown []int // records with text in l: the SRT's cues
	for i := range s.Records {
		if s.Text(l, i) != "" {
			shown = append(shown, i)
		}
	}
	if len(cues) != len(shown) {
		return nil, fmt.Errorf("%d cues, the blob has %d records with %s text: an SRT edit changes the cues' times and texts, not their number", len(cues), len(shown), Languages[l])
	}
	// The blob as stored, its table rewritten in place; a changed text is
	// appended (its old bytes stay, unreferenced), so every other text and
	// offset keeps its bytes, a refused language's included.
	out := append([]byte(nil), orig...)
	for c, i := range shown {
		cue := cues[c]
		start, stop := msToFrame(cue.StartMS, rate), msToFrame(cue.StopMS, rate)
		if stop > 0x7fff {
			return nil, fmt.Errorf("cue %d: stops at frame %d, past the 32767 a record holds", c+1, stop)
		}
		r := out[i*SubtitleRecordSize:]
		binary.LittleEndian.PutUint16(r, uint16(start))
		binary.LittleEndian.PutUint16(r[2:], uint16(stop))
		if cue.Text == s.Text(l, i) {
			continue
		}
		at := int(s.Records[i].Text[l])
		old := orig[at : at+bytes.IndexByte(orig[at:], 0)] // found by ParseSubtitles
		enc, err := latin1(cue.Text, bytes.Contains(old, []byte("\r\n")))
		if err != nil {
			return nil, fmt.Errorf("cue %d: %w", c+1, err)
		}
		if len(out) > 0x7fff {
			return nil, fmt.Errorf("cue %d: its text would start at byte %d of the blob, past the 32767 a record's offset reaches: shorten the texts", c+1, len(out))
		}
		binary.LittleEndian.PutUint16(r[4+2*l:], uint16(len(out)))
		out = append(out, enc...)
		out = append(out, 0)
	}
	if len(out) > len(orig) && len(out) > 0x8000 {
		return nil, fmt.Errorf("the blob would be %d bytes, past the 32768 its s16 text offsets reach: shorten the texts", len(out))
	}
	return out, nil
}

// latin1 encodes a cue's text as stored: Latin-1, lines joined by CRLF
// where the record's text had them.
func latin1(t string, crlf bool) ([]byte, error) {
	if crlf {
		t = strings.ReplaceAll(t, "\n", "\r\n")
	}
	out := make([]byte, 0, len(t))
	for _, r := range t {
		switch {
		case r == 0:
			return nil, fmt.Errorf("the text holds a NUL")
		case r > 0xff:
			return nil, fmt.Errorf("%q is not in Latin-1, the subtitles' encoding", r)
		}
		out = append(out, byte(r))
	}
	return out, nil
}
