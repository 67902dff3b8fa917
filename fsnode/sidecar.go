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
	"gcfs/discimg/levelcore"
)

// The persisted index (issue 11): what a build or a stat would otherwise
// compute by reading streams, saved in a sidecar file in
// $XDG_CACHE_HOME/gcfs/ (os.UserCacheDir). Per decoded file, keyed by where
// its stream lies (image offset, or offset in the decoded file that holds
// it, and its length): its decoded size, its corrupt-stream error (offset
// and rule), its random-access index (the codec's checkpoints and groups,
// codec.Index.AppendBinary); per lazily sized view (lazyview.go), keyed by
// "v" and its path, its encoded size; per level core's sky table (the
// listing of sky.d/textures/, levelcore_sky.go), keyed by "s" and where the
// sky block lies in core_data's stream, the bytes that listing reads (the
// sky header and texture defs). A build that finds them scans no stream (it
// decodes the bytes it reads of decoded files, through the kept indexes); a
// stat reads nothing; an open reads the stream's 16-byte header, not the
// stream.
//
// The sidecar is read only when its key matches: the format version, the
// image file's size and mtime, the decoded-size limit and a SHA-256 of the
// image's volume descriptor, its directory records and its containers'
// headers. Anything else (truncated, another image, another version, bytes
// that do not parse) is ignored with one log line and rebuilt. I/O errors,
// which may not recur, are never persisted: such a file is scanned again.
//
// Even a sidecar whose key and checksum match is untrusted input, as the
// image is: whoever can write the cache directory can write any entry, and
// seal it again. So every entry is checked against the image before it is
// believed, and refused when the image contradicts it (one log line for the
// first, a count at the save; the entry is dropped, recomputed from the
// image and rewritten):
//   - a decoded size is believed only beside an index that ends at that size
//     and at the stream's end as its header declares it, and within what the
//     stream's length can decode to and --max-decoded;
//   - an index is checked against the stream's header as it is loaded
//     (codec.LoadIndex), and against the stream as it is used: every decode
//     verifies each checkpoint it passes, and a decode that fails through a
//     kept index scans the stream afresh and serves the bytes through the
//     new index (fallbackIndex), never the kept one's;
//   - a corrupt-stream error is never served from the sidecar: the stream
//     is scanned again at its size step (a corrupt stream is scanned up to
//     its error) and the entry corrected when it decodes otherwise;
//   - a sky table (its header and texture defs: 0x40 bytes and 16 a
//     texture) is read by the parser that reads it from core_data, every
//     offset checked against the sky block's size from core_index as then;
//     bytes that parse but lie (in-bounds geometry the disc does not have)
//     are caught at the first read of a sky texture's pixels, which decodes
//     core_data anyway: the table is read from it and compared, and a
//     difference is a read error naming the sidecar, the entry corrected;
//   - decoded bytes are not kept otherwise (format version 2 kept those the
//     build read: part tables, view headers): checking them against the
//     image means decoding them, which is all keeping them saved, and a
//     hash kept beside them would be the writer's too. The build decodes
//     what it reads through the kept indexes, at no measurable cost: a
//     build of the retail layout from its sidecar took 52-78 ms (median 66,
//     14 builds) keeping them, 50-70 ms (median 59) decoding instead, the
//     sidecar half the size.

// sidecarVersion is the format version; a change makes old sidecars ignored.
// Version 4 adds the sizes of lazily sized views (lazyview.go), version 5
// the sky tables (levelcore_sky.go). Version 6 is version 5's format, but
// its level.glb sizes are of scenes that embed their textures: a view's
// kept size is only as good as the encoder that made it, so a change of
// what an encoder writes is a new version too. Version 7: level.glb reads
// a class's mesh with the class's whole slot count (SlotCount), as
// mesh.glb does, where a slot whose texture was left out had left the
// class out of the scene.
const sidecarVersion = 7

var sidecarMagic = [8]byte{'G', 'C', 'F', 'S', 'I', 'D', 'X', 0}

// Bounds on what a sidecar may hold (checked before anything is allocated).
const (
	maxSidecarBytes   = 64 << 20 // larger files are not read
	maxSidecarEntries = 1 << 20  // as many as a tree may have part nodes
	maxSideKey        = 1 << 10
	maxSideRule       = 256
	// maxSideIndex bounds one file's index bytes (a 256 MiB stream's
	// index is about 25 KiB), maxIndexTotal a tree's: past them an index
	// is not kept (the next process scans that stream at its open).
	maxSideIndex  = 1 << 20
	maxIndexTotal = 16 << 20
	// maxKeyDirBytes bounds the directory-record bytes hashed for the key.
	maxKeyDirBytes = 16 << 20
	// maxSideSkyDefs bounds one sky table's texture defs: 16 bytes for
	// each of the most (an int16 count) a header can declare.
	maxSideSkyDefs = 0x8000 * levelcore.SkyTextureDefSize
	// maxSkyTotal bounds a tree's sky table bytes (retail's are a few KiB
	// in all): past it a table is not kept (listed from core_data).
	maxSkyTotal = 4 << 20
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
	index   []byte // codec.Index.AppendBinary's bytes (checked by codec.LoadIndex when used)
	// sky: a sky table's entry (levelcore_sky.go), none of the above set
	sky *skyTable
}

