package discimg

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"regexp"
	"strings"
)

// Identity is what identification learns.
type Identity struct {
	Serial     string // "SCUS-97268", "" when unknown
	Title      string // "Ratchet & Clank: Going Commando" or "unknown"
	Region     string // "NTSC-U", "PAL", "NTSC-J", "" when unknown
	Version    string // VER from SYSTEM.CNF
	VMode      string // VMODE from SYSTEM.CNF
	Boot       string // BOOT2 file name ("SCUS_972.68")
	VolumeID   string
	Known      bool   // serial is a known release of the game
	ELFSHA1    string // hex
	ELFMatch   bool   // boot ELF SHA-1 equals the retail one
	ImageSHA1  string // only with hash
	ImageMatch bool
}

// Retail hashes of the NTSC-U v1.01 disc (DISC-FACTS).
const (
	RetailELFSHA1   = "bacda860cbd6723142e86db56f197e47e728970f"
	RetailImageSHA1 = "f2cfaf0eb12b3c0d8fd6db7aa49ce032e8a6020b"
)

// Release is a known release of the game.
type Release struct {
	Serial, Region, Title string
}

// Releases are the known releases of Going Commando by serial (DISC-FACTS).
var Releases = map[string]Release{
	"SCUS-97268": {"SCUS-97268", "NTSC-U", "Ratchet & Clank: Going Commando"},
	"SCES-51607": {"SCES-51607", "PAL", "Ratchet & Clank 2: Locked and Loaded"},
	"SCPS-15056": {"SCPS-15056", "NTSC-J", "Ratchet & Clank 2"},
	"SCUS-97322": {"SCUS-97322", "NTSC-U", "Ratchet & Clank: Going Commando (demo)"},
	"SCUS-97323": {"SCUS-97323", "NTSC-U", "Ratchet & Clank: Going Commando (demo)"},
	"SCUS-97374": {"SCUS-97374", "NTSC-U", "Ratchet & Clank: Going Commando (demo)"},
}

// maxSystemCNF bounds how much of SYSTEM.CNF is read: the real one is 60 bytes.
const maxSystemCNF = 4096

// hashBuffer is the read size for hashing the image. Blocks wholly inside a
// hole of a sparse file are not read at all (holeFinder): zeros are hashed.
const hashBuffer = 4 << 20

var serialName = regexp.MustCompile(`^([A-Z]{4})[_-]?(\d{3})\.?(\d{2})$`)

// SerialFromBoot turns a boot file name into a serial: "SCUS_972.68" →
// "SCUS-97268"; "" when the name is not of that shape.
func SerialFromBoot(name string) string {
	m := serialName.FindStringSubmatch(strings.ToUpper(name))
	if m == nil {
		return ""
	}
	return m[1] + "-" + m[2] + m[3]
}

// Identify reads SYSTEM.CNF and the boot ELF; hash also hashes the whole image.
// A disc that is not a known release (or has no SYSTEM.CNF) is an Identity with
// Known false and Title "unknown", not an error; errors are I/O failures.
func (im *Image) Identify(hash bool) (*Identity, error) {
	id := &Identity{Title: "unknown", VolumeID: im.Vol.VolumeID}
	var boot *Entry
	if cnf := im.rootFile("SYSTEM.CNF"); cnf != nil && cnf.Err == nil {
		b := make([]byte, min(cnf.Size, maxSystemCNF))
		if err := readFull(im.R, b, cnf.Offset()); err != nil {
			return nil, fmt.Errorf("reading SYSTEM.CNF: %w", err)
		}
		kv := parseSystemCNF(b)
		id.Version, id.VMode = kv["VER"], kv["VMODE"]
		if b2, ok := kv["BOOT2"]; ok {
			id.Boot = bootPath(b2)
			boot = im.lookupFold(id.Boot)
		}
	}
	if boot == nil || boot.IsDir {
		boot = nil
		e, err := im.firstELF()
		if err != nil {
			return nil, err
		}
		if e != nil {
			boot = e
			if id.Boot == "" {
				id.Boot = e.Path
			}
		}
	}
	base := id.Boot[strings.LastIndexByte(id.Boot, '/')+1:]
	id.Serial = SerialFromBoot(base)
	if rel, ok := Releases[id.Serial]; ok {
		id.Known, id.Title, id.Region = true, rel.Title, rel.Region
	}
	if boot != nil && boot.Err == nil {
		sum, err := hashRange(im.R, boot.Offset(), boot.Size, 1<<20)
		if err != nil {
			return nil, fmt.Errorf("hashing boot file %s: %w", boot.Path, err)
		}
		id.ELFSHA1 = sum
		id.ELFMatch = sum == RetailELFSHA1
	}
	if hash {
		sum, err := hashRange(im.R, 0, im.Size, hashBuffer)
		if err != nil {
			return nil, fmt.Errorf("hashing the image: %w", err)
		}
		id.ImageSHA1 = sum
		id.ImageMatch = sum == RetailImageSHA1
	}
	return id, nil
}

