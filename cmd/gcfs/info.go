package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"gcfs/discimg"
	"gcfs/discimg/imagefile"
	"gcfs/fsnode"
)

func infoCommand() *cli.Command {
	return &cli.Command{
		Name:      "info",
		Usage:     "show everything the extended attributes say about PATH, and a container's table",
		ArgsUsage: "IMAGE PATH",
		Description: "JSON keys are the xattr names without user.gcfs. (\"level_id\": 30), numbers as numbers; " +
			"a container adds its table: reading, coverage, candidates, skipped, entries.",
		Flags:  []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print one JSON object"}, maxDecodedFlag(), noViewsFlag(), noIndexCacheFlag(), parentFlag()},
		Action: runInfo,
	}
}

// numericXattrs are the attributes whose values are numbers in JSON.
var numericXattrs = map[string]bool{
	"offset": true, "lba": true, "disc_size": true, "compressed_size": true,
	"level_id": true, "reverb": true, "skipped": true, "expected_size": true, "parent_offset": true,
	"o_class": true, "class_index": true, "width": true, "height": true, "table_index": true, "palette": true,
	"palette_offset": true, "pixels_offset": true,
}

type infoPart struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

type infoSkip struct {
	Index  int    `json:"index"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
}

type infoTOCHeader struct {
	File   string `json:"file"`
	Offset int64  `json:"offset"`
	LBA    int64  `json:"lba"`
	Status string `json:"status"`
}

type infoTOCLevel struct {
	Level  int    `json:"level"`
	File   string `json:"file"`
	LBA    int64  `json:"lba"`
	Sector int64  `json:"sectors"`
	Status string `json:"status"`
}

type infoCandidate struct {
	Reading    string `json:"reading"`
	Consistent bool   `json:"consistent"`
	Reason     string `json:"reason,omitempty"`
	Coverage   int64  `json:"coverage"`
	Entries    int    `json:"entries"`
	Valid      int    `json:"valid"`
	Unused     int    `json:"unused"`
	Sentinels  int    `json:"sentinels"`
	Invalid    int    `json:"invalid"`
	Beyond     int    `json:"beyond,omitempty"` // valid entries in the run of files behind the container
	Won        bool   `json:"won"`
}

type infoExtent struct {
	Index  int    `json:"index"`
	Name   string `json:"name"`
	Offset int64  `json:"offset"`
	Size   int64  `json:"size"`
}

// infoFields is the ordered key/value list of `info`; the JSON object and the
// text output both come from it.
type infoFields struct {
	keys []string
	vals map[string]any
}

func (f *infoFields) set(k string, v any) {
	if _, ok := f.vals[k]; !ok {
		f.keys = append(f.keys, k)
	}
	f.vals[k] = v
}

func (f *infoFields) MarshalJSON() ([]byte, error) {
	var b strings.Builder
	b.WriteString("{")
	for i, k := range f.keys {
		if i > 0 {
			b.WriteString(",")
		}
		kb, _ := json.Marshal(k)
		vb, err := json.Marshal(f.vals[k])
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteString(":")
		b.Write(vb)
	}
	b.WriteString("}")
	return []byte(b.String()), nil
}

func nodeInfo(n *fsnode.Node) *infoFields {
	f := &infoFields{vals: map[string]any{}}
	f.set("path", n.Path())
	f.set("type", typeName(n))
	f.set("ino", n.Ino)
	if !n.IsDir() {
		f.set("size", n.Size())
	}
	for _, a := range n.Xattrs() {
		k := strings.TrimPrefix(a.Name, fsnode.XattrPrefix)
		if numericXattrs[k] {
			if v, err := strconv.ParseInt(a.Value, 10, 64); err == nil {
				f.set(k, v)
				continue
			}
		}
		f.set(k, a.Value)
	}
	if err := n.TableError(); err != nil {
		f.set("table_error", err.Error())
	}
	if c := n.Container(); c != nil {
		f.set("header_size", c.HeaderSize)
		f.set("coverage", c.Coverage)
		f.set("unused", c.Unused)
		f.set("sentinels", c.Sentinels)
		cands := make([]infoCandidate, 0, len(c.Candidates))
		for _, k := range c.Candidates {
			cands = append(cands, infoCandidate{
				Reading: string(k.Reading), Consistent: k.Consistent, Reason: k.Reason, Coverage: k.Coverage,
				Entries: k.Entries, Valid: k.Valid, Unused: k.Unused, Sentinels: k.Sentinels, Invalid: k.Invalid,
				Beyond: k.Beyond, Won: k.Reading == c.Reading,
			})
		}
		f.set("candidates", cands)
		if c.Documented != "" {
			f.set("documented", string(c.Documented))
			f.set("names", c.NamesReason())
			if c.OtherUnit() {
				// sources disagree on units: say which one the table measured
				f.set("measured_unit", c.Reading.Unit())
				f.set("documented_unit", c.Documented.Unit())
			}
		}
		if c.Preferred != "" {
			f.set("preferred", c.Preferred)
		}
		if c.Beyond > 0 {
			f.set("beyond", c.Beyond)
		}
		ents := make([]infoExtent, 0, len(c.Extents))
		for _, x := range c.Extents {
			ents = append(ents, infoExtent{Index: x.Index, Name: x.Name, Offset: x.Offset, Size: x.Size})
		}
		f.set("entries", ents)
	}
	if x := n.Extent(); x != nil && !n.IsDir() {
		f.set("index", x.Index)
	}
	if w, off := n.Within(); w != nil {
		f.set("within", w.Path())
		_ = off
	}
	if err := n.PartsError(); err != nil {
		f.set("parts_error", err.Error())
	}
	if err := n.ViewError(); err != nil {
		f.set("view_error", err.Error())
	}
	if rate, note := n.FrameRate(); rate.Num != 0 {
		f.set("frame_rate", rate.String())
		if note != "" {
			f.set("frame_rate_note", note)
		}
	}
	coreInfo(f, n)
	coreMoreInfo(f, n)
	if ps, of := n.Parts(); ps != nil {
		f.set("parts_of", of.Path())
		f.set("part_table_size", ps.HeaderSize)
		parts := make([]infoPart, 0, len(ps.Parts))
		for _, p := range ps.Parts {
			parts = append(parts, infoPart{Index: p.Index, Name: p.Name, Offset: p.Offset, Size: p.Size})
		}
		f.set("parts", parts)
		skips := make([]infoSkip, 0, len(ps.Skipped))
		for _, k := range ps.Skipped {
			skips = append(skips, infoSkip{Index: k.Index, Name: k.Name, Reason: k.Reason})
		}
		f.set("left_out", skips)
		if ov := ps.Overlaps(); len(ov) > 0 {
			f.set("overlapping", ov)
		}
	}
	return f
}

// tocInfo is RC2.HDR read as a table of contents, checked against the files.
func tocInfo(f *infoFields, t *fsnode.Tree) {
	toc, hdr := t.TOC()
	if toc == nil {
		return
	}
	if toc.Problem != "" {
		f.set("toc_problem", toc.Problem)
	}
	g := t.Root.Child("G")
	status := func(name string, lba int64, h []byte) string {
		if g == nil {
			return "no /G directory"
		}
		n := g.Child(name)
		if n == nil || n.Entry() == nil {
			return "no such file in /G"
		}
		if e := n.Entry(); e.LBA != lba {
			return fmt.Sprintf("names LBA %d; the directory record says %d", lba, e.LBA)
		}
		if s := n.TOCStatus(); s != "" {
			return s
		}
		return "the file is no container (its table did not read)"
	}
	var globals []infoTOCHeader
	for _, h := range toc.Globals {
		st := h.Err
		if st == "" {
			st = status(h.File, h.LBA, h.Header)
		}
		globals = append(globals, infoTOCHeader{File: h.File, Offset: h.Offset, LBA: h.LBA, Status: st})
	}
	f.set("toc_globals", globals)
	var levels []infoTOCLevel
	for n, row := range toc.Levels {
		for k, rg := range [3]discimg.TOCRange{row.Level, row.Audio, row.Scene} {
			lv := infoTOCLevel{Level: n, LBA: rg.LBA, Sector: rg.Sectors}
			if n < len(toc.Copies) {
				h := toc.Copies[n][k]
				lv.File = h.File
				lv.Status = h.Err
				if lv.Status == "" {
					lv.Status = status(h.File, h.LBA, h.Header)
				}
			}
			levels = append(levels, lv)
		}
	}
	f.set("toc_levels", levels)
	if e := hdr.Entry(); e != nil {
		if probs := toc.LevelTableProblems(e.LBA); len(probs) > 0 {
			f.set("toc_level_table", probs)
		}
	}
}

func runInfo(c *cli.Context) error {
	if c.NArg() != 2 {
		return usageErr(c, "IMAGE PATH")
	}
	o, n, err := openNode(c)
	if err != nil {
		return err
	}
	defer o.Close()
	f := nodeInfo(n)
	if _, hdr := o.tree.TOC(); hdr != nil && hdr == n {
		tocInfo(f, o.tree)
	}
	if n == o.tree.Root {
		addImageInfo(f, o.opened.ifile.Info())
	}
	w := outWriter(c)
	if c.Bool("json") {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return exitErr(1, "%s: %v", o.path, err)
		}
		fmt.Fprintf(w, "%s\n", b)
		return nil
	}
	for _, k := range f.keys {
		switch v := f.vals[k].(type) {
		case []infoCandidate:
			fmt.Fprintln(w, "candidates:")
			for _, k := range v {
				mark := " "
				if k.Won {
					mark = "*"
				}
				state := "consistent"
				if !k.Consistent {
					state = "inconsistent: " + k.Reason
				}
				fmt.Fprintf(w, "  %s %-14s coverage %d sectors, %d entries, %d valid, %d unused, %d sentinels, %d invalid; %s\n",
					mark, k.Reading, k.Coverage, k.Entries, k.Valid, k.Unused, k.Sentinels, k.Invalid, state)
			}
		case []infoExtent:
			fmt.Fprintf(w, "entries:         %d\n", len(v))
			for _, x := range v {
				fmt.Fprintf(w, "  %5d %-24s offset %#x size %d\n", x.Index, x.Name, x.Offset, x.Size)
			}
		case []infoPart:
			fmt.Fprintf(w, "parts:           %d\n", len(v))
			for _, x := range v {
				fmt.Fprintf(w, "  %5d %-24s offset %#x size %d\n", x.Index, x.Name, x.Offset, x.Size)
			}
		case []infoSkip:
			fmt.Fprintf(w, "left out:        %d\n", len(v))
			for _, x := range v {
				fmt.Fprintf(w, "  %5d %-24s %s\n", x.Index, x.Name, x.Reason)
			}
		case []infoTOCHeader:
			fmt.Fprintln(w, "global header copies:")
			for _, h := range v {
				fmt.Fprintf(w, "  %-12s at %#06x  LBA %-8d %s\n", h.File, h.Offset, h.LBA, h.Status)
			}
		case []infoTOCLevel:
			fmt.Fprintln(w, "level table (level, audio, scene):")
			for _, l := range v {
				fmt.Fprintf(w, "  %2d %-12s copy LBA %-8d %6d sectors  %s\n", l.Level, l.File, l.LBA, l.Sector, l.Status)
			}
		case infoPrinter:
			v.printInfo(w)
		default:
			fmt.Fprintf(w, "%-16s %v\n", k+":", v)
		}
	}
	return nil
}

// addImageInfo adds the image container's description (on the root).
func addImageInfo(f *infoFields, inf imagefile.Info) {
	f.set("image_kind", inf.Kind)
	if inf.Version != 0 {
		f.set("image_version", inf.Version)
	}
	if len(inf.Codecs) > 0 {
		f.set("image_codecs", strings.Join(inf.Codecs, ","))
	}
	if inf.HunkBytes != 0 {
		f.set("image_hunk_bytes", inf.HunkBytes)
	}
	if inf.UnitBytes != 0 {
		f.set("image_unit_bytes", inf.UnitBytes)
	}
	if inf.LogicalBytes != 0 {
		f.set("image_logical_bytes", inf.LogicalBytes)
	}
	if inf.DataSHA1 != "" {
		f.set("image_data_sha1", inf.DataSHA1)
	}
	if inf.ParentSHA1 != "" {
		f.set("image_parent_sha1", inf.ParentSHA1)
	}
	if len(inf.Tracks) > 0 {
		t := make([]string, len(inf.Tracks))
		for i, x := range inf.Tracks {
			t[i] = fmt.Sprintf("%d:%s:%d", x.Number, x.Type, x.Frames)
		}
		f.set("image_tracks", strings.Join(t, " "))
	}
}
