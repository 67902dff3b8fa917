package fsnode

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"gcfs/codec"
	"gcfs/discimg"
)

// The persisted index (issue 11): what a build or a stat would otherwise
// compute by reading streams, saved in a sidecar file in
// $XDG_CACHE_HOME/gcfs/ (os.UserCacheDir). Per decoded file, keyed by where
// its stream lies (image offset, or offset in the decoded file that holds
// it, and its length): its decoded size, its corrupt-stream error (offset
// and rule), its random-access index (the codec's checkpoints and groups,
// codec.Index.AppendBinary) and the decoded bytes the build read of it (part
// tables, nested stream prefixes, view headers). A build that finds every
// one of them reads no stream and decodes nothing; a stat reads nothing;
// an open reads the stream's 16-byte header, not the stream.
//
// The sidecar is trusted only when its key matches: the format version, the
// image file's size and mtime, the decoded-size limit and a SHA-256 of the
// image's volume descriptor, its directory records and its containers'
// headers. Anything else (truncated, another image, another version, hostile
// bytes) is ignored with one log line and rebuilt. I/O errors, which may not
// recur, are never persisted: such a file is scanned again.

// sidecarVersion is the format version; a change makes old sidecars ignored.
const sidecarVersion = 2

var sidecarMagic = [8]byte{'G', 'C', 'F', 'S', 'I', 'D', 'X', 0}

// Bounds on what a sidecar may hold (checked before anything is allocated).
const (
	maxSidecarBytes   = 64 << 20 // larger files are not read
	maxSidecarEntries = 1 << 20  // as many as a tree may have part nodes
	maxSideKey        = 1 << 10
	maxSideRule       = 256
	maxSideRanges     = 1 << 16
	// maxSideIndex bounds one file's index bytes (a 256 MiB stream's
	// index is about 25 KiB), maxIndexTotal a tree's: past them an index
	// is not kept (the next process scans that stream at its open).
	maxSideIndex  = 1 << 20
	maxIndexTotal = 16 << 20
	// maxRecordPerFile bounds the decoded bytes recorded of one file at
	// build, maxRecordTotal those of a tree: past them reads are not kept
	// (a later build decodes them again).
	maxRecordPerFile = 256 << 10
	maxRecordTotal   = 16 << 20
	// maxKeyDirBytes bounds the directory-record bytes hashed for the key.
	maxKeyDirBytes = 16 << 20
)

// ErrSidecar is wrapped by every SidecarError.
var ErrSidecar = errors.New("index sidecar not usable")

// SidecarError says why a sidecar file was ignored: its path, the byte
// offset in it where reading failed, and the reason.
type SidecarError struct {
	Path   string
	Offset int64
	Reason string
}

func (e *SidecarError) Error() string {
	return fmt.Sprintf("index sidecar %s: %s at byte %d", e.Path, e.Reason, e.Offset)
}

func (e *SidecarError) Unwrap() error { return ErrSidecar }

// sideEntry is what the sidecar knows of one decoded file.
type sideEntry struct {
	sized   bool  // size (and error state) known
	size    int64 // decoded size (on a corrupt stream: the bytes that decode cleanly)
	corrupt bool
	cOff    int64 // corrupt: the codec's stream offset
	rule    string
	ranges  []sideRange // decoded bytes read at build, sorted, not overlapping
	rbytes  int64
	index   []byte // codec.Index.AppendBinary's bytes (checked by codec.LoadIndex when used)
}

type sideRange struct {
	off  int64
	data []byte
}

// sidecar is a tree's persisted index: loaded at build, grown by scans and
// build-time reads, saved by SaveIndex.
type sidecar struct {
	dir  string
	key  [32]byte
	file string // dir/<key>.idx

	mu      sync.Mutex
	entries map[string]*sideEntry
	dirty   int   // changes since the last save
	rbytes  int64 // recorded bytes in all
	ibytes  int64 // index bytes in all
	timer   *time.Timer
	delay   time.Duration

	saveMu sync.Mutex // one save at a time
}

