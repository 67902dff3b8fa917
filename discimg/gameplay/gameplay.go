// Package gameplay reads a Going Commando level's decoded gameplay stream
// (LEVEL-CORE §3): the header of 39 block offsets and every block it points
// at (level settings, moby, tie and shrub instances and their groups and
// class lists, cameras, sounds, lights, volumes, paths, areas, pvars, help
// messages, env samples and transitions, the camera collision grid,
// occlusion mappings), into typed instances (what a scene places) and one
// ordered document (what gameplay.json shows). It is FUSE-free and decodes
// nothing: callers hand it the decoded bytes. Builder is the other
// direction (what mkdisc writes).
//
// Everything in the stream is untrusted. Each block is read only inside its
// extent, from its offset to the next greater block offset (or the stream's
// end); a count whose records run past it, a record whose own size field is
// not the layout's, a group member past its instance count, a pvar index past
// the table, a string without its terminator: that block, record or field is
// kept undecoded (offset, bytes, reason), listed in Gameplay.Problems, and
// the rest decodes. No count sizes an allocation before it is checked
// against the bytes it needs.
package gameplay

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
)

// HeaderSize is the header's size: 39 s32 offsets.
const (
	NumBlocks  = 39
	HeaderSize = 4 * NumBlocks
)

// BlockNames are the blocks' names (LEVEL-CORE §3.1, snake_case), by header
// slot (header offset = 4 × slot).
var BlockNames = [NumBlocks]string{
	"level_settings", "directional_lights", "cameras", "sound_instances",
	"help_us_english", "help_uk_english", "help_french", "help_german",
	"help_spanish", "help_italian", "help_japanese", "help_korean",
	"tie_classes", "tie_instances", "tie_groups", "shrub_classes",
	"shrub_instances", "shrub_groups", "moby_classes", "moby_instances",
	"moby_groups", "shared_data", "pvar_moby_link_fixups", "pvar_table",
	"pvar_data", "pvar_relative_pointers", "cuboids", "spheres",
	"cylinders", "pills", "paths", "grind_paths",
	"point_lights", "env_transitions", "camera_collision_grid", "env_sample_points",
	"occlusion_mappings", "tie_ambient_rgbas", "areas",
}

// Header slots the reader refers to.
const (
	slotLevelSettings = iota
	slotDirLights
	slotCameras
	slotSounds
	slotHelp0
	slotTieClasses = 12 + iota - 5
	slotTieInstances
	slotTieGroups
	slotShrubClasses
	slotShrubInstances
	slotShrubGroups
	slotMobyClasses
	slotMobyInstances
	slotMobyGroups
	slotSharedData
	slotPvarFixups
	slotPvarTable
	slotPvarData
	slotPvarPointers
	slotCuboids
	slotSpheres
	slotCylinders
	slotPills
	slotPaths
	slotGrindPaths
	slotPointLights
	slotEnvTransitions
	slotCameraGrid
	slotEnvSamples
	slotOcclusion
	slotTieAmbient
	slotAreas
)

// Record sizes (LEVEL-CORE §3).
const (
	MobyRecordSize  = 0x88
	TieRecordSize   = 0x60
	ShrubRecordSize = 0x70
	tableHeader     = 0x10
	maxPointLights  = 128
	gridCells       = 64 * 64
)

// Block is one block of the header: its slot, name, offset and extent (to
// the next greater block offset, or the stream's end).
type Block struct {
	Slot   int
	Name   string
	Offset int64
	Size   int64
}

// Problem is a block, record or field left undecoded, and why.
type Problem struct {
	Block  string
	Offset int64 // in the stream
	Size   int64
	Reason string
	// InHeader: a header offset outside the stream (HeaderBlocks finds it:
	// the block has no file in gameplay.d/ either)
	InHeader bool
}

func (p Problem) String() string {
	return fmt.Sprintf("%s at %#x (%d bytes): %s", p.Block, p.Offset, p.Size, p.Reason)
}

