// Package vif reads VIF command lists as the level core's mesh formats hold
// them (LEVEL-CORE §2.0): each command a u32 (bits 0–15 immediate, 16–23
// num, 24–30 cmd, 31 interrupt), UNPACKs followed by their payload, the other
// commands of known length skipped. A list ends at its buffer's end or at a
// command of unknown length (where Wrench's reader stops too). Everything is
// bounds-checked: a command or payload that runs past the buffer is an error
// naming its offset.
package vif

import (
	"encoding/binary"
	"fmt"
)

// Unpack formats (vn << 2 | vl) the mesh formats use.
const (
	V4_32 = 0xc
	V4_16 = 0xd
	V4_8  = 0xe
	V3_16 = 0x9
	V2_16 = 0x5
)

// Command is one VIF command: its code, where it starts in the list, and its
// payload (an UNPACK's elements; STROW's 16 bytes; nil for others).
type Command struct {
	Offset  int64 // of the code, from the list's start
	Code    uint32
	Payload []byte
}

// Cmd is the command number (bits 24–30).
func (c Command) Cmd() byte { return byte(c.Code>>24) & 0x7f }

// Num is the num field (0 means 256 for UNPACK).
func (c Command) Num() int {
	n := int(c.Code>>16) & 0xff
	if n == 0 {
		n = 256
	}
	return n
}

// IsUnpack reports whether the command is an UNPACK.
func (c Command) IsUnpack() bool { return c.Cmd()&0x60 == 0x60 }

// Format is an UNPACK's vn/vl (bits 24–27).
func (c Command) Format() int { return int(c.Code>>24) & 0xf }

// Addr is an UNPACK's VU address in qwords (bits 0–9).
func (c Command) Addr() int { return int(c.Code & 0x3ff) }

// ElementSize is the bytes of one element of an UNPACK format.
func ElementSize(format int) int {
	vl, vn := format&3, format>>2&3
	return (32 >> vl) * (vn + 1) / 8
}

// Error is a list that cannot be read.
type Error struct {
	Offset int64
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("VIF list at %#x: %s", e.Offset, e.Reason) }

// Parse reads the commands of list b.
func Parse(b []byte) ([]Command, error) {
	// (Room for a packet's usual list at once: grown from nil, a list of
	// a few commands cost an allocation a doubling.)
	out := make([]Command, 0, min(8, len(b)/4))
	off := 0
	for off+4 <= len(b) {
		code := binary.LittleEndian.Uint32(b[off:])
		c := Command{Offset: int64(off), Code: code}
		var n int // bytes after the code
		switch cmd := c.Cmd(); {
		case c.IsUnpack():
			n = (c.Num()*ElementSize(c.Format()) + 3) &^ 3
		case cmd <= 0x07, cmd == 0x10, cmd == 0x11, cmd >= 0x13 && cmd <= 0x15, cmd == 0x17:
		case cmd == 0x20: // STMASK
			n = 4
		case cmd == 0x30, cmd == 0x31: // STROW, STCOL
			n = 16
		case cmd == 0x4a: // MPG
			n = c.Num() * 8
		case cmd == 0x50, cmd == 0x51: // DIRECT, DIRECTHL
			imm := int(code & 0xffff)
			if imm == 0 {
				imm = 65536
			}
			n = imm * 16
		default:
			return out, nil // unknown: the list ends here
		}
		if n > len(b)-off-4 {
			return out, &Error{Offset: int64(off), Reason: fmt.Sprintf("command %#08x needs %d bytes, %d are left", code, n, len(b)-off-4)}
		}
		if c.IsUnpack() {
			c.Payload = b[off+4 : off+4+c.Num()*ElementSize(c.Format())]
		} else if c.Cmd() == 0x30 || c.Cmd() == 0x31 {
			c.Payload = b[off+4 : off+4+16]
		}
		out = append(out, c)
		off += 4 + n
	}
	return out, nil
}

// Unpacks is the UNPACK commands of cmds, in order.
func Unpacks(cmds []Command) []Command {
	n := 0
	for _, c := range cmds {
		if c.IsUnpack() {
			n++
		}
	}
	u := make([]Command, 0, n)
	for _, c := range cmds {
		if c.IsUnpack() {
			u = append(u, c)
		}
	}
	return u
}
