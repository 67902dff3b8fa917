package mkdisc

import (
	"fmt"
	"strconv"
	"sync"
)

// The names of every table slot of the families with a published layout, as
// the generator knows them (DISC-FACTS "What Wrench's unpacker reads"; kept
// apart from discimg's own copy, so that each checks the other).

// namedField is a single slot (count 0) or an array of count slots starting at
// table index first; a flat array names its slots name0, name1, … as files.
type namedField struct {
	name         string
	first, count int
	flat         bool
}

func slotNames(n int, fields ...namedField) []string {
	names := make([]string, n)
	for _, f := range fields {
		if f.count == 0 {
			names[f.first] = f.name
			continue
		}
		w := max(2, len(strconv.Itoa(f.count-1)))
		for j := range f.count {
			if f.flat {
				names[f.first+j] = f.name + strconv.Itoa(j)
			} else {
				names[f.first+j] = fmt.Sprintf("%s/%0*d", f.name, w, j)
			}
		}
	}
	for i, s := range names {
		if s == "" {
			panic(fmt.Sprintf("mkdisc: slot %d of a %d-slot layout has no name", i, n))
		}
	}
	return names
}

// The slot names, built on first use: some 3,200 strings that a process
// which never generates a disc (every gcfs command but mkdisc) should not
// build at startup.
var (
	miscSlotNames = sync.OnceValue(func() []string {
		return slotNames(7, namedField{name: "debug_font", first: 0}, namedField{name: "irx", first: 1},
			namedField{name: "save_game", first: 2}, namedField{name: "frontbin", first: 3},
			namedField{name: "frontbin_net", first: 4}, namedField{name: "frontend", first: 5}, namedField{name: "exit", first: 6})
	})
	armorSlotNames = sync.OnceValue(func() []string {
		var fs []namedField
		for i := range 9 {
			fs = append(fs, namedField{name: fmt.Sprintf("armor%d_mesh", i), first: 2 * i}, namedField{name: fmt.Sprintf("armor%d_textures", i), first: 2*i + 1})
		}
		for i := range 6 {
			fs = append(fs, namedField{name: fmt.Sprintf("wrench%d_mesh", i), first: 18 + 2*i}, namedField{name: fmt.Sprintf("wrench%d_textures", i), first: 19 + 2*i})
		}
		return slotNames(30, fs...)
	})
	mpegSlotNames = sync.OnceValue(func() []string {
		var fs []namedField
		for i := range 50 {
			fs = append(fs, namedField{name: fmt.Sprintf("subtitles%02d", i), first: 2 * i}, namedField{name: fmt.Sprintf("video%02d", i), first: 2*i + 1})
		}
		return slotNames(100, fs...)
	})
	// BONUS arrays, in table order with their lengths.
	bonusArrays = []namedField{
		{name: "goodies_images", count: 10}, {name: "character_sketches", count: 19},
		{name: "character_renders", count: 19}, {name: "old_skill_images", count: 31},
		{name: "epilogue_english", count: 12}, {name: "epilogue_french", count: 12},
		{name: "epilogue_italian", count: 12}, {name: "epilogue_german", count: 12},
		{name: "epilogue_spanish", count: 12}, {name: "sketchbook", count: 30},
		{name: "commercials", count: 5}, {name: "item_images", count: 9}, {name: "credits_text"},
		{name: "credits_images", count: 29}, {name: "random_stuff", count: 5},
		{name: "movie_images", count: 5}, {name: "cinematic_images", count: 33},
		{name: "skill_images", count: 30}, {name: "clanks_day_at_insomniac", count: 18},
		{name: "endorsement_deals", count: 10}, {name: "short_cuts", count: 8}, {name: "paintings", count: 6},
	}
	bonusSlotNames = sync.OnceValue(func() []string { return slotNames(328, sequential(bonusArrays)...) })
	hudArrays      = []namedField{
		{name: "hud_header"}, {name: "hud_bank", count: 5, flat: true}, {name: "ratchet_seqs", count: 28},
		{name: "hud_seqs", count: 20}, {name: "vendor"}, {name: "vendor_audio", count: 277},
		{name: "help_controls", count: 11}, {name: "help_moves", count: 18}, {name: "help_weapons", count: 45},
		{name: "help_gadgets", count: 12}, {name: "help_items", count: 17}, {name: "rac1_menus", count: 14},
		{name: "mission_ss", count: 83}, {name: "gmap_ss", count: 28}, {name: "unknown2", count: 56},
		{name: "all_text"}, {name: "hudw3d"}, {name: "unknown3", count: 2}, {name: "monsterpedia_shots", count: 84},
		{name: "screen_gadgets", count: 12}, {name: "screen_weapons", count: 45}, {name: "screen_items", count: 20},
	}
	hudSlotNames    = sync.OnceValue(func() []string { return slotNames(781, sequential(hudArrays)...) })
	audioNSlotNames = sync.OnceValue(func() []string {
		return slotNames(514, sequential([]namedField{{name: "bin_data", count: 511},
			{name: "upgrade_sample"}, {name: "thermanator_freeze"}, {name: "thermanator_thaw"}})...)
	})
	audioSlotNames = sync.OnceValue(func() []string {
		return slotNames(1534, sequential([]namedField{{name: "vendor", count: 254},
			{name: "help_english", count: 256}, {name: "help_french", count: 256}, {name: "help_german", count: 256},
			{name: "help_spanish", count: 256}, {name: "help_italian", count: 256}})...)
	})
)

// sequential places fields one after the other from index 0.
func sequential(fs []namedField) []namedField {
	out := make([]namedField, len(fs))
	at := 0
	for i, f := range fs {
		f.first = at
		out[i] = f
		at += max(f.count, 1)
	}
	return out
}

// bonusIndex is the table index of slot j of the BONUS array named name.
func fieldIndex(fs []namedField, name string, j int) int {
	for _, f := range sequential(fs) {
		if f.name == name {
			return f.first + j
		}
	}
	panic("mkdisc: no field " + name)
}

// The 83 words of a scene record: 0-1 English speech, 2 subtitles start, 3
// its size in sectors, 4-11 the other languages' speech, 12 moby_load start,
// 13 its size, 14-82 chunks[69].
const (
	sceneWords        = 83
	sceneRecords      = 15
	sceneSubtitles    = 2
	sceneSubtitlesLen = 3
	sceneMobyLoad     = 12
	sceneMobyLoadLen  = 13
	sceneChunk0       = 14
)

func sceneWordName(w int) string {
	switch {
	case w < 2:
		return [2]string{"speech_english_left", "speech_english_right"}[w]
	case w == sceneSubtitles:
		return "subtitles"
	case w >= 4 && w < 12:
		lang := [4]string{"french", "german", "spanish", "italian"}[(w-4)/2]
		return "speech_" + lang + "_" + [2]string{"left", "right"}[w%2]
	case w == sceneMobyLoad:
		return "moby_load"
	case w >= sceneChunk0:
		return fmt.Sprintf("chunks/%02d", w-sceneChunk0)
	}
	return ""
}
