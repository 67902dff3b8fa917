package integration

import (
	"bytes"
	"encoding/binary"
	"image/png"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func xattrStr(t *testing.T, path, name string) string {
	t.Helper()
	buf := make([]byte, 4096)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		t.Errorf("getxattr %s %s: %v", path, name, err)
		return ""
	}
	return string(buf[:n])
}

// Views through a real mount: a PNG decodes with image/png at the PIF's
// dimensions, a WAV has a RIFF header at the VAG's rate, an SRT reads as
// text; their attributes name the view and its source; --no-views hides them
// and keeps the stored bytes' names.
func TestViewsMounted(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path)
	tex := "G/ARMOR.WAD/armor0_textures.d/00"
	pif, err := os.ReadFile(m.path(tex))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(m.path(tex + ".png"))
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(m.path(tex + ".png"))
	if st.Size() != int64(len(b)) {
		t.Errorf("png: stat %d, read %d bytes", st.Size(), len(b))
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if w, h := int(binary.LittleEndian.Uint32(pif[8:])), int(binary.LittleEndian.Uint32(pif[12:])); img.Bounds().Dx() != w || img.Bounds().Dy() != h {
		t.Errorf("png %v, PIF %dx%d", img.Bounds(), w, h)
	}
	if v, s := xattrStr(t, m.path(tex+".png"), "user.gcfs.view"), xattrStr(t, m.path(tex+".png"), "user.gcfs.source"); v != "png" || s != tex {
		t.Errorf("png xattrs view %q source %q", v, s)
	}
	snd := "G/AUDIO.WAD/vendor/000"
	vag, err := os.ReadFile(m.path(snd + ".vag"))
	if err != nil {
		t.Fatal(err)
	}
	wav, err := os.ReadFile(m.path(snd + ".wav"))
	if err != nil {
		t.Fatal(err)
	}
	if string(wav[:4]) != "RIFF" || binary.LittleEndian.Uint32(wav[24:]) != binary.BigEndian.Uint32(vag[0x10:]) {
		t.Errorf("wav header % x, VAG rate %d", wav[:44], binary.BigEndian.Uint32(vag[0x10:]))
	}
	srt, err := os.ReadFile(m.path("G/MPEG.WAD/subtitles01.d/english.srt"))
	if err != nil || !strings.HasPrefix(string(srt), "1\n00:00:") || !strings.Contains(string(srt), "video 01") {
		t.Errorf("srt %q, %v", srt, err)
	}
	if err := os.WriteFile(m.path(tex+".png"), []byte("x"), 0o644); !isErrno(err, unix.EROFS) {
		t.Errorf("writing a view: %v, want EROFS", err)
	}

	nv := testMount(t, d.path, "--no-views")
	if _, err := os.Stat(nv.path(tex + ".png")); !os.IsNotExist(err) {
		t.Errorf("--no-views: %s.png: %v", tex, err)
	}
	if _, err := os.Stat(nv.path(snd + ".vag")); err != nil {
		t.Errorf("--no-views: %s.vag: %v", snd, err)
	}
}
