package imagefile

import (
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"gcfs/cache"
)

// CHD v5 as MAME's chd.cpp writes it (all integers big-endian):
//
//	0  "MComprHD"   8  header length (124)   12 version (5)
//	16 compressors[4] (four-CC codec tags; 0 = none)
//	32 logical bytes  40 map offset  48 metadata offset
//	56 hunk bytes     60 unit bytes
//	64 raw (data) SHA-1   84 SHA-1 of data+metadata   104 parent SHA-1
const (
	chdMagic       = "MComprHD"
	chdV5HdrLen    = 124
	maxHunkBytes   = 1 << 24 // 16 MiB: far above any chdman hunk size
	maxMetaEntries = 1024
	maxMetaLen     = 1 << 20
	maxChainDepth  = 8 // self/parent reference chain
)

// codec four-CCs
const (
	tagZlib = 0x7a6c6962 // zlib
	tagLZMA = 0x6c7a6d61 // lzma
	tagHuff = 0x68756666 // huff
	tagFLAC = 0x666c6163 // flac
	tagZstd = 0x7a737464 // zstd
	tagCDZL = 0x63647a6c // cdzl
	tagCDLZ = 0x63646c7a // cdlz
	tagCDFL = 0x6364666c // cdfl
	tagCDZS = 0x63647a73 // cdzs
)

// v5 map entry types
const (
	compType0 = iota
	compType1
	compType2
	compType3
	compNone
	compSelf
	compParent
	compRLESmall
	compRLELarge
	compSelf0
	compSelf1
	compParentSelf
	compParent0
	compParent1
)

type chdHeader struct {
	codecs     [4]uint32
	logical    uint64
	mapOff     uint64
	metaOff    uint64
	hunkBytes  uint32
	unitBytes  uint32
	rawSHA1    [20]byte
	sha1       [20]byte
	parentSHA1 [20]byte
	hunkCount  uint32
}

// mapEntry is one hunk's decoded map entry.
type mapEntry struct {
	typ    uint8
	length uint32 // compressed length
	offset uint64 // file offset; hunk number for self; unit number for parent
	crc    uint16
}

type metaEntry struct {
	tag   uint32
	flags uint8
	data  []byte
}

type chdFile struct {
	name    string
	r       io.ReaderAt
	size    int64
	hdr     chdHeader
	entries []mapEntry
	meta    []metaEntry
	parent  *chdFile
	cache   *cache.Cache
	fileID  uint64
	logf    func(string, ...any)
	codecs  [4]hunkCodec
	logged  sync.Map // hunks whose failure was logged (errors are not cached; reads retry)
}

func (c *chdFile) ferr(what string, off int64, format string, a ...any) error {
	return &FormatError{Image: c.name, What: what, Offset: off, Reason: fmt.Sprintf(format, a...)}
}

func tagString(t uint32) string {
	if t == 0 {
		return "none"
	}
	b := []byte{byte(t >> 24), byte(t >> 16), byte(t >> 8), byte(t)}
	for _, x := range b {
		if x < 0x20 || x > 0x7e {
			return fmt.Sprintf("%#08x", t)
		}
	}
	return string(b)
}

