package imagefile

import "errors"

// bitReader reads bits most-significant first. Reading past the end yields
// zero bits and sets the overflow flag (as the CHD format's own reader does).
type bitReader struct {
	b   []byte
	pos uint64 // bits consumed
	bad bool   // a code no symbol has was read
}

func newBitReader(b []byte) *bitReader { return &bitReader{b: b} }

// peek returns the next n (<= 32) bits without consuming them.
func (r *bitReader) peek(n uint) uint32 {
	if n == 0 {
		return 0
	}
	byteOff := r.pos >> 3
	var v uint64
	for i := uint64(0); i < 5; i++ {
		v <<= 8
		if byteOff+i < uint64(len(r.b)) {
			v |= uint64(r.b[byteOff+i])
		}
	}
	// v holds 40 bits starting at byteOff*8.
	shift := 40 - (r.pos & 7) - uint64(n)
	return uint32(v>>shift) & uint32((uint64(1)<<n)-1)
}

func (r *bitReader) skip(n uint) { r.pos += uint64(n) }

func (r *bitReader) read(n uint) uint32 {
	v := r.peek(n)
	r.skip(n)
	return v
}

// overflow says the reader ran past its data or met an unassigned code.
func (r *bitReader) overflow() bool { return r.bad || r.pos > uint64(len(r.b))*8 }

// byteOffset is the offset of the first byte not (even partly) consumed.
func (r *bitReader) byteOffset() uint64 { return (r.pos + 7) >> 3 }

// huffDecoder is CHD's canonical Huffman decoder: numCodes symbols, codes of
// at most maxBits bits, decoded through a full lookup table.
type huffDecoder struct {
	numCodes int
	maxBits  uint
	bits     []uint8  // code length per symbol
	codes    []uint32 // canonical code per symbol
	lookup   []uint32 // symbol<<5 | length
}

var errHuff = errors.New("invalid Huffman table")

func (h *huffDecoder) init(numCodes int, maxBits uint) error {
	if maxBits > 24 || numCodes <= 0 {
		return errHuff
	}
	h.numCodes, h.maxBits = numCodes, maxBits
	h.bits = make([]uint8, numCodes)
	h.codes = make([]uint32, numCodes)
	h.lookup = make([]uint32, 1<<maxBits)
	return nil
}

// importTreeRLE reads code lengths written as raw values with 1 as an escape
// ("1 1" is a literal 1; "1 v n" is n+3 repeats of v).
func (h *huffDecoder) importTreeRLE(br *bitReader) error {
	var nb uint
	switch {
	case h.maxBits >= 16:
		nb = 5
	case h.maxBits >= 8:
		nb = 4
	default:
		nb = 3
	}
	cur := 0
	for cur < h.numCodes {
		v := br.read(nb)
		if v != 1 {
			h.bits[cur] = uint8(v)
			cur++
			continue
		}
		v = br.read(nb)
		if v == 1 {
			h.bits[cur] = 1
			cur++
			continue
		}
		rep := int(br.read(nb)) + 3
		if cur+rep > h.numCodes {
			return errors.New("Huffman tree repeat runs past the last code")
		}
		for ; rep > 0; rep-- {
			h.bits[cur] = uint8(v)
			cur++
		}
	}
	if err := h.assign(); err != nil {
		return err
	}
	if br.overflow() {
		return errors.New("Huffman tree runs past the end of the data")
	}
	return nil
}

// importTreeHuffman reads code lengths that are themselves Huffman coded with a
// small 24-symbol tree (symbol 0 is a repeat of the previous length).
func (h *huffDecoder) importTreeHuffman(br *bitReader) error {
	var small huffDecoder
	if err := small.init(24, 6); err != nil {
		return err
	}
	small.bits[0] = uint8(br.read(3))
	start := int(br.read(3)) + 1
	count := 0
	for i := 1; i < 24; i++ {
		if i < start || count == 7 {
			small.bits[i] = 0
			continue
		}
		count = int(br.read(3))
		if count == 7 {
			small.bits[i] = 0
		} else {
			small.bits[i] = uint8(count)
		}
	}
	if err := small.assign(); err != nil {
		return err
	}
	temp := uint32(h.numCodes - 9)
	var fullBits uint
	for temp != 0 {
		temp >>= 1
		fullBits++
	}
	last := uint8(0)
	cur := 0
	for cur < h.numCodes {
		v := small.decode(br)
		if v != 0 {
			last = uint8(v - 1)
			h.bits[cur] = last
			cur++
		} else {
			n := int(br.read(3)) + 2
			if n == 7+2 {
				n += int(br.read(fullBits))
			}
			for ; n != 0 && cur < h.numCodes; n-- {
				h.bits[cur] = last
				cur++
			}
		}
		if br.overflow() {
			return errors.New("Huffman tree runs past the end of the data")
		}
	}
	return h.assign()
}

// assign gives canonical codes from the lengths (longest codes numbered from
// zero) and fills the lookup table.
func (h *huffDecoder) assign() error {
	var histo [33]uint32
	for _, b := range h.bits {
		if uint(b) > h.maxBits {
			return errHuff
		}
		histo[b]++
	}
	var start uint32
	for l := 32; l > 0; l-- {
		next := (start + histo[l]) >> 1
		if l != 1 && next*2 != start+histo[l] {
			return errHuff
		}
		histo[l] = start
		start = next
	}
	clear(h.lookup)
	for s, b := range h.bits {
		if b == 0 {
			continue
		}
		code := histo[b]
		histo[b]++
		h.codes[s] = code
		shift := h.maxBits - uint(b)
		lo := code << shift
		hi := (code + 1) << shift
		if hi > uint32(len(h.lookup)) {
			return errHuff
		}
		v := uint32(s)<<5 | uint32(b)
		for i := lo; i < hi; i++ {
			h.lookup[i] = v
		}
	}
	return nil
}

// decode reads one symbol. A code no symbol has decodes as symbol 0 and
// marks the reader bad (reported through overflow).
func (h *huffDecoder) decode(br *bitReader) uint32 {
	v := h.lookup[br.peek(h.maxBits)]
	if v&0x1f == 0 {
		br.bad = true
		return 0
	}
	br.skip(uint(v & 0x1f))
	return v >> 5
}
