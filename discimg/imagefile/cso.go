package imagefile

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"gcfs/cache"
)

// CSO v1/v2 and ZSO (little-endian):
//
//	0 magic "CISO"/"ZISO"  4 header size (0x18)  8 uncompressed bytes
//	16 block size  20 version  21 index shift (alignment)  22 reserved
//	24 index: blocks+1 uint32 entries; entry&0x7fffffff << shift is the
//	   block's file offset, the next entry's offset ends it.
//
// Bit 31: CSO v1 and ZSO, block stored uncompressed; CSO v2, block is LZ4
// (otherwise deflate), and a block as long as the block size is stored.
// CSO v1 blocks are raw deflate; ZSO blocks are raw LZ4 blocks.
const (
	csoHdrLen   = 24
	maxCSOBlock = 1 << 24
	csoFlag     = 0x80000000
)

type csoFile struct {
	name      string
	r         io.ReaderAt
	zso       bool
	version   int
	blockSize int64
	shift     uint
	total     int64
	index     []uint32
	cache     *cache.Cache
	fileID    uint64
	logf      func(string, ...any)
	logged    sync.Map
}

func openCSO(r io.ReaderAt, size int64, opt Options) (*csoFile, error) {
	c := &csoFile{name: opt.Name, r: r, cache: opt.Cache, fileID: nextFileID(), logf: opt.Logf}
	ferr := func(off int64, format string, a ...any) error {
		what := "CSO header"
		if off >= csoHdrLen {
			what = "CSO index"
		}
		if c.zso {
			what = "Z" + what[1:]
		}
		return &FormatError{Image: c.name, What: what, Offset: off, Reason: fmt.Sprintf(format, a...)}
	}
	if size < csoHdrLen {
		return nil, ferr(0, "file of %d bytes is too short for a header", size)
	}
	var h [csoHdrLen]byte
	if _, err := r.ReadAt(h[:], 0); err != nil {
		return nil, ferr(0, "reading: %v", err)
	}
	c.zso = string(h[:4]) == "ZISO"
	hdrSize := binary.LittleEndian.Uint32(h[4:])
	total := binary.LittleEndian.Uint64(h[8:])
	bs := binary.LittleEndian.Uint32(h[16:])
	c.version = int(h[20])
	c.shift = uint(h[21])
	switch {
	case c.zso && c.version > 1:
		return nil, ferr(20, "ZSO version %d is not supported", c.version)
	case !c.zso && c.version > 2:
		return nil, ferr(20, "CSO version %d is not supported", c.version)
	}
	if c.version == 0 {
		c.version = 1 // v0 files read as v1
	}
	if c.version == 2 && hdrSize != csoHdrLen {
		return nil, ferr(4, "CSO v2 header size %d, want %d", hdrSize, csoHdrLen)
	}
	if bs < 512 || bs > maxCSOBlock || bs&(bs-1) != 0 {
		return nil, ferr(16, "block size %d is not a power of two in 512..%d", bs, maxCSOBlock)
	}
	if c.shift > 31 {
		return nil, ferr(21, "index shift %d", c.shift)
	}
	if total > 1<<44 {
		return nil, ferr(8, "uncompressed size %d is implausible", total)
	}
	c.blockSize, c.total = int64(bs), int64(total)
	blocks := (c.total + c.blockSize - 1) / c.blockSize
	if (blocks+1)*4 > size-csoHdrLen {
		return nil, ferr(csoHdrLen, "index of %d entries runs past the end of the file (%d bytes)", blocks+1, size)
	}
	raw := make([]byte, (blocks+1)*4)
	if _, err := r.ReadAt(raw, csoHdrLen); err != nil {
		return nil, ferr(csoHdrLen, "reading: %v", err)
	}
	c.index = make([]uint32, blocks+1)
	for i := range c.index {
		c.index[i] = binary.LittleEndian.Uint32(raw[4*i:])
	}
	prev := int64(-1)
	for i := range c.index {
		pos := c.pos(i)
		if pos < prev {
			return nil, ferr(csoHdrLen+4*int64(i), "index entry %d (offset %#x) goes back before entry %d (%#x): the index must ascend", i, pos, i-1, prev)
		}
		if i < len(c.index)-1 && pos < csoHdrLen+int64(len(raw)) {
			return nil, ferr(csoHdrLen+4*int64(i), "block %d at %#x overlaps the index", i, pos)
		}
		if pos > size {
			return nil, ferr(csoHdrLen+4*int64(i), "block %d at %#x lies past the end of the file (%d bytes)", i, pos, size)
		}
		prev = pos
	}
	return c, nil
}