// DefaultIndexCacheDir is $XDG_CACHE_HOME/gcfs (or $HOME/.cache/gcfs).
func DefaultIndexCacheDir() (string, error) {
	d, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "gcfs"), nil
}

// sidecarKey hashes everything a sidecar is trusted by.
func (b *builder) sidecarKey(fi os.FileInfo) [32]byte {
	h := sha256.New()
	var w [8]byte
	put := func(v int64) { binary.LittleEndian.PutUint64(w[:], uint64(v)); h.Write(w[:]) }
	putBytes := func(p []byte) { put(int64(len(p))); h.Write(p) }
	h.Write(sidecarMagic[:])
	put(sidecarVersion)
	put(fi.Size())
	put(fi.ModTime().UnixNano())
	put(b.t.Image.Size)
	put(b.t.opt.MaxDecoded)
	img := b.t.Image
	// The volume descriptors (sectors 16 and 17: the primary and its
	// terminator), as the image has them.
	vd := make([]byte, 2*discimg.SectorSize)
	got, _ := img.R.ReadAt(vd, 16*discimg.SectorSize)
	putBytes(vd[:max(got, 0)])
	// Every directory's records.
	budget := int64(maxKeyDirBytes)
	var buf []byte
	var walk func(e *discimg.Entry, depth int)
	walk = func(e *discimg.Entry, depth int) {
		if e == nil || !e.IsDir || depth > maxDepth {
			return
		}
		io.WriteString(h, e.Path)
		put(e.LBA)
		put(e.Size)
		if n := min(e.Size, budget); n > 0 && e.Offset() >= 0 {
			if int64(cap(buf)) < n {
				buf = make([]byte, n) // bounded by maxKeyDirBytes
			}
			got, _ := img.R.ReadAt(buf[:n], e.Offset())
			putBytes(buf[:max(got, 0)])
			budget -= n
		}
		for _, c := range e.Children {
			if c != nil && c.IsDir && c != e {
				walk(c, depth+1)
			}
		}
	}
	walk(img.Root, 0)
	// Every container's header, in directory order.
	for _, pc := range b.pending {
		io.WriteString(h, pc.n.Name)
		if pc.n.cont != nil {
			putBytes(pc.n.cont.Header)
		} else {
			put(-1)
		}
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// loadSidecar reads the tree's sidecar, when the options ask for one: after
// the containers are read (their headers are part of the key), before any
// stream is scanned.
func (b *builder) loadSidecar() {
	o := b.t.opt
	if o.IndexCacheDir == "" || o.ImageFile == nil {
		return
	}
	key := b.sidecarKey(o.ImageFile)
	s := &sidecar{dir: o.IndexCacheDir, key: key, entries: map[string]*sideEntry{}, delay: o.IndexSaveDelay,
		file: filepath.Join(o.IndexCacheDir, hex.EncodeToString(key[:16])+".idx")}
	b.t.side = s
	data, err := readSidecarFile(s.file)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err == nil {
		var ents map[string]*sideEntry
		ents, err = parseSidecar(data, key)
		if err == nil {
			s.entries = ents
			for _, e := range ents {
				s.rbytes += e.rbytes
				s.ibytes += int64(len(e.index))
			}
			return
		}
		var se *SidecarError
		if errors.As(err, &se) {
			se.Path = s.file
		}
	}
	b.t.logf("%v; ignored, rebuilt", err)
	s.dirty = 1 // replace it
}

// readSidecarFile reads the sidecar at path, never blocking on it nor
// following it: anything but a regular file there (a FIFO, a device, a
// directory, a symbolic link) is refused before it is opened (Lstat), and
// the open itself neither follows a link nor waits (O_NOFOLLOW|O_NONBLOCK),
// with fstat checking that what it opened is the regular file Lstat saw (a
// swap between the two is refused too). The save then replaces what is
// there by a rename, which never opens it.
func readSidecarFile(path string) ([]byte, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if !lfi.Mode().IsRegular() {
		return nil, &SidecarError{Path: path, Reason: notRegular(lfi.Mode())}
	}
	f, err := openNoBlock(path)
	if err != nil {
		return nil, &SidecarError{Path: path, Reason: "opening: " + unwrapPath(err).Error()}
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, &SidecarError{Path: path, Reason: "fstat: " + unwrapPath(err).Error()}
	}
	if !fi.Mode().IsRegular() || !os.SameFile(fi, lfi) {
		return nil, &SidecarError{Path: path, Reason: notRegular(fi.Mode()) + " (replaced as it was opened)"}
	}
	if fi.Size() > maxSidecarBytes {
		return nil, &SidecarError{Path: path, Reason: fmt.Sprintf("%d bytes, more than the %d a sidecar may have", fi.Size(), maxSidecarBytes)}
	}
	data := make([]byte, fi.Size()) // bounded just above
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, &SidecarError{Path: path, Reason: "reading: " + err.Error()}
	}
	return data, nil
}

func notRegular(m os.FileMode) string {
	what := "not a regular file"
	switch {
	case m&os.ModeNamedPipe != 0:
		what += " (a named pipe)"
	case m&os.ModeSymlink != 0:
		what += " (a symbolic link)"
	case m.IsDir():
		what += " (a directory)"
	case m&os.ModeDevice != 0:
		what += " (a device)"
	case m&os.ModeSocket != 0:
		what += " (a socket)"
	}
	return what
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// sideReader decodes the sidecar format, every field bounds-checked.
type sideReader struct {
	b   []byte
	off int
	err error
}

func (r *sideReader) fail(reason string) {
	if r.err == nil {
		r.err = &SidecarError{Offset: int64(r.off), Reason: reason}
	}
}

func (r *sideReader) take(n int, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > len(r.b)-r.off {
		r.fail("truncated: " + what)
		return nil
	}
	p := r.b[r.off : r.off+n]
	r.off += n
	return p
}

func (r *sideReader) u64(what string) uint64 {
	p := r.take(8, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(p)
}

func (r *sideReader) u32(what string) uint32 {
	p := r.take(4, what)
	if p == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(p)
}

func (r *sideReader) u8(what string) byte {
	p := r.take(1, what)
	if p == nil {
		return 0
	}
	return p[0]
}

// Entry flags.
const (
	sideSized   = 1
	sideCorrupt = 2
	sideIndex   = 4
	sideFlags   = sideSized | sideCorrupt | sideIndex
)

// minSideEntry is the fewest bytes an entry takes (key length, flags,
// range count), for bounding the entry count by the file's length.
const minSideEntry = 4 + 1 + 4

// parseSidecar reads a sidecar's bytes; it fails unless they are whole, of
// this version and of this key.
//
// Layout (little endian): magic[8], version u32, key[32], count u32, then
// count entries {keylen u32, key, flags u8, [size i64], [corrupt: offset
// i64, rulelen u32, rule], [index: len u32, bytes], nranges u32, {off i64,
// len u32, bytes}...}, then a CRC-32C of everything before it.
func parseSidecar(b []byte, key [32]byte) (map[string]*sideEntry, error) {
	if len(b) < len(sidecarMagic)+4+32+4+4 {
		return nil, &SidecarError{Offset: int64(len(b)), Reason: "truncated: shorter than a header"}
	}
	body, sum := b[:len(b)-4], binary.LittleEndian.Uint32(b[len(b)-4:])
	r := &sideReader{b: body}
	if !bytes.Equal(r.take(8, "magic"), sidecarMagic[:]) {
		return nil, &SidecarError{Reason: "not a gcfs index sidecar (magic)"}
	}
	if v := r.u32("version"); v != sidecarVersion {
		return nil, &SidecarError{Offset: 8, Reason: fmt.Sprintf("format version %d, this gcfs reads %d", v, sidecarVersion)}
	}
	if !bytes.Equal(r.take(32, "key"), key[:]) {
		return nil, &SidecarError{Offset: 12, Reason: "key differs: another image, another modification time or other options"}
	}
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, &SidecarError{Offset: int64(len(body)), Reason: "checksum differs: truncated or damaged"}
	}
	count := r.u32("entry count")
	if count > maxSidecarEntries || int(count) > (len(body)-r.off)/minSideEntry {
		return nil, &SidecarError{Offset: int64(r.off - 4), Reason: fmt.Sprintf("entry count %d does not fit the file", count)}
	}
	ents := make(map[string]*sideEntry, count)
	for i := uint32(0); i < count && r.err == nil; i++ {
		kl := r.u32("key length")
		if kl == 0 || kl > maxSideKey {
			r.fail(fmt.Sprintf("entry %d: key length %d", i, kl))
			break
		}
		k := string(r.take(int(kl), "key"))
		if _, dup := ents[k]; dup && r.err == nil {
			r.fail(fmt.Sprintf("entry %d: key %q twice", i, k))
			break
		}
		e := &sideEntry{}
		flags := r.u8("flags")
		if flags&^sideFlags != 0 || (flags&(sideCorrupt|sideIndex) != 0 && flags&sideSized == 0) || flags&sideCorrupt != 0 && flags&sideIndex != 0 {
			r.fail(fmt.Sprintf("entry %d: flags %#x", i, flags))
			break
		}
		if flags&sideSized != 0 {
			e.sized = true
			e.size = int64(r.u64("size"))
			if e.size < 0 {
				r.fail(fmt.Sprintf("entry %d: size %d", i, e.size))
				break
			}
		}
		if flags&sideCorrupt != 0 {
			e.corrupt = true
			e.cOff = int64(r.u64("corrupt offset"))
			rl := r.u32("rule length")
			if e.cOff < 0 || rl > maxSideRule {
				r.fail(fmt.Sprintf("entry %d: corrupt-stream offset %d, rule length %d", i, e.cOff, rl))
				break
			}
			e.rule = string(r.take(int(rl), "rule"))
		}
		if flags&sideIndex != 0 {
			il := r.u32("index length")
			if il == 0 || il > maxSideIndex {
				r.fail(fmt.Sprintf("entry %d: index length %d", i, il))
				break
			}
			e.index = r.take(int(il), "index")
		}
		nr := r.u32("range count")
		if nr > maxSideRanges || int(nr) > (len(body)-r.off)/12 {
			r.fail(fmt.Sprintf("entry %d: range count %d does not fit the file", i, nr))
			break
		}
		if nr > 0 {
			e.ranges = make([]sideRange, 0, nr) // bounded by the file's length
		}
		end := int64(-1)
		for j := uint32(0); j < nr && r.err == nil; j++ {
			off := int64(r.u64("range offset"))
			n := r.u32("range length")
			if off <= end || n == 0 || n > maxRecordPerFile || e.rbytes+int64(n) > maxRecordPerFile || (e.sized && off+int64(n) > e.size) {
				r.fail(fmt.Sprintf("entry %d: range %d (%d bytes at %d) out of order, empty, too long or past the file", i, j, n, off))
				break
			}
			data := r.take(int(n), "range bytes")
			if data == nil {
				break
			}
			e.ranges = append(e.ranges, sideRange{off: off, data: data})
			e.rbytes += int64(n)
			end = off + int64(n)
		}
		ents[k] = e
	}
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(body) {
		return nil, &SidecarError{Offset: int64(r.off), Reason: fmt.Sprintf("%d bytes after the last entry", len(body)-r.off)}
	}
	return ents, nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// marshalSidecar writes the format parseSidecar reads, entries in key order.
func marshalSidecar(key [32]byte, ents map[string]*sideEntry) []byte {
	keys := make([]string, 0, len(ents))
	for k := range ents {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	b = append(b, sidecarMagic[:]...)
	b = binary.LittleEndian.AppendUint32(b, sidecarVersion)
	b = append(b, key[:]...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(keys)))
	for _, k := range keys {
		e := ents[k]
		b = binary.LittleEndian.AppendUint32(b, uint32(len(k)))
		b = append(b, k...)
		var flags byte
		if e.sized {
			flags |= sideSized
			if e.corrupt {
				flags |= sideCorrupt
			} else if len(e.index) > 0 {
				flags |= sideIndex
			}
		}
		b = append(b, flags)
		if e.sized {
			b = binary.LittleEndian.AppendUint64(b, uint64(e.size))
			if e.corrupt {
				b = binary.LittleEndian.AppendUint64(b, uint64(e.cOff))
				b = binary.LittleEndian.AppendUint32(b, uint32(len(e.rule)))
				b = append(b, e.rule...)
			} else if len(e.index) > 0 {
				b = binary.LittleEndian.AppendUint32(b, uint32(len(e.index)))
				b = append(b, e.index...)
			}
		}
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.ranges)))
		for _, rg := range e.ranges {
			b = binary.LittleEndian.AppendUint64(b, uint64(rg.off))
			b = binary.LittleEndian.AppendUint32(b, uint32(len(rg.data)))
			b = append(b, rg.data...)
		}
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

// sideKey names where a decoded file's stream lies: "i<off>+<len>" in the
// image, "<holder's key>/<off>+<len>" inside decoded content.
func (n *Node) sideKey() string {
	if n.within == nil {
		return "i" + strconv.FormatInt(n.off, 10) + "+" + strconv.FormatInt(n.streamLen(), 10)
	}
	if n.within.Kind != Decoded {
		return ""
	}
	p := n.within.sideKey()
	k := strconv.FormatInt(n.woff, 10) + "+" + strconv.FormatInt(n.streamLen(), 10)
	if p == "" || len(p)+len(k)+1 > maxSideKey {
		return ""
	}
	return p + "/" + k
}

// sideScan answers a decoded file's size step from the sidecar; false when
// it does not know the file.
func (n *Node) sideScan() bool {
	s := n.tree.side
	if s == nil {
		return false
	}
	k := n.sideKey()
	s.mu.Lock()
	e := s.entries[k]
	ok := e != nil && e.sized
	var size, cOff int64
	var corrupt bool
	var rule string
	if ok {
		size, corrupt, cOff, rule = e.size, e.corrupt, e.cOff, e.rule
	}
	s.mu.Unlock()
	if !ok || size > n.tree.opt.MaxDecoded {
		return false
	}
	n.decSize = size
	if corrupt {
		n.decErr = n.streamErr(&codec.CorruptError{Offset: cOff, Rule: codec.Rule(rule)})
		n.logFile(n.decErr)
	}
	return true
}

// sideRecordScan keeps what a size step learned: the size, and the error
// when it is the stream's own (a corrupt stream); I/O errors are not kept.
func (n *Node) sideRecordScan() {
	s := n.tree.side
	if s == nil {
		return
	}
	var ce *codec.CorruptError
	if n.decErr != nil && !errors.As(n.decErr, &ce) {
		return
	}
	k := n.sideKey()
	if k == "" {
		return
	}
	s.mu.Lock()
	e := s.entries[k]
	if e == nil {
		if len(s.entries) >= maxSidecarEntries {
			s.mu.Unlock()
			return
		}
		e = &sideEntry{}
		s.entries[k] = e
	}
	e.sized, e.size = true, n.decSize
	if ce != nil {
		e.corrupt, e.cOff, e.rule = true, ce.Offset, string(ce.Rule)
		if len(e.rule) > maxSideRule {
			e.rule = e.rule[:maxSideRule]
		}
	}
	s.changed()
	s.mu.Unlock()
}

// sideRecordIndex keeps a decoded file's index, once its size is known
// (bounded per file and per tree).
func (n *Node) sideRecordIndex(ix *codec.Index) {
	s := n.tree.side
	if s == nil {
		return
	}
	k := n.sideKey()
	if k == "" {
		return
	}
	data := ix.AppendBinary(nil)
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil || !e.sized || e.corrupt || e.size != ix.Size() || bytes.Equal(e.index, data) {
		return
	}
	if len(data) > maxSideIndex || s.ibytes-int64(len(e.index))+int64(len(data)) > maxIndexTotal {
		return
	}
	s.ibytes += int64(len(data)) - int64(len(e.index))
	e.index = data
	s.changed()
}

// sideLoadIndex is the decoded file's index from the sidecar, or nil. An
// index the codec does not accept (a hostile or stale sidecar) is dropped,
// with one log line, and built again by the caller.
func (n *Node) sideLoadIndex(src Reader) *codec.Index {
	s := n.tree.side
	if s == nil {
		return nil
	}
	k := n.sideKey()
	if k == "" {
		return nil
	}
	s.mu.Lock()
	var data []byte
	if e := s.entries[k]; e != nil {
		data = e.index
	}
	s.mu.Unlock()
	if data == nil {
		return nil
	}
	ix, err := codec.LoadIndex(src, src.Size(), n.codecOptions(), data)
	if err == nil && ix.Size() != n.decSize {
		err = fmt.Errorf("index of %d decoded bytes, the file has %d", ix.Size(), n.decSize)
	}
	if err != nil {
		n.tree.logf("%s: index sidecar %s: %v; ignored, scanned again", n.logPath(), s.file, err)
		s.mu.Lock()
		if e := s.entries[k]; e != nil && len(e.index) > 0 {
			s.ibytes -= int64(len(e.index))
			e.index = nil
			s.changed()
		}
		s.mu.Unlock()
		return nil
	}
	return ix
}

// changed counts a change and, when the tree saves lazily, (re)arms the
// save timer. s.mu is held.
func (s *sidecar) changed() {
	s.dirty++
	if s.delay <= 0 {
		return
	}
	if s.timer == nil {
		s.timer = time.AfterFunc(s.delay, func() { _ = s.save() })
		return
	}
	s.timer.Reset(s.delay)
}

// lookupRange copies the recorded bytes [off, off+len(p)) of a file into p;
// false unless one recorded range holds them all.
func (s *sidecar) lookupRange(k string, p []byte, off int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil {
		return false
	}
	i := sort.Search(len(e.ranges), func(i int) bool { return e.ranges[i].off+int64(len(e.ranges[i].data)) > off })
	if i == len(e.ranges) {
		return false
	}
	rg := e.ranges[i]
	if off < rg.off || off+int64(len(p)) > rg.off+int64(len(rg.data)) {
		return false
	}
	copy(p, rg.data[off-rg.off:])
	return true
}

// record keeps decoded bytes read of a file at build, merged with the
// ranges it has (bounded per file and per tree).
func (s *sidecar) record(k string, p []byte, off int64) {
	if len(p) == 0 || k == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[k]
	if e == nil {
		if len(s.entries) >= maxSidecarEntries {
			return
		}
		e = &sideEntry{}
		s.entries[k] = e
	}
	if e.rbytes+int64(len(p)) > maxRecordPerFile || s.rbytes+int64(len(p)) > maxRecordTotal {
		return
	}
	lo, hi := off, off+int64(len(p))
	// Merge with every range that overlaps or touches [lo, hi).
	var out []sideRange
	var merged []sideRange
	for _, rg := range e.ranges {
		if rg.off+int64(len(rg.data)) < lo || rg.off > hi {
			out = append(out, rg)
			continue
		}
		merged = append(merged, rg)
	}
	nlo, nhi := lo, hi
	for _, rg := range merged {
		nlo, nhi = min(nlo, rg.off), max(nhi, rg.off+int64(len(rg.data)))
	}
	if nhi-nlo > maxRecordPerFile {
		return
	}
	buf := make([]byte, nhi-nlo) // bounded just above
	for _, rg := range merged {
		copy(buf[rg.off-nlo:], rg.data)
	}
	copy(buf[lo-nlo:], p)
	var old int64
	for _, rg := range merged {
		old += int64(len(rg.data))
	}
	out = append(out, sideRange{off: nlo, data: buf})
	sort.Slice(out, func(i, j int) bool { return out[i].off < out[j].off })
	e.ranges = out
	e.rbytes += int64(len(buf)) - old
	s.rbytes += int64(len(buf)) - old
	s.changed()
}

// save writes the sidecar when it changed since the last save: to a
// temporary file in the same directory, renamed over the old one.
func (s *sidecar) save() error {
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	s.mu.Lock()
	if s.dirty == 0 {
		s.mu.Unlock()
		return nil
	}
	data := marshalSidecar(s.key, s.entries)
	dirty := s.dirty
	s.mu.Unlock()
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, ".tmp-*.idx")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), s.file)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	s.mu.Lock()
	s.dirty -= dirty
	s.mu.Unlock()
	pruneSidecars(s.dir, s.file, maxSidecars)
	return nil
}

