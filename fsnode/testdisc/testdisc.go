// Package testdisc writes a small, hand-made disc image for the tree's tests:
// a MISC.WAD container holding raw extents, WAD streams (one encoded, one
// tiny hand-made, one that breaks the two-literals rule) and an unused slot; a
// table-less MPEG1.WAD; a BROKEN.WAD whose table reads in no consistent way;
// and a plain tail file. It records what every file of the tree must read as.
// Test-only: nothing in gcfs itself imports it.
package testdisc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"gcfs/codec"
	"gcfs/discimg/isowriter"
)

const sector = 2048

// Disc is a written image and what its tree must show.
type Disc struct {
	Path string
	Size int64
	// Files: every file of the tree that reads whole, by tree path.
	Files map[string][]byte
	// Corrupt: decoded files whose stream breaks a rule, and the length that
	// decodes cleanly.
	Corrupt map[string]int64
	// Dirs: every directory of the tree, by path ("" is the root).
	Dirs []string
	// Sample is the decoded content of G/MISC.WAD/frontend.
	Sample []byte
	// MiscSkipped is the number of MISC table entries left out (unused slots).
	MiscSkipped int
}

// Hand-made streams (after a 16-byte header whose size field is right).
var (
	// "abcd", then a short match of 8 bytes at distance 1: "abcdddddddd".
	tinyPackets = []byte{0x01, 'a', 'b', 'c', 'd', 0xC0, 0x00}
	tinyOutput  = []byte("abcdddddddd")
	// Two literal packets in a row: corrupt after "abcd".
	badPackets = []byte{0x01, 'a', 'b', 'c', 'd', 0x01, 'e', 'f', 'g', 'h'}
)

func stream(tag string, packets []byte) []byte {
	s := make([]byte, 16, 16+len(packets))
	copy(s, "WAD")
	binary.LittleEndian.PutUint32(s[3:], uint32(16+len(packets)))
	copy(s[7:], tag)
	return append(s, packets...)
}

func pad(b []byte) []byte {
	if r := len(b) % sector; r != 0 {
		b = append(b, make([]byte, sector-r)...)
	}
	return b
}

// misc builds a MISC.WAD (0x40 header: 7 pairs {sector, sectors}) and the tree
// files it shows.
func misc(sample []byte) (wad []byte, files map[string][]byte, corrupt map[string]int64, skipped int) {
	debugFont := bytes.Repeat([]byte("FONT"), 750) // 3000 bytes
	// The big encoded stream sits in frontend: irx's content would be read
	// as an IRX bundle (MISC's documented irx.d/), which a sample is not.
	frontend := codec.Encode(sample, codec.EncodeOptions{Tag: "frontend"})
	saveGame := []byte("save game block\n")
	frontbin := stream("frontbin", badPackets)
	frontbinNet := stream("frontnet", tinyPackets)
	exit := bytes.Repeat([]byte{0xA5, 0x5A}, 50)
	parts := []struct {
		name string
		data []byte
	}{
		{"debug_font", debugFont}, {"irx", nil}, {"save_game", saveGame},
		{"frontbin", frontbin}, {"frontbin_net", frontbinNet}, {"frontend", frontend}, {"exit", exit},
	}
	wad = make([]byte, sector) // header sector
	binary.LittleEndian.PutUint32(wad[0:], 0x40)
	files = map[string][]byte{}
	corrupt = map[string]int64{}
	for i, p := range parts {
		if len(p.data) == 0 {
			skipped++
			continue
		}
		sec := len(wad) / sector
		binary.LittleEndian.PutUint32(wad[8+8*i:], uint32(sec))
		// sizes in sectors, as Wrench types MISC (its documented form)
		binary.LittleEndian.PutUint32(wad[12+8*i:], uint32((len(p.data)+sector-1)/sector))
		wad = pad(append(wad, p.data...))
	}
	base := "G/MISC.WAD/"
	files[base+"debug_font"] = pad(debugFont)
	files[base+"frontend"] = sample
	files[base+"frontend.wad"] = pad(frontend)
	files[base+"save_game"] = pad(saveGame)
	files[base+"frontbin.wad"] = pad(frontbin)
	corrupt[base+"frontbin"] = 4 // "abcd" decodes before the second literal
	files[base+"frontbin_net"] = tinyOutput
	files[base+"frontbin_net.wad"] = pad(frontbinNet)
	files[base+"exit"] = pad(exit)
	return wad, files, corrupt, skipped
}