func openCHD(r io.ReaderAt, size int64, opt Options) (*chdFile, error) {
	c := &chdFile{name: opt.Name, r: r, size: size, cache: opt.Cache, fileID: nextFileID(), logf: opt.Logf}
	if err := c.readHeader(); err != nil {
		return nil, err
	}
	for i, t := range c.hdr.codecs {
		if t == 0 {
			continue
		}
		hc, err := newHunkCodec(t, c.hdr.hunkBytes)
		if err != nil {
			return nil, c.ferr("CHD header", 16+int64(i)*4, "%v", err)
		}
		c.codecs[i] = hc
	}
	if err := c.readMap(); err != nil {
		return nil, err
	}
	if err := c.readMeta(); err != nil {
		return nil, err
	}
	if err := c.attachParent(opt.Parent); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *chdFile) readHeader() error {
	var b [chdV5HdrLen]byte
	if c.size < 16 {
		return c.ferr("CHD header", 0, "file of %d bytes is too short for a header", c.size)
	}
	if _, err := c.r.ReadAt(b[:16], 0); err != nil {
		return c.ferr("CHD header", 0, "reading: %v", err)
	}
	hlen := binary.BigEndian.Uint32(b[8:])
	ver := binary.BigEndian.Uint32(b[12:])
	if ver != 5 {
		return c.ferr("CHD header", 12, "CHD version %d is not supported (only v5; convert with chdman copy)", ver)
	}
	if hlen != chdV5HdrLen {
		return c.ferr("CHD header", 8, "v5 header length %d, want %d", hlen, chdV5HdrLen)
	}
	if c.size < chdV5HdrLen {
		return c.ferr("CHD header", 0, "file of %d bytes is too short for a v5 header", c.size)
	}
	if _, err := c.r.ReadAt(b[:], 0); err != nil {
		return c.ferr("CHD header", 0, "reading: %v", err)
	}
	h := &c.hdr
	for i := range h.codecs {
		h.codecs[i] = binary.BigEndian.Uint32(b[16+4*i:])
	}
	h.logical = binary.BigEndian.Uint64(b[32:])
	h.mapOff = binary.BigEndian.Uint64(b[40:])
	h.metaOff = binary.BigEndian.Uint64(b[48:])
	h.hunkBytes = binary.BigEndian.Uint32(b[56:])
	h.unitBytes = binary.BigEndian.Uint32(b[60:])
	copy(h.rawSHA1[:], b[64:84])
	copy(h.sha1[:], b[84:104])
	copy(h.parentSHA1[:], b[104:124])
	if h.hunkBytes == 0 || h.hunkBytes > maxHunkBytes {
		return c.ferr("CHD header", 56, "hunk size %d outside 1..%d", h.hunkBytes, maxHunkBytes)
	}
	if h.unitBytes == 0 || h.unitBytes > h.hunkBytes || h.hunkBytes%h.unitBytes != 0 {
		return c.ferr("CHD header", 60, "unit size %d does not divide hunk size %d", h.unitBytes, h.hunkBytes)
	}
	if h.logical > 1<<50 {
		return c.ferr("CHD header", 32, "logical size %d is implausible", h.logical)
	}
	hc := (h.logical + uint64(h.hunkBytes) - 1) / uint64(h.hunkBytes)
	if hc >= 1<<32 {
		return c.ferr("CHD header", 32, "%d hunks do not fit the map", hc)
	}
	h.hunkCount = uint32(hc)
	// The decoded map takes a few bytes a hunk: refuse a map far larger
	// than anything this file could plausibly describe.
	// (A mostly-zero disc is all self references and maps in a few bytes,
	// so the bound is generous: 2M hunks, or 4 hunks a byte of file.)
	if limit := max(int64(32<<20), 64*c.size); int64(hc)*16 > limit {
		return c.ferr("CHD header", 32, "%d hunks in a %d-byte file is implausible", hc, c.size)
	}
	if h.mapOff < chdV5HdrLen || h.mapOff >= uint64(c.size) {
		return c.ferr("CHD header", 40, "map offset %#x outside the file (%d bytes)", h.mapOff, c.size)
	}
	if h.metaOff != 0 && (h.metaOff < chdV5HdrLen || h.metaOff >= uint64(c.size)) {
		return c.ferr("CHD header", 48, "metadata offset %#x outside the file", h.metaOff)
	}
	return nil
}

