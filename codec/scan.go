package codec

import (
	"errors"
	"fmt"
	"io"
	"math"
)

// scanChunk is how much of the stream Scan and the index read at a time
// (a variable so tests can force refills; it must exceed maxPacket).
var scanChunk int64 = 256 << 10

// chunkReader keeps a bounded window of a stream read through an io.ReaderAt.
type chunkReader struct {
	r   io.ReaderAt
	end int64 // declared size
	buf []byte
	// partialAt is the offset of the last fill that got fewer bytes than it
	// asked for (-1: none yet); a second such fill at the same offset means
	// the decoder could not use what is there, so the read error stands.
	partialAt  int64
	hadPartial bool
}

// fill reads the stream from off (up to scanChunk bytes, never past end) and
// returns the bytes and whether they reach end.
func (c *chunkReader) fill(off int64) ([]byte, bool, error) {
	n := c.end - off
	if n > scanChunk {
		n = scanChunk
	}
	if n < 0 {
		n = 0
	}
	if int64(cap(c.buf)) < n {
		c.buf = make([]byte, n)
	}
	b := c.buf[:n]
	got, err := c.r.ReadAt(b, off)
	if got < len(b) {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		// A stream cut short (an image shorter than its volume) still decodes
		// up to the last whole packet it has: hand over what was read, and
		// fail only when the decoder comes back for bytes that are missing.
		if got > 0 && !(c.hadPartial && c.partialAt == off) {
			c.hadPartial, c.partialAt = true, off
			return b[:got], false, nil
		}
		return nil, false, fmt.Errorf("wad: reading stream at %#x: %w", off+int64(got), err)
	}
	return b, off+n == c.end, nil
}

// readHeader reads and checks the header of the stream in r (extent length size).
func readHeader(r io.ReaderAt, size int64) (Header, error) {
	var hb [HeaderSize]byte
	n, err := r.ReadAt(hb[:min(HeaderSize, max(size, 0))], 0)
	if n < len(hb) && int64(n) < size {
		if err == nil || errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return Header{}, fmt.Errorf("wad: reading header: %w", err)
	}
	return parseHeaderIn(hb[:n], size)
}

// Scan walks the stream in r (offset 0 is the 'W' of the header; size is the
// extent's length) without producing output. It validates everything but the
// bytes themselves; on error the Stats returned still hold DecodedSize so far.
func Scan(r io.ReaderAt, size int64, opt Options) (Stats, error) {
	var st Stats
	h, err := readHeader(r, size)
	if err != nil {
		return st, err
	}
	st.Header = h
	sc := newScanner(opt)
	cr := chunkReader{r: r, end: h.Size}
	off := int64(HeaderSize)
	for off < h.Size {
		in, full, err := cr.fill(off)
		if err != nil {
			st.DecodedSize = sc.olen
			return st, err
		}
		sc.inBase, sc.in, sc.full, sc.pos = off, in, full, 0
		err = sc.run(&st)
		off = sc.inBase + int64(sc.pos)
		if err == errNeedInput {
			continue
		}
		st.DecodedSize = sc.olen
		return st, err
	}
	st.DecodedSize = sc.olen
	return st, nil
}

// scanner is decoder.run without the output: the same rules, the same errors
// at the same offsets, only the output length tracked (and, for the index,
// how far back matches reach, and stops at block boundaries).
type scanner struct {
	in     []byte
	inBase int64
	pos    int
	full   bool
	olen   int64
	state  uint8
	first  bool
	align  int64
	strict bool
	maxOut int64

	// stopOut: run returns errStop at the first packet boundary where the
	// output length is at least stopOut (MaxInt64: never).
	stopOut int64
	// minRef is lowered to the output offset of every match source the
	// checked path reads. The fast loop does not track and runs only from
	// trackEnd on: the index sets it maxWindow past a group's start, beyond
	// which no match can reach before that start.
	minRef   int64
	trackEnd int64
}

// scanCheckedOnly makes the scanner take its checked path for every packet
// (tests compare the fast loops with it).
var scanCheckedOnly bool

// errStop is returned by scanner.run at a stopOut boundary.
var errStop = errors.New("codec: stop")

func newScanner(opt Options) scanner {
	return scanner{align: clampAlign(opt.Align), strict: opt.Strict, maxOut: opt.outputLimit(), first: true,
		stopOut: math.MaxInt64, minRef: math.MaxInt64}
}