// MobyInstance is a decoded moby record (LEVEL-CORE §3.3).
type MobyInstance struct {
	Index          int // record index: the id groups and links use
	Offset         int64
	Mission        int32
	UID            int32
	Bolts          int32
	OClass         int32
	Scale          float32
	DrawDistance   int32
	UpdateDistance int32
	Position       [3]float32
	Rotation       [3]float32
	Group          int32
	IsRooted       int32
	RootedDistance float32
	PvarIndex      int32
	Occlusion      int32
	ModeBits       int32
	LightColour    [3]int32
	Light          int32
	raw            []byte
}

// TieInstance is a decoded tie record (§3.4).
type TieInstance struct {
	Index             int
	Offset            int64
	OClass            int32
	DrawDistance      int32
	OcclusionIndex    int32
	Matrix            [16]float32
	DirectionalLights int32
	UID               int32
}

// ShrubInstance is a decoded shrub record (§3.5).
type ShrubInstance struct {
	Index        int
	Offset       int64
	OClass       int32
	DrawDistance float32
	Matrix       [16]float32
	Colour       [3]int32
	DirLights    int32
}

// Gameplay is the reading of a decoded gameplay stream.
type Gameplay struct {
	Size     int64
	Offsets  [NumBlocks]int32
	Blocks   []Block // the blocks whose offset lies in the stream, in slot order
	Mobies   []MobyInstance
	Ties     []TieInstance
	Shrubs   []ShrubInstance
	Problems []Problem
	Doc      Obj // the whole document gameplay.json writes

	b               []byte
	extent          [NumBlocks]Block // zero Size: absent
	present         [NumBlocks]bool
	pvars           []pvarEntry // the pvar table, as long as the indices need and the block holds
	pvarOK          bool
	undecodedMobies int
	docless         bool // ReadInstances: the typed instances alone
}

type pvarEntry struct{ off, size int32 }

// HeaderBlocks lays out the blocks from the header alone (what gameplay.d/
// needs): hdr is at least HeaderSize bytes of the stream, size the stream's
// length. An offset that is 0 is absent; one inside the header or past the
// stream is a Problem, not a block.
func HeaderBlocks(hdr []byte, size int64) ([NumBlocks]int32, []Block, []Problem, error) {
	var offs [NumBlocks]int32
	if len(hdr) < HeaderSize || size < HeaderSize {
		return offs, nil, nil, fmt.Errorf("gameplay: %d bytes, the header needs %#x", min(int64(len(hdr)), size), HeaderSize)
	}
	var valid []int64
	var probs []Problem
	for i := range offs {
		offs[i] = int32(binary.LittleEndian.Uint32(hdr[4*i:]))
		o := int64(offs[i])
		switch {
		case o == 0:
		case o < HeaderSize:
			probs = append(probs, Problem{BlockNames[i], int64(4 * i), 4, fmt.Sprintf("offset %#x lies inside the %#x-byte header", o, HeaderSize), true})
		case o >= size:
			probs = append(probs, Problem{BlockNames[i], int64(4 * i), 4, fmt.Sprintf("offset %#x is past the stream's %#x bytes", o, size), true})
		default:
			valid = append(valid, o)
		}
	}
	sort.Slice(valid, func(a, b int) bool { return valid[a] < valid[b] })
	var blocks []Block
	for i, v := range offs {
		o := int64(v)
		if o < HeaderSize || o >= size {
			continue
		}
		end := size
		if k := sort.Search(len(valid), func(k int) bool { return valid[k] > o }); k < len(valid) {
			end = valid[k]
		}
		blocks = append(blocks, Block{Slot: i, Name: BlockNames[i], Offset: o, Size: end - o})
	}
	return offs, blocks, probs, nil
}

// Read reads a whole decoded gameplay stream. Only a stream shorter than the
// header is an error; every other fault is a Problem and an undecoded part
// of the document.
func Read(b []byte) (*Gameplay, error) {
	g, err := newGameplay(b)
	if err != nil {
		return nil, err
	}
	g.decode()
	return g, nil
}