// readMap decodes the v5 map: raw 4-byte entries for an uncompressed CHD,
// otherwise the Huffman-coded compressed map with its CRC-16.
func (c *chdFile) readMap() error {
	h := &c.hdr
	n := int64(h.hunkCount)
	mo := int64(h.mapOff)
	if h.codecs[0] == 0 {
		if mo+4*n > c.size {
			return c.ferr("CHD map", mo, "uncompressed map of %d hunks runs past the end of the file", n)
		}
		raw := make([]byte, 4*n)
		if _, err := c.r.ReadAt(raw, mo); err != nil {
			return c.ferr("CHD map", mo, "reading: %v", err)
		}
		c.entries = make([]mapEntry, n)
		for i := range c.entries {
			v := uint64(binary.BigEndian.Uint32(raw[4*i:]))
			e := &c.entries[i]
			if v == 0 {
				e.typ = compParent // or zeros when there is no parent
				e.offset = uint64(i) * uint64(h.hunkBytes) / uint64(h.unitBytes)
				continue
			}
			e.typ = compNone
			e.offset = v * uint64(h.hunkBytes)
			e.length = h.hunkBytes
			if e.offset+uint64(h.hunkBytes) > uint64(c.size) {
				return c.ferr("CHD map", mo+4*int64(i), "hunk %d at %#x lies outside the file", i, e.offset)
			}
		}
		return nil
	}
	var mh [16]byte
	if mo+16 > c.size {
		return c.ferr("CHD map", mo, "map header runs past the end of the file")
	}
	if _, err := c.r.ReadAt(mh[:], mo); err != nil {
		return c.ferr("CHD map", mo, "reading: %v", err)
	}
	mapBytes := int64(binary.BigEndian.Uint32(mh[0:]))
	first := uint64(mh[4])<<40 | uint64(mh[5])<<32 | uint64(binary.BigEndian.Uint32(mh[6:]))
	mapCRC := binary.BigEndian.Uint16(mh[10:])
	lengthBits, selfBits, parentBits := uint(mh[12]), uint(mh[13]), uint(mh[14])
	if mapBytes > c.size-mo-16 {
		return c.ferr("CHD map", mo, "compressed map of %d bytes runs past the end of the file", mapBytes)
	}
	if lengthBits > 32 || selfBits > 32 || parentBits > 32 {
		return c.ferr("CHD map", mo+12, "field widths %d/%d/%d bits exceed 32", lengthBits, selfBits, parentBits)
	}
	comp := make([]byte, mapBytes)
	if _, err := c.r.ReadAt(comp, mo+16); err != nil {
		return c.ferr("CHD map", mo+16, "reading: %v", err)
	}
	entries, err := decodeV5Map(comp, h.hunkCount, h.hunkBytes, h.unitBytes, first, lengthBits, selfBits, parentBits, mapCRC)
	if err != nil {
		return c.ferr("CHD map", mo, "%v", err)
	}
	// Every stored hunk must lie inside the file; references must name a hunk.
	for i := range entries {
		e := &entries[i]
		switch e.typ {
		case compType0, compType1, compType2, compType3:
			if c.codecs[e.typ] == nil {
				return c.ferr("CHD map", mo, "hunk %d uses compressor slot %d, which is empty", i, e.typ)
			}
			fallthrough
		case compNone:
			if e.offset > uint64(c.size) || uint64(e.length) > uint64(c.size)-e.offset {
				return c.ferr("CHD map", mo, "hunk %d (%d bytes at %#x) lies outside the file (%d bytes)", i, e.length, e.offset, c.size)
			}
			if e.typ == compNone && e.length != h.hunkBytes {
				return c.ferr("CHD map", mo, "uncompressed hunk %d is %d bytes, not %d", i, e.length, h.hunkBytes)
			}
			if e.length > h.hunkBytes*2+1024 {
				return c.ferr("CHD map", mo, "hunk %d compressed to %d bytes, more than a hunk holds", i, e.length)
			}
		case compSelf:
			if e.offset >= uint64(h.hunkCount) || e.offset == uint64(i) {
				return c.ferr("CHD map", mo, "hunk %d refers to hunk %d", i, e.offset)
			}
		}
	}
	c.entries = entries
	return nil
}

