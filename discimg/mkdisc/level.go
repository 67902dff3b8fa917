package mkdisc

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"

	"gcfs/codec"
	"gcfs/discimg/levelcore"
)

// Level lump slots, as in the levels table: the header field of slot s is at 0x10+8*s.
const (
	slotData = iota
	slotSoundBank
	slotGameplay
	slotOcclusion
	slotChunk0
)

var lumpNames = [levelSlots]string{"data", "sound_bank", "gameplay", "occlusion",
	"chunk0", "chunk1", "chunk2", "chunk0_sound_bank", "chunk1_sound_bank", "chunk2_sound_bank"}

// physicalOrder is the lumps' order in the file: sound_bank first (sector 1),
// then data, gameplay, occlusion, chunks, chunk banks.
var physicalOrder = [levelSlots]int{1, 0, 2, 3, 4, 5, 6, 7, 8, 9}

// Decoded sizes measured on retail (DISC-FACTS), reproduced for realism.
var retailCollision = map[string][3]int{
	"LEVEL1.WAD": {2836912, 289104, 0},
	"LEVEL2.WAD": {2315920, 0, 0},
}

// lumpContent is a lump's bytes relative to its start, and its streams.
type lumpContent struct {
	f       sparseFile // size = content length
	decoded *stream    // gameplay: the stream at the lump's start
	parts   []treeEntry
	// chunk lumps: the streams at chunkOffs[0] (tfrags) and [1] (collision);
	// their parts are sized once the lump's extent is known.
	chunk     [2]*stream
	chunkOffs [2]int64
	// extra: files the tree shows inside the lump's NAME.d/ that are no
	// part of its table (the data lump's core/), paths relative to NAME.d/
	extra  []ManifestEntry
	core   *levelcore.Built // the data lump: its level core (gameplay places its classes)
	coreGS int64            // and the size of its gs_ram part
}

func (g *gen) buildLevel(row levelRow, inv invFile) (*genFile, error) {
	retailSecs := func(s int) int64 { return int64(row.Slots[s].Size) }
	overrun := sectorsOf(inv.Size)*sectorSize - inv.Size
	lastSlot := -1
	for _, s := range physicalOrder {
		if row.Slots[s].Size != 0 {
			lastSlot = s
		}
	}
	// capacity of a lump in retail: its sectors, clamped at the file's end
	capacity := func(s int) int64 {
		c := retailSecs(s) * sectorSize
		if s == lastSlot {
			c -= overrun
		}
		return c
	}
	var lumps [levelSlots]*lumpContent
	for s := 0; s < levelSlots; s++ {
		if row.Slots[s].Size == 0 {
			continue
		}
		c := int64(0)
		if !g.small() {
			c = capacity(s)
		}
		var err error
		switch {
		case s == slotData:
			lumps[s], err = g.dataLump(row, c)
		case s == slotGameplay:
			lumps[s], err = g.gameplayLump(row, c, lumps[slotData])
		case s >= slotChunk0 && s < slotChunk0+3:
			lumps[s], err = g.chunkLump(row, s-slotChunk0, c)
		default:
			lumps[s], err = g.rawLump(row, s, c)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %s: %w", row.File, lumpNames[s], err)
		}
	}
	// Place the lumps: retail as the table says; small tiled from sector 1,
	// each as long as its content (the gameplay lump longer than its stream).
	var off, size [levelSlots]int64 // sectors
	fileSize := inv.Size
	if g.small() {
		next := int64(1)
		for _, s := range physicalOrder {
			l := lumps[s]
			if l == nil {
				continue
			}
			need := l.f.size
			if s == slotGameplay {
				need++ // the stream is shorter than its lump
			}
			if s == lastSlot {
				need += overrun
			}
			if s == slotOcclusion {
				need = max(need, retailSecs(s)*sectorSize) // 2 to 25 sectors, as in retail
			}
			off[s], size[s] = next, max(1, sectorsOf(need))
			next += size[s]
		}
		fileSize = next*sectorSize - overrun
	} else {
		for s := range levelSlots {
			off[s], size[s] = int64(row.Slots[s].Off), int64(row.Slots[s].Size)
		}
	}
	f := &genFile{path: inv.Path, retailLBA: inv.LBA, content: &sparseFile{size: fileSize}}
	hdr := make([]byte, levelHeaderSize)
	binary.LittleEndian.PutUint32(hdr[0:], levelHeaderSize)
	binary.LittleEndian.PutUint32(hdr[8:], uint32(row.ID))
	binary.LittleEndian.PutUint32(hdr[12:], uint32(row.Reverb))
	info := &ContainerInfo{Path: inv.Path, Family: "LEVEL", HeaderSize: levelHeaderSize, Entries: levelSlots,
		Reading: readingLevel, LevelID: row.ID, Reverb: row.Reverb, LevelName: levelNames[row.ID]}
	for s := range levelSlots {
		binary.LittleEndian.PutUint32(hdr[0x10+8*s:], uint32(off[s]))
		binary.LittleEndian.PutUint32(hdr[0x14+8*s:], uint32(size[s]))
		l := lumps[s]
		if l == nil {
			info.Unused++
			continue
		}
		base := off[s] * sectorSize
		n := min(size[s]*sectorSize, fileSize-base)
		if l.f.size > n {
			return nil, fmt.Errorf("mkdisc: %s %s: %d bytes of content in a %d-byte lump", row.File, lumpNames[s], l.f.size, n)
		}
		for _, c := range l.f.chunks {
			f.content.put(base+c.Off, c.Data)
		}
		e := treeEntry{idx: s, name: lumpNames[s], off: base, n: n, decoded: l.decoded, parts: l.parts, extra: l.extra}
		if s == slotGameplay {
			e.beside = g.levelGLB(row, lumps)
		}
		if l.chunk[0] != nil {
			// each stream runs to the other's start, the last to the lump's end
			e.parts = []treeEntry{
				{name: "tfrags", off: l.chunkOffs[0], n: l.chunkOffs[1] - l.chunkOffs[0], decoded: l.chunk[0]},
				{name: "collision", off: l.chunkOffs[1], n: n - l.chunkOffs[1], decoded: l.chunk[1]},
			}
		}
		f.entries = append(f.entries, e)
		info.Coverage += sectorsOf(n)
	}
	return f, f.finishContainer(hdr, info)
}

