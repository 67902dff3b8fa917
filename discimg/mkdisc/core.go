package mkdisc

import (
	"fmt"
	"math/rand/v2"
	"sort"

	"gcfs/assets"
	"gcfs/codec"
	"gcfs/discimg/levelcore"
	"gcfs/levelscene"
)

// The level core (SPEC "The tree, third edition", LEVEL-CORE §1): every
// level's core_index, core_data and gs_ram, laid out by levelcore.Build from
// a description made here, and the files the tree shows of it under
// data.d/core/ (their bytes and PNGs computed from the description, the
// generator's own knowledge, not read back).

// coreCounts are how many of each thing a level's core holds.
type coreCounts struct {
	mobies, ties, shrubs   int
	tfragTex               int
	mobyTex, tieTex, shrub int // texture table lengths
	pixels, palettes       int // distinct images and palettes in the pools
	partTex, particles     int
	fx                     int
	seqs                   int
	stashed                int // moby classes stashed
	noData                 int // moby classes listed without class data
	billboards             int
	maxSide                int // largest texture side (power of two)
}

func coreCountsOf(rng *rand.Rand, small bool) coreCounts {
	if small {
		return coreCounts{mobies: 4 + rng.IntN(3), ties: 2, shrubs: 2, tfragTex: 3, mobyTex: 6, tieTex: 2, shrub: 2,
			pixels: 8, palettes: 4, partTex: 3, particles: 4, fx: 8, seqs: 2, stashed: 1, noData: 1, billboards: 1, maxSide: 32}
	}
	m := 120 + rng.IntN(80)
	// slots are u8 indices below 0xff: a table holds at most 255 that
	// classes can name (the stashed classes' 2 each included)
	return coreCounts{mobies: m, ties: 30 + rng.IntN(30), shrubs: 20 + rng.IntN(20), tfragTex: 60 + rng.IntN(60),
		mobyTex: min(m*3/2, 255-2*14), tieTex: 60 + rng.IntN(40), shrub: 30 + rng.IntN(20), pixels: 260 + rng.IntN(80), palettes: 120 + rng.IntN(60),
		partTex: 40 + rng.IntN(20), particles: 0x6f, fx: 63, seqs: 20 + rng.IntN(20), stashed: 8 + rng.IntN(6), noData: 3,
		billboards: 12, maxSide: 128}
}

// corePixels is an image of w × h palette indices: gradients and bands
// with a little noise, compressible as texture pixels are.
func corePixels(rng *rand.Rand, w, h int) []byte {
	b := make([]byte, w*h)
	a, c, k := rng.IntN(5), rng.IntN(5), byte(rng.IntN(256))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			v := byte(x*a+y*c) + k
			if rng.IntN(16) == 0 {
				v = byte(rng.IntN(256))
			}
			b[y*w+x] = v
		}
	}
	return b
}

// corePalette is a stored palette: RGB ramps, PS2 alpha mostly 0x80 with
// some translucent entries (and a few above 0x80, which the alpha rule
// clamps).
func corePalette(rng *rand.Rand) []byte {
	p := make([]byte, levelcore.PaletteSize)
	r0, g0, b0 := rng.IntN(256), rng.IntN(256), rng.IntN(256)
	for i := 0; i < 256; i++ {
		p[4*i] = byte(r0 + i)
		p[4*i+1] = byte(g0 + 2*i)
		p[4*i+2] = byte(b0 - i)
		switch rng.IntN(8) {
		case 0:
			p[4*i+3] = byte(rng.IntN(0x80))
		case 1:
			p[4*i+3] = byte(0x80 + rng.IntN(0x80))
		default:
			p[4*i+3] = 0x80
		}
	}
	return p
}

// coreBlock is a block of n bytes: a zeroed header (so that a reader
// counting packets finds none: the meshes are placeholders for now) and
// compressible filler.
func coreBlock(rng *rand.Rand, n int) []byte {
	n = max(n, 0x40)
	b := codec.SampleData(int64(rng.Uint64()), n)
	clear(b[:0x40])
	return b
}

