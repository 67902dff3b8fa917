// Package levelcore owns the level core of Going Commando (LEVEL-CORE §1): the
// 0xbc-byte header at the start of a level's core_index and every table it
// points at (classes, textures, particles, fx, the moby stash, ratchet
// sequences, the sound remap), read from core_index alone, and where each
// thing lies: a block of the decoded core_data (sized by the §1.3 boundary
// rule), or texture pixels and palettes in core_data or gs_ram. It decodes
// nothing and reads no pixels; callers read the ranges it names. The Builder
// is the other direction: it lays out a core_index, core_data and gs_ram
// from a description (what mkdisc writes).
//
// Everything in core_index is untrusted: every count and offset is checked
// against the part it points into before use (index against core_index's
// size, data against core_data's decoded size as +0x8c records it, gs
// against gs_ram's size), and no count sizes an allocation before that
// check. An entry that does not fit is left out and listed in
// Core.Skipped with its offset and reason; only a core_index too short for
// its header is an error.
package levelcore

import (
	"encoding/binary"
	"fmt"
)

// HeaderSize is the core header's size (asserted 0xbc in Wrench).
const HeaderSize = 0xbc

// Table entry sizes.
const (
	classEntrySize      = 0x20 // moby and tie
	shrubEntrySize      = 0x30
	textureEntrySize    = 0x10
	gsRAMEntrySize      = 0x10
	partTextureSize     = 0x10
	fxTextureSize       = 0x10
	partDefsHeaderSize  = 0x10
	ratchetSeqSlots     = 256
	soundRemapHeader    = 8
	slotBytes           = 16 // u8 texture indices per class entry
	slotEnd             = 0xff
	gsUnit              = 0x100 // palette and billboard offsets in gs count these
	PaletteSize         = 256 * 4
	MaxDimension        = 4096 // the largest width or height a texture may declare (as package assets)
	maxStashListEntries = 1 << 14
)

// Range is a header table reference: {s32 count, s32 offset} (count first).
type Range struct{ Count, Offset int32 }

// Header is the core header, fields as stored (LEVEL-CORE §1.2).
type Header struct {
	GsRAM                                                                             Range
	Tfrags, Occlusion, Sky, Collision                                                 int32
	MobyClasses, TieClasses, ShrubClasses                                             Range
	TfragTextures, MobyTextures, TieTextures, ShrubTextures, PartTextures, FxTextures Range
	TexturesBase, PartBank, FxBank                                                    int32
	PartDefs, SoundRemap, Unknown74, RatchetSeqs, SceneViewSize, Unknown80            int32
	MobyStashCount                                                                    int32
	CompressedSize, DecompressedSize                                                  int32
	ChromeMapTexture, ChromeMapPalette, GlassMapTexture, GlassMapPalette              int32
	UnknownA0, Heightmap, OcclusionOct, MobyStashList, OcclusionRad, MobySoundRemap   int32
	OcclusionRad2                                                                     int32
}

// ParseHeader reads the header from the first HeaderSize bytes of b.
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) < HeaderSize {
		return h, &Error{Offset: int64(len(b)), Reason: fmt.Sprintf("core_index has %#x bytes, the header needs %#x", len(b), HeaderSize)}
	}
	f := h.fields()
	for i, p := range f {
		*p = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return h, nil
}

// Bytes is the header as stored.
func (h *Header) Bytes() []byte {
	b := make([]byte, HeaderSize)
	for i, p := range h.fields() {
		binary.LittleEndian.PutUint32(b[4*i:], uint32(*p))
	}
	return b
}

func (h *Header) fields() []*int32 {
	return []*int32{&h.GsRAM.Count, &h.GsRAM.Offset, &h.Tfrags, &h.Occlusion, &h.Sky, &h.Collision,
		&h.MobyClasses.Count, &h.MobyClasses.Offset, &h.TieClasses.Count, &h.TieClasses.Offset,
		&h.ShrubClasses.Count, &h.ShrubClasses.Offset,
		&h.TfragTextures.Count, &h.TfragTextures.Offset, &h.MobyTextures.Count, &h.MobyTextures.Offset,
		&h.TieTextures.Count, &h.TieTextures.Offset, &h.ShrubTextures.Count, &h.ShrubTextures.Offset,
		&h.PartTextures.Count, &h.PartTextures.Offset, &h.FxTextures.Count, &h.FxTextures.Offset,
		&h.TexturesBase, &h.PartBank, &h.FxBank,
		&h.PartDefs, &h.SoundRemap, &h.Unknown74, &h.RatchetSeqs, &h.SceneViewSize, &h.Unknown80, &h.MobyStashCount,
		&h.CompressedSize, &h.DecompressedSize,
		&h.ChromeMapTexture, &h.ChromeMapPalette, &h.GlassMapTexture, &h.GlassMapPalette,
		&h.UnknownA0, &h.Heightmap, &h.OcclusionOct, &h.MobyStashList, &h.OcclusionRad, &h.MobySoundRemap,
		&h.OcclusionRad2}
}

// Field is one named header value, for printing.
type Field struct {
	Offset int
	Name   string
	Value  int32
}

