package assets

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"image/color"
	"testing"
)

// walkPSS checks a program stream's structure independently: pack header,
// packets sized by their length fields, program end code exactly at the end.
func walkPSS(t *testing.T, b []byte) (videoPayload []byte) {
	t.Helper()
	if len(b) < 14 || !bytes.Equal(b[:4], []byte{0, 0, 1, 0xba}) || b[4]>>6 != 1 {
		t.Fatalf("no MPEG-2 pack header")
	}
	off := 14 + int(b[13]&7)
	for {
		if off+4 > len(b) || !bytes.Equal(b[off:off+3], []byte{0, 0, 1}) {
			t.Fatalf("no start code at %#x", off)
		}
		id := b[off+3]
		if id == 0xb9 {
			if off+4 != len(b) {
				t.Fatalf("end code at %#x of %#x", off, len(b))
			}
			return videoPayload
		}
		n := int(binary.BigEndian.Uint16(b[off+4:]))
		body := b[off+6 : off+6+n]
		switch id {
		case 0xe0:
			videoPayload = body[3+int(body[2]):]
		case 0xbe:
			for _, c := range body {
				if c != 0xff {
					t.Fatalf("padding byte %#x", c)
				}
			}
		default:
			t.Fatalf("stream id %#x", id)
		}
		off += 6 + n
	}
}

func TestPSSWriterAndFrameRate(t *testing.T) {
	for code := 1; code <= 8; code++ {
		want, _ := FrameRateOfCode(code)
		for _, size := range []int{MinPSSSize, MinPSSSize + 1, MinPSSSize + 5, MinPSSSize + 6, MinPSSSize + 7, 2048, 65541 + MinPSSSize + 3, 300000} {
			b := WritePSS(size, code)
			if len(b) != size {
				t.Fatalf("code %d: WritePSS(%d) wrote %d", code, size, len(b))
			}
			if !IsPSS(b) {
				t.Fatal("IsPSS false")
			}
			payload := walkPSS(t, b)
			sh, err := ParseSequenceHeader(payload)
			if err != nil || sh.Width != 512 || sh.Height != 448 || sh.RateCode != code || sh.ExtN != 0 || sh.ExtD != 0 {
				t.Fatalf("sequence header %+v %v", sh, err)
			}
			got, err := FindFrameRate(bytes.NewReader(b), int64(len(b)))
			if err != nil || got != want {
				t.Fatalf("code %d size %d: rate %v, %v; want %v", code, size, got, err, want)
			}
		}
	}
	if r, _ := FrameRateOfCode(4); r != (Rate{30000, 1001}) || r.String() != "30000/1001" || DefaultFrameRate != r {
		t.Errorf("code 4 is %v", r)
	}
	if r, _ := FrameRateOfCode(3); r.String() != "25" || r.FPS() != 25 {
		t.Errorf("code 3 is %v", r)
	}
}

func TestFrameRateAbsent(t *testing.T) {
	b := WritePSS(4096, 3)
	i := bytes.Index(b, []byte{0, 0, 1, 0xb3})
	noSeq := bytes.Clone(b)
	noSeq[i+3] = 0xb2 // user data start code instead
	r, err := FindFrameRate(bytes.NewReader(noSeq), int64(len(noSeq)))
	if !errors.Is(err, ErrNoSequenceHeader) || r != DefaultFrameRate {
		t.Fatalf("no sequence header: %v %v", r, err)
	}
	reserved := bytes.Clone(b)
	reserved[i+7] = reserved[i+7]&0xf0 | 0x0e
	r, err = FindFrameRate(bytes.NewReader(reserved), int64(len(reserved)))
	var fe *FormatError
	if !errors.Is(err, ErrNoSequenceHeader) || r != DefaultFrameRate || !errors.As(err, &fe) || fe.Offset != int64(i+7) {
		t.Fatalf("reserved code: %v %v", r, err)
	}
	// A sequence header past the search limit is not looked for.
	far := append(make([]byte, SequenceSearchLimit), b...)
	if _, err := FindFrameRate(bytes.NewReader(far), int64(len(far))); !errors.Is(err, ErrNoSequenceHeader) {
		t.Fatalf("far header: %v", err)
	}
	// Cut in the middle of the header.
	if _, err := FrameRateIn(b[:i+8]); !errors.Is(err, ErrNoSequenceHeader) {
		t.Fatalf("cut header: %v", err)
	}
}

