package codec

import (
	"bytes"
	"encoding/binary"
	"strings"
)

// ParseHeader reads a header from the first 16 bytes of b. A buffer shorter
// than a header is RuleTruncated, a wrong magic RuleMagic, a declared size
// below 16 RuleDeclaredSize (at offset 3).
func ParseHeader(b []byte) (Header, error) {
	if len(b) >= 3 && string(b[:3]) != "WAD" || len(b) < 3 && !strings.HasPrefix("WAD", string(b)) {
		return Header{}, &CorruptError{Offset: 0, Rule: RuleMagic}
	}
	if len(b) < HeaderSize {
		return Header{}, &CorruptError{Offset: int64(len(b)), Rule: RuleTruncated}
	}
	size := int64(binary.LittleEndian.Uint32(b[3:7]))
	if size < HeaderSize {
		return Header{}, &CorruptError{Offset: 3, Rule: RuleDeclaredSize}
	}
	tag := b[7:16]
	if i := bytes.IndexByte(tag, 0); i >= 0 {
		tag = tag[:i] // a C string: NUL-padded by strncpy-style writers
	}
	return Header{Size: size, Tag: string(tag)}, nil
}

// parseHeaderIn parses the header and checks the declared size against the
// buffer (or extent) length.
func parseHeaderIn(b []byte, size int64) (Header, error) {
	h, err := ParseHeader(b)
	if err != nil {
		return h, err
	}
	if h.Size > size {
		return h, &CorruptError{Offset: 3, Rule: RuleDeclaredSize}
	}
	return h, nil
}

// IsStream reports whether an extent whose first bytes are prefix (at least 16
// of them, fewer means no) and whose length is extentLen holds a WAD stream: magic
// "WAD" and a declared size from 16 up to extentLen (SPEC: compressed extents).
func IsStream(prefix []byte, extentLen int64) bool {
	if len(prefix) < HeaderSize || extentLen < HeaderSize {
		return false
	}
	_, err := parseHeaderIn(prefix, extentLen)
	return err == nil
}

// putHeader writes a header for a stream of size bytes with tag (truncated
// to 9 bytes) into b[:16].
func putHeader(b []byte, size int, tag string) {
	copy(b[0:3], "WAD")
	binary.LittleEndian.PutUint32(b[3:7], uint32(size))
	var t [9]byte
	copy(t[:], tag)
	copy(b[7:16], t[:])
}