func (s *scanner) run(st *Stats) error {
	in, pos, olen, state, minRef := s.in, s.pos, s.olen, s.state, s.minRef
	soft := len(in)
	if !s.full {
		soft = len(in) - maxPacket
	}
	var err error
	fastEnd := min(soft, len(in)-8)
	maxFast := min(s.maxOut-outSlack, s.stopOut-1)
	fastFrom := max(int64(maxWindow), s.trackEnd)
	var nShort, nMatch int // kept in registers, added to st at the end
	if s.first && pos < len(in) {
		s.first = false
		if f := in[pos]; f > 0x11 {
			n := int(f) - 17
			if pos+1+n > len(in) {
				if !s.full {
					s.first = true
					return errNeedInput
				}
				err = corrupt(s.inBase+int64(pos), RuleTruncated)
				goto done
			}
			if olen+int64(n) > s.maxOut {
				err = corrupt(s.inBase+int64(pos), RuleOutputLimit)
				goto done
			}
			olen += int64(n)
			pos += 1 + n
			st.Literals++
			state = stLiteral
			if n < 4 {
				state = stLittle
			}
		}
	}
	// The fast loop handles short matches and matches once no distance can
	// reach before the output's start, away from the limit and the buffer's
	// end: they need no check but the state they leave. A table gives each
	// flag's header size, base length and where its little-literal count is.
	for pos < len(in) {
		if pos <= fastEnd && olen <= maxFast && !scanCheckedOnly {
			var ns, nm int
			if olen >= fastFrom {
				pos, olen, state, ns, nm = scanFast(in, pos, olen, state, fastEnd, maxFast)
			} else {
				// Where a match may reach before the output's start or a
				// group's start: the same loop, checking and tracking.
				pos, olen, state, minRef, ns, nm = scanFastTrack(in, pos, olen, state, fastEnd, min(maxFast, fastFrom-1), minRef)
			}
			nShort += ns
			nMatch += nm
		}
		if pos >= len(in) {
			break
		}
		if olen >= s.stopOut {
			err = errStop
			break
		}
		if pos > soft {
			err = errNeedInput
			break
		}
		start := pos
		f := in[pos]
		if f < 0x10 {
			if state != stMatch {
				if state == stLiteral {
					err = corrupt(s.inBase+int64(start), RuleLiteralPair)
					break
				}
				if s.strict {
					err = corrupt(s.inBase+int64(start), RuleStrictLiteral)
					break
				}
			}
			n := int(f) + 3
			pos++
			if f == 0 {
				if pos >= len(in) {
					err = corrupt(s.inBase+int64(start), RuleTruncated)
					break
				}
				n = int(in[pos]) + 18
				pos++
			}
			if pos+n > len(in) {
				err = corrupt(s.inBase+int64(start), RuleTruncated)
				break
			}
			if olen+int64(n) > s.maxOut {
				err = corrupt(s.inBase+int64(start), RuleOutputLimit)
				break
			}
			olen += int64(n)
			pos += n
			st.Literals++
			if f == 0 {
				st.LongLiterals++
			}
			state = stLiteral
			continue
		}
		var length, dist, lit, p int
		var kind *int
		switch {
		case f >= 0x40:
			if pos+2 > len(in) {
				err = corrupt(s.inBase+int64(start), RuleTruncated)
				goto done
			}
			length = int(f>>5) + 1
			dist = int(in[pos+1])<<3 + int(f>>2&7) + 1
			lit = int(f & 3)
			p = pos + 2
			kind = &st.ShortMatches
		case f >= 0x20:
			length = int(f & 0x1F)
			p = pos + 1
			if length == 0 {
				if p >= len(in) {
					err = corrupt(s.inBase+int64(start), RuleTruncated)
					goto done
				}
				length = int(in[p]) + 0x1F
				p++
			}
			length += 2
			if p+2 > len(in) {
				err = corrupt(s.inBase+int64(start), RuleTruncated)
				goto done
			}
			dist = int(in[p+1])<<6 + int(in[p]>>2) + 1
			lit = int(in[p] & 3)
			p += 2
			kind = &st.Matches
		default:
			length = int(f & 7)
			p = pos + 1
			if length == 0 {
				if p >= len(in) {
					err = corrupt(s.inBase+int64(start), RuleTruncated)
					goto done
				}
				length = int(in[p]) + 7
				p++
			}
			if p+2 > len(in) {
				err = corrupt(s.inBase+int64(start), RuleTruncated)
				goto done
			}
			b0, b1 := in[p], in[p+1]
			p += 2
			dd := int(f&8)<<11 | int(b1)<<6 | int(b0>>2)
			if dd == 0 {
				if length != 1 {
					rel := s.inBase + int64(p) - HeaderSize
					next := (rel + s.align - 1) / s.align * s.align
					np := next + HeaderSize - s.inBase
					if np > int64(len(in)) {
						np = int64(len(in)) // past this buffer: the stream ends, or a refill follows
						if !s.full {
							np = next + HeaderSize - s.inBase
						}
					}
					pos = int(np)
					state = stMatch
					st.BlockMarkers++
					continue
				}
				length = 0
				kind = &st.Dummies
			} else {
				length += 2
				dist = dd + 0x4000
				kind = &st.FarMatches
			}
			lit = int(b0 & 3)
		}
		if p+lit > len(in) {
			err = corrupt(s.inBase+int64(start), RuleTruncated)
			break
		}
		if olen+int64(length+lit) > s.maxOut {
			err = corrupt(s.inBase+int64(start), RuleOutputLimit)
			break
		}
		if int64(dist) > olen {
			err = corrupt(s.inBase+int64(start), RuleDistance)
			break
		}
		if src := olen - int64(dist); src < minRef && length > 0 {
			minRef = src
		}
		*kind++
		olen += int64(length + lit)
		pos = p + lit
		state = stMatch
		if lit != 0 {
			state = stLittle
		}
	}
done:
	st.ShortMatches += nShort
	st.Matches += nMatch
	if err == nil && !s.full {
		err = errNeedInput
	}
	s.pos, s.olen, s.state, s.minRef = pos, olen, state, minRef
	return err
}

