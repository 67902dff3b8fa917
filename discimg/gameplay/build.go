package gameplay

import (
	"encoding/binary"
	"math"
)

// Desc is what Build lays out: the instances and the contents of every other
// block, in the layout LEVEL-CORE §3 gives (what mkdisc writes, and what
// Wrench's unpacker reads).
type Desc struct {
	Mobies      []MobyDesc
	Ties        []TieDesc
	Shrubs      []ShrubDesc
	MobyGroups  [][]int // members: record indices
	TieGroups   [][]int
	ShrubGroups [][]int
	Cameras     []CameraDesc
	Sounds      []SoundDesc
	DirLights   [][4][4]float32  // colour_a, direction_a, colour_b, direction_b
	Volumes     [4][][16]float32 // cuboids, spheres, cylinders, pills: their matrices
	Paths       [][][4]float32
	GrindPaths  [][][4]float32
	PointLights [][7]uint16 // x, y, z, radius, r, g, b as stored
	EnvSamples  [][0x20]byte
	EnvTrans    int // env transitions (content from the index)
	Help        [8][]HelpDesc
	Areas       []AreaDesc
	SharedData  []byte
	CoreSounds  int32
	DeathHeight float32
	Occlusion   [3]int // tfrag, tie, moby mappings
}

// MobyDesc is one moby instance.
type MobyDesc struct {
	UID, OClass, Mission, Bolts, Group int32
	Position, Rotation                 [3]float32
	Scale                              float32
	Pvar                               []byte // nil: no pvar (index -1)
	ModeBits                           int32
	LightColour                        [3]int32
	Light                              int32
}

// TieDesc is one tie instance.
type TieDesc struct {
	OClass, UID, OcclusionIndex int32
	Matrix                      [16]float32
}

// ShrubDesc is one shrub instance.
type ShrubDesc struct {
	OClass int32
	Matrix [16]float32
	Colour [3]int32
}

// CameraDesc is one camera.
type CameraDesc struct {
	Type               int32
	Position, Rotation [3]float32
	Pvar               []byte
}

// SoundDesc is one sound instance.
type SoundDesc struct {
	OClass, MClass int16
	Range          float32
	Matrix         [16]float32
	Pvar           []byte
}

// HelpDesc is one help message (Text without its NUL; nil: offset 0).
type HelpDesc struct {
	ID   int16
	Text []byte
}

// AreaDesc is one area: a bounding sphere and its links per part (paths,
// cuboids, spheres, cylinders, negative cuboids).
type AreaDesc struct {
	Sphere [4]float32
	Links  [5][]int32
}

// Built is a laid-out stream and where each block went.
type Built struct {
	Bytes   []byte
	Offsets [NumBlocks]int32
	// PvarIndex: the pvar index each moby, camera, sound got (-1 none)
	MobyPvar, CameraPvar, SoundPvar []int32
}

type wbuf struct{ b []byte }

func (w *wbuf) s32(v int32)   { w.b = binary.LittleEndian.AppendUint32(w.b, uint32(v)) }
func (w *wbuf) u32(v uint32)  { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *wbuf) s16(v int16)   { w.b = binary.LittleEndian.AppendUint16(w.b, uint16(v)) }
func (w *wbuf) u16(v uint16)  { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *wbuf) f32(v float32) { w.b = binary.LittleEndian.AppendUint32(w.b, math.Float32bits(v)) }
func (w *wbuf) fs(v ...float32) {
	for _, f := range v {
		w.f32(f)
	}
}
func (w *wbuf) pad(a int) {
	for len(w.b)%a != 0 {
		w.b = append(w.b, 0)
	}
}
func (w *wbuf) table(n int) { w.s32(int32(n)); w.s32(0); w.s32(0); w.s32(0) }

// Inverse3x4 is the first three columns of the inverse of an affine matrix
// (columns 0-2 rotation-scale, 3 translation), as the volumes and sounds
// store it (Mat3 of Vec4 columns).
func Inverse3x4(m [16]float32) [12]float32 {
	a := func(r, c int) float64 { return float64(m[4*c+r]) }
	det := a(0, 0)*(a(1, 1)*a(2, 2)-a(1, 2)*a(2, 1)) - a(0, 1)*(a(1, 0)*a(2, 2)-a(1, 2)*a(2, 0)) + a(0, 2)*(a(1, 0)*a(2, 1)-a(1, 1)*a(2, 0))
	var out [12]float32
	if det == 0 {
		return out
	}
	inv := [3][3]float64{
		{(a(1, 1)*a(2, 2) - a(1, 2)*a(2, 1)) / det, (a(0, 2)*a(2, 1) - a(0, 1)*a(2, 2)) / det, (a(0, 1)*a(1, 2) - a(0, 2)*a(1, 1)) / det},
		{(a(1, 2)*a(2, 0) - a(1, 0)*a(2, 2)) / det, (a(0, 0)*a(2, 2) - a(0, 2)*a(2, 0)) / det, (a(0, 2)*a(1, 0) - a(0, 0)*a(1, 2)) / det},
		{(a(1, 0)*a(2, 1) - a(1, 1)*a(2, 0)) / det, (a(0, 1)*a(2, 0) - a(0, 0)*a(2, 1)) / det, (a(0, 0)*a(1, 1) - a(0, 1)*a(1, 0)) / det},
	}
	for c := 0; c < 3; c++ {
		for r := 0; r < 3; r++ {
			out[4*c+r] = float32(inv[r][c])
		}
	}
	return out
}

