package assets

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"fmt"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// walkPSS checks a program stream's structure independently: packs (each an
// MPEG-2 pack header and one video PES packet with a PTS, PTSs rising), then
// padding packets sized by their length fields, program end code exactly at
// the end. It returns the video payloads and the padding packets' bodies,
// each joined.
func walkPSS(t *testing.T, b []byte) (videoPayload, padding []byte) {
	t.Helper()
	if !IsPSS(b) {
		t.Fatalf("no pack header")
	}
	off, packs, videos, lastPTS := 0, 0, 0, int64(-1)
	for {
		if off+4 > len(b) || !bytes.Equal(b[off:off+3], []byte{0, 0, 1}) {
			t.Fatalf("no start code at %#x", off)
		}
		id := b[off+3]
		if id == 0xb9 {
			if off+4 != len(b) {
				t.Fatalf("end code at %#x of %#x", off, len(b))
			}
			if videos != PSSPictures || packs != videos {
				t.Fatalf("%d video packets in %d packs", videos, packs)
			}
			return videoPayload, padding
		}
		if id == 0xba {
			if off+14 > len(b) || b[off+4]>>6 != 1 || padding != nil {
				t.Fatalf("pack header at %#x", off)
			}
			packs++
			off += 14 + int(b[off+13]&7)
			continue
		}
		if off+6 > len(b) {
			t.Fatalf("packet header cut at %#x", off)
		}
		n := int(binary.BigEndian.Uint16(b[off+4:]))
		if off+6+n > len(b) {
			t.Fatalf("packet at %#x runs past the end", off)
		}
		body := b[off+6 : off+6+n]
		switch id {
		case 0xe0:
			if videos++; padding != nil || videos != packs {
				t.Fatalf("video packet at %#x after padding, or a second in its pack", off)
			}
			if len(body) < 8 || body[0]>>6 != 2 || body[1]>>6 != 2 || body[2] != 5 || body[3]>>4 != 2 || body[3]&1 != 1 {
				t.Fatalf("PES header % x: want MPEG-2 with a PTS", body[:min(8, len(body))])
			}
			p := body[3:]
			pts := int64(p[0]>>1&7)<<30 | int64(p[1])<<22 | int64(p[2]>>1)<<15 | int64(p[3])<<7 | int64(p[4]>>1)
			if pts <= lastPTS {
				t.Fatalf("PTS %d after %d", pts, lastPTS)
			}
			lastPTS = pts
			videoPayload = append(videoPayload, body[3+int(body[2]):]...)
		case 0xbe:
			padding = append(padding, body...)
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
			payload, padding := walkPSS(t, b)
			if len(bytes.Trim(padding, "\xff")) != 0 {
				t.Fatalf("padding not 0xff")
			}
			if !bytes.Equal(payload, EncodeMPEG2(code)) {
				t.Fatal("the video packet does not hold EncodeMPEG2")
			}
			sh, err := ParseSequenceHeader(payload)
			if err != nil || sh.Width != PSSWidth || sh.Height != PSSHeight || sh.RateCode != code || sh.ExtN != 0 || sh.ExtD != 0 || sh.Rate != want {
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

// TestMPEG2Structure reads the elementary stream's start codes in order and
// checks the headers' fields a decoder needs: sequence header and extension
// (main profile, main level, progressive, 4:2:0), a closed GOP, then per
// picture a picture header (I, temporal reference counting) and picture coding
// extension (8-bit DC, frame, frame_pred_frame_dct, progressive) and one
// slice per macroblock row, then the sequence end code.
func TestMPEG2Structure(t *testing.T) {
	es := EncodeMPEG2(4)
	var codes []byte
	var at []int
	for i := 0; i+3 < len(es); i++ {
		if es[i] == 0 && es[i+1] == 0 && es[i+2] == 1 {
			codes, at = append(codes, es[i+3]), append(at, i+4)
			i += 3
		}
	}
	want := []byte{0xb3, 0xb5, 0xb8}
	for range PSSPictures {
		want = append(want, 0x00, 0xb5)
		for row := range PSSHeight / 16 {
			want = append(want, byte(row+1))
		}
	}
	want = append(want, 0xb7)
	if !bytes.Equal(codes, want) {
		t.Fatalf("start codes % x\nwant        % x", codes, want)
	}
	if at[len(at)-1] != len(es) {
		t.Fatal("the sequence end code is not last")
	}
	if x := es[at[1]:]; x[0] != 0x14 || x[1] != 0x8a || x[3]&1 != 1 {
		t.Fatalf("sequence extension % x", x[:6])
	}
	if g := es[at[2]:]; g[3]&0x40 == 0 || g[1]&0x08 == 0 {
		t.Fatalf("GOP header % x: not closed, or no marker", g[:4])
	}
	for pic := range PSSPictures {
		k := 3 + pic*(2+PSSHeight/16)
		h, x := es[at[k]:], es[at[k+1]:]
		if tr, typ := int(h[0])<<2|int(h[1]>>6), h[1]>>3&7; tr != pic || typ != 1 {
			t.Fatalf("picture %d: temporal_reference %d, type %d", pic, tr, typ)
		}
		// extension id 8, f_codes 0xffff, then dc precision 0, structure 3,
		// tff 0, frame_pred_frame_dct 1, cmv 0, qst 0, ivf 0, as 0, rff 0,
		// chroma_420_type 1, progressive_frame 1, composite 0.
		if x[0] != 0x8f || x[1] != 0xff || x[2] != 0xf3 || x[3] != 0x41 || x[4]&0xc0 != 0x80 {
			t.Fatalf("picture %d coding extension % x", pic, x[:5])
		}
	}
}

// TestPSSPadding: WritePSSPadding's padding packets carry the bytes given,
// in order, then 0xff; the rest is WritePSS's.
func TestPSSPadding(t *testing.T) {
	pad := bytes.Repeat([]byte("\x00\x00\x01\xb3noise"), 30000) // longer than one padding packet
	for _, size := range []int{MinPSSSize, MinPSSSize + 3, MinPSSSize + 100, 200000, 400000} {
		b := WritePSSPadding(size, 5, pad)
		if len(b) != size {
			t.Fatalf("size %d: wrote %d", size, len(b))
		}
		payload, padding := walkPSS(t, b)
		if !bytes.Equal(payload, EncodeMPEG2(5)) {
			t.Fatal("video payload")
		}
		k := min(len(pad), len(padding))
		if !bytes.Equal(padding[:k], pad[:k]) || len(bytes.Trim(padding[k:], "\xff")) != 0 {
			t.Fatalf("size %d: padding does not carry pad then 0xff", size)
		}
	}
}

// TestPSSPlaysInFFmpeg: ffprobe finds one mpeg2video stream of
// PSSWidth×PSSHeight at the coded frame rate, and ffmpeg decodes PSSPictures
// frames whose every sample is the shade PSSShade says (±2), Y, Cb and Cr,
// also with noise that holds start codes in the padding. Without ffprobe the
// test is skipped, unless CI is set.
func TestPSSPlaysInFFmpeg(t *testing.T) {
	for _, tool := range []string{"ffprobe", "ffmpeg"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing (CI is set)", tool)
			}
			t.Skipf("%s is missing", tool)
		}
	}
	noise := make([]byte, 6000)
	for i := range noise {
		noise[i] = byte(i*7 + i>>5)
	}
	copy(noise[100:], []byte{0, 0, 1, 0xb3, 0, 0, 1, 0xba, 0, 0, 1, 0xe0, 0, 0, 1, 0x00})
	dir := t.TempDir()
	for _, c := range []struct {
		code int
		rate string
		b    []byte
	}{{3, "25/1", WritePSS(4096, 3)}, {4, "30000/1001", WritePSSPadding(8192, 4, noise)}, {5, "30/1", WritePSS(MinPSSSize, 5)}} {
		f := filepath.Join(dir, fmt.Sprintf("v%d.pss", c.code))
		if err := os.WriteFile(f, c.b, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command("ffprobe", "-v", "error", "-show_streams", f).CombinedOutput()
		if err != nil {
			t.Fatalf("ffprobe: %v\n%s", err, out)
		}
		for _, want := range []string{"codec_name=mpeg2video", "width=64", "height=48", "r_frame_rate=" + c.rate, "pix_fmt=yuv420p"} {
			if !bytes.Contains(out, []byte("\n"+want+"\n")) {
				t.Fatalf("code %d: ffprobe shows no %s:\n%s", c.code, want, out)
			}
		}
		if n := bytes.Count(out, []byte("[STREAM]")); n != 1 {
			t.Fatalf("ffprobe finds %d streams", n)
		}
		// yuv420p, not gray: gray output is expanded to full range.
		var stderr bytes.Buffer
		cmd := exec.Command("ffmpeg", "-v", "error", "-i", f, "-f", "rawvideo", "-pix_fmt", "yuv420p", "-")
		cmd.Stderr = &stderr
		raw, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("ffmpeg: %v\n%s", err, stderr.Bytes())
		}
		const w, h = PSSWidth, PSSHeight
		frame := w * h * 3 / 2
		if len(raw) != PSSPictures*frame {
			t.Fatalf("code %d: ffmpeg decoded %d bytes, want %d frames of %d", c.code, len(raw), PSSPictures, frame)
		}
		for pic := range PSSPictures {
			fr := raw[pic*frame:]
			check := func(plane string, v, want byte, x, y int) {
				if d := int(v) - int(want); d < -2 || d > 2 {
					t.Fatalf("code %d picture %d %s (%d,%d) = %d, want %d", c.code, pic, plane, x, y, v, want)
				}
			}
			for y := range h {
				for x := range w {
					sy, _, _ := PSSShade(pic, x/16, y/16)
					check("Y", fr[y*w+x], sy, x, y)
				}
			}
			for y := range h / 2 {
				for x := range w / 2 {
					_, cb, cr := PSSShade(pic, x/8, y/8)
					check("Cb", fr[w*h+y*w/2+x], cb, x, y)
					check("Cr", fr[w*h*5/4+y*w/2+x], cr, x, y)
				}
			}
		}
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