// sidecar is a tree's persisted index: loaded at build, grown by scans,
// corrected where the image contradicts it, saved by SaveIndex.
type sidecar struct {
	dir  string
	key  [32]byte
	file string // dir/<key>.idx
	logf func(format string, args ...any)

	mu      sync.Mutex
	entries map[string]*sideEntry
	dirty   int   // changes since the last save
	ibytes  int64 // index bytes in all
	sbytes  int64 // sky table bytes in all
	timer   *time.Timer
	delay   time.Duration
	// Entries refused since the load (the image contradicted them), and
	// how many of them the log has told of.
	refused, told int

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
		if c := pc.n.Container(); c != nil {
			putBytes(c.Header)
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
		file: filepath.Join(o.IndexCacheDir, hex.EncodeToString(key[:16])+".idx"), logf: b.t.logf}
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
				s.ibytes += int64(len(e.index))
				s.sbytes += e.sky.bytes()
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
	// sideSky alone: a sky table's entry
	sideSky = 8
)

// minSideEntry is the fewest bytes an entry takes (key length, a key byte,
// flags), for bounding the entry count by the file's length.
const minSideEntry = 4 + 1 + 1

// parseSidecar reads a sidecar's bytes; it fails unless they are whole, of
// this version and of this key.
//
// Layout (little endian): magic[8], version u32, key[32], count u32, then
// count entries {keylen u32, key, flags u8, [size i64], [corrupt: offset
// i64, rulelen u32, rule], [index: len u32, bytes]} or, flags sideSky,
// {keylen u32, key, flags u8, headerlen u32, header, defslen u32, defs}, then a CRC-32C of
// everything before it. What parses is still only a claim: see the checks
// of sideScan, sideLoadIndex and fallbackIndex.
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
		if flags == sideSky {
			hl := r.u32("sky header length")
			if hl > levelcore.SkyHeaderSize {
				r.fail(fmt.Sprintf("entry %d: sky header length %d", i, hl))
				break
			}
			hdr := r.take(int(hl), "sky header")
			dl := r.u32("sky defs length")
			if dl > maxSideSkyDefs {
				r.fail(fmt.Sprintf("entry %d: sky texture defs length %d", i, dl))
				break
			}
			e.sky = &skyTable{header: hdr, defs: r.take(int(dl), "sky texture defs")}
			ents[k] = e
			continue
		}
		if flags&^sideFlags != 0 || flags&sideSized == 0 || flags&sideCorrupt != 0 && flags&sideIndex != 0 {
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
		if e.sky != nil {
			b = append(b, sideSky)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(e.sky.header)))
			b = append(b, e.sky.header...)
			b = binary.LittleEndian.AppendUint32(b, uint32(len(e.sky.defs)))
			b = append(b, e.sky.defs...)
			continue
		}
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

// sideScan answers a decoded file's size step from the sidecar, when it
// knows the file and the image does not contradict it; false otherwise (the
// caller scans the stream). A corrupt-stream entry is never answered from:
// the scan verifies it again (sideRecord then keeps or corrects it). A size
// the checks refuse is dropped, counted and logged (sideRefuse).
func (n *Node) sideScan() bool {
	s := n.tree.side
	if s == nil {
		return false
	}
	k := n.sideKey()
	if k == "" {
		return false
	}
	s.mu.Lock()
	e := s.entries[k]
	if e == nil || !e.sized || e.corrupt || len(e.index) == 0 {
		// Unknown, an error to verify, or a size with no index to check
		// it by (one past the index budget): scanned.
		s.mu.Unlock()
		return false
	}
	size, index := e.size, e.index
	s.mu.Unlock()
	if why := n.sideSizeRefused(size, index); why != "" {
		n.sideRefuse(k, e, why)
		return false
	}
	n.decSize = size
	return true
}