// scanFast is the scan's inner loop over short matches and matches, in a
// function of its own so its few variables stay in registers. The caller
// guarantees 8 bytes of input from every pos <= fastEnd and an output length
// at which no match can reach before the output's start, and stops it at hi
// (the limit and the stop). It returns at the first other packet, for the
// checked path, with the counts of the short matches and matches it passed.
// (A table entry for the short matches too, without the branch on the kind,
// simulated fewer mispredictions under cachegrind but measured slower.)
func scanFast(in []byte, pos int, olen int64, state uint8, fastEnd int, hi int64) (int, int64, uint8, int, int) {
	var nShort, nMatch int
	for pos <= fastEnd && olen <= hi {
		w := ld64(in, pos)           // pos <= fastEnd: 8 bytes inside in
		if f := byte(w); f >= 0x40 { // short match (57% of packets on asset data)
			l := int(f & 3)
			pos += 2 + l
			olen += int64(int(f>>5) + 1 + l)
			nShort++
			state = uint8((l+3)>>2) * stLittle
			continue
		}
		e := scanTable[byte(w)]
		if e.adv == 0 {
			break
		}
		lit := int(w>>e.litShift) & 3 // counted in the flag or a later header byte
		pos += int(e.adv) + lit
		olen += int64(int(e.base) + int(byte(w>>8)&e.ext) + lit)
		nMatch++
		state = uint8((lit+3)>>2) * stLittle
	}
	return pos, olen, state, nShort, nMatch
}

// scanFastTrack is scanFast for the output's first maxWindow bytes and
// the tracked start of an index group (see scanner.trackEnd): it also
// checks each match's distance against the output so far, leaving a match
// that reaches before the output's start to the checked path (which
// reports it), and lowers minRef to each match's source. It runs while
// olen <= hi.
func scanFastTrack(in []byte, pos int, olen int64, state uint8, fastEnd int, hi, minRef int64) (int, int64, uint8, int64, int, int) {
	var nShort, nMatch int
	for pos <= fastEnd && olen <= hi {
		w := ld64(in, pos) // pos <= fastEnd: 8 bytes inside in
		if f := byte(w); f >= 0x40 {
			src := olen - int64(int(byte(w>>8))<<3+int(f>>2&7)+1)
			if src < 0 {
				break
			}
			minRef = min(minRef, src)
			l := int(f & 3)
			pos += 2 + l
			olen += int64(int(f>>5) + 1 + l)
			nShort++
			state = uint8((l+3)>>2) * stLittle
			continue
		}
		e := scanTable[byte(w)]
		if e.adv == 0 {
			break
		}
		// The distance is in the two bytes after the length: the one whose
		// low bits count the little literals, and the next.
		d := w >> e.litShift
		src := olen - int64(int(byte(d>>8))<<6+int(byte(d)>>2)+1)
		if src < 0 {
			break
		}
		minRef = min(minRef, src)
		lit := int(d) & 3
		pos += int(e.adv) + lit
		olen += int64(int(e.base) + int(byte(w>>8)&e.ext) + lit)
		nMatch++
		state = uint8((lit+3)>>2) * stLittle
	}
	return pos, olen, state, minRef, nShort, nMatch
}

// scanEntry describes a match flag byte (0x20-0x3F) for scanFast (short
// matches are decoded inline); adv == 0 sends the packet to the checked path
// (literals, far matches, controls).
type scanEntry struct {
	adv      uint8 // header bytes
	base     uint8 // output length without the extension byte
	ext      uint8 // 0xFF when byte 1 extends the length
	litShift uint8 // 8 × the header byte whose low 2 bits count the little literals
}

var scanTable = func() (t [256]scanEntry) {
	for f := 0x20; f < 0x40; f++ {
		if f&0x1F == 0 {
			t[f] = scanEntry{adv: 4, base: 0x1F + 2, ext: 0xFF, litShift: 16}
		} else {
			t[f] = scanEntry{adv: 3, base: uint8(f&0x1F) + 2, litShift: 8}
		}
	}
	return
}()
