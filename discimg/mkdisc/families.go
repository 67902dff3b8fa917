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
	familyMISC = &pairFamily{family: "MISC", headerSize: 0x40, sectors: true, names: miscSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		irx := wadSlot(rng, 0.08, "irx", 900<<10, 24<<10)
		irx.plain = irxBundle
		return []slot{
			assetSlot(assetPIF, func(g *gen, rng *rand.Rand) ([]byte, []treeEntry) { return pifTexture(rng, 128, 64, 4), nil }), // debug_font
			irx, // irx
			rawSlot(rng, 0.01, 2048, 4096, styleGeneric),      // save_game
			rawSlot(rng, 0.35, 16<<10, 40<<10, styleCode),     // frontbin
			wadSlot(rng, 0.10, "frontnet", 1200<<10, 160<<10), // frontbin_net
			rawSlot(rng, 0.40, 16<<10, 40<<10, styleGeneric),  // frontend
			rawSlot(rng, 0.02, 4096, 8192, styleGeneric),      // exit
		}
	}}
	familyARMOR = &pairFamily{family: "ARMOR", headerSize: 0xf8, sectors: true, names: armorSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 30)
		for i := range s {
			if i%2 == 1 {
				s[i] = bodySlot(matlist) // a textures extent: a matlist of PIF textures
				continue
			}
			s[i] = rawSlot(rng, 3, 3000, 12000, styleGeneric)
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
	familyMPEG = &pairFamily{family: "MPEG", headerSize: 0x328, names: mpegSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 100)
		for i := range s {
			switch {
			case i%2 == 1 && i >= 2*mpegFirstBeyond:
				// 35 videos past the file: in MPEG1.WAD and MPEG2.WAD behind
				// it, the last two past even those (true sentinels)
				s[i] = slot{kind: slotRaw, beyond: true, style: styleVideo}
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
	familyBONUS = &pairFamily{family: "BONUS", headerSize: 0xa48, sectors: true, names: bonusSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 328)
		credText := fieldIndex(bonusArrays, "credits_text", 0)
		credImg := fieldIndex(bonusArrays, "credits_images", 0)
		for i := range s {
			switch {
			case i == 327: // paintings/05: raw, the last extent (it takes the tail overrun)
				s[i] = rawSlot(rng, 1, 4000, 8000, styleGeneric)
			case i == credText:
				s[i] = bodySlot(creditsText)
			case i >= credImg && i < credImg+29:
				if rng.IntN(6) != 0 {
					s[i] = assetSlot(assetRGBA, func(g *gen, rng *rand.Rand) ([]byte, []treeEntry) {
						return rgbaBlob(rng, 16<<rng.IntN(3), 16<<rng.IntN(2)), nil
					})
				}
			case rng.IntN(12) == 0:
			default:
				// every image array is WAD streams that decode to PIF textures
				w := wadSlot(rng, 1, "bonusimg", 200<<10, 6<<10)
				small := g.small()
				w.plain = func(rng *rand.Rand, n int) ([]byte, []treeEntry) { return randomTexture(rng, small), nil }
				w.asset = assetPIF
				s[i] = w
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
	familyAUDIOn = &pairFamily{family: "AUDIO", headerSize: 0x1018, names: audioNSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 514)
		used := 30 + rng.IntN(170)
		for i := range s {
			switch {
			case i >= 511: // upgrade_sample, thermanator_freeze, thermanator_thaw
				s[i] = rawSlot(rng, 1, 2048, 4096, styleVAG)
			case i < used && rng.IntN(15) != 0:
				s[i] = rawSlot(rng, 1, 1000, 4096, styleVAG)
			}
		}
		return s
	}}
	familyHUD = &pairFamily{family: "HUD", headerSize: 0x1870, sectors: true, names: hudSlotNames, slots: func(g *gen, rng *rand.Rand) []slot {
		s := make([]slot, 781)
		for i := range s {
			switch {
			case i == 0:
				s[i] = rawSlot(rng, 0.05, 1024, 2048, styleGeneric) // hud_header
			case i == 1:
				s[i] = wadSlot(rng, 4, "hud_bank", 1500<<10, 200<<10) // hud_banks[5]
			case i <= 5:
				s[i] = wadSlot(rng, 4, "hud_bank", 1500<<10, 20<<10)
			case i >= 55 && i < 55+277 && rng.IntN(9) != 0:
				s[i] = rawSlot(rng, 1, 1000, 4000, styleVAG) // vendor_audio: VAG sounds
			case i < 640 && (i == 639 || rng.IntN(9) != 0):
				s[i] = rawSlot(rng, 1, 1000, 4000, styleGeneric) // sequences, help, screenshots
			}
		}
		return s
	}}
)

// The flat start-list family: the global AUDIO (as Wrench reads it:
// vendor[254], then five help-language arrays of 256). SCENE<n> has its own
// builder (scene records, scenes.go).
var (
	familyAUDIO = &startFamily{family: "AUDIO", headerSize: 0x1800, names: audioSlotNames, values: func(g *gen, rng *rand.Rand, maxDistinct int64) []int {
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

// familyOf picks the builder for a G/ file by name (scene: a SCENE<n>).
func familyOf(path string) (pf *pairFamily, sf *startFamily, scene bool) {
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
		return nil, nil, true
	}
	return nil, nil, false
}

// bodySlot is a raw slot whose bytes (and parts) body makes.
func bodySlot(body func(g *gen, rng *rand.Rand) ([]byte, []treeEntry)) slot {
	return slot{kind: slotRaw, weight: 1, body: body}
}

// assetSlot is a bodySlot whose bytes are an asset of kind k.
func assetSlot(k assetKind, body func(g *gen, rng *rand.Rand) ([]byte, []treeEntry)) slot {
	s := bodySlot(body)
	s.asset = k
	return s
}

// matlist is an ARMOR textures extent: a list of PIF textures, raw.
func matlist(g *gen, rng *rand.Rand) ([]byte, []treeEntry) {
	items := make([][]byte, 2+rng.IntN(4))
	for i := range items {
		items[i] = randomTexture(rng, g.small())
	}
	return itemList(items, false)
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
