package mkdisc

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gcfs/assets"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/levelscene"
)

// The sky block of a level's core (LEVEL-CORE §2.6), laid out by
// levelcore.BuildSky: textures (the first ones the sky's fx textures, one
// sharing another's palette) and GC shells of a few dome clusters each. Its
// own random stream, so that adding it changed nothing else of the core.

// coreSky is a level's sky block and its description.
func (g *gen) coreSky(row levelRow, small bool) ([]byte, *levelcore.SkyDesc, error) {
	rng := g.rng(row.File, "sky")
	n, sides, shells := 3, []int{8, 16, 32}, 2
	if !small {
		n, sides, shells = 8+rng.IntN(5), []int{32, 64}, 2+rng.IntN(2)
	}
	d := &levelcore.SkyDesc{Colour: [4]byte{byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256)), 0x80}, Fx: 1}
	for i := 0; i < n; i++ {
		w, h := sides[rng.IntN(len(sides))], sides[rng.IntN(len(sides))]
		t := levelcore.SkyTextureDesc{Width: w, Height: h, Pixels: corePixels(rng, w, h), Palette: corePalette(rng), SharePalette: -1}
		if i == n-1 {
			t.SharePalette, t.Palette = 1, nil // the last shares the second's palette
		}
		d.Textures = append(d.Textures, t)
	}
	for s := 0; s < shells; s++ {
		sh := levelcore.SkyShellDesc{Untextured: s == shells-1}
		for k := 0; k < 2+rng.IntN(3); k++ {
			sh.Clusters = append(sh.Clusters, skyCluster(rng, s, k, sh.Untextured, d.Fx, n))
		}
		d.Shells = append(d.Shells, sh)
	}
	b, err := levelcore.BuildSky(d)
	return b, d, err
}

// skyCluster is a band of a dome: a ring of quads between two elevations,
// textured with one of the shell textures (not the fx ones).
func skyCluster(rng *rand.Rand, shell, k int, untextured bool, fx, n int) levelcore.SkyClusterDesc {
	var c levelcore.SkyClusterDesc
	const seg = 6
	radius := float64(8 + 4*shell) // game units: × 1024 must fit an s16
	el0, el1 := float64(k)*0.3, float64(k+1)*0.3
	tex := uint8(fx + rng.IntN(n-fx))
	if untextured {
		tex = 0xff
	}
	for ring, el := range []float64{el0, el1} {
		for i := 0; i <= seg; i++ {
			az := float64(i) / seg * math.Pi / 2 * float64(1+k%4)
			x, y, z := radius*math.Cos(el)*math.Cos(az), radius*math.Cos(el)*math.Sin(az), radius*math.Sin(el)
			c.Vertices = append(c.Vertices, [4]int16{int16(x * 1024), int16(y * 1024), int16(z * 1024), 0x80})
			c.STs = append(c.STs, [2]int16{int16(i * 4096 / seg), int16(ring * 4096)})
		}
	}
	for i := 0; i < seg; i++ {
		a, b, cc, d := uint8(i), uint8(i+1), uint8(i+seg+1), uint8(i+seg+2)
		c.Tris = append(c.Tris, [4]uint8{a, b, cc, tex}, [4]uint8{b, d, cc, tex})
	}
	return c
}

// skyFiles are the files data.d/core/ shows of the sky d, laid out as
// block (paths relative to data.d/): sky.d/textures/NN.png, a PNG a texture
// def named by its def index, and sky.glb beside the block. The PNGs' bytes
// are kept in kept by path below core/.
func skyFiles(d *levelcore.SkyDesc, block []byte, kept map[string][]byte) ([]ManifestEntry, error) {
	var out []ManifestEntry
	pngs := map[int32][]byte{}
	for i, t := range d.Textures {
		pal := t.Palette
		if t.SharePalette >= 0 {
			pal = d.Textures[t.SharePalette].Palette
		}
		tex, err := assets.DecodeIndexed8(t.Width, t.Height, t.Pixels, pal)
		if err != nil {
			return nil, fmt.Errorf("sky texture %d: %w", i, err)
		}
		b := assets.EncodePNG(tex)
		pngs[int32(i)] = b
		kept[levelscene.SkyTexturePath(int32(i))] = b
		out = append(out, ManifestEntry{Path: "core/" + levelscene.SkyTexturePath(int32(i)), Size: int64(len(b)), SHA1: sha1Hex(b)})
	}
	glb, _, err := gltf.EncodeSky("sky", block, func(tex int32) ([]byte, error) {
		if b, ok := pngs[tex]; ok {
			return b, nil
		}
		return nil, fmt.Errorf("sky texture %d of %d", tex, len(pngs))
	})
	if err != nil {
		return nil, fmt.Errorf("sky.glb: %w", err)
	}
	out = append(out, ManifestEntry{Path: "core/sky.glb", Size: int64(len(glb)), SHA1: sha1Hex(glb)})
	return out, nil
}
