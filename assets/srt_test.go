package assets

import (
	"bytes"
	"strings"
	"testing"
)

func srtBlob() []byte {
	return WriteSubtitles([]SubtitleCue{
		{Start: 30, Stop: 90, Text: [5]string{"Hello", "Bonjour", "Hallo", "Hola", "Ciao"}},
		{Start: 100, Stop: 160, Text: [5]string{"", "Deux", "Zwei", "Dos", "Due"}}, // no English
		{Start: 200, Stop: 260, Text: [5]string{"Two\r\nlines", "Trois", "Drei", "Tres", "Tre"}},
	})
}

// TestSubtitlesFromSRTRoundTrip: the SRT view taken back unchanged gives
// the blob byte for byte; an edited cue changes its record's frames and its
// text in that language only, and reads back as written.
func TestSubtitlesFromSRTRoundTrip(t *testing.T) {
	blob := srtBlob()
	s, err := ParseSubtitles(blob)
	if err != nil {
		t.Fatal(err)
	}
	rate := Rate{30000, 1001}
	srt, err := s.SRT(0, rate)
	if err != nil {
		t.Fatal(err)
	}
	same, err := SubtitlesFromSRT(blob, 0, srt, rate)
	if err != nil || !bytes.Equal(same, blob) {
		t.Fatalf("unchanged SRT: %v, equal %v", err, bytes.Equal(same, blob))
	}
	edited := strings.Replace(string(srt), "Hello", "Héllo, edited", 1)
	edited = strings.Replace(edited, "00:00:01,001 --> 00:00:03,003", "00:00:02,002 --> 00:00:04,004", 1)
	if edited == string(srt) {
		t.Fatalf("the edit did not apply to:\n%s", srt)
	}
	out, err := SubtitlesFromSRT(blob, 0, []byte(strings.ReplaceAll(edited, "\n", "\r\n")), rate)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := ParseSubtitles(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := s2.Text(0, 0); got != "Héllo, edited" {
		t.Errorf("english text %q", got)
	}
	if s2.Records[0].Start != 60 || s2.Records[0].Stop != 120 {
		t.Errorf("frames %d..%d, want 60..120", s2.Records[0].Start, s2.Records[0].Stop)
	}
	for l := 1; l < 5; l++ {
		for i := range s.Records {
			if s2.Text(l, i) != s.Text(l, i) {
				t.Errorf("%s record %d: %q, was %q", Languages[l], i, s2.Text(l, i), s.Text(l, i))
			}
		}
	}
	if got := s2.Text(0, 2); got != "Two\nlines" {
		t.Errorf("unchanged cue: %q", got)
	}
	back, err := s2.SRT(0, rate)
	if err != nil || string(back) != edited {
		t.Errorf("the rebuilt blob's SRT:\n%s\nwant\n%s (%v)", back, edited, err)
	}
}

// TestSubtitlesFromSRTRefuses: malformed SRT, a changed number of cues, a
// text the records cannot hold, a time past a record's frame field: errors
// saying which.
func TestSubtitlesFromSRTRefuses(t *testing.T) {
	blob := srtBlob()
	rate := Rate{30000, 1001}
	ok := "1\n00:00:01,001 --> 00:00:03,003\nHello\n\n2\n00:00:06,673 --> 00:00:08,675\nTwo\nlines\n"
	if _, err := SubtitlesFromSRT(blob, 0, []byte(ok), rate); err != nil {
		t.Fatalf("the base case: %v", err)
	}
	long := strings.Repeat("x", 0x8000)
	for _, c := range []struct{ srt, want string }{
		{"x\n00:00:01,001 --> 00:00:03,003\nHello\n", "line 1: \"x\" is no cue number"},
		{"1\n00:00:01 --> 00:00:03,003\nHello\n", "line 2: \"00:00:01\" is no time"},
		{"1\n00:00:01,001 00:00:03,003\nHello\n", "line 2"},
		{"1\n00:00:03,003 --> 00:00:01,001\nHello\n", "stops"},
		{"1\n00:00:01,001 --> 00:00:03,003\n\n", "no text"},
		{"1\n00:00:01,001 --> 00:00:03,003\nHello\n", "1 cues, the blob has 2 records"},
		{strings.Replace(ok, "Hello", "日本", 1), "not in Latin-1"},
		{strings.Replace(ok, "Hello", long, 1), "past the 32768 its s16 text offsets reach"},
		{strings.Replace(ok, "00:00:03,003", "00:30:00,000", 1), "past the 32767 a record holds"},
		{"\xff\xfe1\n", "not UTF-8"},
	} {
		_, err := SubtitlesFromSRT(blob, 0, []byte(c.srt), rate)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.30q: got %v, want %q", c.srt, err, c.want)
		}
	}
}

func FuzzSubtitlesFromSRT(f *testing.F) {
	blob := srtBlob()
	s, _ := ParseSubtitles(blob)
	srt, _ := s.SRT(0, DefaultFrameRate)
	f.Add(srt)
	f.Add([]byte("1\n00:00:01,001 --> 00:00:03,003\nHello\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, err := SubtitlesFromSRT(blob, 0, b, DefaultFrameRate)
		if err != nil {
			return
		}
		if _, err := ParseSubtitles(out); err != nil {
			t.Fatalf("a blob written from an accepted SRT does not parse: %v", err)
		}
	})
}
