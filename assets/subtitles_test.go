package assets

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func testCues() []SubtitleCue {
	return []SubtitleCue{
		{0, 30, [5]string{"Hello.", "Bonjour.", "Hallo.", "Hola.", "Ciao."}},
		{45, 120, [5]string{"Two\nlines", "Deux\r\nlignes", "Zwei\n\nZeilen", "Dos", "Due"}},
		{1800, 1899, [5]string{"", "Plus tard", "Später", "Más tarde", "Più tardi"}},
	}
}

func TestSubtitlesSRT(t *testing.T) {
	blob := WriteSubtitles(testCues())
	s, err := ParseSubtitles(blob)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Records) != 3 || s.TableEnd != 64 {
		t.Fatalf("%d records, table end %d", len(s.Records), s.TableEnd)
	}
	en, err := s.SRT(0, DefaultFrameRate)
	if err != nil {
		t.Fatal(err)
	}
	// Frame 30 at 30000/1001 fps is 1001 ms, 45 is 1501.5 → 1502, 120 is 4004.
	want := "1\n00:00:00,000 --> 00:00:01,001\nHello.\n\n2\n00:00:01,502 --> 00:00:04,004\nTwo\nlines\n\n"
	if string(en) != want {
		t.Fatalf("english SRT:\n%q\nwant\n%q", en, want)
	}
	fr, _ := s.SRT(1, Rate{25, 1})
	wantFR := "1\n00:00:00,000 --> 00:00:01,200\nBonjour.\n\n2\n00:00:01,800 --> 00:00:04,800\nDeux\nlignes\n\n3\n00:01:12,000 --> 00:01:15,960\nPlus tard\n\n"
	if string(fr) != wantFR {
		t.Fatalf("french SRT:\n%q\nwant\n%q", fr, wantFR)
	}
	de, _ := s.SRT(2, Rate{25, 1})
	if !bytes.Contains(de, []byte("Zwei\nZeilen\n\n")) || !bytes.Contains(de, []byte("Später")) {
		t.Fatalf("german SRT %q", de)
	}
	for l := range Languages {
		if s.Err(l) != nil {
			t.Errorf("%s: %v", Languages[l], s.Err(l))
		}
	}
	if _, err := s.SRT(5, DefaultFrameRate); err == nil {
		t.Error("language 5 accepted")
	}
	if _, err := s.SRT(0, Rate{0, 1}); err == nil {
		t.Error("rate 0 accepted")
	}
}

func TestSubtitlesLatin1(t *testing.T) {
	blob := WriteSubtitles([]SubtitleCue{{0, 10, [5]string{"a", "caf\xe9", "b", "c", "d"}}})
	s, err := ParseSubtitles(blob)
	if err != nil {
		t.Fatal(err)
	}
	if s.Text(1, 0) != "café" {
		t.Fatalf("latin-1 text %q", s.Text(1, 0))
	}
}

func TestSubtitlesRefused(t *testing.T) {
	blob := WriteSubtitles(testCues())
	le := binary.LittleEndian
	// German text of record 1 pointing outside the blob: only German refused.
	bad := bytes.Clone(blob)
	le.PutUint16(bad[16+4+2*2:], uint16(len(bad)+10))
	s, err := ParseSubtitles(bad)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.SRT(2, DefaultFrameRate); !errors.Is(err, ErrText) || !errors.Is(err, ErrFormat) {
		t.Fatalf("german: %v", err)
	}
	var fe *FormatError
	if !errors.As(s.Err(2), &fe) || fe.Offset != 16+4+4 {
		t.Fatalf("german error %v", s.Err(2))
	}
	for _, l := range []int{0, 1, 3, 4} {
		if _, err := s.SRT(l, DefaultFrameRate); err != nil {
			t.Errorf("%s: %v", Languages[l], err)
		}
	}
	// Negative offset, offset into the table, no NUL before the end.
	for name, mod := range map[string]func([]byte) []byte{
		"negative": func(b []byte) []byte { le.PutUint16(b[4:], 0xfff0); return b },
		"in table": func(b []byte) []byte { le.PutUint16(b[4:], 8); return b },
		"no NUL":   func(b []byte) []byte { b[len(b)-1] = 'x'; le.PutUint16(b[4:], uint16(len(b)-3)); return b },
	} {
		s, err := ParseSubtitles(mod(bytes.Clone(blob)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Err(0) == nil {
			t.Errorf("%s: english accepted", name)
		}
	}
	// No terminator at all.
	noTerm := bytes.Clone(blob[:48])
	if _, err := ParseSubtitles(noTerm); !errors.Is(err, ErrTruncated) {
		t.Fatalf("no terminator: %v", err)
	}
	if _, err := ParseSubtitles(nil); !errors.Is(err, ErrTruncated) {
		t.Fatalf("empty: %v", err)
	}
	// Stop before start.
	rev := bytes.Clone(blob)
	le.PutUint16(rev[2:], 0)
	le.PutUint16(rev[0:], 5)
	if _, err := ParseSubtitles(rev); !errors.Is(err, ErrValue) {
		t.Fatalf("reversed: %v", err)
	}
	// Terminator first: no cues, empty SRTs.
	empty := WriteSubtitles(nil)
	s, err = ParseSubtitles(empty)
	if err != nil || len(s.Records) != 0 {
		t.Fatalf("empty table: %v", err)
	}
	if b, err := s.SRT(0, DefaultFrameRate); err != nil || len(b) != 0 {
		t.Fatalf("empty SRT %q %v", b, err)
	}
}
