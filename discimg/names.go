package discimg

import (
	"fmt"
	"strconv"
	"sync"
)

// Names of the entries of the families with a published layout (SPEC "The
// tree, second edition"; DISC-FACTS "What Wrench's unpacker reads"). A table
// gets these names when measurement chose a reading of the documented shape:
// pairs in either unit for a family documented as pairs (sources disagree on
// the unit), a start list for one documented as a start list; a reading of
// another shape keeps table indices.

// field is one named field of a documented table.
type field struct {
	name   string
	at     int        // byte offset of the field in the container header
	count  int        // 0: one slot; n: an array of n slots
	flat   bool       // an array shown as files name0 … name<n-1>, not a directory
	layout PartLayout // what each slot's content holds
}

// tableLayout is a family's documented table: its reading and its fields.
type tableLayout struct {
	reading Reading // the documented reading; names apply to any reading of its shape
	unit    int     // table bytes per slot: 8 for ranges, 4 for start words
	fields  []field
	hs      int // the container header's size in bytes
	// names and layouts by table index, "" where no field names the index:
	// built on first use (table), some 3,200 strings that a process which
	// never reads a container (gcfs wad, mkdisc) should not build at startup.
	once    sync.Once
	names   []string
	layouts []PartLayout
}

// table returns the names and layouts by table index, built once.
func (tl *tableLayout) table() (names []string, layouts []PartLayout) {
	tl.once.Do(tl.fill)
	return tl.names, tl.layouts
}

// build sets the header's size, hs bytes; table fills names and layouts.
func (tl *tableLayout) build(hs int) *tableLayout {
	tl.hs = hs
	return tl
}

// fill fills names and layouts. It panics on a layout that does not fit its
// table (a programming error, caught by tests).
func (tl *tableLayout) fill() {
	n := (tl.hs - 8) / tl.unit
	tl.names = make([]string, n)
	tl.layouts = make([]PartLayout, n)
	for _, f := range tl.fields {
		first := (f.at - 8) / tl.unit
		if (f.at-8)%tl.unit != 0 || first < 0 {
			panic(fmt.Sprintf("discimg: field %s at %#x is not on a slot", f.name, f.at))
		}
		put := func(i int, name string) {
			if i >= n || tl.names[i] != "" {
				panic(fmt.Sprintf("discimg: field %s: slot %d outside the table or named twice", f.name, i))
			}
			tl.names[i] = name
			tl.layouts[i] = f.layout
		}
		if f.count == 0 {
			put(first, f.name)
			continue
		}
		w := max(2, len(strconv.Itoa(f.count-1)))
		for j := range f.count {
			if f.flat {
				put(first+j, f.name+strconv.Itoa(j))
			} else {
				put(first+j, f.name+"/"+string(appendPadded(nil, j, w)))
			}
		}
	}
}

func rangeTable(rd Reading, hs int, fields ...field) *tableLayout {
	return (&tableLayout{reading: rd, unit: 8, fields: fields}).build(hs)
}

var miscLayout = rangeTable(ReadingPairsSectors, 0x40,
	field{name: "debug_font", at: 0x08}, field{name: "irx", at: 0x10, layout: PartsIRX},
	field{name: "save_game", at: 0x18}, field{name: "frontbin", at: 0x20},
	field{name: "frontbin_net", at: 0x28}, field{name: "frontend", at: 0x30}, field{name: "exit", at: 0x38})

// armorLayout: armors[9] then wrenches[6], each {mesh, textures}; a textures
// extent is a matlist.
var armorLayout = func() *tableLayout {
	var fs []field
	for i := range 9 {
		fs = append(fs, field{name: fmt.Sprintf("armor%d_mesh", i), at: 0x08 + 16*i},
			field{name: fmt.Sprintf("armor%d_textures", i), at: 0x10 + 16*i, layout: PartsItemList})
	}
	for i := range 6 {
		fs = append(fs, field{name: fmt.Sprintf("wrench%d_mesh", i), at: 0x98 + 16*i},
			field{name: fmt.Sprintf("wrench%d_textures", i), at: 0xa0 + 16*i, layout: PartsItemList})
	}
	return rangeTable(ReadingPairsSectors, 0xf8, fs...)
}()

// mpegLayout: 50 × {subtitles, video}, sizes in bytes.
var mpegLayout = func() *tableLayout {
	var fs []field
	for i := range 50 {
		fs = append(fs, field{name: fmt.Sprintf("subtitles%02d", i), at: 0x08 + 16*i},
			field{name: fmt.Sprintf("video%02d", i), at: 0x10 + 16*i})
	}
	return rangeTable(ReadingPairsBytes, 0x328, fs...)
}()