// decodeV5Map decodes a compressed v5 map (the bytes after its 16-byte header).
func decodeV5Map(comp []byte, hunks, hunkBytes, unitBytes uint32, first uint64, lengthBits, selfBits, parentBits uint, wantCRC uint16) ([]mapEntry, error) {
	br := newBitReader(comp)
	var hd huffDecoder
	if err := hd.init(16, 8); err != nil {
		return nil, err
	}
	if err := hd.importTreeRLE(br); err != nil {
		return nil, fmt.Errorf("map Huffman tree: %v", err)
	}
	types := make([]byte, hunks)
	var last byte
	rep := 0
	for i := range types {
		if rep > 0 {
			types[i] = last
			rep--
			continue
		}
		v := byte(hd.decode(br))
		switch v {
		case compRLESmall:
			types[i] = last
			rep = 2 + int(hd.decode(br))
		case compRLELarge:
			types[i] = last
			rep = 2 + 16 + int(hd.decode(br))<<4
			rep += int(hd.decode(br))
		default:
			types[i] = v
			last = v
		}
		if br.overflow() {
			return nil, errors.New("map runs out of data in the entry types")
		}
	}
	entries := make([]mapEntry, hunks)
	crc := uint16(0xffff) // over the 12-byte form of every entry
	var r [12]byte
	cur := first
	var lastSelf, lastParent uint64
	hunkUnits := uint64(hunkBytes / unitBytes)
	for i := range entries {
		off := cur
		var length uint32
		var hcrc uint16
		t := types[i]
		switch t {
		case compType0, compType1, compType2, compType3:
			length = br.read(lengthBits)
			cur += uint64(length)
			hcrc = uint16(br.read(16))
		case compNone:
			length = hunkBytes
			cur += uint64(length)
			hcrc = uint16(br.read(16))
		case compSelf:
			off = uint64(br.read(selfBits))
			lastSelf = off
		case compParent:
			off = uint64(br.read(parentBits))
			lastParent = off
		case compSelf1:
			lastSelf++
			fallthrough
		case compSelf0:
			t = compSelf
			off = lastSelf
		case compParentSelf:
			t = compParent
			off = uint64(i) * uint64(hunkBytes) / uint64(unitBytes)
			lastParent = off
		case compParent1:
			lastParent += hunkUnits
			fallthrough
		case compParent0:
			t = compParent
			off = lastParent
		default:
			return nil, fmt.Errorf("hunk %d has map entry type %d", i, t)
		}
		if br.overflow() {
			return nil, fmt.Errorf("map runs out of data at hunk %d", i)
		}
		entries[i] = mapEntry{typ: t, length: length, offset: off, crc: hcrc}
		r[0] = t
		r[1], r[2], r[3] = byte(length>>16), byte(length>>8), byte(length)
		r[4], r[5] = byte(off>>40), byte(off>>32)
		binary.BigEndian.PutUint32(r[6:], uint32(off))
		binary.BigEndian.PutUint16(r[10:], hcrc)
		crc = crc16Update(crc, r[:])
	}
	if got := crc; got != wantCRC {
		return nil, fmt.Errorf("map CRC-16 %#04x, header says %#04x", got, wantCRC)
	}
	return entries, nil
}

// readMeta walks the metadata chain: each entry is tag(4) flags(1) length(3)
// next(8) data(length).
func (c *chdFile) readMeta() error {
	off := c.hdr.metaOff
	seen := map[uint64]bool{}
	for off != 0 {
		if len(c.meta) >= maxMetaEntries || seen[off] {
			return c.ferr("CHD metadata", int64(off), "metadata chain loops or is too long")
		}
		seen[off] = true
		if off < chdV5HdrLen || off > uint64(c.size) || uint64(c.size)-off < 16 {
			return c.ferr("CHD metadata", int64(off), "entry outside the file")
		}
		var b [16]byte
		if _, err := c.r.ReadAt(b[:], int64(off)); err != nil {
			return c.ferr("CHD metadata", int64(off), "reading: %v", err)
		}
		tag := binary.BigEndian.Uint32(b[0:])
		flags := b[4]
		length := uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
		next := binary.BigEndian.Uint64(b[8:])
		if length > maxMetaLen || length > uint64(c.size)-off-16 {
			return c.ferr("CHD metadata", int64(off), "entry of %d bytes runs past the end of the file", length)
		}
		data := make([]byte, length)
		if _, err := c.r.ReadAt(data, int64(off)+16); err != nil {
			return c.ferr("CHD metadata", int64(off)+16, "reading: %v", err)
		}
		c.meta = append(c.meta, metaEntry{tag: tag, flags: flags, data: data})
		off = next
	}
	return nil
}

func (c *chdFile) hasParent() bool { return c.hdr.parentSHA1 != [20]byte{} }

