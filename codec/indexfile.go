package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sync/atomic"
)

// An index's checkpoints and groups as bytes, so that a caller can keep them
// (fsnode's persisted index) and a later process reads a stream without
// scanning it first. The snapshots are not kept: they are filled lazily, as
// in an index NewIndex builds.
//
// Layout: version byte, then uvarints: the checkpoint count, per checkpoint
// its input and output advance over the previous one (the first is the
// header's end, output 0) followed by its state byte, the group count, per
// group its first block's advance over the previous group's and its snapshot
// length.

const indexFileVersion = 1

// ErrIndexData is wrapped by LoadIndex's errors about the bytes it was given
// (as opposed to the stream's header).
var ErrIndexData = errors.New("wad: index data not usable")

// AppendBinary appends the index's checkpoints and groups to b.
func (ix *Index) AppendBinary(b []byte) []byte {
	b = append(b, indexFileVersion)
	b = binary.AppendUvarint(b, uint64(len(ix.cps)))
	var prev checkpoint
	prev.in = HeaderSize
	for _, cp := range ix.cps {
		b = binary.AppendUvarint(b, uint64(cp.in-prev.in))
		b = binary.AppendUvarint(b, uint64(cp.out-prev.out))
		b = append(b, cp.state)
		prev = cp
	}
	b = binary.AppendUvarint(b, uint64(len(ix.groupFirst)))
	pg := int32(0)
	for g, first := range ix.groupFirst {
		b = binary.AppendUvarint(b, uint64(first-pg))
		b = binary.AppendUvarint(b, uint64(ix.snapLen[g]))
		pg = first
	}
	return b
}

