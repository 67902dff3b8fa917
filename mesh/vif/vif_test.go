package vif

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

func code(cmd byte, num int, imm uint16) []byte {
	return binary.LittleEndian.AppendUint32(nil, uint32(cmd)<<24|uint32(num&0xff)<<16|uint32(imm))
}

// TestParse: each command of a list with its length skipped, UNPACK and
// STROW payloads given, and the list ended at a command of unknown length.
func TestParse(t *testing.T) {
	var b []byte
	b = append(b, code(0x60|V4_8, 3, 0x12)...) // 3 × 4 bytes
	b = append(b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
	b = append(b, code(0x60|V2_16, 3, 0)...) // 3 × 4 bytes
	b = append(b, bytes.Repeat([]byte{0xaa}, 12)...)
	b = append(b, code(0x60|V3_16, 1, 0)...) // 6 bytes, padded to 8
	b = append(b, 1, 2, 3, 4, 5, 6, 0, 0)
	b = append(b, code(0x30, 0, 0)...) // STROW
	b = append(b, bytes.Repeat([]byte{0x55}, 16)...)
	b = append(b, code(0x00, 0, 0)...) // NOP
	b = append(b, code(0x4a, 1, 0)...) // MPG, 8 bytes
	b = append(b, make([]byte, 8)...)
	b = append(b, code(0x50, 0, 1)...) // DIRECT, 16 bytes
	b = append(b, make([]byte, 16)...)
	end := len(b)
	b = append(b, code(0x1f, 0, 0)...) // 0x1f: unknown, the list ends
	b = append(b, code(0x00, 0, 0)...)
	cmds, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		off     int64
		cmd     byte
		payload int
	}{{0, 0x60 | V4_8, 12}, {16, 0x60 | V2_16, 12}, {32, 0x60 | V3_16, 6}, {44, 0x30, 16}, {64, 0, 0}, {68, 0x4a, 0}, {80, 0x50, 0}}
	if len(cmds) != len(want) {
		t.Fatalf("%d commands, want %d: %+v", len(cmds), len(want), cmds)
	}
	for i, w := range want {
		c := cmds[i]
		if c.Offset != w.off || c.Cmd() != w.cmd || len(c.Payload) != w.payload {
			t.Errorf("command %d: offset %d cmd %#x payload %d, want %d %#x %d", i, c.Offset, c.Cmd(), len(c.Payload), w.off, w.cmd, w.payload)
		}
	}
	if cmds[len(cmds)-1].Offset+4+16 != int64(end) {
		t.Errorf("the last command ends at %d, the list at %d", cmds[len(cmds)-1].Offset+20, end)
	}
	if !bytes.Equal(cmds[0].Payload, b[4:16]) || cmds[0].Addr() != 0x12 || cmds[0].Num() != 3 {
		t.Errorf("UNPACK: payload %x addr %#x num %d", cmds[0].Payload, cmds[0].Addr(), cmds[0].Num())
	}
	u := Unpacks(cmds)
	if len(u) != 3 || u[2].Format() != V3_16 {
		t.Errorf("Unpacks: %+v", u)
	}
}

// TestParseShort: a command whose payload runs past the list is an *Error
// at the command's offset, with the commands before it.
func TestParseShort(t *testing.T) {
	b := append(code(0x00, 0, 0), code(0x60|V4_32, 2, 0)...) // 32 bytes wanted
	b = append(b, make([]byte, 31)...)
	cmds, err := Parse(b)
	var ve *Error
	if !errors.As(err, &ve) || ve.Offset != 4 || len(cmds) != 1 {
		t.Fatalf("Parse: %d commands, %v", len(cmds), err)
	}
	// num 0 is 256 elements
	b = append(code(0x60|V4_8, 0, 0), make([]byte, 256*4)...)
	if cmds, err := Parse(b); err != nil || len(cmds) != 1 || len(cmds[0].Payload) != 1024 {
		t.Fatalf("UNPACK of num 0: %v, %+v", err, cmds)
	}
	if _, err := Parse(b[:len(b)-1]); err == nil {
		t.Fatal("UNPACK of num 0 one byte short: no error")
	}
}

// FuzzParse: any bytes give commands in order, each within the list, its
// payload a slice of it, or an error; never a panic.
func FuzzParse(f *testing.F) {
	f.Add(append(code(0x60|V4_8, 1, 0), 1, 2, 3, 4))
	f.Add(append(code(0x50, 0, 0), 0))
	f.Add([]byte{0, 0, 0, 0x30, 1})
	f.Fuzz(func(t *testing.T, b []byte) {
		cmds, _ := Parse(b)
		prev := int64(-1)
		for _, c := range cmds {
			if c.Offset <= prev || c.Offset+4 > int64(len(b)) {
				t.Fatalf("command at %d after %d in %d bytes", c.Offset, prev, len(b))
			}
			prev = c.Offset
			if p := c.Payload; len(p) > 0 && (c.Offset+4+int64(len(p)) > int64(len(b)) || &p[0] != &b[c.Offset+4]) {
				t.Fatalf("payload of the command at %d is not the list's bytes after it", c.Offset)
			}
		}
		for _, u := range Unpacks(cmds) {
			if !u.IsUnpack() || len(u.Payload) != u.Num()*ElementSize(u.Format()) {
				t.Fatalf("UNPACK at %d: %d bytes for %d elements of format %#x", u.Offset, len(u.Payload), u.Num(), u.Format())
			}
		}
	})
}