// Options vary the image.
type Options struct {
	SampleSize int   // decoded size of frontend (default 300,000)
	Seed       int64 // sample content
}

// Write writes the image as dir/test.iso.
func Write(dir string, opt Options) (*Disc, error) {
	if opt.SampleSize <= 0 {
		opt.SampleSize = 300000
	}
	sample := codec.SampleData(opt.Seed+1, opt.SampleSize)
	wad, mfiles, corrupt, skipped := misc(sample)
	systemCnf := []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n")
	mpeg1 := make([]byte, 10000)
	binary.LittleEndian.PutUint32(mpeg1, 7864320)
	for i := 4; i < len(mpeg1); i++ {
		mpeg1[i] = byte(i * 7)
	}
	broken := make([]byte, 8*sector)
	binary.LittleEndian.PutUint32(broken[0:], 0x40)
	for i, v := range []uint32{1, 3000, 2, 3000} {
		binary.LittleEndian.PutUint32(broken[8+4*i:], v)
	}
	tail := bytes.Repeat([]byte("TAIL"), 3*sector/4+100)
	files := []isowriter.File{
		{Path: "SYSTEM.CNF", Size: int64(len(systemCnf)), Chunks: []isowriter.Chunk{{Data: systemCnf}}},
		{Path: "G/BROKEN.WAD", Size: int64(len(broken)), Chunks: []isowriter.Chunk{{Data: broken}}},
		{Path: "G/MPEG1.WAD", Size: int64(len(mpeg1)), Chunks: []isowriter.Chunk{{Data: mpeg1}}},
		{Path: "G/MISC.WAD", Size: int64(len(wad)), Chunks: []isowriter.Chunk{{Data: wad}}},
		{Path: "ZTAIL.DUP", Size: int64(len(tail)), Chunks: []isowriter.Chunk{{Data: tail}}},
	}
	path := filepath.Join(dir, "test.iso")
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	size, err := isowriter.Write(f, files, isowriter.Options{VolumeID: "GCFSTEST", SystemID: "PLAYSTATION"})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("testdisc: %w", err)
	}
	d := &Disc{Path: path, Size: size, Files: mfiles, Corrupt: corrupt, Sample: sample, MiscSkipped: skipped,
		Dirs: []string{"", "G", "G/MISC.WAD"}}
	d.Files["SYSTEM.CNF"] = systemCnf
	d.Files["G/MPEG1.WAD"] = mpeg1
	d.Files["G/BROKEN.WAD"] = broken
	d.Files["ZTAIL.DUP"] = tail
	return d, nil
}

// PatchName rewrites the identifier of the directory record recorded as old
// (without ";1") to new, in place in the image file: a hostile image with
// names such as "..", "a/b" or ones holding NUL. new may be shorter than old
// (the identifier length byte is rewritten; the record keeps its length).
func PatchName(path, old, new string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if len(new) > len(old)+2 || len(new) == 0 {
		return fmt.Errorf("testdisc: new name %q longer than %q;1", new, old)
	}
	rec := []byte(old + ";1")
	found := 0
	for i := 33; i+len(rec) <= len(b); i++ {
		if b[i-1] != byte(len(rec)) || !bytes.Equal(b[i:i+len(rec)], rec) {
			continue
		}
		b[i-1] = byte(len(new))
		copy(b[i:i+len(rec)], make([]byte, len(rec)))
		copy(b[i:], new)
		found++
	}
	if found == 0 {
		return fmt.Errorf("testdisc: no directory record named %q", old)
	}
	return os.WriteFile(path, b, 0o644)
}

