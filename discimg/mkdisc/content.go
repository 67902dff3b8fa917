package mkdisc

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"sort"

	"gcfs/assets"
	"gcfs/codec"
	"gcfs/discimg/isowriter"
)

// sparseFile is one file's content as the generator knows it: a size and the
// runs of non-zero bytes; everything else reads as zero (a hole in the image).
type sparseFile struct {
	size   int64
	chunks []isowriter.Chunk
}

// put records data at off. Chunks may be put in any order; finish sorts them.
func (f *sparseFile) put(off int64, data []byte) {
	if len(data) > 0 {
		f.chunks = append(f.chunks, isowriter.Chunk{Off: off, Data: data})
	}
}

// finish sorts the chunks and checks they neither overlap nor run past size.
func (f *sparseFile) finish(name string) error {
	sort.Slice(f.chunks, func(i, j int) bool { return f.chunks[i].Off < f.chunks[j].Off })
	var end int64
	for _, c := range f.chunks {
		if c.Off < end {
			return fmt.Errorf("mkdisc: %s: content at %d overlaps content ending at %d", name, c.Off, end)
		}
		end = c.Off + int64(len(c.Data))
	}
	if end > f.size {
		return fmt.Errorf("mkdisc: %s: content ends at %d, past the file size %d", name, end, f.size)
	}
	return nil
}

// zeros is the shared source of hole bytes for hashing.
var zeros = make([]byte, 256<<10)

// hashRange returns the SHA-1 of bytes [off, off+n) of f, streaming zeros for
// the holes. f must be finished.
func (f *sparseFile) hashRange(off, n int64) string {
	h := sha1.New()
	end := off + n
	i := sort.Search(len(f.chunks), func(i int) bool {
		c := f.chunks[i]
		return c.Off+int64(len(c.Data)) > off
	})
	pos := off
	for ; i < len(f.chunks) && pos < end; i++ {
		c := f.chunks[i]
		if c.Off >= end {
			break
		}
		writeZeros(h, c.Off-pos)
		lo := max(pos, c.Off) - c.Off
		hi := min(end, c.Off+int64(len(c.Data))) - c.Off
		h.Write(c.Data[lo:hi])
		pos = c.Off + hi
	}
	writeZeros(h, end-pos)
	return hex.EncodeToString(h.Sum(nil))
}

func writeZeros(h interface{ Write([]byte) (int, error) }, n int64) {
	for n > 0 {
		k := min(n, int64(len(zeros)))
		h.Write(zeros[:k])
		n -= k
	}
}