var bonusLayout = rangeTable(ReadingPairsSectors, 0xa48,
	field{name: "goodies_images", at: 0x008, count: 10},
	field{name: "character_sketches", at: 0x058, count: 19},
	field{name: "character_renders", at: 0x0f0, count: 19},
	field{name: "old_skill_images", at: 0x188, count: 31},
	field{name: "epilogue_english", at: 0x280, count: 12},
	field{name: "epilogue_french", at: 0x2e0, count: 12},
	field{name: "epilogue_italian", at: 0x340, count: 12},
	field{name: "epilogue_german", at: 0x3a0, count: 12},
	field{name: "epilogue_spanish", at: 0x400, count: 12},
	field{name: "sketchbook", at: 0x460, count: 30},
	field{name: "commercials", at: 0x550, count: 5},
	field{name: "item_images", at: 0x578, count: 9},
	field{name: "credits_text", at: 0x5c0},
	field{name: "credits_images", at: 0x5c8, count: 29},
	field{name: "random_stuff", at: 0x6b0, count: 5},
	field{name: "movie_images", at: 0x6d8, count: 5},
	field{name: "cinematic_images", at: 0x700, count: 33},
	field{name: "skill_images", at: 0x808, count: 30},
	field{name: "clanks_day_at_insomniac", at: 0x8f8, count: 18},
	field{name: "endorsement_deals", at: 0x988, count: 10},
	field{name: "short_cuts", at: 0x9d8, count: 8},
	field{name: "paintings", at: 0xa18, count: 6})

var hudLayout = rangeTable(ReadingPairsSectors, 0x1870,
	field{name: "hud_header", at: 0x0008},
	field{name: "hud_bank", at: 0x0010, count: 5, flat: true},
	field{name: "ratchet_seqs", at: 0x0038, count: 28},
	field{name: "hud_seqs", at: 0x0118, count: 20},
	field{name: "vendor", at: 0x01b8},
	field{name: "vendor_audio", at: 0x01c0, count: 277},
	field{name: "help_controls", at: 0x0a68, count: 11},
	field{name: "help_moves", at: 0x0ac0, count: 18},
	field{name: "help_weapons", at: 0x0b50, count: 45},
	field{name: "help_gadgets", at: 0x0cb8, count: 12},
	field{name: "help_items", at: 0x0d18, count: 17},
	field{name: "rac1_menus", at: 0x0da0, count: 14},
	field{name: "mission_ss", at: 0x0e10, count: 83},
	field{name: "gmap_ss", at: 0x10a8, count: 28},
	field{name: "unknown2", at: 0x1188, count: 56},
	field{name: "all_text", at: 0x1348},
	field{name: "hudw3d", at: 0x1350},
	field{name: "unknown3", at: 0x1358, count: 2},
	field{name: "monsterpedia_shots", at: 0x1368, count: 84},
	field{name: "screen_gadgets", at: 0x1608, count: 12},
	field{name: "screen_weapons", at: 0x1668, count: 45},
	field{name: "screen_items", at: 0x17d0, count: 20})

var audioNLayout = rangeTable(ReadingPairsBytes, 0x1018,
	field{name: "bin_data", at: 0x008, count: 511},
	field{name: "upgrade_sample", at: 0x1000},
	field{name: "thermanator_freeze", at: 0x1008},
	field{name: "thermanator_thaw", at: 0x1010})

var audioLayout = (&tableLayout{reading: ReadingStartList, unit: 4, fields: []field{
	{name: "vendor", at: 0x008, count: 254},
	{name: "help_english", at: 0x400, count: 256},
	{name: "help_french", at: 0x800, count: 256},
	{name: "help_german", at: 0xc00, count: 256},
	{name: "help_spanish", at: 0x1000, count: 256},
	{name: "help_italian", at: 0x1400, count: 256},
}}).build(0x1800)

// SceneStartsPerScene and SceneStarts shape a SCENE<n> table: 1,245 u32
// words, 15 scene records of 83 words (DISC-FACTS: "15 scenes × 83 words").
const (
	SceneStartsPerScene = 83
	SceneStarts         = 1245
	// The words of a scene record that are sizes (in sectors), not starts.
	sceneSubtitlesSize = 3
	sceneMobyLoadSize  = 13
)

// sceneWordNames names the words of an 83-word scene record; "" for the two
// size words.
var sceneWordNames = func() [SceneStartsPerScene]string {
	var n [SceneStartsPerScene]string
	copy(n[:], []string{"speech_english_left", "speech_english_right", "subtitles", "",
		"speech_french_left", "speech_french_right", "speech_german_left", "speech_german_right",
		"speech_spanish_left", "speech_spanish_right", "speech_italian_left", "speech_italian_right",
		"moby_load", ""})
	for i := 14; i < SceneStartsPerScene; i++ {
		n[i] = "chunks/" + string(appendPadded(nil, i-14, 2))
	}
	return n
}()

