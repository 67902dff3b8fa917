package imagefile

import (
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CD metadata tags.
const (
	metaCHT2       = 0x43485432 // "CHT2": text, one entry a track, with pregap
	metaCHTR       = 0x43485452 // "CHTR": text, one entry a track
	metaCHCD       = 0x43484344 // "CHCD": binary table of tracks
	metaCHGD       = 0x43484744 // "CHGD": GD-ROM
	cdTrackPadding = 4          // each track's frames are padded to a multiple of 4
	maxTracks      = 99
)

var cdSync = [12]byte{0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00}

// Track is one CD track of a CD CHD.
type Track struct {
	Number   int    `json:"number"`
	Type     string `json:"type"` // MODE1, MODE1_RAW, MODE2_FORM1, MODE2_RAW, AUDIO, ...
	Frames   int64  `json:"frames"`
	Pregap   int64  `json:"pregap,omitempty"`
	PGData   bool   `json:"-"` // pregap frames are stored in the CHD
	chdFrame int64  // first frame of the track in the CHD
}

var chcdTypes = []string{"MODE1", "MODE1_RAW", "MODE2", "MODE2_FORM1", "MODE2_FORM2", "MODE2_FORM_MIX", "MODE2_RAW", "AUDIO"}

// userOffset is where 2048 bytes of user data sit in a frame of this type,
// or -1 when the track carries no 2048-byte data sectors.
func userOffset(typ string) int {
	switch typ {
	case "MODE1", "MODE2_FORM1":
		return 0 // stored cooked: the frame starts with the user data
	case "MODE1_RAW":
		return 16 // sync(12) header(4)
	case "MODE2_RAW":
		return 24 // sync(12) header(4) subheader(8), form 1
	case "MODE2", "MODE2_FORM_MIX":
		return 8 // subheader(8), form 1
	}
	return -1
}

// cdTracks reads the CD track table from the metadata; isCD is false for a
// CHD without one (raw/DVD data).
func (c *chdFile) cdTracks() ([]Track, bool, error) {
	var tracks []Track
	isCD := false
	for _, m := range c.meta {
		switch m.tag {
		case metaCHT2, metaCHTR:
			isCD = true
			t, err := parseTrackText(string(m.data))
			if err != nil {
				return nil, true, c.ferr("CHD CD track metadata", int64(c.hdr.metaOff), "%v", err)
			}
			tracks = append(tracks, t)
		case metaCHCD:
			isCD = true
			d := m.data
			if len(d) < 4 {
				return nil, true, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "CHCD entry too short")
			}
			n := binary.BigEndian.Uint32(d)
			if n == 0 || n > maxTracks || len(d) < 4+int(n)*24 {
				return nil, true, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "CHCD entry of %d bytes for %d tracks", len(d), n)
			}
			for i := 0; i < int(n); i++ {
				r := d[4+24*i:]
				typ := binary.BigEndian.Uint32(r)
				if int(typ) >= len(chcdTypes) {
					return nil, true, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "track %d type %d", i+1, typ)
				}
				tracks = append(tracks, Track{Number: i + 1, Type: chcdTypes[typ], Frames: int64(binary.BigEndian.Uint32(r[16:]))})
			}
		case metaCHGD:
			return nil, true, c.ferr("CHD metadata", int64(c.hdr.metaOff), "GD-ROM CHDs are not PS2 discs")
		}
	}
	if !isCD {
		return nil, false, nil
	}
	if len(tracks) == 0 || len(tracks) > maxTracks {
		return nil, true, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "%d tracks", len(tracks))
	}
	if c.hdr.unitBytes != cdFrameBytes {
		return nil, true, c.ferr("CHD header", 60, "CD CHD with unit size %d, want %d", c.hdr.unitBytes, cdFrameBytes)
	}
	frame := int64(0)
	for i := range tracks {
		t := &tracks[i]
		if t.Frames < 0 || t.Frames > 1<<24 {
			return nil, true, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "track %d has %d frames", t.Number, t.Frames)
		}
		t.chdFrame = frame
		frame += (t.Frames + cdTrackPadding - 1) / cdTrackPadding * cdTrackPadding
	}
	return tracks, true, nil
}

