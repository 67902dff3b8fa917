package mkdisc

import (
	"bytes"
	"crypto/sha1"
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"testing"

	"gcfs/codec"
)

func byPath(files []*genFile) map[string]*genFile {
	m := map[string]*genFile{}
	for _, f := range files {
		m[f.path] = f
	}
	return m
}

func fileBytes(f *genFile, off, n int64) []byte {
	b := make([]byte, n)
	f.content.ReadAt(b, off)
	return b
}

// TestRetailPlacement: every inventory file at its retail LBA with its retail
// size, in a volume of the retail block count.
func TestRetailPlacement(t *testing.T) {
	inv, err := parseInventory()
	if err != nil {
		t.Fatal(err)
	}
	list, opt := builtOpt(t, Retail)
	files := byPath(list)
	if len(files) != len(inv) {
		t.Fatalf("%d files built, inventory has %d", len(files), len(inv))
	}
	for _, want := range inv {
		f := files[want.Path]
		if f == nil {
			t.Errorf("%s: not built", want.Path)
			continue
		}
		if f.lba != want.LBA || f.content.size != want.Size {
			t.Errorf("%s: LBA %d size %d, retail LBA %d size %d", want.Path, f.lba, f.content.size, want.LBA, want.Size)
		}
	}
	if opt.TotalBlocks != 1869312 || opt.VolumeID != "RATCHETANDCLANK2" || opt.SystemID != "PLAYSTATION" || opt.DirLBAs[""] != 261 || opt.DirLBAs["G"] != 262 {
		t.Errorf("volume options %+v", opt)
	}
}

// TestLevelHeaders: in retail every LEVEL header is exactly the levels table
// row; in small the ids, reverb and set of non-zero lumps are.
func TestLevelHeaders(t *testing.T) {
	rows, err := parseLevels()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []Layout{Retail, Small} {
		files := byPath(built(t, l))
		for _, row := range rows {
			f := files["G/"+row.File]
			h := fileBytes(f, 0, levelHeaderSize)
			le := binary.LittleEndian
			if le.Uint32(h[0:]) != 0x60 || le.Uint32(h[4:]) != 0 || int32(le.Uint32(h[8:])) != row.ID || int32(le.Uint32(h[12:])) != row.Reverb {
				t.Errorf("%s %s: header starts % x", l, row.File, h[:16])
			}
			for s := range levelSlots {
				off, size := int32(le.Uint32(h[0x10+8*s:])), int32(le.Uint32(h[0x14+8*s:]))
				if l == Retail && (off != row.Slots[s].Off || size != row.Slots[s].Size) {
					t.Errorf("%s slot %d: %d+%d, table %d+%d", row.File, s, off, size, row.Slots[s].Off, row.Slots[s].Size)
				}
				if (size != 0) != (row.Slots[s].Size != 0) {
					t.Errorf("%s %s slot %d: size %d, table %d", l, row.File, s, size, row.Slots[s].Size)
				}
			}
		}
		if id := files["G/LEVEL21.WAD"].info.LevelID; id != 30 {
			t.Errorf("%s: LEVEL21 id %d", l, id)
		}
	}
}

