package mesh

import "fmt"

// ReadClass decodes the class block b of kind "moby", "tie" or "shrub"
// (mobies: the lod packet list; ties: LOD 0) with slots texture slots. A
// class whose mesh has no triangles (a moby without a packet table, a list
// of empty packets) is an error: it has nothing to show.
func ReadClass(kind string, lod LOD, b []byte, slots int) (*Mesh, error) {
	var m *Mesh
	var err error
	switch kind {
	case "moby":
		m, err = ReadMoby(b, lod, slots)
	case "tie":
		m, err = ReadTie(b, slots)
	case "shrub":
		m, err = ReadShrub(b, slots)
	default:
		return nil, fmt.Errorf("mesh: no reader for %q classes", kind)
	}
	if err != nil {
		return nil, err
	}
	if len(m.Triangles) == 0 {
		what := kind + " class"
		if kind == "moby" {
			what += " " + lod.String()
		}
		return nil, &Error{What: what, Offset: 0, Reason: "the class has no triangles"}
	}
	return m, nil
}
