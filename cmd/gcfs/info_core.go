package main

import (
	"fmt"
	"io"

	"gcfs/discimg/levelcore"
	"gcfs/fsnode"
)

// info on a level core directory (data.d/core/): its header, every table's
// count as stored and what was read of it, and what was left out and why.

type infoCoreField struct {
	Offset int    `json:"offset"`
	Name   string `json:"name"`
	Value  int32  `json:"value"`
}

type infoCoreCount struct {
	Table  string `json:"table"`
	Stored int32  `json:"stored"` // the header's count (-1: the table has none)
	Read   int    `json:"read"`   // entries served
}

type infoCoreSkip struct {
	What   string `json:"what"`
	Offset int64  `json:"offset"`
	Reason string `json:"reason"`
}

// infoPrinter is a value that prints itself in info's text output.
type infoPrinter interface{ printInfo(w io.Writer) }

type coreHeaderInfo []infoCoreField
type coreCountsInfo []infoCoreCount
type coreSkipsInfo []infoCoreSkip
type coreNotesInfo []string

func (v coreHeaderInfo) printInfo(w io.Writer) {
	fmt.Fprintln(w, "core header:")
	for _, f := range v {
		fmt.Fprintf(w, "  +%#04x %-26s %d (%#x)\n", f.Offset, f.Name, f.Value, uint32(f.Value))
	}
}

func (v coreCountsInfo) printInfo(w io.Writer) {
	fmt.Fprintln(w, "core tables (stored count, served):")
	for _, c := range v {
		switch {
		case c.Stored < 0:
			fmt.Fprintf(w, "  %-22s        %d\n", c.Table, c.Read)
		case c.Read < 0:
			fmt.Fprintf(w, "  %-22s %6d\n", c.Table, c.Stored)
		default:
			fmt.Fprintf(w, "  %-22s %6d %d\n", c.Table, c.Stored, c.Read)
		}
	}
}

func (v coreNotesInfo) printInfo(w io.Writer) {
	fmt.Fprintln(w, "core notes:")
	for _, s := range v {
		fmt.Fprintf(w, "  %s\n", s)
	}
}

func (v coreSkipsInfo) printInfo(w io.Writer) {
	fmt.Fprintf(w, "left out:        %d\n", len(v))
	for _, s := range v {
		fmt.Fprintf(w, "  %s (core_index %#x): %s\n", s.What, s.Offset, s.Reason)
	}
}

// coreInfo adds a level core directory's reading.
func coreInfo(f *infoFields, n *fsnode.Node) {
	c := n.LevelCore()
	if c == nil {
		return
	}
	h := &c.Header
	hdr := coreHeaderInfo{}
	for _, x := range h.Fields() {
		hdr = append(hdr, infoCoreField{x.Offset, x.Name, x.Value})
	}
	f.set("core_header", hdr)
	slots := func(cs []levelcore.Class) (n int) {
		for _, c := range cs {
			n += len(c.Slots)
		}
		return n
	}
	frames := 0
	for _, p := range c.Particles {
		frames += len(p.Frames)
	}
	billboards := 0
	for _, s := range c.Shrubs {
		if s.Billboard != nil {
			billboards++
		}
	}
	f.set("core_tables", coreCountsInfo{
		{"blocks", -1, len(c.Blocks)},
		{"moby_classes", h.MobyClasses.Count, len(c.Mobies)},
		{"tie_classes", h.TieClasses.Count, len(c.Ties)},
		{"shrub_classes", h.ShrubClasses.Count, len(c.Shrubs)},
		{"tfrag_textures", h.TfragTextures.Count, len(c.TfragTextures)},
		{"moby_textures (slots)", h.MobyTextures.Count, slots(c.Mobies)},
		{"tie_textures (slots)", h.TieTextures.Count, slots(c.Ties)},
		{"shrub_textures (slots)", h.ShrubTextures.Count, slots(c.Shrubs)},
		{"shrub billboards", -1, billboards},
		{"part_textures (frames)", h.PartTextures.Count, frames},
		{"particles", -1, len(c.Particles)},
		{"fx_textures", h.FxTextures.Count, len(c.Fx)},
		{"gs_ram", h.GsRAM.Count, -1},
		{"moby_gs_stash_count", h.MobyStashCount, -1},
		{"moby_gs_stash_list", -1, len(c.StashList)},
		{"ratchet_seqs", -1, len(c.RatchetSeqs)},
	})
	skips := coreSkipsInfo{}
	for _, s := range c.Skipped {
		skips = append(skips, infoCoreSkip{s.What, s.Offset, s.Reason})
	}
	f.set("left_out", skips)
	if len(c.Notes) > 0 {
		f.set("core_notes", coreNotesInfo(c.Notes))
	}
}
