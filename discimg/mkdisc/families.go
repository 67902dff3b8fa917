package mkdisc

import (
	"math/rand/v2"
	"strings"
)

func rawSlot(rng *rand.Rand, weight float64, smallMin, smallMax int64, style rawStyle) slot {
	return slot{kind: slotRaw, weight: weight * (0.5 + rng.Float64()), smallBytes: smallMin + rng.Int64N(smallMax-smallMin+1), style: style}
}

func wadSlot(rng *rand.Rand, weight float64, tag string, plainRetail, plainSmall int) slot {
	return slot{kind: slotWAD, weight: weight, tag: tag,
		plainRetail: plainRetail * (80 + rng.IntN(40)) / 100, plainSmall: plainSmall * (80 + rng.IntN(40)) / 100}
}

// The pair-table families of DISC-FACTS, with the reading each is written in:
// byte sizes for most, sector sizes for MISC, ARMOR and BONUS (as Wrench types
// them).
var (
	familyMISC = &pairFamily{family: "MISC", headerSize: 0x40, sectors: true, slots: func(g *gen, rng *rand.Rand) []slot {
		return []slot{
			rawSlot(rng, 0.01, 3000, 6000, styleGeneric),      // debug_font
			wadSlot(rng, 0.08, "irx", 900<<10, 24<<10),        // irx
			rawSlot(rng, 0.01, 2048, 4096, styleGeneric),      // save_game
			rawSlot(rng, 0.35, 16<<10, 40<<10, styleCode),     // frontbin
			wadSlot(rng, 0.10, "frontnet", 1200<<10, 160<<10), // frontbin_net
			rawSlot(rng, 0.40, 16<<10, 40<<10, styleGeneric),  // frontend
			rawSlot(rng, 0.02, 4096, 8192, styleGeneric),      // exit
		}
	}}
	familyARMOR = &pairFamily{family: "ARMOR", headerSize: 0xf8, sectors: true, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 30)
		for i := range s {
			w := 3.0
			if i%2 == 1 {
				w = 2
			}
			s[i] = rawSlot(rng, w, 3000, 12000, styleGeneric)
		}
		return s
	}}
	familySCENE = &pairFamily{family: "SCENE", headerSize: 0x170, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 45)
		for i := range s {
			if i < 40 && (i == 39 || rng.IntN(10) != 0) {
				s[i] = rawSlot(rng, 1, 2000, 9000, styleGeneric)
			}
		}
		return s
	}}
	familyMPEG = &pairFamily{family: "MPEG", headerSize: 0x328, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 100)
		for i := range s {
			switch {
			case i >= 65:
				s[i] = slot{kind: slotSentinel} // 35 trailing entries past the file
			case i%2 == 0:
				s[i] = rawSlot(rng, 0.002, 1500, 4000, styleSubtitles)
			default:
				s[i] = rawSlot(rng, 1, 16<<10, 48<<10, styleVideo)
			}
		}
		return s
	}}
	familyGADGET = &pairFamily{family: "GADGET", headerSize: 0x3c8, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 120)
		for i := range s {
			switch {
			case i >= 110:
				s[i] = slot{kind: slotSentinel} // 10 entries past the file
			case i == 109 || rng.IntN(20) != 0:
				s[i] = rawSlot(rng, 1, 2000, 8000, styleGeneric)
			}
		}
		return s
	}}
	familyBONUS = &pairFamily{family: "BONUS", headerSize: 0xa48, sectors: true, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 328)
		for i := range s {
			switch {
			case i > 270:
			case i == 270:
				s[i] = rawSlot(rng, 1, 4000, 8000, styleGeneric)
			case rng.IntN(12) == 0:
			case rng.IntN(5) == 0:
				s[i] = rawSlot(rng, 1, 3000, 8000, styleGeneric)
			default:
				s[i] = wadSlot(rng, 1, "bonusimg", 200<<10, 6<<10) // most images WAD-compressed
			}
		}
		return s
	}}
	familySPACE = &pairFamily{family: "SPACE", headerSize: 0xba8, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 372)
		for i := range s {
			if i < 310 && (i == 309 || rng.IntN(8) != 0) {
				s[i] = rawSlot(rng, 1, 1500, 6000, styleGeneric)
			}
		}
		return s
	}}
	familyAUDIOn = &pairFamily{family: "AUDIO", headerSize: 0x1018, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 514)
		used := 30 + rng.IntN(170)
		for i := range s {
			switch {
			case i >= 511: // upgrade_sample, thermanator_freeze, thermanator_thaw
				s[i] = rawSlot(rng, 1, 2048, 4096, styleSoundBank)
			case i < used && rng.IntN(15) != 0:
				s[i] = rawSlot(rng, 1, 1000, 4096, styleSoundBank)
			}
		}
		return s
	}}
	familyHUD = &pairFamily{family: "HUD", headerSize: 0x1870, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 781)
		for i := range s {
			switch {
			case i == 0:
				s[i] = rawSlot(rng, 0.05, 1024, 2048, styleGeneric) // hud_header
			case i == 1:
				s[i] = wadSlot(rng, 4, "hud_bank", 1500<<10, 200<<10) // hud_banks[5]
			case i <= 5:
				s[i] = wadSlot(rng, 4, "hud_bank", 1500<<10, 20<<10)
			case i < 640 && (i == 639 || rng.IntN(9) != 0):
				s[i] = rawSlot(rng, 1, 1000, 4000, styleGeneric) // sequences, help, screenshots
			}
		}
		return s
	}}
)

