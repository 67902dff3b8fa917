package mesh

import (
	"encoding/binary"
	"fmt"
)

// VIF command lists (LEVEL-CORE §2.0): the moby, shrub and tfrag packets
// are lists of VIF1 commands whose UNPACK payloads carry the geometry.

// UNPACK formats (vn/vl, bits 24–27 of the code) the mesh formats use.
const (
	V2_16 = 0x5
	V3_16 = 0x9
	V4_32 = 0xc
	V4_16 = 0xd
	V4_8  = 0xe
)

// Unpack is one UNPACK command of a VIF list: its format, element count,
// VU address, and its payload (num elements, without the padding to 4).
type Unpack struct {
	Format int   // vn/vl
	Num    int   // elements (the code's 0 is 256)
	Addr   int   // VU address in qwords (bits 0–9)
	Offset int64 // of the code, relative to the block
	Data   []byte
}

// STROW is a STROW command's four words and the code's offset.
type STROW struct {
	Offset int64
	Row    [4]int32
}

// VIFList is what a reader takes from a VIF command list: its UNPACKs in
// order, and its STROWs (tfrags read one).
type VIFList struct {
	Unpacks []Unpack
	Rows    []STROW
}

// unpackElementSize is the bytes of one element of format f (vn/vl).
func unpackElementSize(f int) int {
	vl, vn := f&3, f>>2
	return ((32 >> vl) * (vn + 1)) / 8
}

// ReadVIFList walks the VIF command list b[off:off+size] of block b. A list
// that runs outside b, or a command whose length runs outside the list, is
// an *Error naming what; a code of a kind Wrench does not know ends the
// list (LEVEL-CORE §2.0), as does the list's end.
func ReadVIFList(what string, b []byte, off, size int64) (*VIFList, error) {
	if off < 0 || size < 0 || off > int64(len(b)) || size > int64(len(b))-off {
		return nil, &Error{What: what, Offset: off, Reason: fmt.Sprintf("VIF list of %d bytes runs outside the block's %d", size, len(b))}
	}
	l := &VIFList{}
	end := off + size
	for at := off; at+4 <= end; {
		code := binary.LittleEndian.Uint32(b[at:])
		imm := int64(code & 0xffff)
		num := int64(code>>16) & 0xff
		cmd := int(code>>24) & 0x7f
		var n int64 // command bytes, code included
		switch {
		case cmd&0x60 == 0x60: // UNPACK
			f := int(code>>24) & 0xf
			if num == 0 {
				num = 256
			}
			payload := num * int64(unpackElementSize(f))
			n = 4 + (payload+3)&^3
			if n > end-at {
				return nil, &Error{What: what, Offset: at, Reason: fmt.Sprintf("UNPACK of %d elements (%d bytes) runs past its VIF list's end at %#x", num, payload, end)}
			}
			l.Unpacks = append(l.Unpacks, Unpack{Format: f, Num: int(num), Addr: int(code & 0x3ff), Offset: at, Data: b[at+4 : at+4+payload]})
		case cmd <= 0x07 || cmd == 0x10 || cmd == 0x11 || (cmd >= 0x13 && cmd <= 0x15) || cmd == 0x17:
			n = 4
		case cmd == 0x20: // STMASK
			n = 8
		case cmd == 0x30 || cmd == 0x31: // STROW, STCOL
			n = 20
		case cmd == 0x4a: // MPG
			if num == 0 {
				num = 256
			}
			n = 4 + num*8
		case cmd == 0x50 || cmd == 0x51: // DIRECT, DIRECTHL
			if imm == 0 {
				imm = 65536
			}
			n = 4 + imm*16
		default:
			return l, nil
		}
		if n > end-at {
			return nil, &Error{What: what, Offset: at, Reason: fmt.Sprintf("VIF command %#x of %d bytes runs past its list's end at %#x", cmd, n, end)}
		}
		if cmd == 0x30 {
			var r STROW
			r.Offset = at
			for i := range r.Row {
				r.Row[i] = int32(binary.LittleEndian.Uint32(b[at+4+4*int64(i):]))
			}
			l.Rows = append(l.Rows, r)
		}
		at += n
	}
	return l, nil
}

// AppendUnpack appends an UNPACK of format f at VU address addr with the
// given payload (whole elements) to a VIF list, padded to 4 bytes; signed,
// VIF1 TOPS added, as Wrench writes them.
func AppendUnpack(list []byte, f, addr int, payload []byte) []byte {
	num := len(payload) / unpackElementSize(f)
	code := uint32(addr&0x3ff) | 1<<15 | uint32(num&0xff)<<16 | uint32(0x60|f)<<24
	list = binary.LittleEndian.AppendUint32(list, code)
	list = append(list, payload...)
	for len(list)%4 != 0 {
		list = append(list, 0)
	}
	return list
}