// LoadIndex rebuilds the index of the stream in r (as NewIndex takes r and
// size) from AppendBinary's bytes, reading only the stream's header. The
// bytes are checked against the header and against every rule an index
// NewIndex builds keeps (checkpoints in order, inside the stream, blocks of
// at most a block's length, groups covering the blocks, snapshots no longer
// than a window, the output within opt.MaxOutput), so hostile bytes give an
// error (wrapping ErrIndexData), never an allocation larger than the bytes
// themselves call for or a panic later. A stream that changed since is
// still caught when a block is decoded (DecodeBlock compares every
// checkpoint it passes).
func LoadIndex(r io.ReaderAt, size int64, opt Options, data []byte) (*Index, error) {
	h, err := readHeader(r, size)
	if err != nil {
		return nil, err
	}
	bad := func(off int, format string, args ...any) error {
		return fmt.Errorf("%w: byte %d: %s", ErrIndexData, off, fmt.Sprintf(format, args...))
	}
	off := 0
	uv := func(what string) (uint64, error) {
		v, n := binary.Uvarint(data[off:])
		if n <= 0 {
			return 0, bad(off, "%s: truncated or overlong", what)
		}
		off += n
		return v, nil
	}
	if len(data) < 1 || data[0] != indexFileVersion {
		return nil, bad(0, "not an index of version %d", indexFileVersion)
	}
	off = 1
	ncps, err := uv("checkpoint count")
	if err != nil {
		return nil, err
	}
	// Each checkpoint takes at least 3 bytes.
	if ncps < 2 || ncps > uint64(len(data)-off)/3 {
		return nil, bad(off, "checkpoint count %d does not fit the data", ncps)
	}
	maxOut := opt.outputLimit()
	maxBlock := uint64(blockTarget) + outSlack
	ix := &Index{hdr: h, opt: opt, cps: make([]checkpoint, ncps)}
	prev := checkpoint{in: HeaderSize}
	for i := range ix.cps {
		din, err := uv("checkpoint input")
		if err != nil {
			return nil, err
		}
		dout, err := uv("checkpoint output")
		if err != nil {
			return nil, err
		}
		if off >= len(data) {
			return nil, bad(off, "checkpoint %d: truncated", i)
		}
		state := data[off]
		off++
		last := i == len(ix.cps)-1
		switch {
		case i == 0 && (din != 0 || dout != 0 || state != stMatch):
			return nil, bad(off, "checkpoint 0 is not the header's end")
		case i > 0 && (din == 0 && !(last && ncps == 2) || din > uint64(h.Size-prev.in)):
			return nil, bad(off, "checkpoint %d: input advance %d (at %#x of a %#x-byte stream)", i, din, prev.in, h.Size)
		case i > 0 && dout > maxBlock:
			return nil, bad(off, "checkpoint %d: a block of %d bytes", i, dout)
		case i > 0 && dout == 0 && !(last && ncps == 2):
			return nil, bad(off, "checkpoint %d: an empty block", i)
		case state > stLittle:
			return nil, bad(off, "checkpoint %d: state %d", i, state)
		}
		cp := checkpoint{in: prev.in + int64(din), out: prev.out + int64(dout), state: state}
		if cp.out > maxOut {
			return nil, bad(off, "output past the limit of %d bytes", maxOut)
		}
		if last && (cp.in != h.Size || cp.state != stMatch) {
			return nil, bad(off, "the last checkpoint is not the stream's end")
		}
		ix.cps[i], prev = cp, cp
	}
	ng, err := uv("group count")
	if err != nil {
		return nil, err
	}
	nb := uint64(ix.NumBlocks())
	if ng < 1 || ng > max(nb, 1) || ng > uint64(len(data)-off)/2 {
		return nil, bad(off, "group count %d for %d blocks", ng, nb)
	}
	ix.groupFirst = make([]int32, ng)
	ix.snapLen = make([]int32, ng)
	first := uint64(0)
	for g := range ix.groupFirst {
		d, err := uv("group start")
		if err != nil {
			return nil, err
		}
		sl, err := uv("snapshot length")
		if err != nil {
			return nil, err
		}
		first += d
		switch {
		case g == 0 && (d != 0 || sl != 0):
			return nil, bad(off, "group 0 does not start the stream")
		case g > 0 && (d == 0 || first >= nb || d > maxGroupBlocks):
			return nil, bad(off, "group %d starts at block %d of %d", g, first, nb)
		case sl > maxWindow || int64(sl) > ix.cps[first].out:
			return nil, bad(off, "group %d: snapshot of %d bytes", g, sl)
		}
		ix.groupFirst[g], ix.snapLen[g] = int32(first), int32(sl)
		ix.maxSnaps += int64(sl)
	}
	if nb > 0 && nb-first > maxGroupBlocks {
		return nil, bad(off, "the last group has %d blocks", nb-first)
	}
	if off != len(data) {
		return nil, bad(off, "%d bytes after the index", len(data)-off)
	}
	ix.snaps = make([]atomic.Pointer[[]byte], ng)
	return ix, nil
}

// PeekIndex reads, from AppendBinary's bytes alone, the decoded size and
// the stream's length (header included) the index says: its last
// checkpoint. It checks only what it reads (the version, the varints, the
// checkpoint count against the data's length, offsets that do not
// overflow); LoadIndex checks the rest against the stream. A caller that
// keeps a decoded size beside an index tells with it, reading no stream,
// whether the two agree.
func PeekIndex(data []byte) (decoded, stream int64, err error) {
	bad := func(off int, what string) error {
		return fmt.Errorf("%w: byte %d: %s", ErrIndexData, off, what)
	}
	if len(data) < 1 || data[0] != indexFileVersion {
		return 0, 0, bad(0, fmt.Sprintf("not an index of version %d", indexFileVersion))
	}
	off := 1
	uv := func() (uint64, bool) {
		v, n := binary.Uvarint(data[off:])
		if n <= 0 {
			return 0, false
		}
		off += n
		return v, true
	}
	ncps, ok := uv()
	if !ok || ncps < 2 || ncps > uint64(len(data)-off)/3 {
		return 0, 0, bad(off, "checkpoint count")
	}
	in, out := uint64(HeaderSize), uint64(0)
	for range ncps {
		din, ok1 := uv()
		dout, ok2 := uv()
		if !ok1 || !ok2 || off >= len(data) || din > math.MaxInt64-in || dout > math.MaxInt64-out {
			return 0, 0, bad(off, "checkpoint truncated or out of range")
		}
		off++ // state
		in, out = in+din, out+dout
	}
	return int64(out), int64(in), nil
}