// parseSystemCNF reads "KEY = value" lines (CRLF or LF, any spacing, keys in
// any case) into upper-case keys.
func parseSystemCNF(b []byte) map[string]string {
	kv := map[string]string{}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i] // padding after the text
	}
	for _, line := range strings.FieldsFunc(string(b), func(r rune) bool { return r == '\n' || r == '\r' }) {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k = strings.ToUpper(strings.TrimSpace(k))
		if _, seen := kv[k]; !seen {
			kv[k] = strings.TrimSpace(v)
		}
	}
	return kv
}

// bootPath turns a BOOT2 value ("cdrom0:\SCUS_972.68;1") into a path in the
// tree ("SCUS_972.68").
func bootPath(v string) string {
	if i := strings.IndexByte(v, ':'); i >= 0 {
		v = v[i+1:]
	}
	v = strings.ReplaceAll(v, "\\", "/")
	if i := strings.LastIndexByte(v, ';'); i >= 0 {
		v = v[:i]
	}
	return strings.Trim(strings.TrimSpace(v), "/")
}

// rootFile finds a root file by name, ignoring case.
func (im *Image) rootFile(name string) *Entry {
	if im.Root == nil {
		return nil
	}
	for _, c := range im.Root.Children {
		if !c.IsDir && strings.EqualFold(c.Name, name) {
			return c
		}
	}
	return nil
}

// lookupFold is Lookup ignoring case, for names written by hand in SYSTEM.CNF.
func (im *Image) lookupFold(path string) *Entry {
	if e, ok := im.Lookup(path); ok {
		return e
	}
	e := im.Root
	if e == nil || path == "" {
		return nil
	}
	for _, name := range strings.Split(path, "/") {
		var next *Entry
		for _, c := range e.Children {
			if strings.EqualFold(c.Name, name) {
				next = c
				break
			}
		}
		if next == nil {
			return nil
		}
		e = next
	}
	return e
}

// firstELF is the first root file (in directory-record order) whose bytes
// start with the ELF magic.
func (im *Image) firstELF() (*Entry, error) {
	if im.Root == nil {
		return nil, nil
	}
	magic := make([]byte, 4)
	for _, c := range im.Root.Children {
		if c.IsDir || c.Err != nil || c.Size < 4 {
			continue
		}
		if err := readFull(im.R, magic, c.Offset()); err != nil {
			return nil, fmt.Errorf("reading %s: %w", c.Path, err)
		}
		if string(magic) == "\x7fELF" {
			return c, nil
		}
	}
	return nil, nil
}

// hashRange returns the hex SHA-1 of n bytes at off. Reading and hashing
// overlap: one goroutine reads the next buffer while the current one is hashed.
func hashRange(r io.ReaderAt, off, n int64, bufSize int) (string, error) {
	h := sha1.New()
	if n <= int64(bufSize) {
		b := make([]byte, n)
		if err := readFull(r, b, off); err != nil {
			return "", err
		}
		h.Write(b)
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if err := pipelinedHash(h, r, off, n, bufSize); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func pipelinedHash(h hash.Hash, r io.ReaderAt, off, n int64, bufSize int) error {
	type block struct {
		b    []byte
		hole bool // b's length of zeros, not read
		err  error
	}
	free := make(chan []byte, 2)
	full := make(chan block, 2)
	free <- make([]byte, bufSize)
	free <- make([]byte, bufSize)
	zeros := make([]byte, bufSize)
	holes := newHoleFinder(r)
	done := make(chan struct{})
	defer close(done)
	go func() {
		defer close(full)
		for pos := off; pos < off+n; {
			var b []byte
			select {
			case b = <-free:
			case <-done:
				return
			}
			b = b[:min(int64(bufSize), off+n-pos)]
			var blk block
			if holes.isHole(pos, int64(len(b))) {
				blk = block{b: b, hole: true}
			} else {
				blk = block{b: b, err: readFull(r, b, pos)}
			}
			select {
			case full <- blk:
			case <-done:
				return
			}
			if blk.err != nil {
				return
			}
			pos += int64(len(b))
		}
	}()
	for blk := range full {
		if blk.err != nil {
			return blk.err
		}
		if blk.hole {
			h.Write(zeros[:len(blk.b)])
		} else {
			h.Write(blk.b)
		}
		free <- blk.b[:cap(blk.b)]
	}
	return nil
}