// maxSidecars is how many sidecars the cache directory keeps: one per image
// (and version of it) read lately; older ones are removed as a new one is
// saved, so the directory does not grow with every image ever mounted.
const maxSidecars = 32

// pruneSidecars removes the least recently written sidecars of dir past the
// newest keep (never keep's own file, nor anything but *.idx regular
// files). Errors are ignored: it is housekeeping.
func pruneSidecars(dir, current string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type side struct {
		path string
		mod  time.Time
	}
	var all []side
	for _, e := range ents {
		if !e.Type().IsRegular() || filepath.Ext(e.Name()) != ".idx" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if p == current {
			continue
		}
		if fi, err := e.Info(); err == nil {
			all = append(all, side{p, fi.ModTime()})
		}
	}
	if len(all) < keep {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	for _, sd := range all[keep-1:] {
		_ = os.Remove(sd.path)
	}
}

// SaveIndex writes the tree's persisted index (sizes, errors and the
// decoded bytes read at build) when it learned something since it was
// loaded or last saved; nothing without Options.IndexCacheDir. Safe to call
// at any time, from any goroutine; reads go on meanwhile.
func (t *Tree) SaveIndex() error {
	if t.side == nil {
		return nil
	}
	if err := t.side.save(); err != nil {
		return fmt.Errorf("saving the index sidecar: %w", err)
	}
	return nil
}

// IndexFile is the path of the tree's sidecar ("" when it has none).
func (t *Tree) IndexFile() string {
	if t.side == nil {
		return ""
	}
	return t.side.file
}

// buildReader serves a decoded file's bytes during the build: from the
// sidecar's recorded ranges when they hold them, otherwise from the decoded
// stream (opened on the first such read), recording what it read.
type buildReader struct {
	n    *Node
	key  string
	size int64

	mu   sync.Mutex
	real Reader
	err  error
}

func (br *buildReader) Size() int64 { return br.size }

func (br *buildReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", br.n.logPath(), off)
	}
	if off >= br.size {
		return 0, io.EOF
	}
	want := p
	if rem := br.size - off; int64(len(want)) > rem {
		want = want[:rem]
	}
	s := br.n.tree.side
	if s.lookupRange(br.key, want, off) {
		if len(want) < len(p) {
			return len(want), io.EOF
		}
		return len(want), nil
	}
	br.mu.Lock()
	if br.real == nil && br.err == nil {
		br.real, br.err = br.n.openDecoded()
	}
	r, err := br.real, br.err
	br.mu.Unlock()
	if err != nil {
		return 0, err
	}
	got, err := r.ReadAt(p, off)
	s.record(br.key, p[:got], off)
	return got, err
}