// TestLevelLumps checks the inside of every level's lumps in both layouts.
func TestLevelLumps(t *testing.T) {
	le := binary.LittleEndian
	for _, l := range []Layout{Small, Retail} {
		for _, f := range built(t, l) {
			if f.info == nil || f.info.Family != "LEVEL" {
				continue
			}
			lumps := map[string]treeEntry{}
			for _, e := range f.entries {
				lumps[e.name] = e
			}
			sb := fileBytes(f, lumps["sound_bank"].off, 40)
			if string(sb[24:28]) != "SBlk" || string(sb[36:39]) != "DAW" {
				t.Errorf("%s %s sound_bank: % x", l, f.path, sb)
			}
			gp := lumps["gameplay"]
			if gp.decoded == nil || gp.decoded.tag != "gameplay" || int64(len(gp.decoded.data)) >= gp.n {
				t.Errorf("%s %s: gameplay stream %v not shorter than its %d-byte lump", l, f.path, gp.decoded != nil, gp.n)
			}
			d := lumps["data"]
			dh := fileBytes(f, d.off, 0x58)
			rng := func(field int) (int64, int64) {
				return int64(int32(le.Uint32(dh[field:]))), int64(int32(le.Uint32(dh[field+4:])))
			}
			for field := 0; field < 0x58; field += 8 {
				o, n := rng(field)
				if field == 0x50 && o == -1 && n == 0 {
					continue // no transition textures
				}
				if o < 0x58 || n <= 0 || o+n > d.n {
					t.Errorf("%s %s data range %#x: %d+%d in a %d-byte lump", l, f.path, field, o, n, d.n)
					continue
				}
				b := fileBytes(f, d.off+o, n)
				isWAD := codec.IsStream(b, n)
				if wantWAD := field >= 0x20; isWAD != wantWAD {
					t.Errorf("%s %s data range %#x: stream %v, want %v", l, f.path, field, isWAD, wantWAD)
				}
			}
			io, _ := rng(0x08)
			co, cn := rng(0x48)
			core := fileBytes(f, d.off+co, cn)
			if h, err := codec.ParseHeader(core); err != nil || h.Tag != "coredata" {
				t.Errorf("%s %s core_data header %+v %v", l, f.path, h, err)
			}
			if l == Small {
				out, err := codec.Decode(core, codec.Options{})
				want := le.Uint32(fileBytes(f, d.off+io+0x8c, 4))
				if err != nil || uint32(len(out)) != want {
					t.Errorf("%s core_data decodes to %d bytes (%v), core_index+0x8C says %d", f.path, len(out), err, want)
				}
			}
			for k := 0; k < 3; k++ {
				c, ok := lumps["chunk"+string(rune('0'+k))]
				if !ok {
					continue
				}
				ch := fileBytes(f, c.off, 8)
				for i, tag := range []string{"chnktfrag", "chunkcoll"} {
					o := int64(int32(le.Uint32(ch[4*i:])))
					s := fileBytes(f, c.off+o, 16)
					h, err := codec.ParseHeader(s)
					if err != nil || h.Tag != tag || o+h.Size > c.n {
						t.Errorf("%s %s chunk%d %s at %d: %+v %v", l, f.path, k, tag, o, h, err)
					}
				}
			}
		}
	}
}

// TestRootFiles: SYSTEM.CNF, the ELF, RC2.HDR's copies of the headers, and
// MPEG1/MPEG2 first words.
func TestRootFiles(t *testing.T) {
	for _, l := range []Layout{Small, Retail} {
		files := byPath(built(t, l))
		cnf := fileBytes(files["SYSTEM.CNF"], 0, 60)
		if !bytes.HasPrefix(cnf, []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n")) || files["SYSTEM.CNF"].content.size != 60 {
			t.Errorf("%s SYSTEM.CNF %q", l, cnf)
		}
		if elf := fileBytes(files["SCUS_972.68"], 0, 4); string(elf) != "\x7fELF" {
			t.Errorf("%s ELF starts % x", l, elf)
		}
		le := binary.LittleEndian
		if w := int32(le.Uint32(fileBytes(files["G/MPEG1.WAD"], 0, 4))); w != 7864320 {
			t.Errorf("%s MPEG1 first word %d", l, w)
		}
		if w := int32(le.Uint32(fileBytes(files["G/MPEG2.WAD"], 0, 4))); w >= 0 {
			t.Errorf("%s MPEG2 first word %d", l, w)
		}
		hdr := files["RC2.HDR"]
		if hdr.content.size != 408444 {
			t.Errorf("%s RC2.HDR size %d", l, hdr.content.size)
		}
		// the global copies, back to back, then the level blocks
		at := int64(0)
		for _, p := range []string{"MPEG", "MISC", "HUD", "BONUS", "AUDIO", "SPACE", "SCENE", "GADGET", "ARMOR"} {
			c := files["G/"+p+".WAD"]
			cp := fileBytes(hdr, at, int64(len(c.header)))
			if int64(le.Uint32(cp[4:])) != c.lba || !bytes.Equal(cp[8:], c.header[8:]) || !bytes.Equal(cp[:4], c.header[:4]) {
				t.Errorf("%s RC2.HDR copy of %s at %#x differs", l, p, at)
			}
			at += int64(len(c.header))
		}
		for n := 0; n < numLevels; n++ {
			base := int64(0x5800 + n*0x3800)
			for _, part := range []struct {
				name string
				off  int64
			}{{"LEVEL", 0}, {"AUDIO", 0x800}, {"SCENE", 0x2000}} {
				c := files["G/"+part.name+strconv.Itoa(n)+".WAD"]
				cp := fileBytes(hdr, base+part.off, int64(len(c.header)))
				if int64(le.Uint32(cp[4:])) != c.lba || !bytes.Equal(cp[8:], c.header[8:]) || le.Uint32(c.header[4:]) != 0 {
					t.Errorf("%s RC2.HDR level block %d %s differs", l, n, part.name)
				}
			}
		}
	}
}

