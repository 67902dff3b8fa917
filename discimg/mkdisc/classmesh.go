package mkdisc

import (
	"math/rand/v2"

	"gcfs/mesh"
)

// Class blocks whose meshes decode to known geometry (SPEC "The synthetic
// disc"): each moby, tie and shrub class of the level core is a few boxes,
// fans and strips over its texture slots, written in LEVEL-CORE §2's
// formats by package mesh's writers. The geometry is a function of the
// class's o_class, slot count and layout alone, so a test can make it again
// and compare it with what the blocks decode to.

// classRng is the class's own generator.
func classRng(kind string, oclass int32) *rand.Rand {
	h := uint64(oclass)
	for _, c := range kind {
		h = h*131 + uint64(c)
	}
	return rand.New(rand.NewPCG(h, 0x6d657368))
}

// classStrips are a class's strips over slots textures: a box (its faces
// cycling through the slots), a fan, and in the retail layout ribbons
// enough for a retail-like block (a few KiB).
func classStrips(rng *rand.Rand, slots int, small, list bool) []mesh.Strip {
	tex := make([]int32, slots)
	for i := range tex {
		tex[i] = int32(i)
	}
	c := func(r int) int16 { return int16(rng.IntN(2*r) - r) }
	s := mesh.Box([3]int16{c(2000), c(2000), c(2000)}, int16(200+rng.IntN(1500)), tex)
	s = append(s, mesh.Fan([3]int16{c(3000), c(3000), c(1000)}, int16(300+rng.IntN(1000)), 3+rng.IntN(6), tex[rng.IntN(slots)], list)...)
	ribbons := 0
	if !small {
		ribbons = 2 + rng.IntN(8)
	}
	for i := 0; i < ribbons; i++ {
		s = append(s, mesh.Ribbon([3]int16{c(4000), c(4000), c(4000)}, 6+rng.IntN(30), int16(50+rng.IntN(400)), int16(40+rng.IntN(300)), tex[rng.IntN(slots)]))
	}
	return s
}

// MobyGeometry is the geometry mkdisc writes for moby class oclass with
// slots texture slots: a high LOD of boxes, a fan and strips, and a low LOD
// of one box (one face untextured).
func MobyGeometry(oclass int32, slots int, small bool) *mesh.MobyClass {
	rng := classRng("moby", oclass)
	low := mesh.Box([3]int16{0, 0, 0}, int16(500+rng.IntN(1000)), []int32{0, -1, int32(slots - 1)})
	return &mesh.MobyClass{Scale: 0.25 + rng.Float32(), High: classStrips(rng, slots, small, false), Low: low}
}

// TieGeometry is the geometry mkdisc writes for tie class oclass.
func TieGeometry(oclass int32, slots int, small bool) *mesh.TieClass {
	rng := classRng("tie", oclass)
	return &mesh.TieClass{Scale: 0.5 + rng.Float32(), Slots: slots, Strips: classStrips(rng, slots, small, false)}
}

// ShrubGeometry is the geometry mkdisc writes for shrub class oclass (its
// fan a triangle list).
func ShrubGeometry(oclass int32, slots int, small bool) *mesh.ShrubClass {
	rng := classRng("shrub", oclass)
	return &mesh.ShrubClass{Scale: 0.5 + rng.Float32(), OClass: int16(oclass), Slots: slots, Strips: mesh.ForShrub(classStrips(rng, slots, small, true))}
}

// classBlock is the class block of a class of kind ("moby", "tie",
// "shrub"), or an error from its writer.
func classBlock(kind string, oclass int32, slots int, small bool) ([]byte, error) {
	switch kind {
	case "moby":
		return mesh.WriteMoby(MobyGeometry(oclass, slots, small))
	case "tie":
		return mesh.WriteTie(TieGeometry(oclass, slots, small))
	}
	return mesh.WriteShrub(ShrubGeometry(oclass, slots, small))
}