var fieldNames = []string{"gs_ram.count", "gs_ram.offset", "tfrags", "occlusion", "sky", "collision",
	"moby_classes.count", "moby_classes.offset", "tie_classes.count", "tie_classes.offset",
	"shrub_classes.count", "shrub_classes.offset",
	"tfrag_textures.count", "tfrag_textures.offset", "moby_textures.count", "moby_textures.offset",
	"tie_textures.count", "tie_textures.offset", "shrub_textures.count", "shrub_textures.offset",
	"part_textures.count", "part_textures.offset", "fx_textures.count", "fx_textures.offset",
	"textures_base_offset", "part_bank_offset", "fx_bank_offset",
	"part_defs_offset", "sound_remap_offset", "unknown_74", "ratchet_seqs", "scene_view_size", "unknown_80", "moby_gs_stash_count",
	"assets_compressed_size", "assets_decompressed_size",
	"chrome_map_texture", "chrome_map_palette", "glass_map_texture", "glass_map_palette",
	"unknown_a0", "heightmap_offset", "occlusion_oct_offset", "moby_gs_stash_list", "occlusion_rad_offset",
	"moby_sound_remap_offset", "occlusion_rad2_offset"}

// Fields lists the header's values with their names and offsets.
func (h *Header) Fields() []Field {
	f := h.fields()
	out := make([]Field, len(f))
	for i, p := range f {
		out[i] = Field{Offset: 4 * i, Name: fieldNames[i], Value: *p}
	}
	return out
}

// Error is a core_index that cannot be read at all; Offset is in core_index.
type Error struct {
	Offset int64
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("level core: core_index offset %#x: %s", e.Offset, e.Reason)
}

// Where says which part a location is in.
type Where int

const (
	InData  Where = iota // decoded core_data
	InGS                 // gs_ram
	InIndex              // core_index
)

func (w Where) String() string {
	switch w {
	case InData:
		return "core_data"
	case InGS:
		return "gs_ram"
	}
	return "core_index"
}

// Loc is a byte range of one part.
type Loc struct {
	In           Where
	Offset, Size int64
}

// Block is a block of decoded core_data, sized by the boundary rule.
type Block struct {
	Name         string
	Offset, Size int64
}

// Texture is one 8-bit indexed image: width × height pixels (one palette
// index a byte, rows top to bottom) and a 256-colour palette stored as the
// PS2 keeps it (RGBA32, swizzled, PS2 alpha).
type Texture struct {
	Table   string // tfrag, moby, tie, shrub, particle, fx, billboard
	Index   int    // index in its table (the class entry's, for a billboard)
	Width   int
	Height  int
	Pixels  Loc
	Palette Loc
	// PaletteUnit is the stored palette field (gs offset in 0x100-byte
	// units) for the four level tables and billboards; -1 for particles and
	// fx, whose palettes lie in core_data.
	PaletteUnit int
	Stashed     bool // pixels in the gs moby stash
	Name        string
}

// ClassKind is a class table.
type ClassKind string

const (
	Moby  ClassKind = "moby"
	Tie   ClassKind = "tie"
	Shrub ClassKind = "shrub"
)

// Slot is one texture slot of a class: slot k uses table entry TableIndex.
type Slot struct {
	Slot       int
	TableIndex int
	Texture    Texture
}

// Class is one class table entry.
type Class struct {
	Kind   ClassKind
	Index  int   // entry index in its table
	OClass int32 // class number
	Block  *Block
	Slots  []Slot // the slots served (a slot whose texture is left out has none)
	// SlotCount is the number of texture slots the entry lists (to its
	// 0xff terminator), served or not: what the class's mesh readers take,
	// so that a triangle of a slot left out still reads (a plain material).
	SlotCount int
	// Stashed: a moby class whose o_class is in the stash list.
	Stashed   bool
	Billboard *Texture // shrubs with a billboard
}

// TextureSlots is the slot count a class's mesh reader takes: SlotCount,
// or one past the highest slot served where that is more (a Class built
// by hand).
func (c *Class) TextureSlots() int {
	n := c.SlotCount
	for _, s := range c.Slots {
		n = max(n, s.Slot+1)
	}
	return n
}

// Particle is one particle definition's frames.
type Particle struct {
	Index  int
	Frames []Texture
}

// Skip is one entry left out, and why. Offset is where in core_index the
// entry (or the field naming it) lies.
type Skip struct {
	What   string
	Offset int64
	Reason string
}

func (s Skip) String() string {
	return fmt.Sprintf("%s (core_index %#x): %s", s.What, s.Offset, s.Reason)
}

// Core is a level core read from core_index.
type Core struct {
	Header    Header
	IndexSize int64
	DataSize  int64 // core_data's decoded size (+0x8c)
	GSSize    int64

	Blocks        []Block // tfrags, occlusion, sky, collision (those present)
	Mobies        []Class
	Ties          []Class
	Shrubs        []Class
	TfragTextures []Texture
	Particles     []Particle
	Fx            []Texture
	RatchetSeqs   []Block // Name = slot number, 3 digits
	SoundRemap    *Loc    // bytes of core_index
	StashList     []int32
	Skipped       []Skip
	// Notes are facts about the reading that are not damage: fx entries
	// marked missing, where Wrench reads differently.
	Notes []string
}

func (c *Core) skip(what string, off int64, format string, args ...any) {
	c.Skipped = append(c.Skipped, Skip{What: what, Offset: off, Reason: fmt.Sprintf(format, args...)})
}