// TestRawExtentsNotWAD: no raw tree file begins with the WAD magic, so the
// tree shows exactly the decoded files the generator made.
func TestRawExtentsNotWAD(t *testing.T) {
	for _, l := range []Layout{Small, Retail} {
		for _, f := range built(t, l) {
			for _, e := range f.entries {
				b := fileBytes(f, e.off, min(e.n, 16))
				if e.content != nil {
					b = make([]byte, min(e.n, 16))
					e.content.ReadAt(b, e.off-e.contentOff)
				}
				if (e.decoded != nil) != codec.IsStream(b, e.n) {
					t.Errorf("%s %s/%s: IsStream %v, generated stream %v", l, f.path, e.name, codec.IsStream(b, e.n), e.decoded != nil)
				}
			}
		}
	}
}

// TestTailOverruns: the retail BONUS and LEVEL24 end inside their last
// extent's last sector; the manifest shows those extents clamped.
func TestTailOverruns(t *testing.T) {
	files := byPath(built(t, Retail))
	for _, c := range []struct{ path, last string }{{"G/BONUS.WAD", "paintings/05"}, {"G/LEVEL24.WAD", "gameplay"}} {
		f := files[c.path]
		e := f.entries[len(f.entries)-1]
		if e.name != c.last || e.off+e.n != f.content.size || e.n%sectorSize == 0 {
			t.Errorf("%s: last extent %s @%d+%d, file %d", c.path, e.name, e.off, e.n, f.content.size)
		}
	}
	for _, l := range []Layout{Small, Retail} {
		over := 0
		for _, f := range built(t, l) {
			if f.info != nil && f.content.size%sectorSize != 0 && len(f.entries) > 0 {
				over++
			}
		}
		if over < 20 {
			t.Errorf("%s: only %d containers end inside a sector", l, over)
		}
	}
}

// TestDeterministic: the same seed gives the same image and manifest, another
// seed another manifest.
func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, seed int64) (*Result, string) {
		p := filepath.Join(dir, name)
		res, err := Generate(p, Small, seed)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h := sha1.New()
		n, _ := io.Copy(h, f)
		if n != res.ImageSize {
			t.Fatalf("image is %d bytes, Generate says %d", n, res.ImageSize)
		}
		return res, sha1Hex(h.Sum(nil))
	}
	a, ha := gen("a.iso", 7)
	// the second run on one core: scheduling must not change a byte
	procs := runtime.GOMAXPROCS(1)
	b, hb := gen("b.iso", 7)
	runtime.GOMAXPROCS(procs)
	c, _ := gen("c.iso", 8)
	if ha != hb || !reflect.DeepEqual(a, b) {
		t.Errorf("seed 7 twice (GOMAXPROCS %d and 1): images %s and %s, manifests equal %v", procs, ha, hb, reflect.DeepEqual(a.Manifest, b.Manifest))
	}
	if reflect.DeepEqual(a.Manifest, c.Manifest) {
		t.Error("seeds 7 and 8 give the same manifest")
	}
	if a.ImageSize > 64<<20 {
		t.Errorf("small image is %d bytes", a.ImageSize)
	}
}