// sideSizeRefused says why a kept size and the index beside it are not
// believed, or "": the size must be within --max-decoded and what the
// stream's length can decode to (codec.MaxDecodedSize), and the index must
// end at that size and at the stream's end as its header declares it. Both
// are read from the sidecar and the header alone (no stream is read); a
// size and an index forged to agree are caught when the index is used
// (fallbackIndex).
func (n *Node) sideSizeRefused(size int64, index []byte) string {
	sl := n.streamLen()
	lim := codec.MaxDecodedSize(sl)
	switch {
	case size > n.tree.opt.MaxDecoded:
		return fmt.Sprintf("a size of %d bytes, past --max-decoded (%d)", size, n.tree.opt.MaxDecoded)
	case size > lim:
		return fmt.Sprintf("a size of %d bytes, more than a %d-byte stream decodes to (%d)", size, sl, lim)
	}
	dec, end, err := codec.PeekIndex(index)
	switch {
	case err != nil:
		return fmt.Sprintf("an index that does not read: %v", err)
	case dec != size:
		return fmt.Sprintf("a size of %d bytes beside an index of %d", size, dec)
	case n.hdr.Size > 0 && end != n.hdr.Size || end > sl:
		return fmt.Sprintf("an index of a %d-byte stream, the stream's header declares %d", end, n.hdr.Size)
	}
	return ""
}

// sideRefuse drops entry e of key k (when it is still there) and counts it
// refused.
func (n *Node) sideRefuse(k string, e *sideEntry, why string) {
	s := n.tree.side
	s.mu.Lock()
	if s.entries[k] == e {
		delete(s.entries, k)
		s.ibytes -= int64(len(e.index))
	}
	line := s.refusedLocked(n.logPath(), why)
	s.mu.Unlock()
	s.log(line)
}

// refusedLocked counts an entry the image contradicted (s.mu held; the
// caller dropped or corrected it) and returns the line to log: one for the
// first, "" for the rest, which the save counts in one line.
func (s *sidecar) refusedLocked(path, why string) string {
	s.refused++
	s.changed()
	if s.refused > 1 {
		return ""
	}
	s.told = 1
	return fmt.Sprintf("index sidecar %s: its entry for %s refused (%s): entries the image contradicts are recomputed from it and rewritten; further ones are counted",
		s.file, path, why)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

func (s *sidecar) log(line string) {
	if line != "" && s.logf != nil {
		s.logf("%s", line)
	}
}

// describeEntry is what an entry (or a scan) says of a stream, for the log.
func describeEntry(size int64, corrupt bool, cOff int64, rule string) string {
	if corrupt {
		return fmt.Sprintf("corrupt by rule %s at stream offset %#x, %d bytes clean", rule, cOff, size)
	}
	return fmt.Sprintf("%d bytes, decoding whole", size)
}

// sideRecordScan keeps what a size step learned: the size, and the error
// when it is the stream's own (a corrupt stream); I/O errors are not kept.
func (n *Node) sideRecordScan() { n.sideRecord(n.decSize, n.decErr) }

// sideRecord keeps what a scan of the stream found: its decoded size (on a
// corrupt stream, the clean bytes) and err, when it is the stream's own (a
// corrupt stream). An entry that says otherwise was wrong: it is corrected
// and counted refused; one that says the same is left as it is (a corrupt
// stream's error verified again changes nothing).
func (n *Node) sideRecord(size int64, err error) {
	s := n.tree.side
	if s == nil {
		return
	}
	var ce *codec.CorruptError
	if err != nil && !errors.As(err, &ce) {
		return
	}
	k := n.sideKey()
	if k == "" {
		return
	}
	var cOff int64
	var rule string
	if ce != nil {
		cOff, rule = ce.Offset, string(ce.Rule)
		if len(rule) > maxSideRule {
			rule = rule[:maxSideRule]
		}
	}
	s.mu.Lock()
	e := s.entries[k]
	var line string
	switch {
	case e == nil:
		if len(s.entries) >= maxSidecarEntries {
			s.mu.Unlock()
			return
		}
		e = &sideEntry{}
		s.entries[k] = e
		s.changed()
	case e.sized && e.size == size && e.corrupt == (ce != nil) && e.cOff == cOff && e.rule == rule:
		s.mu.Unlock()
		return // as kept
	case e.sized:
		line = s.refusedLocked(n.logPath(), "it says "+describeEntry(e.size, e.corrupt, e.cOff, e.rule)+
			"; the stream: "+describeEntry(size, ce != nil, cOff, rule))
	default:
		s.changed()
	}
	if e.size != size || ce != nil {
		s.ibytes -= int64(len(e.index))
		e.index = nil
	}
	e.sized, e.size = true, size
	e.corrupt, e.cOff, e.rule = ce != nil, cOff, rule
	s.mu.Unlock()
	s.log(line)
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
// index the codec does not accept against the stream's header, or of
// another size than the file's, is refused (dropped, counted) and built
// again by the caller. One it accepts is still unproven: it is remembered
// as the node's kept index, so that a decode through it that fails scans
// the stream afresh (fallbackIndex).
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
		err = fmt.Errorf("%w: an index of %d decoded bytes, the file has %d", codec.ErrIndexData, ix.Size(), n.decSize)
	}
	if err != nil {
		if !errors.Is(err, codec.ErrIndexData) {
			return nil // the stream's header: the scan reports it
		}
		s.mu.Lock()
		var line string
		if e := s.entries[k]; e != nil && bytes.Equal(e.index, data) {
			s.ibytes -= int64(len(e.index))
			e.index = nil
			line = s.refusedLocked(n.logPath(), "its index: "+err.Error())
		}
		s.mu.Unlock()
		s.log(line)
		return nil
	}
	n.keptIx.Store(ix)
	return ix
}

