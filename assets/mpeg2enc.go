package assets

import (
	"encoding/binary"
	"fmt"
)

// A minimal deterministic MPEG-2 video encoder (ISO/IEC 13818-2), for the
// synthetic PSS videos: main profile at main level, 4:2:0, progressive,
// intra-only. Every 8×8 block holds its DC coefficient only, so each
// macroblock is one flat shade (see PSSShade). A few bytes per macroblock,
// yet a stream any MPEG-2 decoder plays.

// The synthetic video's picture size and length.
const (
	PSSWidth    = 64
	PSSHeight   = 48
	PSSPictures = 5
)

// PSSShade is the Y, Cb and Cr of macroblock (mbx, mby) of picture pic of
// the synthetic video: flat, and different from picture to picture. Y stays
// in video range (16..235) so that a decoder's output shows it unchanged.
func PSSShade(pic, mbx, mby int) (y, cb, cr byte) {
	y = byte(24 + (pic*53+mbx*37+mby*71)%200)
	cb = byte(96 + (pic*16+mbx*8)%64)
	cr = byte(160 - (pic*8+mby*16)%64)
	return
}

// bitWriter appends bits most significant first.
type bitWriter struct {
	b    []byte
	acc  uint64
	nacc uint
}

func (w *bitWriter) put(v uint64, n uint) {
	for n > 0 {
		k := min(n, 32)
		n -= k
		w.acc = w.acc<<k | (v>>n)&(1<<k-1)
		w.nacc += k
		for w.nacc >= 8 {
			w.nacc -= 8
			w.b = append(w.b, byte(w.acc>>w.nacc))
		}
	}
}

// startCode zero-pads to a byte boundary (next_start_code) and writes the
// start code 00 00 01 code.
func (w *bitWriter) startCode(code byte) {
	if w.nacc > 0 {
		w.put(0, 8-w.nacc)
	}
	w.b = append(w.b, 0, 0, 1, code)
}

// vlc is a variable-length code: value and length in bits.
type vlc struct {
	code uint64
	n    uint
}

// dcSizeLuma and dcSizeChroma are dct_dc_size_luminance and
// dct_dc_size_chrominance (ISO/IEC 13818-2 tables B.12 and B.13), by size.
var (
	dcSizeLuma = [12]vlc{{0b100, 3}, {0b00, 2}, {0b01, 2}, {0b101, 3}, {0b110, 3}, {0b1110, 4},
		{0b11110, 5}, {0b111110, 6}, {0b1111110, 7}, {0b11111110, 8}, {0b111111110, 9}, {0b111111111, 9}}
	dcSizeChroma = [12]vlc{{0b00, 2}, {0b01, 2}, {0b10, 2}, {0b110, 3}, {0b1110, 4}, {0b11110, 5},
		{0b111110, 6}, {0b1111110, 7}, {0b11111110, 8}, {0b111111110, 9}, {0b1111111110, 10}, {0b1111111111, 10}}
)

// intraDC writes an intra block holding DC coefficient dc only (8-bit
// intra_dc_precision: dc is the block's sample value) predicted from *pred:
// dct_dc_size, dct_dc_differential, end of block ('10', table B.14).
func (w *bitWriter) intraDC(dc int, pred *int, sizes *[12]vlc) {
	diff := dc - *pred
	*pred = dc
	size := uint(0)
	for a := max(diff, -diff); a > 0; a >>= 1 {
		size++
	}
	w.put(sizes[size].code, sizes[size].n)
	if size > 0 {
		v := diff
		if diff < 0 {
			v = diff + 1<<size - 1
		}
		w.put(uint64(v), size)
	}
	w.put(0b10, 2)
}