func (c *chdFile) attachParent(p *Image) error {
	if !c.hasParent() {
		if p != nil {
			return &ParentError{Image: c.name, Reason: "--parent given but this CHD has no parent"}
		}
		return nil
	}
	if p == nil || p.chd == nil {
		return &ParentError{Image: c.name, Reason: fmt.Sprintf("this CHD is a child: it needs --parent (a CHD with SHA-1 %x)", c.hdr.parentSHA1)}
	}
	if p.chd.hdr.sha1 != c.hdr.parentSHA1 {
		return &ParentError{Image: c.name, Reason: fmt.Sprintf("parent SHA-1 is %x, this CHD needs %x", p.chd.hdr.sha1, c.hdr.parentSHA1)}
	}
	if p.chd.hdr.unitBytes != c.hdr.unitBytes {
		return &ParentError{Image: c.name, Reason: fmt.Sprintf("parent unit size %d differs from %d", p.chd.hdr.unitBytes, c.hdr.unitBytes)}
	}
	c.parent = p.chd
	return nil
}

// hunk returns hunk n decoded, through the cache.
func (c *chdFile) hunk(n uint32) ([]byte, error) {
	return c.cache.Get(hunkKey(c.fileID, int64(n)), func() ([]byte, error) {
		b, err := c.decodeHunk(n, 0)
		if err != nil && c.logf != nil {
			if _, dup := c.logged.LoadOrStore(n, true); !dup {
				c.logf("%v", err) // once a hunk: errors are not cached, reads retry
			}
		}
		return b, err
	})
}

func (c *chdFile) herr(n uint32, codec string, off uint64, format string, a ...any) error {
	return &HunkError{Image: c.name, Hunk: int64(n), Codec: codec, Offset: int64(off), Reason: fmt.Sprintf(format, a...)}
}

func (c *chdFile) decodeHunk(n uint32, depth int) ([]byte, error) {
	if n >= c.hdr.hunkCount {
		return nil, c.herr(n, "none", 0, "hunk number outside the map (%d hunks)", c.hdr.hunkCount)
	}
	if depth > maxChainDepth {
		return nil, c.herr(n, "self", 0, "reference chain longer than %d", maxChainDepth)
	}
	e := c.entries[n]
	hb := c.hdr.hunkBytes
	switch e.typ {
	case compType0, compType1, compType2, compType3:
		codec := c.codecs[e.typ]
		src := make([]byte, e.length)
		if _, err := c.r.ReadAt(src, int64(e.offset)); err != nil {
			return nil, c.herr(n, codec.name(), e.offset, "reading %d bytes: %v", e.length, err)
		}
		dst := make([]byte, hb)
		if err := safeDecode(codec, src, dst); err != nil {
			return nil, c.herr(n, codec.name(), e.offset, "%v", err)
		}
		if got := crc16(dst); got != e.crc {
			return nil, c.herr(n, codec.name(), e.offset, "CRC-16 of the decoded hunk is %#04x, map says %#04x", got, e.crc)
		}
		return dst, nil
	case compNone:
		dst := make([]byte, hb)
		if _, err := c.r.ReadAt(dst, int64(e.offset)); err != nil {
			return nil, c.herr(n, "none", e.offset, "reading: %v", err)
		}
		if c.hdr.codecs[0] != 0 { // the uncompressed map carries no CRCs
			if got := crc16(dst); got != e.crc {
				return nil, c.herr(n, "none", e.offset, "CRC-16 %#04x, map says %#04x", got, e.crc)
			}
		}
		return dst, nil
	case compSelf:
		if e.offset >= uint64(c.hdr.hunkCount) || e.offset == uint64(n) {
			return nil, c.herr(n, "self", 0, "refers to hunk %d", e.offset)
		}
		// Decoded directly rather than through the cache: a reference
		// chain must not wait on an in-flight load of itself.
		return c.decodeHunk(uint32(e.offset), depth+1)
	case compParent:
		if c.parent == nil {
			if c.hdr.codecs[0] == 0 && !c.hasParent() {
				return make([]byte, hb), nil // unwritten hunk of an uncompressed CHD
			}
			return nil, c.herr(n, "parent", 0, "hunk lives in the parent, which is not open")
		}
		dst := make([]byte, hb)
		pos := e.offset * uint64(c.hdr.unitBytes)
		if err := c.parent.readLogical(dst, pos, depth+1); err != nil {
			return nil, c.herr(n, "parent", 0, "parent unit %d: %v", e.offset, err)
		}
		return dst, nil
	}
	return nil, c.herr(n, "none", 0, "map entry type %d", e.typ)
}

