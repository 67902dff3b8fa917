package codec

import (
	"errors"
	"math"
)

// ErrOverBudget is NewIndexDecode's error for a stream whose output would
// pass the caller's budget (which says nothing about the stream).
var ErrOverBudget = errors.New("wad: output past the decode budget")

// NewIndexDecode decodes the whole stream held in src (as Decode does) and
// builds, in the same pass, the Index NewIndex would build of it, with every
// window snapshot filled from the output: one pass where NewIndex's scan and
// a decode would be two (a caller about to read the whole stream anyway).
// Its errors are Decode's; a stream NewIndex and Decode accept gives the same
// index as NewIndex. On error the output decoded cleanly so far is returned
// with it, and no index. budget, when positive, bounds the output this call
// may hold: a stream that decodes to more fails with ErrOverBudget (the
// options' MaxOutput stays the stream's rule, and the index's).
//
// The checkpoints are where the decoder stops: the first packet boundary
// past each blockTarget of output, as the scanner stops. A group's snapshot
// length needs the lowest output offset its matches read, which only a
// match in the group's first maxWindow bytes can put before the group: the
// decoder tracks it there (its checked loop) and runs its fast loop after.
//
// The output goes into dst's array when its capacity holds it (a buffer the
// caller reuses: the index keeps no reference to it), else into a new one.
func NewIndexDecode(dst, src []byte, opt Options, budget int64) (*Index, []byte, error) {
	h, err := parseHeaderIn(src, int64(len(src)))
	if err != nil {
		return nil, nil, err
	}
	d := decoder{in: src[HeaderSize:h.Size], inBase: HeaderSize, end: h.Size, full: true, first: true}
	d.setOptions(opt)
	overBudget := budget > 0 && budget < d.maxOut
	if overBudget {
		d.maxOut = budget
	}
	d.out = dst[:0]
	if cap(dst) < writeSlack {
		// The output's first guess, as AppendDecode's; it grows past it.
		guess := min(int64(len(d.in))*3+64, d.maxOut)
		d.out = make([]byte, 0, guess+writeSlack)
	}

	// The index's rules are indexBuilder's, fed the decoder's position,
	// output and reach.
	b := indexBuilder{cps: []checkpoint{{in: HeaderSize}}}
	b.newGroup()
	d.minRef = 0 // group 0 starts at the output's start: nothing before it
	for {
		o := int64(len(d.out))
		blockStop := b.cps[len(b.cps)-1].out + blockTarget
		stop := blockStop
		d.trackRef = o < b.groupStart+maxWindow
		if d.trackRef {
			stop = min(stop, b.groupStart+maxWindow)
		}
		if err := d.run(math.MaxInt64, stop); err != nil {
			var ce *CorruptError
			if overBudget && errors.As(err, &ce) && ce.Rule == RuleOutputLimit {
				err = ErrOverBudget
			}
			return nil, d.out, err
		}
		if d.pos >= len(d.in) {
			break // the stream's end
		}
		if o = int64(len(d.out)); o < blockStop {
			continue // past the tracked part of the group: on untracked
		}
		if b.mark(checkpoint{in: d.inBase + int64(d.pos), out: o, state: d.state}, d.minRef) {
			d.minRef = o
		}
	}
	b.finishAt(h.Size, int64(len(d.out)), d.minRef)
	ix := b.index(h, opt)
	for g := 1; g < len(ix.groupFirst); g++ {
		ix.store(g, d.out[:ix.cps[ix.groupFirst[g]].out], 0)
	}
	return ix, d.out, nil
}