// ReadInstances is Read for a caller that wants the typed instances alone
// (a scene: Mobies, Ties, Shrubs, the same as Read's): it decodes only
// their blocks and builds no document (Doc nil), and its Problems are the
// header's and those blocks'. A level's scene read the whole document
// only to place its instances; the document is most of Read's work.
func ReadInstances(b []byte) (*Gameplay, error) {
	g, err := newGameplay(b)
	if err != nil {
		return nil, err
	}
	g.docless = true
	for _, slot := range []int{slotTieInstances, slotShrubInstances, slotMobyInstances} {
		if k, ok := g.block(slot); ok {
			g.decodeBlock(k)
		}
	}
	return g, nil
}

func newGameplay(b []byte) (*Gameplay, error) {
	offs, blocks, probs, err := HeaderBlocks(b, int64(len(b)))
	if err != nil {
		return nil, err
	}
	g := &Gameplay{Size: int64(len(b)), Offsets: offs, Blocks: blocks, Problems: probs, b: b}
	for _, bl := range blocks {
		g.extent[bl.Slot] = bl
		g.present[bl.Slot] = true
	}
	return g, nil
}

// Log lines: one a problem.
func (g *Gameplay) ProblemLines() []string {
	out := make([]string, len(g.Problems))
	for i, p := range g.Problems {
		out[i] = p.String()
	}
	return out
}

// ---- reading helpers

// blk is a block's bytes and where they lie.
type blk struct {
	g    *Gameplay
	slot int
	off  int64 // stream offset of d[0]
	d    []byte
}

func (g *Gameplay) block(slot int) (blk, bool) {
	if !g.present[slot] {
		return blk{}, false
	}
	e := g.extent[slot]
	return blk{g: g, slot: slot, off: e.Offset, d: g.b[e.Offset : e.Offset+e.Size]}, true
}

func (k blk) n() int64 { return int64(len(k.d)) }

func (k blk) has(off, n int64) bool { return off >= 0 && n >= 0 && off <= k.n() && n <= k.n()-off }

func (k blk) s32(o int64) int32   { return int32(binary.LittleEndian.Uint32(k.d[o:])) }
func (k blk) u32(o int64) uint32  { return binary.LittleEndian.Uint32(k.d[o:]) }
func (k blk) s16(o int64) int16   { return int16(binary.LittleEndian.Uint16(k.d[o:])) }
func (k blk) u16(o int64) uint16  { return binary.LittleEndian.Uint16(k.d[o:]) }
func (k blk) f32(o int64) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(k.d[o:])) }

func (k blk) vec(o int64, n int) Arr {
	a := make(Arr, n)
	for i := range a {
		a[i] = k.f32(o + 4*int64(i))
	}
	return a
}

func (k blk) s32s(o int64, n int) Arr {
	a := make(Arr, n)
	for i := range a {
		a[i] = k.s32(o + 4*int64(i))
	}
	return a
}

func (k blk) u8s(o int64, n int) Arr {
	a := make(Arr, n)
	for i := range a {
		a[i] = k.d[o+int64(i)]
	}
	return a
}

// undecoded keeps d[off:off+n] (clamped to the block) undecoded and records
// the problem.
func (k blk) undecoded(off, n int64, reason string) Undecoded {
	off = max(0, min(off, k.n()))
	n = max(0, min(n, k.n()-off))
	k.g.Problems = append(k.g.Problems, Problem{Block: BlockNames[k.slot], Offset: k.off + off, Size: n, Reason: reason})
	return Undecoded{Offset: k.off + off, Bytes: k.d[off : off+n], Reason: reason}
}

// opaque is bytes kept as hex by design (not a problem).
func (k blk) opaque(off, n int64) Undecoded {
	return Undecoded{Offset: k.off + off, Bytes: k.d[off : off+n]}
}

// whole is the block undecoded.
func (k blk) whole(reason string) Undecoded { return k.undecoded(0, k.n(), reason) }

// past says what a run of need bytes from off runs past.
func (k blk) past(off, need int64) string {
	if k.off+off+need > k.g.Size {
		return "the stream's end"
	}
	return "the next block"
}