// EncodeMPEG2 writes the synthetic video's elementary stream: sequence
// header (PSSWidth×PSSHeight, 4:3, frame_rate_code rateCode) and sequence
// extension, one closed GOP of PSSPictures I pictures, sequence end code.
func EncodeMPEG2(rateCode int) []byte {
	if _, ok := FrameRateOfCode(rateCode); !ok {
		panic(fmt.Sprintf("assets.EncodeMPEG2: frame_rate_code %d", rateCode))
	}
	w := &bitWriter{}
	w.startCode(0xb3) // sequence_header
	w.put(PSSWidth, 12)
	w.put(PSSHeight, 12)
	w.put(2, 4) // aspect_ratio_information 4:3
	w.put(uint64(rateCode), 4)
	w.put(15000, 18)  // bit_rate_value (×400 bit/s)
	w.put(1, 1)       // marker
	w.put(112, 10)    // vbv_buffer_size_value (×16 kbit)
	w.put(0, 3)       // constrained_parameters, load_intra/non_intra_quantiser_matrix
	w.startCode(0xb5) // sequence_extension
	w.put(1, 4)       // extension_start_code_identifier
	w.put(0x48, 8)    // profile_and_level: main profile, main level
	w.put(1, 1)       // progressive_sequence
	w.put(1, 2)       // chroma_format 4:2:0
	w.put(0, 2+2+12)  // horizontal/vertical_size_extension, bit_rate_extension
	w.put(1, 1)       // marker
	w.put(0, 8)       // vbv_buffer_size_extension
	w.put(1, 1)       // low_delay: no B pictures
	w.put(0, 2+5)     // frame_rate_extension_n, _d
	w.startCode(0xb8) // group_of_pictures_header
	w.put(0, 1+5+6)   // time_code: drop_frame_flag, hours, minutes
	w.put(1, 1)       // marker
	w.put(0, 6+6)     // seconds, pictures
	w.put(1, 1)       // closed_gop
	w.put(0, 1)       // broken_link
	for pic := range PSSPictures {
		w.startCode(0x00) // picture_header
		w.put(uint64(pic), 10)
		w.put(1, 3)       // picture_coding_type I
		w.put(0xffff, 16) // vbv_delay (variable bit rate)
		w.put(0, 1)       // extra_bit_picture
		w.startCode(0xb5) // picture_coding_extension
		w.put(8, 4)       // extension_start_code_identifier
		w.put(0xffff, 16) // f_code[0..1][0..1]: unused in I pictures
		w.put(0, 2)       // intra_dc_precision: 8 bits
		w.put(3, 2)       // picture_structure: frame
		// top_field_first 0, frame_pred_frame_dct 1, concealment_motion_vectors 0,
		// q_scale_type 0, intra_vlc_format 0, alternate_scan 0,
		// repeat_first_field 0, chroma_420_type 1, progressive_frame 1,
		// composite_display_flag 0.
		w.put(0b0100000110, 10)
		for mby := range PSSHeight / 16 {
			w.startCode(byte(mby + 1)) // slice: slice_vertical_position
			w.put(8, 5)                // quantiser_scale_code (unused by DC-only blocks)
			w.put(0, 1)                // extra_bit_slice
			py, pcb, pcr := 128, 128, 128
			for mbx := range PSSWidth / 16 {
				w.put(1, 1) // macroblock_address_increment 1
				w.put(1, 1) // macroblock_type: intra
				y, cb, cr := PSSShade(pic, mbx, mby)
				for range 4 {
					w.intraDC(int(y), &py, &dcSizeLuma)
				}
				w.intraDC(int(cb), &pcb, &dcSizeChroma)
				w.intraDC(int(cr), &pcr, &dcSizeChroma)
			}
		}
	}
	w.startCode(0xb7) // sequence_end_code
	return w.b
}

// pictureStarts are the offsets of es's picture start codes (EncodeMPEG2's
// stream holds no other 00 00 01 00).
func pictureStarts(es []byte) []int {
	var at []int
	for i := 0; i+3 < len(es); i++ {
		if es[i] == 0 && es[i+1] == 0 && es[i+2] == 1 {
			if es[i+3] == 0 {
				at = append(at, i)
			}
			i += 3
		}
	}
	return at
}

// pssVideoPacks writes the video part of a PSS: one pack per picture, each a
// pack header (SCR one frame before the picture's PTS; stuff stuffing bytes
// in the first) and a video PES packet (stream 0xe0) with the picture's PTS.
// The first packet also holds the sequence and GOP headers, the last the
// sequence end code. Several packs of video are also what ffmpeg's program
// stream probe wants to see before it believes one.
func pssVideoPacks(rateCode, stuff int) []byte {
	es := EncodeMPEG2(rateCode)
	r, _ := FrameRateOfCode(rateCode)
	frame := uint64(90000 * r.Den / r.Num) // 90 kHz ticks (3003 at 29.97)
	starts := append(pictureStarts(es)[1:], len(es))
	var out []byte
	from := 0
	for k, to := range starts {
		out = appendPackHeader(out, uint64(k)*frame, stuff)
		stuff = 0
		out = appendPES(out, es[from:to], uint64(k+1)*frame)
		from = to
	}
	return out
}

// appendPackHeader appends an MPEG-2 pack header: SCR scr (90 kHz, extension
// 0), program_mux_rate 25200 (×50 bytes/s), stuff stuffing bytes (0..7).
func appendPackHeader(out []byte, scr uint64, stuff int) []byte {
	w := &bitWriter{b: append(out, 0, 0, 1, 0xba)}
	w.put(1, 2)
	w.put(scr>>30, 3)
	w.put(1, 1)
	w.put(scr>>15, 15)
	w.put(1, 1)
	w.put(scr, 15)
	w.put(1, 1)
	w.put(0, 9) // SCR extension
	w.put(1, 1)
	w.put(25200, 22)
	w.put(3, 2)
	w.put(0x1f, 5)
	w.put(uint64(stuff), 3)
	for range stuff {
		w.put(0xff, 8)
	}
	return w.b
}

// appendPES appends a video PES packet (stream 0xe0) with PTS pts (90 kHz)
// holding es (at most 0xffff-8 bytes).
func appendPES(out []byte, es []byte, pts uint64) []byte {
	out = append(out, 0, 0, 1, 0xe0)
	out = binary.BigEndian.AppendUint16(out, uint16(3+5+len(es)))
	out = append(out, 0x84, 0x80, 5, // data_alignment_indicator; PTS only
		byte(0x21|pts>>29&0x0e), byte(pts>>22), byte(pts>>14|1), byte(pts>>7), byte(pts<<1|1))
	return append(out, es...)
}