// Log records log lines, for a Logf option, so tests can count them.
type Log struct {
	mu    sync.Mutex
	lines []string
}

// Logf records one formatted line.
func (l *Log) Logf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
}

// Lines returns the lines recorded so far.
func (l *Log) Lines() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// Count is how many recorded lines contain sub.
func (l *Log) Count(sub string) int {
	n := 0
	for _, s := range l.Lines() {
		if strings.Contains(s, sub) {
			n++
		}
	}
	return n
}

// PatchRecord finds the directory record named name (as recorded, without
// ";1"; "\x00" for a directory's own "." record is not supported) in the
// image file and lets patch change its bytes in place (rec[0] is the record's
// length byte: rec[2:10] the extent LBA, rec[10:18] the data length, rec[25]
// the flags, rec[26:28] the interleave fields). Every record of that name is
// patched; it fails when there is none.
func PatchRecord(path, name string, patch func(rec []byte)) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	found := 0
	for _, id := range [][]byte{[]byte(name + ";1"), []byte(name)} {
		for i := 33; i+len(id) <= len(b); i++ {
			if b[i-1] != byte(len(id)) || !bytes.Equal(b[i:i+len(id)], id) {
				continue
			}
			start := i - 33
			n := int(b[start])
			if n < 33+len(id) || start+n > len(b) {
				continue
			}
			patch(b[start : start+n])
			found++
		}
		if found > 0 {
			break
		}
	}
	if found == 0 {
		return fmt.Errorf("testdisc: no directory record named %q", name)
	}
	return os.WriteFile(path, b, 0o644)
}

// Both32 writes v both-endian (ISO 9660's 8-byte field) at b[0:8].
func Both32(b []byte, v uint32) {
	binary.LittleEndian.PutUint32(b, v)
	binary.BigEndian.PutUint32(b[4:], v)
}

// WriteDuplicates writes dir/dups.iso: directory D of n files (F0000 … with
// the contents data(i)) whose records are then all renamed DUP, the one name
// every one of them carries: a directory of n duplicate records.
func WriteDuplicates(dir string, n int, data func(i int) []byte) (path string, size int64, err error) {
	var fs []isowriter.File
	for i := 0; i < n; i++ {
		d := data(i)
		fs = append(fs, isowriter.File{Path: fmt.Sprintf("D/F%04d", i), Size: int64(len(d)), Chunks: []isowriter.Chunk{{Data: d}}})
	}
	path = filepath.Join(dir, "dups.iso")
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	size, err = isowriter.Write(f, fs, isowriter.Options{VolumeID: "DUPS"})
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", 0, err
	}
	renamed := 0
	for i := 33; i+7 <= len(b); i++ {
		if b[i-1] == 7 && b[i] == 'F' && string(b[i+5:i+7]) == ";1" {
			b[i-1] = 5
			copy(b[i:i+7], "DUP;1\x00\x00")
			renamed++
		}
	}
	if renamed != n {
		return "", 0, fmt.Errorf("testdisc: renamed %d records, want %d", renamed, n)
	}
	return path, size, os.WriteFile(path, b, 0o644)
}

// CutInPacket finds where to lower a WAD stream's declared size so that it
// breaks a format rule (the new size ends inside a packet): the first such
// cut at or past from whose clean prefix is at least minClean bytes. It
// returns the cut and the clean length, or ok false when none does.
func CutInPacket(stream []byte, from, minClean int) (cut, clean int, ok bool) {
	for cut = max(from, codec.HeaderSize+1); cut < len(stream); cut++ {
		s := append([]byte{}, stream[:cut]...)
		binary.LittleEndian.PutUint32(s[3:], uint32(cut))
		if out, err := codec.Decode(s, codec.Options{}); errors.Is(err, codec.ErrFormat) && len(out) >= minClean {
			return cut, len(out), true
		}
	}
	return 0, 0, false
}
