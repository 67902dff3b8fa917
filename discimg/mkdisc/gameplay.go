package mkdisc

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"

	"gcfs/codec"
	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/levelscene"
)

// A level's gameplay (LEVEL-CORE §3): every block of the layout, written by
// package gameplay's Builder, with instances of the classes the level's
// core holds (retail-like counts on the retail layout), so that the tree's
// gameplay.d/ and gameplay.json, and Wrench's unpacker, read it. Shared data
// takes what the instances leave of the stream's planned size (compressible
// filler), so the streams stay as long as before.

// levelClasses are the o_class values of a level core's classes.
type levelClasses struct{ mobies, ties, shrubs []int32 }

func classesOf(lc *levelcore.Built) levelClasses {
	var cl levelClasses
	if lc != nil {
		if c, err := levelcore.Read(lc.Index, int64(len(lc.GS))); err == nil {
			for _, k := range c.Mobies {
				cl.mobies = append(cl.mobies, k.OClass)
			}
			for _, k := range c.Ties {
				cl.ties = append(cl.ties, k.OClass)
			}
			for _, k := range c.Shrubs {
				cl.shrubs = append(cl.shrubs, k.OClass)
			}
		}
	}
	if len(cl.mobies) == 0 {
		cl.mobies = []int32{100}
	}
	if len(cl.ties) == 0 {
		cl.ties = []int32{1000}
	}
	if len(cl.shrubs) == 0 {
		cl.shrubs = []int32{5000}
	}
	return cl
}

func (g *gen) gameplayLump(row levelRow, capacity int64, data *lumpContent) (*lumpContent, error) {
	rng := g.rng(row.File, "gameplay")
	small := 20<<10 + rng.IntN(12<<10)
	if row.File == "LEVEL0.WAD" {
		small = 1280<<10 + rng.IntN(64<<10) // past one 1 MiB FUSE read, many decoded blocks
	}
	plain := g.plain(int(float64(capacity)*1.6), small)
	var core *levelcore.Built
	if data != nil {
		core = data.core
	}
	cl := classesOf(core)
	retail := !g.small() && testPlainCap == 0
	st, err := makeStreamOf(rng, "gameplay", min(plain, 2<<20), capacity-1, func(rng *rand.Rand, n int) ([]byte, []treeEntry) {
		return gameplayContent(rng, n, cl, retail)
	})
	if err != nil {
		return nil, err
	}
	l := &lumpContent{decoded: &st, parts: st.parts}
	l.f.size = int64(len(st.data))
	l.f.put(0, st.data)
	return l, nil
}

// gameplayCounts are how many of each thing a level's gameplay holds.
type gameplayCounts struct {
	mobies, ties, shrubs, cameras, sounds, dirLights int
	volumes                                          [4]int
	paths, grind, pointLights, envSamples, envTrans  int
	help, areas, mobyGroups, tieGroups, shrubGroups  int
}

func gameplayCountsOf(rng *rand.Rand, retail bool) gameplayCounts {
	if !retail {
		return gameplayCounts{mobies: 12 + rng.IntN(8), ties: 4 + rng.IntN(4), shrubs: 5 + rng.IntN(4), cameras: 2, sounds: 3, dirLights: 2,
			volumes: [4]int{3, 1, 1, 1}, paths: 2, grind: 1, pointLights: 2, envSamples: 3, envTrans: 1, help: 4, areas: 2,
			mobyGroups: 2, tieGroups: 1, shrubGroups: 1}
	}
	return gameplayCounts{mobies: 350 + rng.IntN(400), ties: 120 + rng.IntN(200), shrubs: 200 + rng.IntN(300),
		cameras: 20 + rng.IntN(30), sounds: 30 + rng.IntN(50), dirLights: 4 + rng.IntN(6),
		volumes: [4]int{60 + rng.IntN(100), 10 + rng.IntN(20), 10 + rng.IntN(20), 5 + rng.IntN(10)},
		paths:   20 + rng.IntN(30), grind: 3 + rng.IntN(6), pointLights: 10 + rng.IntN(50), envSamples: 50 + rng.IntN(150),
		envTrans: 2 + rng.IntN(6), help: 60 + rng.IntN(60), areas: 5 + rng.IntN(10),
		mobyGroups: 10 + rng.IntN(20), tieGroups: 3 + rng.IntN(5), shrubGroups: 3 + rng.IntN(5)}
}

