package mesh

import "math"

// Primitives the synthetic disc's classes are made of (SPEC "The synthetic
// disc": boxes, fans, strips), as Strips in the class formats' s16 units.

// Box is an axis-aligned box of half-size h around c: six faces of one
// 4-vertex strip each, the faces' textures cycling through tex. Each face
// has its own normal (moby azimuth/elevation; Azimuth is also a shrub
// normal index of ShrubNormal's table) and UVs 0…1.
func Box(c [3]int16, h int16, tex []int32) []Strip {
	type face struct {
		n      [3]int16 // the axis the face looks along
		az, el uint8    // moby normal bytes for it
		shrubN uint8    // ShrubNormal index nearest it
	}
	faces := []face{
		{[3]int16{1, 0, 0}, 64, 0, 8},    // +x: azimuth π/2
		{[3]int16{-1, 0, 0}, 192, 0, 12}, // -x
		{[3]int16{0, 1, 0}, 0, 0, 10},    // +y: azimuth 0
		{[3]int16{0, -1, 0}, 128, 0, 14}, // -y
		{[3]int16{0, 0, 1}, 0, 64, 16},   // +z: elevation π/2
		{[3]int16{0, 0, -1}, 0, 192, 0},  // -z
	}
	var out []Strip
	for i, f := range faces {
		// two axes spanning the face
		var u, v [3]int16
		switch {
		case f.n[0] != 0:
			u, v = [3]int16{0, 1, 0}, [3]int16{0, 0, 1}
		case f.n[1] != 0:
			u, v = [3]int16{1, 0, 0}, [3]int16{0, 0, 1}
		default:
			u, v = [3]int16{1, 0, 0}, [3]int16{0, 1, 0}
		}
		corner := func(a, b int16) StripVertex {
			var p [3]int16
			for k := 0; k < 3; k++ {
				p[k] = c[k] + h*f.n[k] + a*h*u[k] + b*h*v[k]
			}
			st := [2]int16{(a + 1) / 2 * 4096, (b + 1) / 2 * 4096}
			return StripVertex{Pos: p, ST: st, Azimuth: f.az, Elevation: f.el}
		}
		s := Strip{Tex: tex[i%len(tex)], Verts: []StripVertex{corner(-1, -1), corner(1, -1), corner(-1, 1), corner(1, 1)}}
		for k := range s.Verts {
			s.Verts[k].shrub(f.shrubN)
		}
		out = append(out, s)
	}
	return out
}

// shrub keeps the moby normal bytes but records the shrub normal index in
// Azimuth when the caller writes a shrub (see ForShrub).
func (v *StripVertex) shrub(n uint8) { v.shrubN = n }

// ForShrub turns strips into a shrub's: each vertex's Azimuth becomes its
// shrub normal index.
func ForShrub(strips []Strip) []Strip {
	out := make([]Strip, len(strips))
	for i, s := range strips {
		s.Verts = append([]StripVertex(nil), s.Verts...)
		for k := range s.Verts {
			s.Verts[k].Azimuth, s.Verts[k].Elevation = s.Verts[k].shrubN, 0
		}
		out[i] = s
	}
	return out
}

// Fan is n triangles around centre c in the z = c.z plane, radius r: for
// shrubs (list) one triangle list, otherwise one 3-vertex strip a triangle,
// all sharing the centre vertex.
func Fan(c [3]int16, r int16, n int, tex int32, list bool) []Strip {
	rim := make([]StripVertex, n+1)
	for i := range rim {
		// a polygon of n sides, from a small integer table: no floats
		x, y := circle(i, n)
		rim[i] = StripVertex{Pos: [3]int16{c[0] + int16(int32(r)*x/1024), c[1] + int16(int32(r)*y/1024), c[2]},
			ST: [2]int16{int16(2048 + x*2), int16(2048 + y*2)}, Elevation: 64, shrubN: 16}
	}
	centre := StripVertex{Pos: c, ST: [2]int16{2048, 2048}, Elevation: 64, shrubN: 16}
	if list {
		s := Strip{Tex: tex, List: true}
		for i := 0; i < n; i++ {
			s.Verts = append(s.Verts, centre, rim[i], rim[i+1])
		}
		return []Strip{s}
	}
	var out []Strip
	for i := 0; i < n; i++ {
		out = append(out, Strip{Tex: tex, Verts: []StripVertex{centre, rim[i], rim[i+1]}})
	}
	return out
}

// circle is point i of a regular n-gon on a circle of radius 1024,
// rounded to integers (positions are stored as integers).
func circle(i, n int) (int32, int32) {
	a := 2 * math.Pi * float64(i) / float64(n)
	return int32(math.Round(1024 * math.Cos(a))), int32(math.Round(1024 * math.Sin(a)))
}

// Ribbon is a strip of n vertices (n-2 triangles) zig-zagging along x
// from p, width w, step d, waving in z.
func Ribbon(p [3]int16, n int, w, d int16, tex int32) Strip {
	s := Strip{Tex: tex}
	for i := 0; i < n; i++ {
		side := int16(i % 2)
		z := int16((i * 37) % 11)
		s.Verts = append(s.Verts, StripVertex{Pos: [3]int16{p[0] + int16(i/2)*d, p[1] + side*w, p[2] + z},
			ST: [2]int16{int16(i * 256), side * 4096}, Azimuth: uint8(i * 5), Elevation: uint8(i * 3), shrubN: uint8(i % 24)})
	}
	return s
}
