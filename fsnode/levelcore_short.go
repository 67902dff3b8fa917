package fsnode

import (
	"gcfs/codec"
	"gcfs/discimg/levelcore"
)

// A core_data that decodes short: shorter than the core_index+0x8c the
// level core's offsets are checked against. What lies past the real end is
// left out of data.d/core/ when the build can know the real size without
// reading the stream: the index sidecar's remembered size (checked as a
// scan would take it), or, failing that, the most the stream's length can
// decode to (codec.MaxDecodedSize of its header's size). Otherwise it is
// known at the first read of core_data: the entries past the end then fail
// their reads with an error naming both sizes, core_data's own warning says
// it once, and info on data.d/core lists them.

// knownDecodedSize is a decoded file's size when the build knows it without
// reading the stream (the sidecar's, checked), or -1.
func (n *Node) knownDecodedSize() int64 {
	s := n.tree.side
	if s == nil || n.Kind != Decoded {
		return -1
	}
	k := n.sideKey()
	if k == "" {
		return -1
	}
	s.mu.Lock()
	e := s.entries[k]
	ok := e != nil && e.sized && !e.corrupt && len(e.index) > 0
	var size int64
	var index []byte
	if ok {
		size, index = e.size, e.index
	}
	s.mu.Unlock()
	if !ok || n.sideSizeRefused(size, index) != "" {
		return -1 // the scan will refuse (and say so) or learn it
	}
	return size
}

// clipShortCore leaves out what lies past core_data's end when the build
// knows it is short, logging one line for all of it.
func (b *builder) clipShortCore(c *levelcore.Core, cd *Node, where string) {
	end, how := cd.knownDecodedSize(), "the index sidecar's size"
	if end < 0 {
		if lim := codec.MaxDecodedSize(cd.streamLen()); lim < c.DataSize {
			end, how = lim, "the most its stream's length decodes to"
		}
	}
	if end < 0 || end >= c.DataSize {
		return
	}
	if n := c.Clip(end); n > 0 {
		b.t.logf("%s: core_data decodes to %d bytes (%s), core_index+0x8c records %d: %d entries past its end left out (info names them)", where, end, how, c.DataSize, n)
	}
}

// CoreDataShort is, for a level core directory, what lies past the end of a
// core_data found short after the build (its size learned by a scan, which
// this runs): the entries whose reads fail, and the sizes; nil when
// core_data decodes to what +0x8c records (or the build left those entries
// out already). err is core_data's own error when it cannot be decoded
// whole: then decoded is what decodes cleanly before a broken rule and past
// lists what lies beyond it (cleanprefix.go), or, for any other error,
// decoded is 0 and every entry fails.
func (n *Node) CoreDataShort() (decoded int64, past []levelcore.Skip, err error) {
	c := n.LevelCore()
	if c == nil || n.Parent == nil {
		return 0, nil, nil
	}
	cd := n.Parent.Child("core_data")
	if cd == nil {
		return 0, nil, nil
	}
	decoded = cd.Size()
	if err := cd.Err(); err != nil {
		if !cd.brokenStream() {
			return 0, nil, err
		}
		return decoded, c.PastEnd(decoded), err
	}
	if decoded < c.DataSize {
		past = c.PastEnd(decoded)
	}
	return decoded, past, nil
}
