package mkdisc

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// The retail tables, embedded so the binary needs nothing beside it. They are
// copies of ../shared/formats/rac2-ntscu-v1.01-{inventory,levels}.tsv.
var (
	//go:embed data/rac2-ntscu-v1.01-inventory.tsv
	inventoryTSV string
	//go:embed data/rac2-ntscu-v1.01-levels.tsv
	levelsTSV string
)

// Retail volume facts (DISC-FACTS "The image").
const (
	sectorSize        = 2048
	retailBlocks      = 1869312
	retailImageSize   = retailBlocks * sectorSize
	volumeID          = "RATCHETANDCLANK2"
	systemID          = "PLAYSTATION"
	rootDirLBA        = 261
	gDirLBA           = 262
	levelHeaderSize   = 0x60
	levelSlots        = 10
	numLevels         = 27
	rc2hdrLevelBase   = 0x5800
	rc2hdrLevelStride = 0x3800
	rc2hdrLevelTable  = 0x4ff8
)

// invFile is one line of the retail inventory.
type invFile struct {
	Path string // "G/LEVEL0.WAD", "SYSTEM.CNF"
	Size int64
	LBA  int64
}

// levelRow is one line of the levels table: slot s is the header field at 0x10+8*s.
type levelRow struct {
	File   string // "LEVEL21.WAD"
	ID     int32
	Reverb int32
	Slots  [levelSlots]struct{ Off, Size int32 } // sectors; zero = absent
}

func parseInventory() ([]invFile, error) {
	var out []invFile
	for i, line := range strings.Split(inventoryTSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("inventory line %d: %d fields", i+1, len(f))
		}
		size, err1 := strconv.ParseInt(f[1], 10, 64)
		lba, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("inventory line %d: bad number", i+1)
		}
		out = append(out, invFile{Path: strings.TrimPrefix(f[0], "/"), Size: size, LBA: lba})
	}
	return out, nil
}

func parseLevels() ([]levelRow, error) {
	var out []levelRow
	for i, line := range strings.Split(levelsTSV, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) < 3 {
			return nil, fmt.Errorf("levels line %d: %d fields", i+1, len(f))
		}
		id, err1 := strconv.Atoi(f[1])
		rv, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("levels line %d: bad id or reverb", i+1)
		}
		row := levelRow{File: f[0], ID: int32(id), Reverb: int32(rv)}
		for _, s := range f[3:] {
			var slot, off, size int
			if _, err := fmt.Sscanf(s, "%d:%d+%d", &slot, &off, &size); err != nil || slot < 0 || slot >= levelSlots {
				return nil, fmt.Errorf("levels line %d: bad slot %q", i+1, s)
			}
			row.Slots[slot].Off, row.Slots[slot].Size = int32(off), int32(size)
		}
		out = append(out, row)
	}
	return out, nil
}