func sha1Hex(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

// rngFor gives every generated thing its own random source, derived from the
// seed and the thing's labels, so generation order (and parallelism) never
// changes the output.
func rngFor(seed int64, labels ...any) *rand.Rand {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(seed))
	h.Write(b[:])
	for _, l := range labels {
		fmt.Fprintf(h, "\x00%v", l)
	}
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// testPlainCap, when set, bounds every stream's decoded size: tests of the
// retail layout's structure need not encode 170 MB (under -race).
var testPlainCap int

// stream is one WAD stream the generator made: its bytes as on disc and what
// they decode to (only the size and hash are kept).
type stream struct {
	data      []byte
	tag       string
	plainSize int64
	plainSHA  string
	parts     []treeEntry // what the decoded content holds (NAME.d/), with their sums
	plain     []byte      // the decoded content, kept when it is structured (an asset)
}

// makeStream encodes plainSize bytes of asset-like content with tag. When the
// result is longer than capacity (0: no limit) it retries with less content.
func makeStream(rng *rand.Rand, tag string, plainSize int, capacity int64) (stream, error) {
	return makeStreamOf(rng, tag, plainSize, capacity, nil)
}

// makeStreamOf is makeStream whose decoded content, when content is set, is
// what content makes of about n bytes (with the parts it holds).
func makeStreamOf(rng *rand.Rand, tag string, plainSize int, capacity int64, content func(rng *rand.Rand, n int) ([]byte, []treeEntry)) (stream, error) {
	if testPlainCap > 0 {
		plainSize = min(plainSize, testPlainCap)
	}
	for attempt := 0; attempt < 8; attempt++ {
		var plain []byte
		var parts []treeEntry
		if content != nil {
			plain, parts = content(rng, plainSize)
		} else {
			plain = assetData(rng, tag, plainSize)
		}
		data := codec.Encode(plain, codec.EncodeOptions{Tag: tag})
		if capacity <= 0 || int64(len(data)) <= capacity {
			st := stream{data: data, tag: tag, plainSize: int64(len(plain)), plainSHA: sha1Hex(plain), parts: parts}
			if content != nil {
				st.plain = plain
			}
			return st, nil
		}
		plainSize = int(float64(plainSize) * float64(capacity) / float64(len(data)) * 0.85)
	}
	return stream{}, fmt.Errorf("mkdisc: cannot fit a %q stream into %d bytes", tag, capacity)
}

// assetData is a stream's decoded content: a small typed header naming the tag,
// then the codec's asset-like sample corpus (records, text, runs, noise, near and
// far repeats), so every packet kind of note 000 gets used.
func assetData(rng *rand.Rand, tag string, n int) []byte {
	if n < 64 {
		n = 64
	}
	out := codec.SampleData(int64(rng.Uint64()), n)
	var hdr [32]byte
	copy(hdr[:], "IGAS") // not "WAD": decoded content is an asset, not a stream
	binary.LittleEndian.PutUint32(hdr[4:], uint32(n))
	copy(hdr[8:24], tag)
	binary.LittleEndian.PutUint64(hdr[24:], rng.Uint64())
	copy(out, hdr[:])
	return out
}

// rawStyle selects how a raw extent's first bytes look.
type rawStyle int

const (
	styleGeneric rawStyle = iota
	styleVideo            // MPEG program stream pack header
	styleSubtitles
	styleSoundBank // "SBlk" at +24, "DAW" at +36
	styleCode      // MIPS-like words
	styleVAG       // a VAG sound: PS-ADPCM of a known signal
)

// rawContent fills a raw extent of n bytes at off in f. The first bytes carry
// the extent's name and index (so every extent hashes differently) and a little
// noise; in the small layout the whole extent (up to fillLimit) holds asset-like
// bytes, in retail only the first sector and the last few bytes do.
//
// For a VAG or a subtitle blob it returns the asset's own bytes (what its
// view is computed from); a video (index: its number NN) is a PSS
// (assets.WritePSSPadding) over all the bytes written, whose sequence header
// has videoRateCode(NN).
func rawContent(f *sparseFile, off, n int64, label string, index int, style rawStyle, rng *rand.Rand, fill bool) []byte {
	if n <= 0 {
		return nil
	}
	switch style {
	case styleVAG:
		if v := vagSound(rng, label, n); v != nil {
			f.put(off, v)
			return v
		}
		style = styleGeneric // too small for one frame: plain bytes
	case styleSubtitles:
		blob := subtitleBlob(rng, index, n)
		f.put(off, blob)
		return blob
	}
	head := min(n, sectorSize)
	const fillLimit = 256 << 10
	if fill {
		head = min(n, fillLimit)
	}
	b := make([]byte, head)
	p := 0
	switch style {
	case styleVideo:
		if len(b) >= assets.MinPSSSize {
			// A real video fills the extent's written bytes: the label and
			// noise ride in its padding packets, which players skip, and the
			// program end code is last.
			pad := []byte(fmt.Sprintf("GCFS synthetic %s #%d (%d bytes)\n", label, index, n))
			if fill {
				pad = append(pad, codec.SampleData(int64(rng.Uint64()), len(b))...)
			} else {
				for range 192 {
					pad = append(pad, byte(rng.Uint32()))
				}
			}
			p = copy(b, assets.WritePSSPadding(len(b), videoRateCode(index), pad))
		} else {
			p = copy(b, []byte{0x00, 0x00, 0x01, 0xBA, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01, 0x01, 0x89, 0xC3, 0xF8})
		}
	case styleSoundBank:
		if len(b) >= 40 {
			binary.LittleEndian.PutUint32(b[0:], 0x20)
			binary.LittleEndian.PutUint32(b[4:], uint32(n))
			binary.LittleEndian.PutUint32(b[8:], uint32(index))
			copy(b[24:], "SBlk")
			binary.LittleEndian.PutUint32(b[28:], 0x0102)
			binary.LittleEndian.PutUint32(b[32:], uint32(rng.Uint32()))
			copy(b[36:], "DAW")
			p = 40
		}
	case styleCode:
		for p+4 <= min(len(b), 64) {
			binary.LittleEndian.PutUint32(b[p:], 0x27bd0000|rng.Uint32()&0xffff) // addiu sp, sp, imm
			p += 4
		}
	}
	p += copy(b[p:], fmt.Sprintf("GCFS synthetic %s #%d (%d bytes)\n", label, index, n))
	if fill {
		copy(b[p:], codec.SampleData(int64(rng.Uint64()), len(b)-p))
	} else {
		for q := p; q < len(b) && q < p+192; q++ {
			b[q] = byte(rng.Uint32())
		}
	}
	if b[0] == 'W' && len(b) > 2 && b[1] == 'A' && b[2] == 'D' {
		b[0] = 'w' // a raw extent must never look like a WAD stream
	}
	f.put(off, b)
	if !fill && n > 2*sectorSize {
		tail := make([]byte, 64)
		for i := range tail {
			tail[i] = byte(rng.Uint32())
		}
		f.put(off+n-64, tail)
	} else if fill && n > fillLimit+64 {
		tail := make([]byte, 64)
		for i := range tail {
			tail[i] = byte(rng.Uint32())
		}
		f.put(off+n-64, tail)
	}
	return nil
}

// ReadAt reads f's bytes as the image holds them (tests, and table checks).
func (f *sparseFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 || off >= f.size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), f.size-off)
	clear(p[:n])
	i := sort.Search(len(f.chunks), func(i int) bool {
		c := f.chunks[i]
		return c.Off+int64(len(c.Data)) > off
	})
	for ; i < len(f.chunks) && f.chunks[i].Off < off+n; i++ {
		c := f.chunks[i]
		lo, hi := max(off, c.Off), min(off+n, c.Off+int64(len(c.Data)))
		copy(p[lo-off:hi-off], c.Data[lo-c.Off:hi-c.Off])
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}