// Build lays out a gameplay stream: the header, then every block in slot
// order, each 0x10-aligned.
func Build(d *Desc) *Built {
	w := &wbuf{b: make([]byte, HeaderSize)}
	out := &Built{}
	var pvars []pvarEntry
	var pvarData []byte
	addPvar := func(p []byte) int32 {
		if p == nil {
			return -1
		}
		for len(pvarData)%0x10 != 0 {
			pvarData = append(pvarData, 0)
		}
		pvars = append(pvars, pvarEntry{int32(len(pvarData)), int32(len(p))})
		pvarData = append(pvarData, p...)
		return int32(len(pvars) - 1)
	}
	for _, m := range d.Mobies {
		out.MobyPvar = append(out.MobyPvar, addPvar(m.Pvar))
	}
	for _, c := range d.Cameras {
		out.CameraPvar = append(out.CameraPvar, addPvar(c.Pvar))
	}
	for _, s := range d.Sounds {
		out.SoundPvar = append(out.SoundPvar, addPvar(s.Pvar))
	}
	mat := func(m [16]float32) { w.fs(m[:]...) }
	classes := func(oc []int32) {
		var seen []int32
		has := map[int32]bool{}
		for _, c := range oc {
			if !has[c] {
				has[c] = true
				seen = append(seen, c)
			}
		}
		w.s32(int32(len(seen)))
		for _, c := range seen {
			w.s32(c)
		}
	}
	groups := func(gs [][]int) {
		var data []byte
		ptrs := make([]int32, len(gs))
		for i, g := range gs {
			if len(g) == 0 {
				ptrs[i] = -1
				continue
			}
			ptrs[i] = int32(len(data))
			for j, m := range g {
				v := uint16(m & 0x7fff)
				if j == len(g)-1 {
					v |= 0x8000
				}
				data = binary.LittleEndian.AppendUint16(data, v)
			}
		}
		for len(data)%0x10 != 0 {
			data = append(data, 0)
		}
		w.s32(int32(len(gs)))
		w.s32(int32(len(data)))
		w.s32(0)
		w.s32(0)
		for _, p := range ptrs {
			w.s32(p)
		}
		w.pad(0x10)
		w.b = append(w.b, data...)
	}
	paths := func(ps [][][4]float32, grind bool) {
		start := len(w.b)
		w.s32(int32(len(ps)))
		dataOffAt := len(w.b)
		w.s32(0)
		w.s32(0)
		w.s32(0)
		if grind {
			for i, p := range ps {
				var c [4]float32
				if len(p) > 0 {
					c = p[0]
				}
				w.fs(c[0], c[1], c[2], 50)
				w.s32(int32(i))
				w.s32(int32(i % 2))
				w.s32(0)
				w.s32(0)
			}
		}
		offAt := len(w.b)
		for range ps {
			w.s32(0)
		}
		w.pad(0x10)
		dataOff := len(w.b) - start
		for i, p := range ps {
			binary.LittleEndian.PutUint32(w.b[offAt+4*i:], uint32(len(w.b)-start-dataOff))
			w.table(len(p))
			for _, v := range p {
				w.fs(v[:]...)
			}
		}
		binary.LittleEndian.PutUint32(w.b[dataOffAt:], uint32(dataOff))
		binary.LittleEndian.PutUint32(w.b[dataOffAt+4:], uint32(len(w.b)-start-dataOff))
	}
	for slot := 0; slot < NumBlocks; slot++ {
		w.pad(0x10)
		out.Offsets[slot] = int32(len(w.b))
		switch {
		case slot == slotLevelSettings:
			w.s32(-1)
			w.s32(0)
			w.s32(0)
			w.s32(40)
			w.s32(60)
			w.s32(80)
			w.fs(100, 900, 0, 255, d.DeathHeight)
			w.s32(0)
			w.fs(0, 0, 0, 10, 20, 30, 0.5)
			w.s32(-1)
			w.s32(-1)
			w.s32(-1)
			w.u32(0)
			w.fs(0, 0, 0) // one all-zero terminator chunk plane
			w.s32(0)
			w.fs(0, 0, 0)
			w.u32(0)
			w.s32(d.CoreSounds)
		case slot == slotDirLights:
			w.table(len(d.DirLights))
			for _, l := range d.DirLights {
				for _, v := range l {
					w.fs(v[:]...)
				}
			}
		case slot == slotCameras:
			w.table(len(d.Cameras))
			for i, c := range d.Cameras {
				w.s32(c.Type)
				w.fs(c.Position[:]...)
				w.fs(c.Rotation[:]...)
				w.s32(out.CameraPvar[i])
			}
		case slot == slotSounds:
			w.table(len(d.Sounds))
			for i, s := range d.Sounds {
				w.s16(s.OClass)
				w.s16(s.MClass)
				w.u32(0)
				w.s32(out.SoundPvar[i])
				w.f32(s.Range)
				mat(s.Matrix)
				inv := Inverse3x4(s.Matrix)
				w.fs(inv[:]...)
				w.fs(0, 0, 0, 0)
			}
		case slot >= slotHelp0 && slot < slotHelp0+8:
			msgs := d.Help[slot-slotHelp0]
			start := len(w.b)
			w.s32(int32(len(msgs)))
			sizeAt := len(w.b)
			w.s32(0)
			recAt := len(w.b)
			for range msgs {
				w.table(0)
			}
			for i, m := range msgs {
				r := recAt + 0x10*i
				off := int32(0)
				if m.Text != nil {
					w.pad(4)
					off = int32(len(w.b) - start)
					w.b = append(w.b, m.Text...)
					w.b = append(w.b, 0)
				}
				binary.LittleEndian.PutUint32(w.b[r:], uint32(off))
				for j, v := range []int16{m.ID, m.ID, m.ID, -1, -1, 0} {
					binary.LittleEndian.PutUint16(w.b[r+4+2*j:], uint16(v))
				}
			}
			w.pad(4)
			binary.LittleEndian.PutUint32(w.b[sizeAt:], uint32(len(w.b)-start))
		case slot == slotTieClasses:
			var oc []int32
			for _, t := range d.Ties {
				oc = append(oc, t.OClass)
			}
			classes(oc)
		case slot == slotTieInstances:
			w.table(len(d.Ties))
			for _, t := range d.Ties {
				w.s32(t.OClass)
				w.s32(400)
				w.s32(0)
				w.s32(t.OcclusionIndex)
				mat(t.Matrix)
				w.s32(0)
				w.s32(t.UID)
				w.s32(0)
				w.s32(0)
			}
		case slot == slotTieGroups:
			groups(d.TieGroups)
		case slot == slotShrubClasses:
			var oc []int32
			for _, s := range d.Shrubs {
				oc = append(oc, s.OClass)
			}
			classes(oc)
		case slot == slotShrubInstances:
			w.table(len(d.Shrubs))
			for _, s := range d.Shrubs {
				w.s32(s.OClass)
				w.f32(200)
				w.s32(0)
				w.s32(0)
				mat(s.Matrix)
				w.s32(s.Colour[0])
				w.s32(s.Colour[1])
				w.s32(s.Colour[2])
				w.s32(0)
				w.s32(0)
				w.s32(0)
				w.s32(0)
				w.s32(0)
			}
		case slot == slotShrubGroups:
			groups(d.ShrubGroups)
		case slot == slotMobyClasses:
			var oc []int32
			for _, m := range d.Mobies {
				oc = append(oc, m.OClass)
			}
			classes(oc)
		case slot == slotMobyInstances:
			w.s32(int32(len(d.Mobies)))
			w.s32(int32(len(d.Mobies)))
			w.s32(0)
			w.s32(0)
			for i, m := range d.Mobies {
				w.s32(MobyRecordSize)
				w.s32(m.Mission)
				w.s32(0)
				w.s32(0)
				w.s32(m.UID)
				w.s32(m.Bolts)
				for range 4 {
					w.s32(0)
				}
				w.s32(m.OClass)
				w.f32(m.Scale)
				w.s32(100)
				w.s32(120)
				w.s32(32)
				w.s32(64)
				w.fs(m.Position[:]...)
				w.fs(m.Rotation[:]...)
				w.s32(m.Group)
				w.s32(0)
				w.f32(0)
				w.s32(0)
				w.s32(out.MobyPvar[i])
				w.s32(0)
				w.s32(m.ModeBits)
				w.s32(m.LightColour[0])
				w.s32(m.LightColour[1])
				w.s32(m.LightColour[2])
				w.s32(m.Light)
				w.s32(0)
			}
		case slot == slotMobyGroups:
			groups(d.MobyGroups)
		case slot == slotSharedData:
			w.s32(int32(len(d.SharedData)))
			w.s32(0)
			w.s32(0)
			w.s32(0)
			w.b = append(w.b, d.SharedData...)
		case slot == slotPvarFixups, slot == slotPvarPointers:
			w.s32(-1)
			w.s32(-1)
		case slot == slotPvarTable:
			for _, e := range pvars {
				w.s32(e.off)
				w.s32(e.size)
			}
		case slot == slotPvarData:
			w.b = append(w.b, pvarData...)
		case slot >= slotCuboids && slot <= slotPills:
			vs := d.Volumes[slot-slotCuboids]
			w.table(len(vs))
			for _, m := range vs {
				mat(m)
				inv := Inverse3x4(m)
				w.fs(inv[:]...)
				w.fs(0, 0, 0, 0)
			}
		case slot == slotPaths:
			paths(d.Paths, false)
		case slot == slotGrindPaths:
			paths(d.GrindPaths, true)
		case slot == slotPointLights:
			w.table(len(d.PointLights))
			w.b = append(w.b, make([]byte, 0x800)...)
			for _, l := range d.PointLights {
				for _, v := range l {
					w.u16(v)
				}
				w.u16(0)
			}
		case slot == slotEnvTransitions:
			w.table(d.EnvTrans)
			for i := range d.EnvTrans {
				w.fs(float32(100*i), 0, 0, 40)
			}
			for i := range d.EnvTrans {
				m := [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, -float32(100 * i), 0, 0, 1}
				mat(m)
				w.b = append(w.b, 0x80, 0x80, 0x80, 0x80, 0x40, 0x40, 0x40, 0x80)
				w.s32(0)
				w.s32(1)
				w.u32(3)
				w.b = append(w.b, 10, 20, 30, 0x80, 40, 50, 60, 0x80)
				w.fs(10, 0, 200, 1, 20, 0, 300, 1)
				w.s32(0)
			}
		case slot == slotCameraGrid:
			w.table(0)
			w.b = append(w.b, make([]byte, 4*gridCells)...)
		case slot == slotEnvSamples:
			w.table(len(d.EnvSamples))
			for _, e := range d.EnvSamples {
				w.b = append(w.b, e[:]...)
			}
		case slot == slotOcclusion:
			w.s32(int32(d.Occlusion[0]))
			w.s32(int32(d.Occlusion[1]))
			w.s32(int32(d.Occlusion[2]))
			w.s32(0)
			for i := 0; i < d.Occlusion[0]+d.Occlusion[1]+d.Occlusion[2]; i++ {
				w.s32(int32(i))
				w.s32(int32(i * 7))
			}
		case slot == slotTieAmbient:
			for i := range d.Ties {
				if i%3 != 0 {
					continue
				}
				w.s16(int16(i))
				w.s16(4)
				for j := 0; j < 8; j++ {
					w.b = append(w.b, byte(i+j))
				}
			}
			w.s16(-1)
			w.s16(0)
		case slot == slotAreas:
			start := len(w.b)
			w.s32(0)
			base := len(w.b)
			w.s32(int32(len(d.Areas)))
			partAt := len(w.b)
			for range 7 {
				w.s32(0)
			}
			recAt := len(w.b)
			for range d.Areas {
				for range 12 {
					w.s32(0)
				}
			}
			for p := 0; p < 5; p++ {
				binary.LittleEndian.PutUint32(w.b[partAt+4*p:], uint32(len(w.b)-base))
				rel := 0
				for i, a := range d.Areas {
					r := recAt + 0x30*i
					binary.LittleEndian.PutUint16(w.b[r+0x10+2*p:], uint16(len(a.Links[p])))
					binary.LittleEndian.PutUint32(w.b[r+0x1c+4*p:], uint32(rel))
					for _, l := range a.Links[p] {
						w.s32(l)
					}
					rel += 4 * len(a.Links[p])
				}
			}
			for i, a := range d.Areas {
				r := recAt + 0x30*i
				for j, v := range a.Sphere {
					binary.LittleEndian.PutUint32(w.b[r+4*j:], math.Float32bits(v))
				}
			}
			binary.LittleEndian.PutUint32(w.b[start:], uint32(len(w.b)-start))
		}
	}
	w.pad(0x10)
	for i, o := range out.Offsets {
		binary.LittleEndian.PutUint32(w.b[4*i:], uint32(o))
	}
	out.Bytes = w.b
	return out
}
