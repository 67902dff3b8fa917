package imagefile

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// edcTable: CD EDC, CRC-32 with the reflected polynomial 0xd8018001.
var edcTable = func() (t [256]uint32) {
	for i := range t {
		c := uint32(i)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xd8018001
			} else {
				c >>= 1
			}
		}
		t[i] = c
	}
	return
}()

func edc(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c>>8 ^ edcTable[byte(c)^x]
	}
	return c
}

func bcd(n int) byte { return byte(n/10<<4 | n%10) }

// rawFrames lays out 2048-byte sectors as 2352-byte mode-1 or mode-2-form-1
// sectors with sync, header, EDC and (mode 1) ECC, as a disc reader dumps them.
func rawFrames(iso []byte, mode int) []byte {
	n := len(iso) / SectorSize
	out := make([]byte, n*cdSectorBytes)
	for i := 0; i < n; i++ {
		s := out[i*cdSectorBytes : (i+1)*cdSectorBytes]
		copy(s, cdSync[:])
		a := i + 150
		s[12], s[13], s[14], s[15] = bcd(a/75/60), bcd(a/75%60), bcd(a%75), byte(mode)
		data := iso[i*SectorSize : (i+1)*SectorSize]
		if mode == 1 {
			copy(s[16:], data)
			binary.LittleEndian.PutUint32(s[2064:], edc(s[:2064]))
			eccGenerate(s)
			continue
		}
		sub := []byte{0, 0, 8, 0, 0, 0, 8, 0}
		copy(s[16:], sub)
		copy(s[24:], data)
		binary.LittleEndian.PutUint32(s[2072:], edc(s[16:2072]))
		eccGenerate(s) // with a zero header for mode 2 form 1
		if s[12] != bcd(a/75/60) {
			panic("header not restored")
		}
	}
	return out
}

func TestCHDRawCDFrames(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso[:8<<20]
	if testing.Short() {
		src = iso[:2<<20]
	}
	dir := t.TempDir()
	for _, tc := range []struct {
		mode  int
		cue   string
		track string
	}{
		{1, "MODE1/2352", "MODE1_RAW"},
		{2, "MODE2/2352", "MODE2_RAW"},
	} {
		t.Run(tc.track, func(t *testing.T) {
			bin := filepath.Join(dir, fmt.Sprintf("m%d.bin", tc.mode))
			if err := os.WriteFile(bin, rawFrames(src, tc.mode), 0o644); err != nil {
				t.Fatal(err)
			}
			cue := filepath.Join(dir, fmt.Sprintf("m%d.cue", tc.mode))
			text := fmt.Sprintf("FILE \"%s\" BINARY\n  TRACK 01 %s\n    INDEX 01 00:00:00\n", filepath.Base(bin), tc.cue)
			if err := os.WriteFile(cue, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, codec := range []string{"cdzl", "cdlz"} {
				out := filepath.Join(dir, fmt.Sprintf("m%d-%s.chd", tc.mode, codec))
				chdmanRun(t, "createcd", "-i", cue, "-o", out, "-c", codec)
				im := openPath(t, out, Options{})
				if tr := im.Info().Tracks; len(tr) != 1 || tr[0].Type != tc.track {
					t.Fatalf("tracks %+v, want one %s", tr, tc.track)
				}
				sameBytes(t, im, src)
				// The data SHA-1 covers whole frames, ECC included:
				// chdman drops the ECC it can regenerate, so this
				// checks the regenerated ECC too.
				if got, want, ok, err := im.VerifyData(); !ok || err != nil || got != want {
					t.Fatalf("%s: data SHA-1 %s, header %s, %v", codec, got, want, err)
				}
				{
					c := im.chd
					e := c.entries[3]
					if e.typ > compType3 {
						t.Fatalf("hunk 3 has type %d", e.typ)
					}
					b := make([]byte, 1)
					c.r.ReadAt(b, int64(e.offset))
					if b[0] == 0 {
						t.Fatalf("%s: chdman stored the ECC of hunk 3 (bitmap %#x): the regeneration is not exercised", codec, b[0])
					}
				}
			}
		})
	}
}