// indexFallback is what fallbackIndex found for a node's kept index.
type indexFallback struct {
	of  *codec.Index // the kept index that failed
	ix  *codec.Index // the fresh one, when the stream agrees with the file's size
	err error        // else why the bytes cannot be served
}

// fallbackIndex is what a decode through a kept index (sideLoadIndex) does
// when it fails: the index may be what is wrong (checkpoints that disagree
// with the stream), so the stream is scanned afresh, once per kept index.
// It returns the fresh index when it ends at the file's size: the caller
// serves the bytes through it, and later opens use it (under other cache
// keys: its blocks are not the kept one's). Else the error to serve: the
// scan's (a stream corrupt or unreadable after all), or one saying the
// stream decodes to another size than the file was given (a size and an
// index that agreed with each other and not with the stream: the size
// served cannot be taken back in this tree). The sidecar is corrected in
// every case the stream decides.
func (n *Node) fallbackIndex(kept *codec.Index) (*codec.Index, error) {
	n.ixMu.Lock()
	defer n.ixMu.Unlock()
	if fb := n.fallback; fb != nil && fb.of == kept {
		return fb.ix, fb.err
	}
	src, err := n.streamInput()
	if err != nil {
		return nil, err
	}
	fb := &indexFallback{of: kept}
	fresh, err := n.buildIndex(src)
	s := n.tree.side
	switch {
	case err != nil:
		fb.err = err
		var ce *codec.CorruptError
		if errors.As(err, &ce) {
			st, _ := codec.Scan(src, src.Size(), n.codecOptions())
			n.sideRecord(max(st.DecodedSize, 0), err)
		}
	case fresh.Size() != n.decSize:
		fb.err = fmt.Errorf("index sidecar %s: the file was given %d bytes from it, the stream decodes to %d (the next tree has it right)", s.file, n.decSize, fresh.Size())
		n.sideRecord(fresh.Size(), nil)
		n.sideRecordIndex(fresh)
	default:
		fb.ix = fresh
		n.freshKeys.Store(true)
		n.tree.indexes.put(n, fresh)
		k := n.sideKey()
		s.mu.Lock()
		var line string
		if e := s.entries[k]; e != nil {
			s.ibytes -= int64(len(e.index))
			e.index = nil
			line = s.refusedLocked(n.logPath(), "its index: a decode through it failed, a fresh scan did not")
		}
		s.mu.Unlock()
		s.log(line)
		n.sideRecordIndex(fresh)
	}
	n.fallback = fb
	return fb.ix, fb.err
}

// freshKeyMask moves the cache keys of a node whose kept index failed away
// from those of the blocks decoded through it (another layout of blocks).
const freshKeyMask = 0x9e3779b97f4a7c15

// blockKey is the cache key of node n's blocks, base being its inode number
// or build key.
func (n *Node) blockKey(base uint64) uint64 {
	if n.freshKeys.Load() {
		return base ^ freshKeyMask
	}
	return base
}

// cacheKey is the cache key of node n's blocks as cut by index ix: indexes
// of one stream built different ways (a scan, a parallel scan, a whole
// decode; a rebuild after the index LRU dropped one) may cut it into other
// blocks, and a block of one layout served for a block number of another is
// the wrong bytes (extract of the retail layout failed on hundreds of level
// core blocks so).
func (n *Node) cacheKey(base uint64, ix *codec.Index) uint64 {
	return n.blockKey(base) ^ ix.Layout()
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
	more, all := s.refused-s.told, s.refused
	s.told = s.refused
	s.mu.Unlock()
	if more > 0 {
		s.log(fmt.Sprintf("index sidecar %s: %s refused (%d since it was read), rewritten", s.file, plural(more, "more entry", "more entries"), all))
	}
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