// isSceneSizeWord reports whether word i of a SCENE<n> table is a size.
func isSceneSizeWord(i int) bool {
	w := i % SceneStartsPerScene
	return w == sceneSubtitlesSize || w == sceneMobyLoadSize
}

func appendSceneRecordName(b []byte, i int) []byte {
	b = append(b, "scene"...)
	b = appendPadded(b, i/SceneStartsPerScene, 2)
	b = append(b, '/')
	return append(b, sceneWordNames[i%SceneStartsPerScene]...)
}

// sceneStartName names entry i of a SCENE<n> table read as a plain start list
// "sceneGG/EE" (the first edition's grouping); the '/' is part of the name
// (the tree model makes the group directories).
func sceneStartName(i int) (string, bool) {
	if i < 0 || i >= SceneStarts {
		return "", false
	}
	return string(appendSceneName(nil, i)), true
}

func appendSceneName(b []byte, i int) []byte {
	b = append(b, "scene"...)
	b = appendPadded(b, i/SceneStartsPerScene, 2)
	b = append(b, '/')
	return appendPadded(b, i%SceneStartsPerScene, 2)
}

// documented is the family's documented reading, "" when none is published.
func (f family) documented() Reading {
	switch {
	case f.sceneStarts:
		return ReadingSceneRecords
	case f.layout != nil:
		return f.layout.reading
	}
	return ""
}

// appendName appends the tree name of entry i of a table of this family read
// as rd, whose numeric names have width digits, and the parts its content
// holds.
func (f family) appendName(b []byte, rd Reading, i, width int) ([]byte, PartLayout) {
	switch {
	case rd == ReadingSceneRecords && f.sceneStarts && i < SceneStarts:
		return appendSceneRecordName(b, i), ""
	case rd == ReadingStartList && f.sceneStarts && i < SceneStarts:
		return appendSceneName(b, i), ""
	case f.layout != nil && rd.Shape() == f.layout.reading.Shape():
		if names, layouts := f.layout.table(); i < len(names) && names[i] != "" {
			return append(b, names[i]...), layouts[i]
		}
	}
	return appendPadded(b, i, width), ""
}

// numericWidth is the digits of the largest index of a table of n entries, at
// least 3.
func numericWidth(n int) int {
	return max(3, len(strconv.Itoa(max(n-1, 0))))
}

// numericName is table index i zero-padded to width digits ("007").
func numericName(i, width int) string { return string(appendPadded(nil, i, width)) }

// appendPadded appends non-negative i in decimal, zero-padded to width digits.
func appendPadded(b []byte, i, width int) []byte {
	var d [20]byte
	n := strconv.AppendInt(d[:0], int64(i), 10)
	for range width - len(n) {
		b = append(b, '0')
	}
	return append(b, n...)
}

// levelLumpNames are the LEVEL header's ten slots in field order.
var levelLumpNames = [10]string{
	"data", "sound_bank", "gameplay", "occlusion",
	"chunk0", "chunk1", "chunk2",
	"chunk0_sound_bank", "chunk1_sound_bank", "chunk2_sound_bank",
}

// levelLumpLayouts: the parts each level lump holds.
var levelLumpLayouts = [10]PartLayout{0: PartsDataLump, 4: PartsChunk, 5: PartsChunk, 6: PartsChunk}

// LevelLumpName is the tree name of LEVEL header slot s (0 data … 9
// chunk2_sound_bank), "" outside 0..9.
func LevelLumpName(s int) string {
	if s < 0 || s >= len(levelLumpNames) {
		return ""
	}
	return levelLumpNames[s]
}

var levelNames = map[int32]string{
	0: "Aranos Tutorial", 1: "Oozla", 2: "Maktar Nebula", 3: "Endako", 4: "Barlow",
	5: "Feltzin System", 6: "Notak", 7: "Siberius", 8: "Tabora", 9: "Dobbo",
	10: "Hrugis Cloud", 11: "Joba", 12: "Todano", 13: "Boldan", 14: "Aranos Prison",
	15: "Gorn", 16: "Snivelak", 17: "Smolg", 18: "Damosel", 19: "Grelbin",
	20: "Yeedil", 22: "Dobbo Orbit", 23: "Damosel Orbit", 24: "Ship Shack",
	25: "Wupash Nebula", 26: "Jamming Array", 30: "Insomniac Museum",
}

// LevelName returns the level name for an id, "" when unknown.
func LevelName(id int32) string { return levelNames[id] }