func (c *gameplayCounts) halve() {
	for _, p := range []*int{&c.mobies, &c.ties, &c.shrubs, &c.cameras, &c.sounds, &c.dirLights, &c.volumes[0], &c.volumes[1],
		&c.volumes[2], &c.volumes[3], &c.paths, &c.grind, &c.pointLights, &c.envSamples, &c.envTrans, &c.help, &c.areas,
		&c.mobyGroups, &c.tieGroups, &c.shrubGroups} {
		*p = max(1, *p/2)
	}
}

// gameplayContent is a gameplay stream of about n bytes (more when even the
// fewest instances need more) and its blocks as parts (gameplay.d/).
func gameplayContent(rng *rand.Rand, n int, cl levelClasses, retail bool) ([]byte, []treeEntry) {
	counts := gameplayCountsOf(rng, retail)
	seed := rng.Uint64()
	var b *gameplay.Built
	for try := 0; ; try++ {
		d := gameplayDesc(rand.New(rand.NewPCG(seed, 7)), counts, cl)
		b = gameplay.Build(d)
		// the small layout's counts are its own; the retail ones halve until
		// the stream fits its planned size (a fixed 16 KiB camera grid and
		// 2 KiB of point light masks are in every stream)
		if len(b.Bytes) <= n || try == 8 || !retail {
			if rest := n - len(b.Bytes); rest > 0 {
				d.SharedData = codec.SampleData(int64(seed), rest&^15)
				b = gameplay.Build(d)
			}
			break
		}
		counts.halve()
	}
	plain := b.Bytes
	_, blocks, probs, err := gameplay.HeaderBlocks(plain, int64(len(plain)))
	if err != nil || len(probs) > 0 {
		panic(fmt.Sprintf("mkdisc: the gameplay it wrote does not read: %v %v", err, probs))
	}
	parts := make([]treeEntry, 0, len(blocks))
	for _, bl := range blocks {
		parts = append(parts, treeEntry{name: bl.Name, off: bl.Offset, n: bl.Size, sum: sha1Hex(plain[bl.Offset : bl.Offset+bl.Size])})
	}
	return plain, parts
}

func placeMatrix(rng *rand.Rand, spread float32, scale float32) [16]float32 {
	a := rng.Float64() * 2 * math.Pi
	c, s := float32(math.Cos(a))*scale, float32(math.Sin(a))*scale
	p := func() float32 { return (rng.Float32()*2 - 1) * spread }
	return [16]float32{c, s, 0, 0, -s, c, 0, 0, 0, 0, scale, 0, p(), p(), rng.Float32() * spread / 4, 0.01}
}

var helpWords = []string{"Ratchet", "Clank", "bolts", "press", "to", "jump", "the", "Gadgetron", "wrench", "swingshot",
	"Thugs-4-Less", "hoverbike", "race", "Protopet", "glide", "find", "vendor", "ammo", "Endako", "Maktar"}

