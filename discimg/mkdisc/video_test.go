package mkdisc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"gcfs/assets"
)

// TestPSSVideosPlayable: every video the small layout writes is, over all of
// its extent, one program stream as assets.WritePSSPadding writes it: real
// MPEG-2 pictures (EncodeMPEG2 of a rate code videoRateCode gives, which the
// frame-rate reader reads back; the packs byte for byte WritePSS's), the
// extent's label inside its padding, and
// the program end code as its last bytes, so nothing a player reads lies past
// the stream. No two videos are the same bytes. ffmpeg decodes one video of
// each file they lie in (the noise in their padding included).
func TestPSSVideosPlayable(t *testing.T) {
	files := built(t, Small)
	seen := map[string]string{}
	n := 0
	// One video of each file a video lies in is played with ffmpeg (skipped
	// when it is missing, unless CI is set).
	_, err := exec.LookPath("ffmpeg")
	playable := err == nil
	if !playable && os.Getenv("CI") != "" {
		t.Fatal("ffmpeg is missing (CI is set)")
	}
	played := map[string]bool{}
	for _, f := range files {
		for _, e := range f.entries {
			if e.asset != assetPSS {
				continue
			}
			n++
			path := f.path + "/" + e.name
			src, base := f.content, int64(0)
			if e.content != nil {
				src, base = e.content, e.contentOff
			}
			b := make([]byte, e.n)
			if _, err := src.ReadAt(b, e.off-base); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			if !assets.IsPSS(b) || !bytes.HasSuffix(b, []byte{0, 0, 1, 0xb9}) {
				t.Fatalf("%s (%d bytes): not a PSS ending in the program end code", path, len(b))
			}
			rate, err := assets.FrameRateIn(b)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			code := 0
			for _, c := range []int{3, 4, 5} {
				if r, _ := assets.FrameRateOfCode(c); r == rate {
					code = c
				}
			}
			if code == 0 {
				t.Fatalf("%s: rate %v is no video's", path, rate)
			}
			// The video packs (all before the padding) are WritePSS's, which
			// the assets tests play with ffmpeg.
			packs := assets.MinPSSSize - 4
			if len(b) < assets.MinPSSSize+6 || !bytes.Equal(b[:packs], assets.WritePSS(len(b), code)[:packs]) {
				t.Fatalf("%s (%d bytes): not WritePSS's pictures", path, len(b))
			}
			if !bytes.Contains(b[packs:], []byte("GCFS synthetic ")) {
				t.Fatalf("%s: no label", path)
			}
			sum := sha1Hex(b)
			if other, ok := seen[sum]; ok {
				t.Fatalf("%s has the bytes of %s", path, other)
			}
			seen[sum] = path
			if where := f.path + " " + e.inFile; !played[where] && playable {
				played[where] = true
				playWithFFmpeg(t, path, b)
			}
		}
	}
	if n < 10 || playable && len(played) < 2 {
		t.Fatalf("%d videos, %d played", n, len(played))
	}
}

// playWithFFmpeg decodes video b with ffmpeg and checks it yields
// assets.PSSPictures frames of PSSWidth×PSSHeight, without an error.
func playWithFFmpeg(t *testing.T, path string, b []byte) {
	t.Helper()
	f := filepath.Join(t.TempDir(), "v.pss")
	if err := os.WriteFile(f, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := exec.Command("ffmpeg", "-v", "error", "-i", f, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
	cmd.Stderr = &stderr
	raw, err := cmd.Output()
	if want := assets.PSSPictures * assets.PSSWidth * assets.PSSHeight * 3 / 2; err != nil || stderr.Len() > 0 || len(raw) != want {
		t.Fatalf("%s: ffmpeg decoded %d bytes (want %d): %v %s", path, len(raw), want, err, stderr.Bytes())
	}
}
