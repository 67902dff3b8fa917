package main

import (
	"fmt"
	"io"

	"gcfs/fsnode"
)

// info on a level core beyond its core_index reading: the sky's texture
// table (in core_data: info lists sky.d/textures/, reading the sky header
// and texture defs), and a core_data that decodes short.

type skyTexturesInfo struct {
	Path     string   `json:"path"`
	Declared int      `json:"declared"` // the sky header's texture_count (-1: unread)
	Served   int      `json:"served"`
	Skipped  []string `json:"skipped"`
}

func (v skyTexturesInfo) printInfo(w io.Writer) {
	fmt.Fprintf(w, "sky textures:    %d declared, %d served (%s; listing it reads the sky header and texture defs of core_data)\n", v.Declared, v.Served, v.Path)
	for _, s := range v.Skipped {
		fmt.Fprintf(w, "  left out: %s\n", s)
	}
}

type coreShortInfo struct {
	Decoded int64          `json:"decoded"`
	Error   string         `json:"error,omitempty"`
	Past    []infoCoreSkip `json:"past_end"`
}

func (v coreShortInfo) printInfo(w io.Writer) {
	switch {
	case v.Error != "" && v.Decoded == 0:
		fmt.Fprintf(w, "core_data:       cannot be decoded whole (%s): every entry in it fails its reads\n", v.Error)
		return
	case v.Error != "":
		fmt.Fprintf(w, "core_data:       cannot be decoded whole (%s): %d bytes decode cleanly; the %d entries past them fail their reads\n", v.Error, v.Decoded, len(v.Past))
	default:
		fmt.Fprintf(w, "core_data short: decodes to %d bytes; %d entries past its end fail their reads\n", v.Decoded, len(v.Past))
	}
	for _, s := range v.Past {
		fmt.Fprintf(w, "  %s: %s\n", s.What, s.Reason)
	}
}

// coreMoreInfo adds the sky textures of a core (or of sky.d/textures/
// itself) and a short core_data.
func coreMoreInfo(f *infoFields, n *fsnode.Node) {
	tex := n
	if n.LevelCore() != nil {
		if sky := n.Child("sky.d"); sky != nil {
			tex = sky.Child("textures")
		}
		if decoded, past, err := n.CoreDataShort(); err != nil || len(past) > 0 {
			v := coreShortInfo{Decoded: decoded}
			if err != nil {
				v.Error = err.Error()
			}
			for _, s := range past {
				v.Past = append(v.Past, infoCoreSkip{s.What, s.Offset, s.Reason})
			}
			f.set("core_data_short", v)
		}
	}
	if tex == nil || !tex.Lazy() {
		return
	}
	kids := tex.List()
	_, declared, skipped := tex.SkyTextures()
	f.set("sky_textures", skyTexturesInfo{Path: tex.Path(), Declared: declared, Served: len(kids), Skipped: append([]string{}, skipped...)})
}