func gameplayDesc(rng *rand.Rand, n gameplayCounts, cl levelClasses) *gameplay.Desc {
	d := &gameplay.Desc{CoreSounds: int32(rng.IntN(20)), DeathHeight: -float32(rng.IntN(200)),
		Occlusion: [3]int{rng.IntN(8), rng.IntN(8), rng.IntN(8)}}
	f := func(lo, hi float32) float32 { return lo + rng.Float32()*(hi-lo) }
	for i := 0; i < n.mobies; i++ {
		m := gameplay.MobyDesc{UID: int32(i*3 + 1 + rng.IntN(3)), OClass: cl.mobies[rng.IntN(len(cl.mobies))], Group: -1,
			Mission: int32(rng.IntN(4) - 1), Bolts: int32(rng.IntN(3) * 25),
			Position: [3]float32{f(-500, 500), f(-500, 500), f(-20, 120)}, Rotation: [3]float32{f(-0.3, 0.3), f(-0.3, 0.3), f(-math.Pi, math.Pi)},
			Scale: f(0.5, 2), LightColour: [3]int32{int32(rng.IntN(256)), int32(rng.IntN(256)), int32(rng.IntN(256))}, Light: int32(rng.IntN(max(1, n.dirLights)))}
		// a pvar's size is its class's (Wrench refuses a class whose
		// instances' pvars differ in size): so is whether it has one
		if m.OClass%5 < 3 {
			p := make([]byte, 0x20+0x10*int(m.OClass%12))
			for j := range p {
				p[j] = byte(rng.IntN(16))
			}
			m.Pvar = p
		}
		d.Mobies = append(d.Mobies, m)
	}
	group := func(count, instances int, mark func(inst, g int)) [][]int {
		var gs [][]int
		used := map[int]bool{}
		for gi := 0; gi < count; gi++ {
			var members []int
			for k := 0; k < 1+rng.IntN(6); k++ {
				if m := rng.IntN(instances); !used[m] {
					used[m] = true
					members = append(members, m)
					if mark != nil {
						mark(m, gi)
					}
				}
			}
			gs = append(gs, members)
		}
		return gs
	}
	d.MobyGroups = group(n.mobyGroups, n.mobies, func(m, g int) { d.Mobies[m].Group = int32(g) })
	for i := 0; i < n.ties; i++ {
		d.Ties = append(d.Ties, gameplay.TieDesc{OClass: cl.ties[rng.IntN(len(cl.ties))], UID: int32(i), OcclusionIndex: int32(i),
			Matrix: placeMatrix(rng, 500, f(0.8, 1.5))})
	}
	d.TieGroups = group(n.tieGroups, n.ties, nil)
	for i := 0; i < n.shrubs; i++ {
		d.Shrubs = append(d.Shrubs, gameplay.ShrubDesc{OClass: cl.shrubs[rng.IntN(len(cl.shrubs))], Matrix: placeMatrix(rng, 500, f(0.5, 2)),
			Colour: [3]int32{int32(rng.IntN(256)), int32(rng.IntN(256)), int32(rng.IntN(256))}})
	}
	d.ShrubGroups = group(n.shrubGroups, n.shrubs, nil)
	for i := 0; i < n.cameras; i++ {
		c := gameplay.CameraDesc{Type: int32(rng.IntN(8)), Position: [3]float32{f(-500, 500), f(-500, 500), f(0, 100)}, Rotation: [3]float32{0, f(-1, 1), f(-math.Pi, math.Pi)}}
		if c.Type%2 == 0 {
			c.Pvar = make([]byte, 0x10)
			c.Pvar[0] = byte(i)
		}
		d.Cameras = append(d.Cameras, c)
	}
	for i := 0; i < n.sounds; i++ {
		s := gameplay.SoundDesc{OClass: int16(rng.IntN(50)), MClass: int16(rng.IntN(200)), Range: f(10, 80), Matrix: placeMatrix(rng, 500, 1)}
		s.Matrix[15] = 1
		if s.OClass%3 == 0 {
			s.Pvar = []byte{byte(i), 0, 0, 0, 1, 0, 0, 0}
		}
		d.Sounds = append(d.Sounds, s)
	}
	for i := 0; i < n.dirLights; i++ {
		d.DirLights = append(d.DirLights, [4][4]float32{{f(0, 1), f(0, 1), f(0, 1), 1}, {0, 0, -1, 0}, {f(0, 1), f(0, 1), f(0, 1), 1}, {1, 0, 0, 0}})
	}
	for k := range d.Volumes {
		for i := 0; i < n.volumes[k]; i++ {
			m := placeMatrix(rng, 500, f(2, 30))
			m[15] = 1
			d.Volumes[k] = append(d.Volumes[k], m)
		}
	}
	spline := func() [][4]float32 {
		var p [][4]float32
		x, y, z := f(-500, 500), f(-500, 500), f(0, 50)
		for j := 0; j < 3+rng.IntN(16); j++ {
			x, y, z = x+f(-20, 20), y+f(-20, 20), z+f(-2, 2)
			p = append(p, [4]float32{x, y, z, float32(j)})
		}
		return p
	}
	for i := 0; i < n.paths; i++ {
		d.Paths = append(d.Paths, spline())
	}
	for i := 0; i < n.grind; i++ {
		d.GrindPaths = append(d.GrindPaths, spline())
	}
	for i := 0; i < min(n.pointLights, 128); i++ {
		d.PointLights = append(d.PointLights, [7]uint16{uint16(rng.IntN(1 << 16)), uint16(rng.IntN(1 << 16)), uint16(rng.IntN(1 << 14)),
			uint16(640 + rng.IntN(2000)), uint16(rng.IntN(1 << 16)), uint16(rng.IntN(1 << 16)), uint16(rng.IntN(1 << 16))})
	}
	for i := 0; i < n.envSamples; i++ {
		var e [0x20]byte
		for j := 4; j < 0x1e; j++ {
			e[j] = byte(rng.IntN(256))
		}
		d.EnvSamples = append(d.EnvSamples, e)
	}
	d.EnvTrans = n.envTrans
	for lang := range d.Help {
		for i := 0; i < n.help; i++ {
			if rng.IntN(10) == 0 {
				d.Help[lang] = append(d.Help[lang], gameplay.HelpDesc{ID: int16(i)})
				continue
			}
			var t bytes.Buffer
			fmt.Fprintf(&t, "%d:", lang)
			for w := 0; w < 3+rng.IntN(10); w++ {
				t.WriteByte(' ')
				t.WriteString(helpWords[rng.IntN(len(helpWords))])
			}
			if rng.IntN(8) == 0 {
				t.WriteByte(byte(0x80 + rng.IntN(0x7f))) // the game's own character codes: not UTF-8
			}
			d.Help[lang] = append(d.Help[lang], gameplay.HelpDesc{ID: int16(i), Text: t.Bytes()})
		}
	}
	for i := 0; i < n.areas; i++ {
		a := gameplay.AreaDesc{Sphere: [4]float32{f(-500, 500), f(-500, 500), 0, f(50, 300)}}
		counts := [5]int{n.paths, n.volumes[0], n.volumes[1], n.volumes[2], n.volumes[0]}
		for p := range a.Links {
			for k := 0; k < rng.IntN(4) && counts[p] > 0; k++ {
				a.Links[p] = append(a.Links[p], int32(rng.IntN(counts[p])))
			}
		}
		d.Areas = append(d.Areas, a)
	}
	return d
}

