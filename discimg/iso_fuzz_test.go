package discimg

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"testing"

	"gcfs/discimg/isowriter"
)

const systemArea = 16 * SectorSize

// afterSystemArea is an image whose 16 system-area sectors are zeros and whose
// remaining bytes are data.
type afterSystemArea []byte

func (d afterSystemArea) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, errors.New("negative offset")
	}
	size := int64(len(d)) + systemArea
	if off >= size {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && off+int64(n) < systemArea {
		p[n] = 0
		n++
	}
	if off+int64(n) >= systemArea {
		n += copy(p[n:], d[off+int64(n)-systemArea:])
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// maxFuzzSectors bounds the sectors a fuzz input expands to.
const maxFuzzSectors = 256

// expandSectors turns a fuzz input into the sectors from 16 on: each sector is
// a little-endian u16 length and that many bytes, zero-filled to 2048 (the
// last may be cut short: a truncated image). Directory and descriptor sectors
// are mostly zeros, so inputs stay small and the fuzzer's mutations land on
// bytes that mean something.
func expandSectors(data []byte) []byte {
	var img []byte
	for len(data) >= 2 && len(img) < maxFuzzSectors*SectorSize {
		n := int(data[0]) | int(data[1])<<8
		data = data[2:]
		last := n > len(data) || n > SectorSize
		n = min(n, len(data), SectorSize)
		sec := make([]byte, SectorSize)
		copy(sec, data[:n])
		data = data[n:]
		if last {
			img = append(img, sec[:n]...)
			break
		}
		img = append(img, sec...)
	}
	return img
}

// compactSectors is expandSectors' inverse for whole sectors.
func compactSectors(img []byte) []byte {
	var out []byte
	for len(img) > 0 {
		sec := img[:min(SectorSize, len(img))]
		img = img[len(sec):]
		n := len(sec)
		for n > 0 && sec[n-1] == 0 {
			n--
		}
		out = append(out, byte(n), byte(n>>8))
		out = append(out, sec[:n]...)
	}
	return out
}

func fuzzSeed(t testing.TB, files []isowriter.File, opt isowriter.Options) []byte {
	img, err := os.ReadFile(writeISO(t, files, opt))
	if err != nil {
		t.Fatal(err)
	}
	return compactSectors(img[systemArea:])
}

func FuzzOpen(f *testing.F) {
	f.Add(fuzzSeed(f, []isowriter.File{
		file("SYSTEM.CNF", []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\nVER = 1.01\n")),
		file("SCUS_972.68", []byte("\x7fELF....")),
		file("G/A.WAD", []byte("WAD")),
		file("G/SUB/B", nil),
	}, isowriter.Options{VolumeID: "V"}))
	var many []isowriter.File
	for i := 0; i < 70; i++ {
		many = append(many, file("D/F"+strings.Repeat("X", i%20)+string(rune('A'+i%26))+string(rune('A'+i/26))+".BIN", []byte{byte(i)}))
	}
	f.Add(fuzzSeed(f, many, isowriter.Options{}))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		img := expandSectors(data)
		r := afterSystemArea(img)
		size := int64(len(img)) + systemArea
		im, err := Open(r, size)
		if err != nil {
			if !errors.Is(err, ErrNotISO) && !errors.Is(err, ErrFormat) {
				t.Fatalf("Open: unexpected error kind: %v", err)
			}
			return
		}
		n := 0
		var check func(e *Entry)
		check = func(e *Entry) {
			n++
			if n > maxEntries+1 {
				t.Fatalf("more than %d entries", maxEntries)
			}
			if got, ok := im.Lookup(e.Path); !ok || got != e {
				t.Fatalf("Lookup(%q) does not return its entry", e.Path)
			}
			if e != im.Root && (e.Name == "" || strings.ContainsAny(e.Name, "/\x00") || e.Name == "." || e.Name == "..") {
				t.Fatalf("bad name %q", e.Name)
			}
			if !e.IsDir && e.Err == nil && e.Size > 0 && e.Offset()+e.Size > size {
				t.Fatalf("%s reaches past the image without an error", e.Path)
			}
			var lost *EntriesLostError
			if e.Err != nil && len(e.Children) > 0 && !errors.As(e.Err, &lost) {
				t.Fatalf("%s has an error and children", e.Path)
			}
			names := map[string]bool{}
			for _, c := range e.Children {
				if names[c.Name] {
					t.Fatalf("duplicate %s", c.Path)
				}
				names[c.Name] = true
				want := c.Name
				if e.Path != "" {
					want = e.Path + "/" + c.Name
				}
				if c.Path != want {
					t.Fatalf("path %q under %q", c.Path, e.Path)
				}
				check(c)
			}
		}
		check(im.Root)
		if _, err := im.Identify(false); err != nil {
			t.Fatalf("Identify: %v", err)
		}
	})
}

func TestFuzzSeedsExpandToImages(t *testing.T) {
	files := []isowriter.File{file("A.BIN", []byte("abc")), file("D/B.BIN", bytes.Repeat([]byte{1}, 5000))}
	im0 := openFile(t, writeISO(t, files, isowriter.Options{}))
	seed := fuzzSeed(t, files, isowriter.Options{})
	img := expandSectors(seed)
	if int64(len(img))+systemArea != im0.Size {
		t.Fatalf("expanded to %d bytes, want %d", int64(len(img))+systemArea, im0.Size)
	}
	im, err := Open(afterSystemArea(img), im0.Size)
	if err != nil || len(im.Problems) != 0 {
		t.Fatalf("Open: %v %v", err, im.Problems)
	}
	if e, ok := im.Lookup("D/B.BIN"); !ok || e.Size != 5000 {
		t.Errorf("D/B.BIN: %+v", e)
	}
	if int64(len(seed)) > (im0.Size-systemArea)/2 {
		t.Errorf("seed is %d bytes for a %d-byte image", len(seed), im0.Size)
	}
}

func TestAfterSystemAreaReader(t *testing.T) {
	data := []byte("abc")
	r := afterSystemArea(data)
	p := make([]byte, 5)
	n, err := r.ReadAt(p, systemArea-2)
	if n != 5 || err != nil || !bytes.Equal(p, []byte{0, 0, 'a', 'b', 'c'}) {
		t.Errorf("got %d %v %q", n, err, p)
	}
	n, err = r.ReadAt(p, systemArea+1)
	if n != 2 || err != io.EOF {
		t.Errorf("got %d %v", n, err)
	}
}
