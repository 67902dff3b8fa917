// Package imagefile opens the disc images players keep — plain ISO files, block
// devices, CHD v5, CSO v1/v2 and ZSO — and presents each as one io.ReaderAt of
// 2048-byte user-data sectors. The container kind is found from the magic,
// never from the file name. Compressed containers are decoded hunk by hunk (or
// block by block) on demand through a caller-supplied byte-bounded cache, so a
// cold random read costs one hunk and memory stays bounded.
//
// The package knows nothing of FUSE or of the tree built on top of it.
package imagefile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"

	"gcfs/cache"
)

// SectorSize is the user-data sector size every image is presented in.
const SectorSize = 2048

// Kind is the container kind of an image.
type Kind int

// The container kinds.
const (
	KindISO    Kind = iota // a plain file of 2048-byte sectors
	KindDevice             // a block device read as a plain image
	KindCHD
	KindCSO
	KindZSO
)

func (k Kind) String() string {
	switch k {
	case KindISO:
		return "iso"
	case KindDevice:
		return "device"
	case KindCHD:
		return "chd"
	case KindCSO:
		return "cso"
	case KindZSO:
		return "zso"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Sentinel errors; every error from this package that is about the image's
// content wraps ErrFormat (structure), ErrCorrupt (one hunk/block) or ErrParent.
var (
	ErrFormat  = errors.New("malformed image container")
	ErrCorrupt = errors.New("corrupt image data")
	ErrParent  = errors.New("CHD parent missing or mismatched")
)

// FormatError says what is wrong with a container structure and where.
type FormatError struct {
	Image  string // image name (may be empty)
	What   string // "CHD header", "CHD map", "CSO index", ...
	Offset int64  // byte offset in the container file
	Reason string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%s%s at offset %#x: %s", prefix(e.Image), e.What, e.Offset, e.Reason)
}
func (e *FormatError) Unwrap() error { return ErrFormat }

// HunkError is a hunk (CHD) or block (CSO/ZSO) that cannot be decoded: reads
// touching it fail, the rest of the image reads.
type HunkError struct {
	Image  string
	Hunk   int64  // hunk or block number
	Codec  string // "zlib", "cdlz", "none", "self", "parent", "deflate", "lz4", ...
	Offset int64  // byte offset of the hunk's data in the container file
	Reason string
}

func (e *HunkError) Error() string {
	return fmt.Sprintf("%shunk %d (codec %s, file offset %#x): %s", prefix(e.Image), e.Hunk, e.Codec, e.Offset, e.Reason)
}
func (e *HunkError) Unwrap() error { return ErrCorrupt }

// ParentError: a child CHD whose parent is missing or is not the one it names.
type ParentError struct {
	Image  string
	Reason string
}

func (e *ParentError) Error() string { return prefix(e.Image) + e.Reason }
func (e *ParentError) Unwrap() error { return ErrParent }

func prefix(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// Options tune Open.
type Options struct {
	// Name names the image in errors and log lines.
	Name string
	// Cache receives decoded hunks and blocks. Nil: a private 32 MiB cache.
	Cache *cache.Cache
	// Parent is the opened parent of a child CHD (must itself be a CHD).
	Parent *Image
	// Logf, when set, receives one line per hunk that fails to decode.
	Logf func(format string, args ...any)
	// Device says r is a block device: a plain image is then KindDevice.
	Device bool
}

// Info describes an image's container for identify and info.
type Info struct {
	Kind         string   `json:"kind"`
	Version      int      `json:"version,omitempty"`
	Codecs       []string `json:"codecs,omitempty"`
	HunkBytes    int64    `json:"hunk_bytes,omitempty"` // CHD hunk / CSO block size
	UnitBytes    int64    `json:"unit_bytes,omitempty"`
	LogicalBytes int64    `json:"logical_bytes,omitempty"` // bytes the container holds decoded
	Hunks        int64    `json:"hunks,omitempty"`
	DataSHA1     string   `json:"data_sha1,omitempty"` // CHD: SHA-1 of the logical data
	SHA1         string   `json:"sha1,omitempty"`      // CHD: SHA-1 of data and metadata
	ParentSHA1   string   `json:"parent_sha1,omitempty"`
	Tracks       []Track  `json:"tracks,omitempty"` // CD CHD
	Sectors      int64    `json:"sectors"`          // 2048-byte user-data sectors presented
}

// Image is an opened disc image: its 2048-byte user-data sectors as an io.ReaderAt.
type Image struct {
	kind Kind
	name string
	src  io.ReaderAt // the container file
	size int64       // bytes of user data presented
	view io.ReaderAt // the decoded user data (src itself for ISO/device)
	chd  *chdFile
	cso  *csoFile
}

// fileIDs hands out cache Key.File values, one per opened container, from
// the top of the uint64 range.
var fileIDs atomic.Uint64

func nextFileID() uint64 { return ^uint64(0) - 16 - fileIDs.Add(1) }

// hunkKey is the cache key of a decoded hunk or block. Inode numbers (the
// Key.File of the tree's decoded files) are path hashes over the whole
// uint64 range, so File alone could collide with one, even on purpose;
// the tree's block numbers are never negative, so hunks use Block -1-n.
func hunkKey(file uint64, n int64) cache.Key { return cache.Key{File: file, Block: int(-1 - n)} }

// Open detects the container in r (size bytes) by its magic and opens it.
func Open(r io.ReaderAt, size int64, opt Options) (*Image, error) {
	if size < 0 {
		return nil, &FormatError{Image: opt.Name, What: "image", Reason: "negative size"}
	}
	if opt.Cache == nil {
		opt.Cache = cache.New(32 << 20)
	}
	var magic [8]byte
	n, err := r.ReadAt(magic[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%sreading magic: %w", prefix(opt.Name), err)
	}
	m := string(magic[:n])
	switch {
	case m == chdMagic:
		c, err := openCHD(r, size, opt)
		if err != nil {
			return nil, err
		}
		view, vsize, err := c.userView()
		if err != nil {
			return nil, err
		}
		return &Image{kind: KindCHD, name: opt.Name, src: r, size: vsize, view: view, chd: c}, nil
	case len(m) >= 4 && (m[:4] == "CISO" || m[:4] == "ZISO"):
		c, err := openCSO(r, size, opt)
		if err != nil {
			return nil, err
		}
		k := KindCSO
		if c.zso {
			k = KindZSO
		}
		return &Image{kind: k, name: opt.Name, src: r, size: c.total, view: c, cso: c}, nil
	}
	if opt.Parent != nil {
		return nil, &ParentError{Image: opt.Name, Reason: "--parent given but the image is not a CHD"}
	}
	k := KindISO
	if opt.Device {
		k = KindDevice
	}
	return &Image{kind: k, name: opt.Name, src: r, size: size, view: r}, nil
}

// OpenFile opens the image at path. A block device's size comes from the device
// (seeking to its end), not from stat. The returned file must be closed by the
// caller after the image is no longer used.
func OpenFile(path string, opt Options) (*Image, *os.File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	size, dev, err := FileSize(f)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if opt.Name == "" {
		opt.Name = path
	}
	opt.Device = dev
	im, err := Open(f, size, opt)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return im, f, nil
}

// FileSize is the size of an open file or block device; dev says it is a device.
func FileSize(f *os.File) (size int64, dev bool, err error) {
	st, err := f.Stat()
	if err != nil {
		return 0, false, err
	}
	if st.IsDir() {
		return 0, false, fmt.Errorf("%s: is a directory, not a disc image", f.Name())
	}
	if st.Mode()&os.ModeDevice == 0 {
		return st.Size(), false, nil
	}
	size, err = deviceSize(f)
	if err != nil {
		return 0, true, fmt.Errorf("%s: size of block device: %w", f.Name(), err)
	}
	return size, true, nil
}

// deviceSize asks the device for its size by seeking to its end (for a block
// device, lseek(SEEK_END) reports the device size, which stat does not).
func deviceSize(f *os.File) (int64, error) {
	cur, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, err
	}
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return 0, err
	}
	if _, err := f.Seek(cur, io.SeekStart); err != nil {
		return 0, err
	}
	return end, nil
}

// Kind is the container kind.
func (im *Image) Kind() Kind { return im.kind }

// Size is the number of user-data bytes presented.
func (im *Image) Size() int64 { return im.size }

// Plain says the presented bytes are the container file's own bytes (ISO or
// device), so a caller may splice from the file directly.
func (im *Image) Plain() bool { return im.kind == KindISO || im.kind == KindDevice }

// ReadAt reads the user data. A read that touches a bad hunk returns a
// *HunkError (and whatever precedes it); reads elsewhere are unaffected.
func (im *Image) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%snegative offset %d", prefix(im.name), off)
	}
	if off >= im.size {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	want := len(p)
	if rem := im.size - off; int64(want) > rem {
		p = p[:rem]
	}
	n, err := im.view.ReadAt(p, off)
	if err == nil && n < want {
		err = io.EOF
	}
	if err == io.EOF && n == want {
		err = nil
	}
	return n, err
}

// Info describes the container.
func (im *Image) Info() Info {
	inf := Info{Kind: im.kind.String(), Sectors: (im.size + SectorSize - 1) / SectorSize}
	switch {
	case im.chd != nil:
		im.chd.fillInfo(&inf)
	case im.cso != nil:
		im.cso.fillInfo(&inf)
	}
	return inf
}

// VerifyData reads every decoded byte of a CHD and compares its SHA-1 with the
// header's data SHA-1. checked is false when there is nothing to
// check (not a CHD, or an uncompressed CHD, which records no SHA-1).
func (im *Image) VerifyData() (got, want string, checked bool, err error) {
	if im.chd == nil || im.chd.hdr.rawSHA1 == [20]byte{} {
		return "", "", false, nil // not a CHD, or an uncompressed CHD (which records no SHA-1)
	}
	got, err = im.chd.dataSHA1()
	return got, fmt.Sprintf("%x", im.chd.hdr.rawSHA1), true, err
}

// HunkExtent says where hunk (CHD) or block (CSO/ZSO) n's stored bytes lie
// in the container file; ok is false for other kinds, a hunk out of range, or
// one stored elsewhere (a self or parent reference).
func (im *Image) HunkExtent(n int64) (off, length int64, ok bool) {
	switch {
	case im.chd != nil:
		if n < 0 || n >= int64(len(im.chd.entries)) {
			return 0, 0, false
		}
		e := im.chd.entries[n]
		if e.typ > compNone {
			return 0, 0, false
		}
		return int64(e.offset), int64(e.length), true
	case im.cso != nil:
		if n < 0 || n >= int64(len(im.cso.index)-1) {
			return 0, 0, false
		}
		return im.cso.pos(int(n)), im.cso.pos(int(n)+1) - im.cso.pos(int(n)), true
	}
	return 0, 0, false
}
