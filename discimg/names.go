package discimg

import (
	"fmt"
	"strconv"
)

// Names of the entries of the named families (SPEC "The tree"). A pair reading
// of MISC, ARMOR or MPEG uses these for the table indices they cover; indices
// past them, and every entry of a start-list reading of those families (whose
// entries are not the documented pairs), get numeric names.

var miscNames = []string{"debug_font", "irx", "save_game", "frontbin", "frontbin_net", "frontend", "exit"}

// armorNames: armors[9] then wrenches[6], each {mesh, textures}.
var armorNames = func() []string {
	var n []string
	for i := range 9 {
		n = append(n, fmt.Sprintf("armor%d_mesh", i), fmt.Sprintf("armor%d_textures", i))
	}
	for i := range 6 {
		n = append(n, fmt.Sprintf("wrench%d_mesh", i), fmt.Sprintf("wrench%d_textures", i))
	}
	return n
}()

// mpegNames: 50 × {subtitles, video}.
var mpegNames = func() []string {
	var n []string
	for i := range 50 {
		n = append(n, fmt.Sprintf("subtitles%02d", i), fmt.Sprintf("video%02d", i))
	}
	return n
}()

// levelLumpNames are the LEVEL header's ten slots in field order.
var levelLumpNames = [10]string{
	"data", "sound_bank", "gameplay", "occlusion",
	"chunk0", "chunk1", "chunk2",
	"chunk0_sound_bank", "chunk1_sound_bank", "chunk2_sound_bank",
}

// LevelLumpName is the tree name of LEVEL header slot s (0 data … 9
// chunk2_sound_bank), "" outside 0..9.
func LevelLumpName(s int) string {
	if s < 0 || s >= len(levelLumpNames) {
		return ""
	}
	return levelLumpNames[s]
}

// SceneStartsPerScene and SceneStarts shape a SCENE<n> start list: 1,245 u32
// values, in groups of 83 per scene. (DISC-FACTS also says "30 scenes", but
// 30 × 83 is 2,490, not 1,245: the 1,245 values make 15 groups of 83, named
// scene00 … scene14.)
const (
	SceneStartsPerScene = 83
	SceneStarts         = 1245
)

// sceneStartName names entry i of a SCENE<n> start list "sceneGG/EE"; the '/'
// is part of the name (the tree model makes the group directories).
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

// appendName appends the tree name of entry i of a table of this family read
// as rd, whose numeric names have width digits.
func (f family) appendName(b []byte, rd Reading, i, width int) []byte {
	switch {
	case rd == ReadingStartList && f.sceneStarts && i < SceneStarts:
		return appendSceneName(b, i)
	case rd != ReadingStartList && i < len(f.pairNames):
		return append(b, f.pairNames[i]...)
	}
	return appendPadded(b, i, width)
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