// The flat start-list families: every SCENE<n> (30 scenes × 83 starts, equal
// starts, zeros, exactly one sentinel) and the global AUDIO (as Wrench reads
// it: vendor[254], then five help-language arrays of 256).
var (
	familySCENEn = &startFamily{family: "SCENEn", headerSize: 0x137c, values: func(g *gen, rng *rand.Rand, maxDistinct int64) []int {
		v := make([]int, 1245)
		for i := range v {
			v[i] = -1
		}
		d := -1
		last := -1
		scenes := 1 + rng.IntN(12)
		for sc := 0; sc < scenes && maxDistinct > 0; sc++ {
			used := 10 + rng.IntN(74)
			for j := 0; j < used; j++ {
				i := sc*83 + j
				if rng.IntN(9) == 0 && j > 0 && j < used-1 {
					continue // a zero slot inside a scene
				}
				if d < 0 || (int64(d+1) < maxDistinct && rng.IntN(6) != 0) {
					d++ // else: an equal start, the same extent as the previous entry
				}
				v[i] = d
				last = i
			}
		}
		if last >= 0 && nonZero(v) < 40 {
			// the one sentinel must stay under 5% of the non-zero values
			for i := last + 1; i < len(v) && nonZero(v) < 40; i++ {
				v[i] = d
				last = i
			}
		}
		v[last+1] = -2 // the sentinel, after every real start
		return v
	}}
	familyAUDIO = &startFamily{family: "AUDIO", headerSize: 0x1800, values: func(g *gen, rng *rand.Rand, maxDistinct int64) []int {
		v := make([]int, 1534)
		for i := range v {
			v[i] = -1
		}
		d := -1
		put := func(i int) {
			if d < 0 || (int64(d+1) < maxDistinct && rng.IntN(10) != 0) {
				d++
			}
			v[i] = d
		}
		for i := 0; i < 200+rng.IntN(54); i++ { // vendor[254]
			put(i)
		}
		for lang := 0; lang < 5; lang++ { // help arrays, 256 each
			base := 254 + lang*256
			for i := 0; i < 120+rng.IntN(100); i++ {
				put(base + i)
			}
		}
		return v
	}}
)

// familyOf picks the builder for a G/ file by name.
func familyOf(path string) (pf *pairFamily, sf *startFamily, level bool) {
	name := strings.TrimSuffix(strings.TrimPrefix(path, "G/"), ".WAD")
	switch {
	case name == "MISC":
		return familyMISC, nil, false
	case name == "ARMOR":
		return familyARMOR, nil, false
	case name == "SCENE":
		return familySCENE, nil, false
	case name == "MPEG":
		return familyMPEG, nil, false
	case name == "GADGET":
		return familyGADGET, nil, false
	case name == "BONUS":
		return familyBONUS, nil, false
	case name == "SPACE":
		return familySPACE, nil, false
	case name == "HUD":
		return familyHUD, nil, false
	case name == "AUDIO":
		return nil, familyAUDIO, false
	case strings.HasPrefix(name, "AUDIO"):
		return familyAUDIOn, nil, false
	case strings.HasPrefix(name, "SCENE"):
		return nil, familySCENEn, false
	case strings.HasPrefix(name, "LEVEL"):
		return nil, nil, true
	}
	return nil, nil, false
}

func nonZero(v []int) int {
	n := 0
	for _, x := range v {
		if x != -1 {
			n++
		}
	}
	return n
}
