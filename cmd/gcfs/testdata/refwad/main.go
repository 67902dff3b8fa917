// Command refwad is the reference the decompress benchmark measures gcfs
// against: a WAD stream decoder written the way a straightforward port of
// note 000's table would be, one byte at a time into a growing slice, with no
// error reporting beyond "corrupt". Usage: refwad IN OUT. It lives under
// testdata so no build of the project includes it; the benchmark builds it.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

func decode(s []byte) ([]byte, error) {
	if len(s) < 16 || string(s[:3]) != "WAD" {
		return nil, fmt.Errorf("not a WAD stream")
	}
	size := int(binary.LittleEndian.Uint32(s[3:]))
	if size < 16 || size > len(s) {
		return nil, fmt.Errorf("bad size")
	}
	s = s[:size]
	var out []byte
	pos := 16
	bad := errors.New("corrupt stream")
	in := func() (byte, bool) {
		if pos >= len(s) {
			return 0, false
		}
		pos++
		return s[pos-1], true
	}
	for pos < len(s) {
		at := pos
		f, _ := in()
		var length, dist, lit int
		switch {
		case at == 16 && f > 0x11:
			lit = int(f) - 17
		case f < 0x10:
			n := int(f) + 3
			if f == 0 {
				x, ok := in()
				if !ok {
					return out, bad
				}
				n = int(x) + 18
			}
			lit = n
		case f < 0x20:
			length = int(f & 7)
			if length == 0 {
				x, ok := in()
				if !ok {
					return out, bad
				}
				length = int(x) + 7
			}
			b0, ok0 := in()
			b1, ok1 := in()
			if !ok0 || !ok1 {
				return out, bad
			}
			d := int(f&8)<<11 | int(b1)<<6 | int(b0>>2)
			if d == 0 && length != 1 {
				rel := pos - 16
				pos = 16 + (rel+0xFFF)/0x1000*0x1000
				continue
			}
			if d == 0 {
				length = 0
			} else {
				length += 2
				dist = d + 0x4000
			}
			lit = int(b0 & 3)
		case f < 0x40:
			length = int(f & 0x1F)
			if length == 0 {
				x, ok := in()
				if !ok {
					return out, bad
				}
				length = int(x) + 0x1F
			}
			length += 2
			b1, ok1 := in()
			b2, ok2 := in()
			if !ok1 || !ok2 {
				return out, bad
			}
			dist = int(b2)<<6 + int(b1>>2) + 1
			lit = int(b1 & 3)
		default:
			b1, ok := in()
			if !ok {
				return out, bad
			}
			length = int(f>>5) + 1
			dist = int(b1)<<3 + int(f>>2&7) + 1
			lit = int(f & 3)
		}
		for i := 0; i < length; i++ {
			if dist > len(out) {
				return out, bad
			}
			out = append(out, out[len(out)-dist])
		}
		for i := 0; i < lit; i++ {
			x, ok := in()
			if !ok {
				return out, bad
			}
			out = append(out, x)
		}
	}
	return out, nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: refwad IN OUT")
		os.Exit(2)
	}
	src, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	out, err := decode(src)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(os.Args[2], out, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