func (g *gen) plain(retail, small int) int {
	if g.small() {
		return small
	}
	return retail
}

func (g *gen) rawLump(row levelRow, s int, capacity int64) (*lumpContent, error) {
	rng := g.rng(row.File, lumpNames[s])
	n := capacity
	if g.small() {
		n = int64(2+rng.IntN(6)) * sectorSize
		if s == slotOcclusion {
			n = int64(row.Slots[s].Size) * sectorSize
		}
	}
	style := styleGeneric
	if s == slotSoundBank || s >= slotChunk0+3 {
		style = styleSoundBank
	}
	l := &lumpContent{}
	l.f.size = n
	rawContent(&l.f, 0, n, row.File+"/"+lumpNames[s], s, style, rng, g.small())
	return l, nil
}

// chunkLump: {s32 tfrags, s32 collision} byte offsets, each at a WAD stream.
func (g *gen) chunkLump(row levelRow, k int, capacity int64) (*lumpContent, error) {
	rng := g.rng(row.File, "chunk", k)
	coll := retailCollision[row.File][k]
	if coll == 0 || g.small() {
		coll = g.plain(int(float64(capacity)*0.9), 12<<10+rng.IntN(10<<10))
	}
	coll = min(coll, 3<<20)
	tfragCap, collCap := int64(0), int64(0)
	if capacity > 0 {
		tfragCap = capacity / 3
	}
	tfrag, err := makeStreamOf(rng, "chnktfrag", g.plain(int(float64(capacity)*0.4), 10<<10+rng.IntN(8<<10)), tfragCap, meshContent(true, g.small()))
	if err != nil {
		return nil, err
	}
	collOff := align(16+int64(len(tfrag.data)), 16)
	if capacity > 0 {
		collCap = capacity - collOff
	}
	cs, err := makeStreamOf(rng, "chunkcoll", coll, collCap, meshContent(false, g.small()))
	if err != nil {
		return nil, err
	}
	l := &lumpContent{}
	var hdr [16]byte
	binary.LittleEndian.PutUint32(hdr[0:], 16)
	binary.LittleEndian.PutUint32(hdr[4:], uint32(collOff))
	l.f.put(0, hdr[:])
	l.f.put(16, tfrag.data)
	l.f.put(collOff, cs.data)
	l.f.size = collOff + int64(len(cs.data))
	l.chunk = [2]*stream{&tfrag, &cs}
	l.chunkOffs = [2]int64{16, collOff}
	if d, ok := g.levelDescs.Load(row.File); ok {
		if l.extra, err = meshFiles("", d.(*levelcore.Desc), tfrag.plain, cs.plain); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func align(n, a int64) int64 { return (n + a - 1) / a * a }

// dataLump: a 0x58-byte header of {s32 offset, s32 size} byte ranges (overlay,
// core_index, gs_ram, hud_header, hud_banks[5], core_data, transition_textures),
// then the ranges. core_index+0x8C holds core_data's decoded size.
func (g *gen) dataLump(row levelRow, capacity int64) (*lumpContent, error) {
	rng := g.rng(row.File, "data")
	l := &lumpContent{}
	hdr := make([]byte, 0x58)
	pos := int64(0x80)
	setRange := func(field int, off, n int64) {
		binary.LittleEndian.PutUint32(hdr[field:], uint32(off))
		binary.LittleEndian.PutUint32(hdr[field+4:], uint32(n))
	}
	raw := func(field int, name string, n int64, style rawStyle) {
		rawContent(&l.f, pos, n, row.File+"/data/"+name, field, style, g.rng(row.File, "data", name), g.small())
		setRange(field, pos, n)
		l.parts = append(l.parts, treeEntry{name: name, off: pos, n: n})
		pos = align(pos+n, 16)
	}
	room := func() int64 {
		if capacity <= 0 {
			return 0
		}
		return capacity - pos
	}
	putStream := func(field int, name, tag string, plain int, content func(*rand.Rand, int) ([]byte, []treeEntry)) (*stream, error) {
		c := room()
		if capacity > 0 {
			c = c / 3
		}
		st, err := makeStreamOf(g.rng(row.File, "data", field), tag, plain, c, content)
		if err != nil {
			return nil, err
		}
		l.f.put(pos, st.data)
		setRange(field, pos, int64(len(st.data)))
		l.parts = append(l.parts, treeEntry{name: name, off: pos, n: int64(len(st.data)), decoded: &st, parts: st.parts})
		pos = align(pos+int64(len(st.data)), 16)
		return &st, nil
	}
	smallCore := 40<<10 + rng.IntN(16<<10)
	if row.ID >= 1 && row.ID <= 3 {
		smallCore = 256<<10 + rng.IntN(64<<10) // a few decoded blocks
	}
	lc, files, err := g.levelCore(row, g.plain(1500<<10+rng.IntN(1<<20), smallCore))
	if err != nil {
		return nil, err
	}
	l.extra = files
	l.core = lc
	ov := ratchetExecutable(g.rng(row.File, "data", "overlay"), int(g.plainN(320<<10, 8<<10)))
	l.f.put(pos, ov)
	setRange(0x00, pos, int64(len(ov)))
	l.parts = append(l.parts, treeEntry{name: "overlay", off: pos, n: int64(len(ov))})
	pos = align(pos+int64(len(ov)), 16)
	// core_index and gs_ram as the level core laid them out (gs_ram padded
	// with zeros to its usual size)
	coreIndexOff := pos
	l.f.put(pos, lc.Index)
	setRange(0x08, pos, int64(len(lc.Index)))
	l.parts = append(l.parts, treeEntry{name: "core_index", off: pos, n: int64(len(lc.Index))})
	pos = align(pos+int64(len(lc.Index)), 16)
	gsSize := max(int64(len(lc.GS)), g.plainN(256<<10, 4<<10))
	l.coreGS = gsSize
	l.f.put(pos, lc.GS)
	setRange(0x10, pos, gsSize)
	l.parts = append(l.parts, treeEntry{name: "gs_ram", off: pos, n: gsSize})
	pos = align(pos+gsSize, 16)
	raw(0x18, "hud_header", 0x200, styleGeneric)
	for b := 0; b < 5; b++ {
		if _, err := putStream(0x20+8*b, fmt.Sprintf("hud_bank%d", b), "hud_bank", g.plain(96<<10, 3<<10)+rng.IntN(2<<10), nil); err != nil {
			return nil, err
		}
	}
	core, err := putStream(0x48, "core_data", "coredata", len(lc.Data), func(*rand.Rand, int) ([]byte, []treeEntry) { return lc.Data, nil })
	if err != nil {
		return nil, err
	}
	if row.ID%4 == 3 {
		binary.LittleEndian.PutUint32(hdr[0x50:], 0xFFFFFFFF) // {-1, 0}: no transition textures
	} else if _, err := putStream(0x50, "transition_textures", "trans_tex", g.plain(192<<10, 6<<10), textureList(g.small())); err != nil {
		return nil, err
	}
	// the core index records core_data's stream size at +0x88 and its
	// decoded size at +0x8C
	var sz [8]byte
	binary.LittleEndian.PutUint32(sz[:], uint32(len(core.data)))
	binary.LittleEndian.PutUint32(sz[4:], uint32(core.plainSize))
	patchChunk(&l.f, coreIndexOff+0x88, sz[:])
	l.f.put(0, hdr)
	l.f.size = pos
	return l, l.f.finish(row.File + " data")
}

func (g *gen) plainN(retail, small int64) int64 {
	if g.small() {
		return small
	}
	return retail
}

// patchChunk overwrites bytes at off inside an already put chunk.
func patchChunk(f *sparseFile, off int64, b []byte) {
	for _, c := range f.chunks {
		if off >= c.Off && off+int64(len(b)) <= c.Off+int64(len(c.Data)) {
			copy(c.Data[off-c.Off:], b)
			return
		}
	}
	f.put(off, b)
}

var levelNames = map[int32]string{
	0: "Aranos Tutorial", 1: "Oozla", 2: "Maktar Nebula", 3: "Endako", 4: "Barlow", 5: "Feltzin System",
	6: "Notak", 7: "Siberius", 8: "Tabora", 9: "Dobbo", 10: "Hrugis Cloud", 11: "Joba", 12: "Todano",
	13: "Boldan", 14: "Aranos Prison", 15: "Gorn", 16: "Snivelak", 17: "Smolg", 18: "Damosel",
	19: "Grelbin", 20: "Yeedil", 22: "Dobbo Orbit", 23: "Damosel Orbit", 24: "Ship Shack",
	25: "Wupash Nebula", 26: "Jamming Array", 30: "Insomniac Museum",
}

// ratchetExecutable is a level's overlay of about n bytes as DISC-FACTS
// describes it: seven sections (.lit, .bss, .data, lvl.vtbl, lvl.camvtbl,
// lvl.sndvtbl, .text), each a 16-byte header {s32 dest_address, s32
// copy_size, u32 section_type (1 progbits, 8 nobits), s32 entry_point}
// followed by copy_size bytes, the entry point the same in every header
// (Wrench reads sections while it is). .bss copies nothing.
func ratchetExecutable(rng *rand.Rand, n int) []byte {
	const base = 0x1000000
	shares := []int{6, 0, 20, 2, 2, 2, 68} // percent of the bytes after the headers
	types := []uint32{1, 8, 1, 1, 1, 1, 1}
	body := max(n-16*len(shares), 16*len(shares))
	sizes := make([]int, len(shares))
	addr, entry := int64(base), int64(0)
	for i, s := range shares {
		sizes[i] = body * s / 100 &^ 15
		if i == len(shares)-1 {
			entry = addr
		}
		addr += int64(max(sizes[i], 0x100))
	}
	var out []byte
	addr = base
	for i, sz := range sizes {
		var h [16]byte
		binary.LittleEndian.PutUint32(h[0:], uint32(addr))
		binary.LittleEndian.PutUint32(h[4:], uint32(sz))
		binary.LittleEndian.PutUint32(h[8:], types[i])
		binary.LittleEndian.PutUint32(h[12:], uint32(entry))
		out = append(out, h[:]...)
		data := codec.SampleData(int64(rng.Uint64()), sz)
		if i == len(sizes)-1 {
			for p := 0; p+4 <= min(sz, 64); p += 4 {
				binary.LittleEndian.PutUint32(data[p:], 0x27bd0000|rng.Uint32()&0xffff) // addiu sp, sp, imm
			}
		}
		out = append(out, data...)
		addr += int64(max(sz, 0x100))
	}
	return out
}
