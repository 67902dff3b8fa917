package assets

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"unicode/utf8"
)

// GC subtitle blobs: 16-byte records {s16 start_frame, s16 stop_frame, s16
// text_offset[5] (english, french, german, spanish, italian), s16 pad},
// little-endian, ending at the first record with a negative start or stop;
// each text offset points into the same blob at a NUL-terminated string.
const SubtitleRecordSize = 16

// Languages are the subtitle languages in record order; SRT files are named
// Languages[i] + ".srt".
var Languages = [5]string{"english", "french", "german", "spanish", "italian"}

// SubtitleRecord is one record as stored.
type SubtitleRecord struct {
	Start, Stop int16
	Text        [5]int16
	Pad         int16
}

// Subtitles is a parsed subtitle blob: the records before the terminator, and
// for each language either its texts or the error that refuses it.
type Subtitles struct {
	Records []SubtitleRecord
	// TableEnd is where the record table ends (the terminator included).
	TableEnd int64
	texts    [5][]string
	errs     [5]error
}

// ParseSubtitles parses a subtitle blob. An error here (a blob with no
// terminating record, a record whose stop precedes its start) refuses every
// language; a text offset outside the blob (or inside the record table), or
// a string with no NUL before the blob's end, refuses only its language (see
// Subtitles.Err).
func ParseSubtitles(b []byte) (*Subtitles, error) {
	s := &Subtitles{}
	off := 0
	for {
		if off+SubtitleRecordSize > len(b) {
			return nil, ferr("subtitles", int64(off), ErrTruncated, "no terminating record (negative start or stop) before the blob's end")
		}
		r := b[off : off+SubtitleRecordSize]
		v := func(i int) int16 { return int16(binary.LittleEndian.Uint16(r[2*i:])) }
		rec := SubtitleRecord{Start: v(0), Stop: v(1), Pad: v(7)}
		for l := range rec.Text {
			rec.Text[l] = v(2 + l)
		}
		off += SubtitleRecordSize
		if rec.Start < 0 || rec.Stop < 0 {
			break
		}
		if rec.Stop < rec.Start {
			return nil, ferr("subtitles", int64(off-SubtitleRecordSize), ErrValue, "record %d stops at frame %d before it starts (%d)", len(s.Records), rec.Stop, rec.Start)
		}
		s.Records = append(s.Records, rec)
	}
	s.TableEnd = int64(off)
	for l := range Languages {
		texts := make([]string, len(s.Records))
		for i, rec := range s.Records {
			t, err := subtitleText(b, int(rec.Text[l]), off)
			if err != nil {
				s.errs[l] = ferr("subtitles", int64(i*SubtitleRecordSize+4+2*l), ErrText, "%s, record %d: %v", Languages[l], i, err)
				texts = nil
				break
			}
			texts[i] = t
		}
		s.texts[l] = texts
	}
	return s, nil
}

func subtitleText(b []byte, at, tableEnd int) (string, error) {
	if at < tableEnd || at >= len(b) {
		return "", fmt.Errorf("text offset %#x outside the strings (%#x..%#x)", at, tableEnd, len(b))
	}
	n := bytes.IndexByte(b[at:], 0)
	if n < 0 {
		return "", fmt.Errorf("text at %#x has no NUL before the blob's end", at)
	}
	return cleanText(b[at : at+n]), nil
}

// cleanText makes a cue's text: UTF-8 as is, anything else read as Latin-1;
// CR dropped and blank lines removed (a blank line would end the SRT cue),
// surrounding newlines trimmed.
func cleanText(raw []byte) string {
	var s string
	if utf8.Valid(raw) {
		s = string(raw)
	} else {
		rs := make([]rune, len(raw))
		for i, c := range raw {
			rs[i] = rune(c)
		}
		s = string(rs)
	}
	s = strings.ReplaceAll(s, "\r", "")
	lines := strings.Split(s, "\n")
	kept := lines[:0]
	for _, l := range lines {
		if strings.TrimSpace(l) != "" {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}

// Err is nil when language l (index into Languages) has an SRT, else why not.
func (s *Subtitles) Err(l int) error { return s.errs[l] }

// Text is record i's text in language l ("" for a refused language).
func (s *Subtitles) Text(l, i int) string {
	if s.texts[l] == nil {
		return ""
	}
	return s.texts[l][i]
}

// SRT renders language l timed at rate: one cue a record with non-empty
// text, numbered from 1, times HH:MM:SS,mmm rounded to the nearest
// millisecond, LF line ends. Its length is the SRT view's exact size.
func (s *Subtitles) SRT(l int, rate Rate) ([]byte, error) {
	if l < 0 || l >= len(Languages) {
		return nil, fmt.Errorf("assets: no subtitle language %d", l)
	}
	if s.errs[l] != nil {
		return nil, s.errs[l]
	}
	if !rate.valid() {
		return nil, fmt.Errorf("assets: frame rate %v", rate)
	}
	var b bytes.Buffer
	n := 0
	for i, rec := range s.Records {
		t := s.texts[l][i]
		if t == "" {
			continue
		}
		n++
		fmt.Fprintf(&b, "%d\n%s --> %s\n%s\n\n", n, srtTime(int64(rec.Start), rate), srtTime(int64(rec.Stop), rate), t)
	}
	return b.Bytes(), nil
}

func srtTime(frame int64, r Rate) string {
	ms := (frame*1000*r.Den + r.Num/2) / r.Num
	return fmt.Sprintf("%02d:%02d:%02d,%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}
