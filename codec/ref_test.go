package codec

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
)

// refDecode is a deliberately naive decoder written from note 000's table,
// one byte at a time: the oracle the fast decoder is fuzzed against.
func refDecode(s []byte, opt Options) ([]byte, error) {
	out := []byte{}
	if len(s) < 3 || string(s[:3]) != "WAD" {
		if len(s) < 3 && bytes.HasPrefix([]byte("WAD"), s) {
			return out, &CorruptError{int64(len(s)), RuleTruncated}
		}
		return out, &CorruptError{0, RuleMagic}
	}
	if len(s) < 16 {
		return out, &CorruptError{int64(len(s)), RuleTruncated}
	}
	size := int(binary.LittleEndian.Uint32(s[3:]))
	if size < 16 || size > len(s) {
		return out, &CorruptError{3, RuleDeclaredSize}
	}
	align := int(opt.Align)
	if align == 0 {
		align = 0x1000
	}
	limit := int64(math.MaxInt64)
	if opt.MaxOutput > 0 {
		limit = opt.MaxOutput
	}
	s = s[:size]
	pos := 16
	prev := "start" // "literal", "little" (match with 1-3 literals), "match"
	fail := func(at int, r Rule) ([]byte, error) { return out, &CorruptError{int64(at), r} }
	for pos < len(s) {
		at := pos
		get := func() (byte, bool) {
			if pos >= len(s) {
				return 0, false
			}
			pos++
			return s[pos-1], true
		}
		f, _ := get()
		if at == 16 && f > 0x11 {
			n := int(f) - 17
			if pos+n > len(s) {
				return fail(at, RuleTruncated)
			}
			if int64(len(out)+n) > limit {
				return fail(at, RuleOutputLimit)
			}
			out = append(out, s[pos:pos+n]...)
			pos += n
			prev = "literal"
			if n < 4 {
				prev = "little"
			}
			continue
		}
		if f < 0x10 {
			if prev == "literal" {
				return fail(at, RuleLiteralPair)
			}
			if prev == "little" && opt.Strict {
				return fail(at, RuleStrictLiteral)
			}
			n := int(f) + 3
			if f == 0 {
				x, ok := get()
				if !ok {
					return fail(at, RuleTruncated)
				}
				n = int(x) + 18
			}
			if pos+n > len(s) {
				return fail(at, RuleTruncated)
			}
			if int64(len(out)+n) > limit {
				return fail(at, RuleOutputLimit)
			}
			out = append(out, s[pos:pos+n]...)
			pos += n
			prev = "literal"
			continue
		}
		var length, dist, lit int
		switch {
		case f < 0x20:
			length = int(f & 7)
			if length == 0 {
				x, ok := get()
				if !ok {
					return fail(at, RuleTruncated)
				}
				length = int(x) + 7
			}
			b0, ok0 := get()
			b1, ok1 := get()
			if !ok0 || !ok1 {
				return fail(at, RuleTruncated)
			}
			if f&8 == 0 && b1 == 0 && b0>>2 == 0 {
				if length != 1 {
					rel := pos - 16
					for rel%align != 0 {
						rel++
					}
					pos = min(rel+16, len(s))
					prev = "match"
					continue
				}
				length = 0
			} else {
				length += 2
				dist = 0x4000*(int(f>>3&1)+1) + int(b1)*0x40 + int(b0>>2)
			}
			lit = int(b0 & 3)
		case f < 0x40:
			length = int(f & 0x1F)
			if length == 0 {
				x, ok := get()
				if !ok {
					return fail(at, RuleTruncated)
				}
				length = int(x) + 0x1F
			}
			length += 2
			b1, ok1 := get()
			b2, ok2 := get()
			if !ok1 || !ok2 {
				return fail(at, RuleTruncated)
			}
			dist = int(b2)*0x40 + int(b1>>2) + 1
			lit = int(b1 & 3)
		default:
			b1, ok := get()
			if !ok {
				return fail(at, RuleTruncated)
			}
			length = int(f>>5) + 1
			dist = int(b1)*8 + int(f>>2&7) + 1
			lit = int(f & 3)
		}
		if pos+lit > len(s) {
			return fail(at, RuleTruncated)
		}
		if int64(len(out)+length+lit) > limit {
			return fail(at, RuleOutputLimit)
		}
		if length > 0 && dist > len(out) {
			return fail(at, RuleDistance)
		}
		for i := 0; i < length; i++ {
			out = append(out, out[len(out)-dist])
		}
		out = append(out, s[pos:pos+lit]...)
		pos += lit
		prev = "match"
		if lit > 0 {
			prev = "little"
		}
	}
	return out, nil
}

func TestReferenceDecoderAgrees(t *testing.T) {
	for _, body := range fuzzSeeds() {
		for _, opt := range []Options{{}, {Strict: true}, {Align: 0x2000}, {MaxOutput: 300}} {
			s := stream(body)
			want, werr := refDecode(s, opt)
			got, err := Decode(s, opt)
			if !sameErr(err, werr) || !bytes.Equal(got, want) {
				t.Fatalf("opt %+v: fast %v (%d bytes), reference %v (%d bytes)", opt, err, len(got), werr, len(want))
			}
		}
	}
	big := Encode(SampleData(21, 2<<20), EncodeOptions{})
	want, werr := refDecode(big, Options{})
	got, err := Decode(big, Options{})
	if err != nil || werr != nil || !bytes.Equal(got, want) {
		t.Fatalf("sample: %v / %v", err, werr)
	}
}
