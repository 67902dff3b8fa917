package main

import (
	"encoding/json"
	"fmt"

	"github.com/urfave/cli/v2"

	"gcfs/discimg"
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
}

func runIdentify(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErr(c, "IMAGE")
	}
	path := c.Args().Get(0)
	img, f, err := openImage(path)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	defer f.Close()
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
	if c.Bool("hash") {
		out.ImageSHA1 = id.ImageSHA1
		m := id.ImageMatch
		out.ImageMatch = &m
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
	if note != "" {
		fmt.Fprintf(w, "note:      %s\n", note)
	}
	return nil
}