// levelCore is a level's core of about plain decoded bytes (the tfrag block
// takes what the rest leaves), and the files data.d/core/ shows of it.
func (g *gen) levelCore(row levelRow, plain int) (*levelcore.Built, []ManifestEntry, error) {
	rng := g.rng(row.File, "core")
	// the small layout's core, and the retail one's in tests that cap
	// every stream's content
	small := g.small() || testPlainCap > 0
	n := coreCountsOf(rng, small)
	d := &levelcore.Desc{}
	side := func() int { return 8 << rng.IntN(bitsLen(n.maxSide/8)) }
	type shape struct{ w, h int }
	shapes := make([]shape, n.pixels)
	for i := range shapes {
		shapes[i] = shape{side(), side()}
		d.Pixels = append(d.Pixels, corePixels(rng, shapes[i].w, shapes[i].h))
	}
	for i := 0; i < n.palettes; i++ {
		d.Palettes = append(d.Palettes, corePalette(rng))
	}
	// Texture tables: entries share images and palettes (several entries
	// on one image, most palettes used by several images).
	table := func(count int) []levelcore.TextureDesc {
		t := make([]levelcore.TextureDesc, count)
		for i := range t {
			p := rng.IntN(n.pixels)
			t[i] = levelcore.TextureDesc{Width: shapes[p].w, Height: shapes[p].h, Pixels: p, Palette: rng.IntN(n.palettes)}
		}
		return t
	}
	d.TfragTextures = table(n.tfragTex)
	d.TieTextures = table(n.tieTex)
	d.ShrubTextures = table(n.shrub)
	// Moby textures: the stashed classes use table entries of their own.
	stashedTex := 2 * n.stashed
	d.MobyTextures = table(n.mobyTex + stashedTex)
	slots := func(lo, count int) []int {
		k := 1 + rng.IntN(min(count, 4))
		s := make([]int, k)
		for i := range s {
			s[i] = lo + rng.IntN(count)
		}
		return s
	}
	blockSize := func(avg int) int { return avg/2 + rng.IntN(avg) }
	var err error
	oclass := 100 + rng.IntN(50)
	for i := 0; i < n.mobies; i++ {
		oclass += 1 + rng.IntN(5)
		c := levelcore.ClassDesc{OClass: int32(oclass)}
		if i < n.stashed {
			c.Stashed = true
			c.Slots = []int{n.mobyTex + 2*i, n.mobyTex + 2*i + 1}
		} else {
			c.Slots = slots(0, n.mobyTex)
		}
		if i < n.stashed || i >= n.stashed+n.noData { // the first unstashed ones: listed, no class data
			if c.Block, err = classBlock("moby", c.OClass, len(c.Slots), small); err != nil {
				return nil, nil, fmt.Errorf("%s moby class %d: %w", row.File, c.OClass, err)
			}
		}
		d.Mobies = append(d.Mobies, c)
	}
	oclass = 1000 + rng.IntN(100)
	for i := 0; i < n.ties; i++ {
		oclass += 1 + rng.IntN(3)
		c := levelcore.ClassDesc{OClass: int32(oclass), Slots: slots(0, n.tieTex)}
		if c.Block, err = classBlock("tie", c.OClass, len(c.Slots), small); err != nil {
			return nil, nil, fmt.Errorf("%s tie class %d: %w", row.File, c.OClass, err)
		}
		d.Ties = append(d.Ties, c)
	}
	oclass = 5000 + rng.IntN(100)
	for i := 0; i < n.shrubs; i++ {
		oclass += 1 + rng.IntN(3)
		c := levelcore.ClassDesc{OClass: int32(oclass), Slots: slots(0, n.shrub)}
		if c.Block, err = classBlock("shrub", c.OClass, len(c.Slots), small); err != nil {
			return nil, nil, fmt.Errorf("%s shrub class %d: %w", row.File, c.OClass, err)
		}
		if i < n.billboards {
			w, h := side(), side()
			c.Billboard = &levelcore.BillboardDesc{Width: w, Height: h, Pixels: corePixels(rng, w, h), Palette: corePalette(rng)}
		}
		d.Shrubs = append(d.Shrubs, c)
	}
	for i := 0; i < n.partTex; i++ {
		s := 8 << rng.IntN(3)
		d.PartTextures = append(d.PartTextures, levelcore.PartTextureDesc{Side: s, Pixels: corePixels(rng, s, s), Palette: corePalette(rng)})
	}
	for i := 0; i < n.particles; i++ {
		if rng.IntN(5) == 0 {
			d.Particles = append(d.Particles, nil) // no frames: offset 0
			continue
		}
		fr := make([]int, 1+rng.IntN(4))
		for k := range fr {
			fr[k] = rng.IntN(n.partTex)
		}
		d.Particles = append(d.Particles, fr)
	}
	for i := 0; i < n.fx; i++ {
		// No entry is written missing ({-1, -1, -1, -1}, what Wrench's packer
		// writes): Wrench's unpacker reads such an entry as a -1 × -1 image
		// and stops, and these levels must unpack in Wrench.
		w, h := 8<<rng.IntN(3), 8<<rng.IntN(3)
		d.Fx = append(d.Fx, levelcore.FxDesc{Width: w, Height: h, Pixels: corePixels(rng, w, h), Palette: corePalette(rng)})
	}
	for i := 0; i < n.seqs; i++ {
		d.RatchetSeqs[(i*37+rng.IntN(7))%256] = coreBlock(rng, blockSize(map[bool]int{true: 0x200, false: 6 << 10}[small]))
	}
	d.SoundRemap = levelcore.SoundRemapBlob(4+rng.IntN(12), func(i int) byte { return byte(i*3 + 1) })
	d.Occlusion = coreBlock(rng, blockSize(map[bool]int{true: 0x400, false: 24 << 10}[small]))
	d.Sky = coreBlock(rng, blockSize(map[bool]int{true: 0x800, false: 48 << 10}[small])) // (draws kept: the rest of the core stays as it was)
	sky, skyDesc, err := g.coreSky(row, small)
	if err != nil {
		return nil, nil, fmt.Errorf("%s sky: %w", row.File, err)
	}
	d.Sky = sky
	// tfrags and collision of known geometry (meshes.go)
	frags, cells := meshCounts(small)
	tfragSeed := rng.Uint32()
	d.Collision, _ = CollisionBlock(rng.Uint32(), cells, blockSize(map[bool]int{true: 0x1000, false: 200 << 10}[small]))
	d.Tfrags, _ = TfragsBlock(tfragSeed, frags, n.tfragTex, 0x1000)
	b, err := levelcore.Build(d)
	if err != nil {
		return nil, nil, fmt.Errorf("%s core: %w", row.File, err)
	}
	if testPlainCap > 0 {
		plain = min(plain, testPlainCap)
	}
	if rest := plain - len(b.Data); rest > 0 {
		// tfrags take the rest, as the core's tfrag region is padded to the
		// largest chunk's
		d.Tfrags, _ = TfragsBlock(tfragSeed, frags, n.tfragTex, 0x1000+rest)
		if b, err = levelcore.Build(d); err != nil {
			return nil, nil, fmt.Errorf("%s core: %w", row.File, err)
		}
	}
	pngs := map[string][]byte{}
	files, err := coreFiles(d, b, pngs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s core: %w", row.File, err)
	}
	sf, err := skyFiles(skyDesc, sky, pngs)
	if err != nil {
		return nil, nil, fmt.Errorf("%s core: %w", row.File, err)
	}
	files = append(files, sf...)
	g.levelDescs.Store(row.File, d) // the chunks' glbs embed its tfrag textures (meshes.go)
	g.levelPNGs.Store(row.File, pngs)
	return b, files, nil
}