func (c *csoFile) pos(i int) int64 { return int64(c.index[i]&^csoFlag) << c.shift }

func (c *csoFile) fillInfo(inf *Info) {
	inf.Version = c.version
	if c.zso {
		inf.Version = 1
		inf.Codecs = []string{"lz4"}
	} else if c.version == 2 {
		inf.Codecs = []string{"deflate", "lz4"}
	} else {
		inf.Codecs = []string{"deflate"}
	}
	inf.HunkBytes = c.blockSize
	inf.LogicalBytes = c.total
	inf.Hunks = int64(len(c.index) - 1)
}

func (c *csoFile) block(i int) ([]byte, error) {
	return c.cache.Get(hunkKey(c.fileID, int64(i)), func() ([]byte, error) {
		b, err := c.decodeBlock(i)
		if err != nil && c.logf != nil {
			if _, dup := c.logged.LoadOrStore(i, true); !dup {
				c.logf("%v", err)
			}
		}
		return b, err
	})
}

func (c *csoFile) decodeBlock(i int) ([]byte, error) {
	start, end := c.pos(i), c.pos(i+1)
	length := end - start
	want := min(c.blockSize, c.total-int64(i)*c.blockSize)
	flag := c.index[i]&csoFlag != 0
	codec := "deflate"
	stored := false
	switch {
	case c.zso:
		codec, stored = "lz4", flag
	case c.version == 2:
		if flag {
			codec = "lz4"
		}
		stored = length >= c.blockSize
	default:
		stored = flag
	}
	if stored {
		codec = "stored"
	}
	herr := func(format string, a ...any) error {
		return &HunkError{Image: c.name, Hunk: int64(i), Codec: codec, Offset: start, Reason: fmt.Sprintf(format, a...)}
	}
	if length > 2*c.blockSize+1024 {
		return nil, herr("block of %d bytes is longer than any block could compress to", length)
	}
	src := make([]byte, length)
	if n, err := c.r.ReadAt(src, start); err != nil && !(errors.Is(err, io.EOF) && int64(n) == length) {
		return nil, herr("reading %d bytes: %v", length, err)
	}
	dst := make([]byte, want)
	if stored {
		if length < want {
			return nil, herr("stored block of %d bytes, want %d", length, want)
		}
		copy(dst, src)
		return dst, nil
	}
	var err error
	if codec == "lz4" {
		err = lz4Partial(src, dst)
	} else {
		err = safeDecode(zlibCodec{}, src, dst)
	}
	if err != nil {
		return nil, herr("%v", err)
	}
	return dst, nil
}

func (c *csoFile) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		if pos >= c.total {
			return done, io.EOF
		}
		i := pos / c.blockSize
		b, err := c.block(int(i))
		if err != nil {
			return done, err
		}
		done += copy(p[done:], b[pos-i*c.blockSize:])
	}
	return done, nil
}

var errLZ4 = errors.New("lz4: corrupt block")

// lz4Partial decodes a raw LZ4 block until dst is full. Blocks in these
// containers may be followed by alignment padding, which a decoder that must
// consume its whole input would reject, so the block ends when the output does.
func lz4Partial(src, dst []byte) error {
	si, di := 0, 0
	for di < len(dst) {
		if si >= len(src) {
			return errLZ4
		}
		tok := src[si]
		si++
		lit := int(tok >> 4)
		if lit == 15 {
			for {
				if si >= len(src) {
					return errLZ4
				}
				b := src[si]
				si++
				lit += int(b)
				if lit > len(dst) {
					return errLZ4
				}
				if b != 255 {
					break
				}
			}
		}
		if lit > len(src)-si || lit > len(dst)-di {
			return errLZ4
		}
		copy(dst[di:], src[si:si+lit])
		si += lit
		di += lit
		if di == len(dst) {
			return nil
		}
		if si+2 > len(src) {
			return errLZ4
		}
		offset := int(src[si]) | int(src[si+1])<<8
		si += 2
		if offset == 0 || offset > di {
			return errLZ4
		}
		ml := int(tok & 15)
		if ml == 15 {
			for {
				if si >= len(src) {
					return errLZ4
				}
				b := src[si]
				si++
				ml += int(b)
				if ml > len(dst) {
					return errLZ4
				}
				if b != 255 {
					break
				}
			}
		}
		ml += 4
		if ml > len(dst)-di {
			return errLZ4
		}
		from := di - offset
		for k := 0; k < ml; k++ { // overlapping copies repeat the pattern
			dst[di+k] = dst[from+k]
		}
		di += ml
	}
	return nil
}