func TestSequenceExtensionRate(t *testing.T) {
	// 30000/1001 with frame_rate_extension n=1, d=0: doubled.
	seq := []byte{0, 0, 1, 0xb3, 0x20, 0x01, 0xc0, 0x24, 0x0e, 0xa6, 0x23, 0x80, 0, 0, 1, 0xb5, 0x14, 0x82, 0, 1, 0, 0x20}
	sh, err := ParseSequenceHeader(seq)
	if err != nil || sh.ExtN != 1 || sh.Rate != (Rate{60000, 1001}) {
		t.Fatalf("%+v %v", sh, err)
	}
	// With an intra matrix loaded, the extension sits 64 bytes later.
	m := append([]byte{0, 0, 1, 0xb3, 0x20, 0x01, 0xc0, 0x23, 0x0e, 0xa6, 0x23, 0x82}, make([]byte, 64)...)
	m = append(m, 0, 0, 1, 0xb5, 0x14, 0x82, 0, 1, 0, 0x01) // d = 1: halved
	sh, err = ParseSequenceHeader(m)
	if err != nil || sh.ExtD != 1 || sh.Rate != (Rate{25, 2}) {
		t.Fatalf("%+v %v", sh, err)
	}
}

func TestIRX(t *testing.T) {
	b := WriteIRX(4096, "sio2man")
	if len(b) != 4096 || !IsELF(b) || IsELF(b[1:]) {
		t.Fatal("IRX magic/size")
	}
	f, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("debug/elf: %v", err)
	}
	if f.Class != elf.ELFCLASS32 || f.Data != elf.ELFDATA2LSB || f.Machine != elf.EM_MIPS || f.Type != elf.Type(0xff80) {
		t.Fatalf("ELF header %+v", f.FileHeader)
	}
	if !bytes.Contains(b, []byte("sio2man\x00")) {
		t.Fatal("name missing")
	}
}

func TestMagics(t *testing.T) {
	if !IsPIF([]byte("2FIPxxxx")) || IsPIF([]byte("2FI")) || !IsVAG([]byte("VAGp")) || IsVAG(nil) || IsPSS([]byte{0, 0, 1, 0xb3}) {
		t.Fatal("magic checks")
	}
	for want, b := range map[Kind][]byte{
		KindPIF: WritePIF(1, 1, 4, nil, []byte{0}), KindVAG: EncodeVAG(nil, 8000, ""), KindPSS: WritePSS(MinPSSSize, 1),
		KindELF: WriteIRX(64, "x"), KindUnknown: WriteSubtitles(nil),
	} {
		if got := Sniff(b); got != want {
			t.Errorf("Sniff = %v, want %v", got, want)
		}
	}
	ph, _ := ParsePIFHeader(WritePIF(64, 32, 4, nil, make([]byte, 64*32)))
	vh, _ := ParseVAGHeader(EncodeVAG(make([]int16, 28*100), 22050, "beep"), 0x30+1600)
	bh, _ := StatRGBABlob(bytes.NewReader(WriteRGBABlob(3, 2, make([]color.RGBA, 6))), 16+24)
	if ph.String() != "PIF 64x32, 4-bit (16 colours), 1 mip levels" || vh.String() != `VAG "beep", 22050 Hz, 100 frames (2800 samples, 0.127 s)` || bh.String() != "RGBA 3x2" {
		t.Errorf("descriptions: %q %q %q", ph, vh, bh)
	}
	if Sniff([]byte{0, 0, 1}) != KindUnknown || KindVAG.String() != "vag" {
		t.Error("Sniff of a short prefix")
	}
}