// readLogical fills p from the logical data at pos (hunk by hunk; past the
// last hunk is an error).
func (c *chdFile) readLogical(p []byte, pos uint64, depth int) error {
	hb := uint64(c.hdr.hunkBytes)
	for len(p) > 0 {
		h := pos / hb
		if h >= uint64(c.hdr.hunkCount) {
			return fmt.Errorf("offset %d past the last hunk", pos)
		}
		var b []byte
		var err error
		if depth == 0 {
			b, err = c.hunk(uint32(h))
		} else {
			b, err = c.cache.Get(hunkKey(c.fileID, int64(h)), func() ([]byte, error) { return c.decodeHunk(uint32(h), depth) })
		}
		if err != nil {
			return err
		}
		k := copy(p, b[pos%hb:])
		p = p[k:]
		pos += uint64(k)
	}
	return nil
}

// logicalReader reads the CHD's logical bytes.
type logicalReader struct{ c *chdFile }

func (l logicalReader) ReadAt(p []byte, off int64) (int, error) {
	lim := int64(l.c.hdr.logical)
	if off >= lim {
		return 0, io.EOF
	}
	n := len(p)
	if int64(n) > lim-off {
		n = int(lim - off)
	}
	// Hunk by hunk so a bad hunk still returns what came before it.
	done := 0
	hb := int64(l.c.hdr.hunkBytes)
	for done < n {
		pos := off + int64(done)
		k := int(min(int64(n-done), hb-pos%hb))
		if err := l.c.readLogical(p[done:done+k], uint64(pos), 0); err != nil {
			return done, err
		}
		done += k
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// userView picks how the logical data becomes 2048-byte sectors: a CD CHD
// through its first data track's frames, anything else directly.
func (c *chdFile) userView() (io.ReaderAt, int64, error) {
	tracks, isCD, err := c.cdTracks()
	if err != nil {
		return nil, 0, err
	}
	if !isCD {
		return logicalReader{c}, int64(c.hdr.logical), nil
	}
	return newCDView(c, tracks)
}

func (c *chdFile) fillInfo(inf *Info) {
	inf.Version = 5
	for _, t := range c.hdr.codecs {
		if t != 0 {
			inf.Codecs = append(inf.Codecs, tagString(t))
		}
	}
	if len(inf.Codecs) == 0 {
		inf.Codecs = []string{"none"}
	}
	inf.HunkBytes = int64(c.hdr.hunkBytes)
	inf.UnitBytes = int64(c.hdr.unitBytes)
	inf.LogicalBytes = int64(c.hdr.logical)
	inf.Hunks = int64(c.hdr.hunkCount)
	if c.hdr.rawSHA1 != [20]byte{} {
		inf.DataSHA1 = fmt.Sprintf("%x", c.hdr.rawSHA1)
		inf.SHA1 = fmt.Sprintf("%x", c.hdr.sha1)
	}
	if c.hasParent() {
		inf.ParentSHA1 = fmt.Sprintf("%x", c.hdr.parentSHA1)
	}
	if tr, ok, _ := c.cdTracks(); ok {
		inf.Tracks = tr
	}
}

// dataSHA1 hashes every logical byte.
func (c *chdFile) dataSHA1() (string, error) {
	h := sha1.New()
	if _, err := io.Copy(h, io.NewSectionReader(logicalReader{c}, 0, int64(c.hdr.logical))); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// crc16 is CRC-16/CCITT (polynomial 0x1021, initial 0xffff), as CHD uses.
func crc16(b []byte) uint16 { return crc16Update(0xffff, b) }

func crc16Update(crc uint16, b []byte) uint16 {
	for _, x := range b {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^x]
	}
	return crc
}

var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return
}()