// gameplayJSON is the tree's gameplay.json of a gameplay stream.
func gameplayJSON(path string, plain []byte) []byte {
	g, err := gameplay.Read(plain)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: %s: the gameplay it wrote does not read: %v", path, err))
	}
	if len(g.Problems) > 0 {
		panic(fmt.Sprintf("mkdisc: %s: the gameplay it wrote has problems: %v", path, g.ProblemLines()))
	}
	var b bytes.Buffer
	if err := gameplay.WriteJSON(&b, g.Doc); err != nil {
		panic(err)
	}
	return b.Bytes()
}

// levelGLB is the tree's G/LEVELn.WAD/level.glb of a level whose lumps are
// built (package levelscene over the same decoded bytes the tree reads, its
// materials embedding the PNGs coreFiles and skyFiles made).
func (g *gen) levelGLB(row levelRow, lumps [levelSlots]*lumpContent) []ManifestEntry {
	gp, data := lumps[slotGameplay], lumps[slotData]
	if gp == nil || gp.decoded == nil || data == nil || data.core == nil {
		return nil
	}
	core, err := levelcore.Read(data.core.Index, data.coreGS)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: %s: its core does not read: %v", row.File, err))
	}
	in := levelscene.Input{Gameplay: gp.decoded.plain, Core: core, CoreData: data.core.Data}
	var pngs map[string][]byte
	if v, ok := g.levelPNGs.LoadAndDelete(row.File); ok {
		pngs = v.(map[string][]byte)
	}
	in.Texture = func(path string, mat *gltf.Material) error {
		b, ok := pngs[path]
		if !ok {
			return fmt.Errorf("no %s in the core", path)
		}
		mat.PNG = b
		return nil
	}
	for k := 0; k < 3; k++ {
		var ch [2][]byte
		if l := lumps[slotChunk0+k]; l != nil && l.chunk[0] != nil {
			ch = [2][]byte{l.chunk[0].plain, l.chunk[1].plain}
		}
		in.Chunks = append(in.Chunks, ch)
	}
	res, err := levelscene.Build(in)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: %s: no level scene: %v", row.File, err))
	}
	b, err := gltf.Encode(res.Scene)
	if err != nil {
		panic(fmt.Sprintf("mkdisc: %s: level.glb: %v", row.File, err))
	}
	return []ManifestEntry{{Path: "level.glb", Size: int64(len(b)), SHA1: sha1Hex(b)}}
}
