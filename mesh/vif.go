package mesh

import (
	"encoding/binary"
	"errors"
	"fmt"

	"gcfs/mesh/vif"
)

// VIF command lists (LEVEL-CORE §2.0) as the class readers take them: the
// UNPACKs of a list inside a class block, read by package vif, with offsets
// relative to the block.

// UNPACK formats the class formats use (package vif's).
const (
	V2_16 = vif.V2_16
	V3_16 = vif.V3_16
	V4_32 = vif.V4_32
	V4_16 = vif.V4_16
	V4_8  = vif.V4_8
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

// VIFList is a list's UNPACKs in order.
type VIFList struct {
	Unpacks []Unpack
}

// ReadVIFList reads the VIF command list b[off:off+size] of block b. A list
// that runs outside b, or a command whose length runs outside the list, is
// an *Error naming what and the block offset.
func ReadVIFList(what string, b []byte, off, size int64) (*VIFList, error) {
	if off < 0 || size < 0 || off > int64(len(b)) || size > int64(len(b))-off {
		return nil, &Error{What: what, Offset: off, Reason: fmt.Sprintf("VIF list of %d bytes runs outside the block's %d", size, len(b))}
	}
	cmds, err := vif.Parse(b[off : off+size])
	if err != nil {
		var ve *vif.Error
		if errors.As(err, &ve) {
			return nil, &Error{What: what, Offset: off + ve.Offset, Reason: ve.Reason + " in its VIF list"}
		}
		return nil, &Error{What: what, Offset: off, Reason: err.Error()}
	}
	u := vif.Unpacks(cmds)
	l := &VIFList{Unpacks: make([]Unpack, 0, len(u))}
	for _, c := range u {
		l.Unpacks = append(l.Unpacks, Unpack{Format: c.Format(), Num: c.Num(), Addr: c.Addr(), Offset: off + c.Offset, Data: c.Payload})
	}
	return l, nil
}

// AppendUnpack appends an UNPACK of format f at VU address addr with the
// given payload (whole elements) to a VIF list, padded to 4 bytes; signed,
// VIF1 TOPS added, as Wrench writes them.
func AppendUnpack(list []byte, f, addr int, payload []byte) []byte {
	num := len(payload) / vif.ElementSize(f)
	code := uint32(addr&0x3ff) | 1<<15 | uint32(num&0xff)<<16 | uint32(0x60|f)<<24
	list = binary.LittleEndian.AppendUint32(list, code)
	list = append(list, payload...)
	for len(list)%4 != 0 {
		list = append(list, 0)
	}
	return list
}