func bitsLen(n int) int {
	k := 0
	for n > 1 {
		n >>= 1
		k++
	}
	return k + 1
}

// coreFiles are the files data.d/core/ shows (paths relative to data.d/):
// blocks as the ranges between consecutive block starts (the boundary rule
// on a core whose every block starts a new region), textures as the PNGs of
// the description's pixels and palettes (their bytes kept in pngs by path
// below core/).
func coreFiles(d *levelcore.Desc, b *levelcore.Built, pngs map[string][]byte) ([]ManifestEntry, error) {
	h := b.Header
	starts := []int64{int64(h.Tfrags), int64(h.Occlusion), int64(h.Sky), int64(h.Collision), int64(h.TexturesBase), int64(len(b.Data))}
	for _, at := range [][]int32{b.MobyAt, b.TieAt, b.ShrubAt, b.SeqAt[:]} {
		for _, o := range at {
			if o != 0 {
				starts = append(starts, int64(o))
			}
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	block := func(o int64) []byte {
		i := sort.Search(len(starts), func(i int) bool { return starts[i] > o })
		return b.Data[o:starts[i]]
	}
	var out []ManifestEntry
	file := func(path string, data []byte) {
		out = append(out, ManifestEntry{Path: "core/" + path, Size: int64(len(data)), SHA1: sha1Hex(data)})
	}
	var err error
	png := func(path string, w, hh int, pix, pal []byte) []byte {
		t, e := assets.DecodeIndexed8(w, hh, pix, pal)
		if e != nil {
			err = fmt.Errorf("%s: %w", path, e)
			return nil
		}
		b := assets.EncodePNG(t)
		file(path, b)
		pngs[path] = b
		return b
	}
	// tfrags runs to the next non-zero of occlusion, sky, collision
	tfragEnd := h.Collision
	if h.Sky != 0 {
		tfragEnd = h.Sky
	}
	if h.Occlusion != 0 {
		tfragEnd = h.Occlusion
	}
	file("tfrags", b.Data[h.Tfrags:tfragEnd])
	var collision []byte
	for _, blk := range []struct {
		name string
		at   int32
	}{{"occlusion", h.Occlusion}, {"sky", h.Sky}, {"collision", h.Collision}} {
		if blk.at != 0 {
			file(blk.name, block(int64(blk.at)))
			if blk.name == "collision" {
				collision = block(int64(blk.at))
			}
		}
	}
	glbs, gerr := meshFiles("core/", d, b.Data[h.Tfrags:tfragEnd], collision) // meshes.go
	if gerr != nil {
		return nil, gerr
	}
	out = append(out, glbs...)
	tex := func(t levelcore.TextureDesc) (int, int, []byte, []byte) {
		return t.Width, t.Height, d.Pixels[t.Pixels], d.Palettes[t.Palette]
	}
	for i, t := range d.TfragTextures {
		w, hh, pix, pal := tex(t)
		png(levelscene.TfragTexturePath(int32(i)), w, hh, pix, pal)
	}
	classes := []struct {
		dir  string
		cs   []levelcore.ClassDesc
		at   []int32
		tabs []levelcore.TextureDesc
	}{{"mobies", d.Mobies, b.MobyAt, d.MobyTextures}, {"ties", d.Ties, b.TieAt, d.TieTextures}, {"shrubs", d.Shrubs, b.ShrubAt, d.ShrubTextures}}
	for _, k := range classes {
		for i, c := range k.cs {
			dir := fmt.Sprintf("%s/%04d/", k.dir, c.OClass)
			if k.at[i] != 0 {
				file(dir+"class", block(int64(k.at[i])))
			}
			pngs := make([][]byte, len(c.Slots))
			for s, ti := range c.Slots {
				w, hh, pix, pal := tex(k.tabs[ti])
				pngs[s] = png(fmt.Sprintf("%s%02d.png", dir, s), w, hh, pix, pal)
			}
			if k.at[i] != 0 {
				glbs, e := classGLBs(dir, k.dir, c.OClass, block(int64(k.at[i])), pngs)
				if e != nil {
					return nil, e
				}
				out = append(out, glbs...)
			}
			if bb := c.Billboard; bb != nil {
				png(dir+"billboard.png", bb.Width, bb.Height, bb.Pixels, bb.Palette)
			}
		}
	}
	for p, frames := range d.Particles {
		for f, ti := range frames {
			pt := d.PartTextures[ti]
			png(fmt.Sprintf("particles/%03d/%02d.png", p, f), pt.Side, pt.Side, pt.Pixels, pt.Palette)
		}
	}
	for i, f := range d.Fx {
		if f.Width == 0 {
			continue
		}
		name := fmt.Sprintf("fx/%02d", i)
		if n := levelcore.FxName(i); n != "" {
			name += "_" + n
		}
		png(name+".png", f.Width, f.Height, f.Pixels, f.Palette)
	}
	for i, o := range b.SeqAt {
		if o != 0 {
			file(fmt.Sprintf("ratchet_seqs/%03d", i), block(int64(o)))
		}
	}
	if d.SoundRemap != nil {
		file("sound_remap", d.SoundRemap)
	}
	return out, err
}