func parseTrackText(s string) (Track, error) {
	var t Track
	s = strings.TrimRight(s, "\x00")
	fields := map[string]string{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, ":")
		if ok {
			fields[k] = v
		}
	}
	num := func(k string, need bool) (int64, error) {
		v, ok := fields[k]
		if !ok {
			if need {
				return 0, fmt.Errorf("track metadata %q has no %s", s, k)
			}
			return 0, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("track metadata %q: bad %s", s, k)
		}
		return n, nil
	}
	n, err := num("TRACK", true)
	if err != nil {
		return t, err
	}
	t.Number = int(n)
	t.Type = fields["TYPE"]
	if t.Type == "" {
		return t, fmt.Errorf("track metadata %q has no TYPE", s)
	}
	if t.Frames, err = num("FRAMES", true); err != nil {
		return t, err
	}
	if t.Pregap, err = num("PREGAP", false); err != nil {
		return t, err
	}
	t.PGData = strings.HasPrefix(fields["PGTYPE"], "V")
	if t.PGData && t.Pregap > t.Frames {
		return t, fmt.Errorf("track metadata %q: pregap longer than the track", s)
	}
	return t, nil
}

// cdView presents a CD track's user data as 2048-byte sectors.
type cdView struct {
	l       logicalReader
	first   int64 // first frame of user data in the CHD
	sectors int64
	off     int64 // user data offset within a frame
}

func newCDView(c *chdFile, tracks []Track) (io.ReaderAt, int64, error) {
	for _, t := range tracks {
		uo := userOffset(t.Type)
		if uo < 0 {
			continue
		}
		first := t.chdFrame
		n := t.Frames
		if t.PGData {
			first += t.Pregap
			n -= t.Pregap
		}
		if (first+n)*cdFrameBytes > int64(c.hdr.logical) {
			return nil, 0, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "track %d (%d frames) runs past the CHD's %d bytes", t.Number, n, c.hdr.logical)
		}
		return &cdView{l: logicalReader{c}, first: first, sectors: n, off: int64(uo)}, n * SectorSize, nil
	}
	return nil, 0, c.ferr("CHD CD metadata", int64(c.hdr.metaOff), "no data track (all %d tracks are audio or form 2)", len(tracks))
}

func (v *cdView) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		s := pos / SectorSize
		if s >= v.sectors {
			return done, io.EOF
		}
		in := pos % SectorSize
		k := min(len(p)-done, int(SectorSize-in))
		src := (v.first+s)*cdFrameBytes + v.off + in
		n, err := v.l.ReadAt(p[done:done+k], src)
		done += n
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return done, err
		}
	}
	return done, nil
}

// ECC (ECMA-130 annex A): the P and Q parity of a mode-1 sector, a
// Reed-Solomon product code over GF(2^8) (polynomial x^8+x^4+x^3+x^2+1)
// covering bytes 12..2075 (header, user data, EDC, zero fill).
var eccF, eccB = func() (f, b [256]byte) {
	for i := 0; i < 256; i++ {
		j := i << 1
		if i&0x80 != 0 {
			j ^= 0x11d
		}
		f[i] = byte(j)
		b[i^j&0xff] = byte(i)
	}
	return
}()

// eccBlock computes one parity set: majorCount codewords of minorCount bytes
// each, walking the 2064... byte region with the given strides.
func eccBlock(data []byte, majorCount, minorCount, majorMult, minorInc int, out []byte) {
	size := majorCount * minorCount
	for major := 0; major < majorCount; major++ {
		idx := (major>>1)*majorMult + major&1
		var a, b byte
		for minor := 0; minor < minorCount; minor++ {
			t := data[idx]
			idx += minorInc
			if idx >= size {
				idx -= size
			}
			a ^= t
			b ^= t
			a = eccF[a]
		}
		a = eccB[eccF[a]^b]
		out[major] = a
		out[major+majorCount] = a ^ b
	}
}

// eccGenerate fills the P (172 bytes at 0x81c) and Q (104 bytes at 0x8c8)
// parity of a 2352-byte sector. For a mode-2 (form 1) sector the parity is
// computed with the 4-byte header taken as zero, as ECMA-130 defines it.
func eccGenerate(sector []byte) {
	var hdr [4]byte
	mode2 := sector[15] == 2
	if mode2 {
		copy(hdr[:], sector[12:16])
		clear(sector[12:16])
	}
	eccBlock(sector[0xc:], 86, 24, 2, 86, sector[0x81c:])
	eccBlock(sector[0xc:], 52, 43, 86, 88, sector[0x8c8:])
	if mode2 {
		copy(sector[12:16], hdr[:])
	}
}
