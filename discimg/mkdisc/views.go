package mkdisc

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"gcfs/assets"
)

// The views the tree shows beside the assets the generator wrote (SPEC
// "Views"): computed here from the asset's own bytes, which the generator
// kept, by the assets package's encoders. What is a view where is the
// generator's knowledge (assetKind), not a sniff of the bytes.

// formatSuffix is the name a stored asset gets from its format.
func formatSuffix(k assetKind) string {
	switch k {
	case assetVAG:
		return ".vag"
	case assetPSS:
		return ".pss"
	case assetELF:
		return ".irx"
	}
	return ""
}

// views lists the view files of an entry at path (its name before any format
// suffix).
func views(path string, e treeEntry) []ManifestEntry {
	one := func(p string, b []byte) []ManifestEntry {
		return []ManifestEntry{{Path: p, Size: int64(len(b)), SHA1: sha1Hex(b)}}
	}
	if e.decoded != nil && e.decoded.tag == "gameplay" && e.decoded.plain != nil {
		return one(path+".json", gameplayJSON(path, e.decoded.plain))
	}
	switch e.asset {
	case assetPIF, assetRGBA:
		decode := assets.DecodePIF
		if e.asset == assetRGBA {
			decode = assets.DecodeRGBABlob
		}
		t, err := decode(e.data)
		if err != nil {
			panic(fmt.Sprintf("mkdisc: %s: the texture it wrote does not decode: %v", path, err))
		}
		return one(path+".png", assets.EncodePNG(t))
	case assetVAG:
		h, samples, err := assets.DecodeVAG(e.data)
		if err != nil {
			panic(fmt.Sprintf("mkdisc: %s: the VAG it wrote does not decode: %v", path, err))
		}
		wav := assets.WAVHeader(h.SampleRate, int64(len(samples)))
		for _, v := range samples {
			wav = binary.LittleEndian.AppendUint16(wav, uint16(v))
		}
		return one(path+".wav", wav)
	case assetSubtitles:
		s, err := assets.ParseSubtitles(e.data)
		if err != nil {
			panic(fmt.Sprintf("mkdisc: %s: the subtitles it wrote do not parse: %v", path, err))
		}
		rate := assets.DefaultFrameRate
		name := path[strings.LastIndexByte(path, '/')+1:]
		if nn, err := strconv.Atoi(strings.TrimPrefix(name, "subtitles")); err == nil && nn < 50-mpegSentinels {
			rate, _ = assets.FrameRateOfCode(videoRateCode(nn))
		}
		var out []ManifestEntry
		for l, lang := range assets.Languages {
			if srt, err := s.SRT(l, rate); err == nil && len(srt) > 0 {
				out = append(out, one(path+".d/"+lang+".srt", srt)...)
			}
		}
		return out
	}
	return nil
}