// table checks a {s32 count, pad[3]} table of rec-byte records at 0x10 and
// gives its count, or a reason.
func (k blk) table(rec int64) (int, string) {
	if k.n() < tableHeader {
		return 0, fmt.Sprintf("%d bytes, less than the %#x-byte table header", k.n(), tableHeader)
	}
	c := int64(k.s32(0))
	if c < 0 {
		return 0, fmt.Sprintf("count %d is negative", c)
	}
	if need := c * rec; need > k.n()-tableHeader {
		return 0, fmt.Sprintf("%d records of %#x bytes run past %s (%d bytes after the header)", c, rec, k.past(tableHeader, need), k.n()-tableHeader)
	}
	return int(c), ""
}

// ---- pvars (§3.8)

// readPvarTable reads the pvar table as long as the largest pvar index of
// mobies, cameras and sounds needs (its length is not stored), bounded by
// the block's bytes.
func (g *Gameplay) readPvarTable() {
	maxIdx := int64(-1)
	see := func(v int32) { maxIdx = max(maxIdx, int64(v)) }
	if k, ok := g.block(slotMobyInstances); ok && k.n() >= tableHeader {
		c := int64(k.s32(0))
		if c >= 0 && c*MobyRecordSize <= k.n()-tableHeader {
			for i := int64(0); i < c; i++ {
				r := tableHeader + i*MobyRecordSize
				if k.s32(r) == MobyRecordSize {
					see(k.s32(r + 0x68))
				}
			}
		}
	}
	for _, t := range []struct {
		slot     int
		rec, off int64
	}{{slotCameras, 0x20, 0x1c}, {slotSounds, 0x90, 8}} {
		if k, ok := g.block(t.slot); ok {
			if c, why := k.table(t.rec); why == "" {
				for i := 0; i < c; i++ {
					see(k.s32(tableHeader + int64(i)*t.rec + t.off))
				}
			}
		}
	}
	g.pvarOK = true
	k, ok := g.block(slotPvarTable)
	if !ok || maxIdx < 0 {
		return
	}
	n := min(maxIdx+1, k.n()/8)
	g.pvars = make([]pvarEntry, n) // bounded by the block's bytes
	for i := range g.pvars {
		g.pvars[i] = pvarEntry{k.s32(8 * int64(i)), k.s32(8*int64(i) + 4)}
	}
}

// pvarOf is the pvar bytes of the pvar index at field (of block k): nil for
// none, hex, or the index field undecoded with the reason.
func (g *Gameplay) pvarOf(k blk, field int64) any {
	pi := int64(k.s32(field))
	if pi < 0 {
		return nil
	}
	if pi >= int64(len(g.pvars)) {
		return k.undecoded(field, 4, fmt.Sprintf("pvar index %d past the %d-entry pvar table", pi, len(g.pvars)))
	}
	e := g.pvars[pi]
	d, ok := g.block(slotPvarData)
	if !ok || !d.has(int64(e.off), int64(e.size)) {
		return k.undecoded(field, 4, fmt.Sprintf("pvar %d: %d bytes at %#x lie outside the pvar data (%d bytes)", pi, e.size, e.off, d.n()))
	}
	return hexString(d.d[e.off : int64(e.off)+int64(e.size)])
}

func (g *Gameplay) pvarTableDoc(k blk) any {
	list := make(Arr, 0, len(g.pvars))
	for _, e := range g.pvars {
		list = append(list, Obj{{"offset", e.off}, {"size", e.size}})
	}
	o := Obj{{"count", len(g.pvars)}, {"entries", list}}
	if used := 8 * int64(len(g.pvars)); used < k.n() {
		o.add("trailing", k.opaque(used, k.n()-used))
	}
	return o
}

func (g *Gameplay) pvarDataUsed() int64 {
	u := int64(0)
	for _, e := range g.pvars {
		if e.off >= 0 && e.size >= 0 {
			u = max(u, int64(e.off)+int64(e.size))
		}
	}
	return u
}
