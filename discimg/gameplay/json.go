package gameplay

import (
	"bufio"
	"encoding/hex"
	"io"
	"math"
	"strconv"
	"unicode/utf8"
)

// The document model: what Read makes of the stream, in the order it is
// written. Keys are written in the order they were added (an Obj is a list,
// not a map), so the document is the same bytes for the same stream.

// Obj is a JSON object whose keys keep their order.
type Obj []KV

// KV is one key of an Obj.
type KV struct {
	Key string
	Val any
}

// Arr is a JSON array.
type Arr []any

// Text is a string from the stream: its bytes as they are. It is written as a
// JSON string in which valid UTF-8 stays as it is and every other byte is
// written \u00XX; where that happens the object holding it also carries the
// bytes in hex (see helpText), so nothing is lost.
type Text []byte

// Undecoded is a block, record or field that is not decoded: where it lies in
// the stream, its bytes and why.
type Undecoded struct {
	Offset int64
	Bytes  []byte
	Reason string // "" for data kept opaque by design
}

func (o *Obj) add(k string, v any) { *o = append(*o, KV{k, v}) }

// Get is the value under key k (nil when absent).
func (o Obj) Get(k string) any {
	for _, kv := range o {
		if kv.Key == k {
			return kv.Val
		}
	}
	return nil
}

// jsonWriter writes the model, or counts what it would write (w nil).
type jsonWriter struct {
	w   *bufio.Writer
	n   int64 // the bytes counted (w nil)
	buf []byte
}

// WriteJSON writes v (an Obj, Arr, Undecoded, Text, string, number, bool or
// nil) as one JSON document, with a final newline.
func WriteJSON(w io.Writer, v any) error {
	jw := &jsonWriter{w: bufio.NewWriterSize(w, 64<<10)}
	jw.value(v, 0)
	jw.byte('\n')
	return jw.w.Flush()
}

// JSONSize is the length of what WriteJSON writes for v, counted without
// writing it: sizing a tree's gameplay.json views wrote and dropped every
// document, the hex of every undecoded block with it, a sixth of sizing
// every lazily sized view of the retail layout.
func JSONSize(v any) int64 {
	jw := &jsonWriter{}
	jw.value(v, 0)
	jw.byte('\n')
	return jw.n
}

func (j *jsonWriter) byte(c byte) {
	if j.w == nil {
		j.n++
		return
	}
	j.w.WriteByte(c)
}

func (j *jsonWriter) string(s string) {
	if j.w == nil {
		j.n += int64(len(s))
		return
	}
	j.w.WriteString(s)
}

func (j *jsonWriter) write(b []byte) {
	if j.w == nil {
		j.n += int64(len(b))
		return
	}
	j.w.Write(b)
}

func (j *jsonWriter) indent(depth int) {
	if j.w == nil {
		j.n += 1 + 2*int64(depth)
		return
	}
	j.byte('\n')
	for i := 0; i < depth; i++ {
		j.string("  ")
	}
}

func (j *jsonWriter) value(v any, depth int) {
	switch x := v.(type) {
	case nil:
		j.string("null")
	case Obj:
		if len(x) == 0 {
			j.string("{}")
			return
		}
		j.byte('{')
		for i, kv := range x {
			if i > 0 {
				j.byte(',')
			}
			j.indent(depth + 1)
			j.strString(kv.Key)
			j.string(": ")
			j.value(kv.Val, depth+1)
		}
		j.indent(depth)
		j.byte('}')
	case Arr:
		if len(x) == 0 {
			j.string("[]")
			return
		}
		// arrays of numbers (vectors, matrices) on one line
		flat := true
		for _, e := range x {
			switch e.(type) {
			case Obj, Arr, Undecoded:
				flat = false
			}
		}
		j.byte('[')
		for i, e := range x {
			if i > 0 {
				j.byte(',')
				if flat {
					j.byte(' ')
				}
			}
			if !flat {
				j.indent(depth + 1)
			}
			j.value(e, depth+1)
		}
		if !flat {
			j.indent(depth)
		}
		j.byte(']')
	case Undecoded:
		o := append(make(Obj, 0, 4), KV{"offset", x.Offset}, KV{"size", int64(len(x.Bytes))})
		if x.Reason != "" {
			o.add("reason", x.Reason)
		}
		o.add("hex", hexString(x.Bytes))
		j.value(o, depth)
	case Text:
		j.str(x)
	case hexString:
		if j.w == nil {
			j.n += 2 + 2*int64(len(x))
			return
		}
		j.byte('"')
		j.buf = hex.AppendEncode(j.buf[:0], x)
		j.write(j.buf)
		j.byte('"')
	case string:
		j.strString(x)
	case bool:
		j.string(strconv.FormatBool(x))
	case int:
		j.write(strconv.AppendInt(j.buf[:0], int64(x), 10))
	case int64:
		j.write(strconv.AppendInt(j.buf[:0], x, 10))
	case int32:
		j.write(strconv.AppendInt(j.buf[:0], int64(x), 10))
	case int16:
		j.write(strconv.AppendInt(j.buf[:0], int64(x), 10))
	case uint32:
		j.write(strconv.AppendUint(j.buf[:0], uint64(x), 10))
	case uint16:
		j.write(strconv.AppendUint(j.buf[:0], uint64(x), 10))
	case uint8:
		j.write(strconv.AppendUint(j.buf[:0], uint64(x), 10))
	case float32:
		j.float(float64(x), 32)
	case float64:
		j.float(x, 64)
	default:
		panic("gameplay: no JSON form for a value of this type")
	}
}

// float writes a finite number as the shortest decimal that reads back as
// the same value; NaN and the infinities, which JSON has no number for, as
// the strings "NaN", "+Inf", "-Inf".
func (j *jsonWriter) float(f float64, bits int) {
	switch {
	case math.IsNaN(f):
		j.string(`"NaN"`)
	case math.IsInf(f, 1):
		j.string(`"+Inf"`)
	case math.IsInf(f, -1):
		j.string(`"-Inf"`)
	default:
		j.write(strconv.AppendFloat(j.buf[:0], f, 'g', -1, bits))
	}
}

// plainASCII reports whether s is printable ASCII with no byte a JSON
// string escapes: it is then written as it is (most keys and names).
func plainASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// strString is str for a string, without copying it when it needs no escape.
func (j *jsonWriter) strString(s string) {
	if !plainASCII(s) {
		j.str([]byte(s))
		return
	}
	j.byte('"')
	j.string(s)
	j.byte('"')
}

// str writes b as a JSON string: valid UTF-8 as it is (but for the escapes
// JSON needs), every byte of an invalid sequence as \u00XX.
func (j *jsonWriter) str(b []byte) {
	const hexd = "0123456789abcdef"
	j.byte('"')
	if plainASCII(b) {
		j.write(b)
		j.byte('"')
		return
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && n <= 1:
			c := b[0]
			j.string(`\u00`)
			j.byte(hexd[c>>4])
			j.byte(hexd[c&15])
		case r == '"':
			j.string(`\"`)
		case r == '\\':
			j.string(`\\`)
		case r == '\n':
			j.string(`\n`)
		case r == '\r':
			j.string(`\r`)
		case r == '\t':
			j.string(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x2028 || r == 0x2029:
			j.string(`\u`)
			j.string(strconv.FormatInt(int64(r)|0x10000, 16)[1:])
		default:
			j.write(b[:n])
		}
		b = b[n:]
	}
	j.byte('"')
}

// hexString is bytes written as a string of hex digits.
type hexString []byte
