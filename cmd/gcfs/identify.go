package main

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"gcfs/discimg"
	"gcfs/discimg/imagefile"
)

func identifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "identify",
		Usage:     "say which disc IMAGE is: serial, title, region, version, volume id, boot ELF check",
		ArgsUsage: "IMAGE",
		Description: "Reads SYSTEM.CNF and the boot ELF; an unknown disc is reported as unknown, not refused. " +
			"--hash also hashes the whole image against the retail SHA-1 (reads every byte).",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "hash", Usage: "also hash the whole image"},
			&cli.BoolFlag{Name: "json", Usage: "print one JSON object"},
			parentFlag(),
		},
		Action: runIdentify,
	}
}

type identifyJSON struct {
	Serial     string `json:"serial"`
	Title      string `json:"title"`
	Region     string `json:"region"`
	Version    string `json:"version"`
	VMode      string `json:"vmode"`
	Boot       string `json:"boot"`
	VolumeID   string `json:"volume_id"`
	SystemID   string `json:"system_id"`
	Known      bool   `json:"known"`
	ELFSHA1    string `json:"elf_sha1"`
	ELFMatch   bool   `json:"elf_match"`
	ImageSHA1  string `json:"image_sha1,omitempty"`
	ImageMatch *bool  `json:"image_match,omitempty"`
	Note       string `json:"note,omitempty"`
	// The image container (iso, device, chd, cso, zso) and, for a CHD,
	// its data SHA-1 as checked by --hash.
	Image         imagefile.Info `json:"image"`
	DataSHA1      string         `json:"data_sha1,omitempty"`
	DataSHA1Match *bool          `json:"data_sha1_match,omitempty"`
}

func runIdentify(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr(c, "IMAGE")
	}
	path := c.Args().Get(0)
	oi, err := openImage(path, c.String("parent"), 64<<20)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer oi.Close()
	img := oi.img
	id, err := img.Identify(c.Bool("hash"))
	note := ""
	if err != nil {
		// Not a disc we know how to read SYSTEM.CNF of: still an answer.
		note = err.Error()
		if id == nil {
			id = &discimg.Identity{Title: "unknown", VolumeID: img.Vol.VolumeID}
		}
	}
	if id.Title == "" {
		id.Title = "unknown"
	}
	if id.VolumeID == "" {
		id.VolumeID = img.Vol.VolumeID
	}
	out := identifyJSON{
		Serial: id.Serial, Title: id.Title, Region: id.Region, Version: id.Version, VMode: id.VMode,
		Boot: id.Boot, VolumeID: id.VolumeID, SystemID: img.Vol.SystemID, Known: id.Known,
		ELFSHA1: id.ELFSHA1, ELFMatch: id.ELFMatch, Note: note,
	}
	out.Image = oi.ifile.Info()
	if c.Bool("hash") {
		out.ImageSHA1 = id.ImageSHA1
		m := id.ImageMatch
		out.ImageMatch = &m
		got, want, checked, herr := oi.ifile.VerifyData()
		if herr != nil {
			return cli.Exit(fmt.Sprintf("%s: hashing the CHD data: %v", path, herr), 1)
		}
		if checked {
			out.DataSHA1 = got
			ok := got == want
			out.DataSHA1Match = &ok
		}
	}
	w := outWriter(c)
	if c.Bool("json") {
		b, _ := json.MarshalIndent(out, "", "  ")
		fmt.Fprintf(w, "%s\n", b)
		return nil
	}
	or := func(s, alt string) string {
		if s == "" {
			return alt
		}
		return s
	}
	fmt.Fprintf(w, "container: %s\n", describeContainer(out.Image))
	fmt.Fprintf(w, "title:     %s\n", out.Title)
	fmt.Fprintf(w, "serial:    %s\n", or(out.Serial, "unknown"))
	fmt.Fprintf(w, "region:    %s\n", or(out.Region, "unknown"))
	fmt.Fprintf(w, "version:   %s\n", or(out.Version, "unknown"))
	fmt.Fprintf(w, "vmode:     %s\n", or(out.VMode, "unknown"))
	fmt.Fprintf(w, "boot:      %s\n", or(out.Boot, "unknown"))
	fmt.Fprintf(w, "volume id: %s\n", out.VolumeID)
	fmt.Fprintf(w, "system id: %s\n", out.SystemID)
	known := "no (not a known release)"
	if out.Known {
		known = "yes"
	}
	fmt.Fprintf(w, "known:     %s\n", known)
	match := "does not match the retail one"
	if out.ELFMatch {
		match = "matches the retail one"
	}
	if out.ELFSHA1 == "" {
		fmt.Fprintf(w, "boot ELF:  not found\n")
	} else {
		fmt.Fprintf(w, "boot ELF:  SHA-1 %s, %s\n", out.ELFSHA1, match)
	}
	if out.ImageMatch != nil {
		m := "does not match the retail image"
		if *out.ImageMatch {
			m = "matches the retail image"
		}
		fmt.Fprintf(w, "image:     SHA-1 %s, %s\n", out.ImageSHA1, m)
	}
	if out.DataSHA1Match != nil {
		m := "does not match the CHD header's " + out.Image.DataSHA1
		if *out.DataSHA1Match {
			m = "matches the CHD header"
		}
		fmt.Fprintf(w, "CHD data:  SHA-1 %s, %s\n", out.DataSHA1, m)
	}
	if note != "" {
		fmt.Fprintf(w, "note:      %s\n", note)
	}
	if out.DataSHA1Match != nil && !*out.DataSHA1Match {
		return cli.Exit(fmt.Sprintf("%s: CHD data SHA-1 %s does not match the header's %s", path, out.DataSHA1, out.Image.DataSHA1), 1)
	}
	return nil
}

// describeContainer is the one-line container description of identify.
func describeContainer(inf imagefile.Info) string {
	s := inf.Kind
	switch inf.Kind {
	case "chd":
		s = fmt.Sprintf("CHD v%d, codecs %s, hunk %d bytes, unit %d bytes", inf.Version, strings.Join(inf.Codecs, ","), inf.HunkBytes, inf.UnitBytes)
		if len(inf.Tracks) > 0 {
			s += fmt.Sprintf(", CD with %d track(s), track 1 %s", len(inf.Tracks), inf.Tracks[0].Type)
		}
		if inf.DataSHA1 != "" {
			s += ", data SHA-1 " + inf.DataSHA1
		}
		if inf.ParentSHA1 != "" {
			s += ", parent SHA-1 " + inf.ParentSHA1
		}
	case "cso", "zso":
		s = fmt.Sprintf("%s v%d, codecs %s, block %d bytes", strings.ToUpper(inf.Kind), inf.Version, strings.Join(inf.Codecs, ","), inf.HunkBytes)
	case "iso":
		s = "ISO (plain file)"
	case "device":
		s = "block device"
	}
	return s
}
