package gltf

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// The JSON chunk is written by hand, in the bytes encoding/json's Marshal
// gives the document's structs (their field order, omitempty, its number
// and string forms: TestDocumentJSONMatchesMarshal holds the two to each
// other). Marshal walks the structs by reflection, and sizing a tree's glb
// views plans every one of them: on the retail layout the document's
// Marshal was 12% of sizing them all (BenchmarkSizeAllRetail's profile).

// jsonOut appends a document's JSON; err is the first value JSON cannot
// hold (a NaN or an infinity), as Marshal's error would be.
type jsonOut struct {
	b   []byte
	err error
	// comma: the next member or element of the open object or array is
	// not its first.
	comma bool
}

func (w *jsonOut) open(c byte) {
	w.sep()
	w.b = append(w.b, c)
	w.comma = false
}

func (w *jsonOut) close(c byte) {
	w.b = append(w.b, c)
	w.comma = true
}

func (w *jsonOut) sep() {
	if w.comma {
		w.b = append(w.b, ',')
	}
}

// key opens member name (a Go string constant of plain ASCII: written
// as is).
func (w *jsonOut) key(name string) {
	w.sep()
	w.b = append(w.b, '"')
	w.b = append(w.b, name...)
	w.b = append(w.b, '"', ':')
	w.comma = false
}

func (w *jsonOut) int(k string, v int64) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, v, 10)
	w.comma = true
}

func (w *jsonOut) bool(k string, v bool) {
	w.key(k)
	w.b = strconv.AppendBool(w.b, v)
	w.comma = true
}

func (w *jsonOut) str(k, v string) {
	w.key(k)
	w.strValue(v)
}

// strValue writes v as Marshal does. Plain printable ASCII (every name
// gcfs gives) is copied; anything else (quotes, backslashes, control
// characters, HTML's <>&, non-ASCII, invalid UTF-8) is left to Marshal
// itself, whose escapes are the reference.
func (w *jsonOut) strValue(v string) {
	w.sep()
	plain := true
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			plain = false
			break
		}
	}
	if plain {
		w.b = append(w.b, '"')
		w.b = append(w.b, v...)
		w.b = append(w.b, '"')
	} else {
		q, _ := json.Marshal(v) // a string always marshals
		w.b = append(w.b, q...)
	}
	w.comma = true
}

// floatValue writes f as Marshal writes a float64: the shortest decimal
// that reads back as f, in exponent form below 1e-6 or from 1e21, the
// exponent without a leading zero.
func (w *jsonOut) floatValue(f float64) {
	w.sep()
	w.comma = true
	if math.IsNaN(f) || math.IsInf(f, 0) {
		if w.err == nil {
			w.err = fmt.Errorf("json: unsupported value: %v", f)
		}
		w.b = append(w.b, '0')
		return
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	w.b = strconv.AppendFloat(w.b, f, format, -1, 64)
	if format == 'e' {
		// e-07 → e-7
		if n := len(w.b); n >= 4 && w.b[n-4] == 'e' && w.b[n-3] == '-' && w.b[n-2] == '0' {
			w.b[n-2] = w.b[n-1]
			w.b = w.b[:n-1]
		}
	}
}

// floats writes a []float64 member; a nil one is null (a field without
// omitempty), as Marshal writes it.
func (w *jsonOut) floats(k string, v []float64) {
	w.key(k)
	if v == nil {
		w.null()
		return
	}
	w.open('[')
	for _, f := range v {
		w.floatValue(f)
	}
	w.close(']')
}

func (w *jsonOut) ints(k string, v []int) {
	w.key(k)
	if v == nil {
		w.null()
		return
	}
	w.open('[')
	for _, x := range v {
		w.sep()
		w.b = strconv.AppendInt(w.b, int64(x), 10)
		w.comma = true
	}
	w.close(']')
}

func (w *jsonOut) null() {
	w.b = append(w.b, "null"...)
	w.comma = true
}

// array writes member k, a slice of n elements each written by elem; a nil
// slice is null (nilSlice), where the field has no omitempty.
func (w *jsonOut) array(k string, n int, nilSlice bool, elem func(i int)) {
	w.key(k)
	if nilSlice {
		w.null()
		return
	}
	w.open('[')
	for i := 0; i < n; i++ {
		elem(i)
	}
	w.close(']')
}

// appendJSON appends d as json.Marshal(d) would.
func (d *document) appendJSON(b []byte) ([]byte, error) {
	w := &jsonOut{b: b}
	w.open('{')
	w.key("asset")
	w.open('{')
	w.str("version", d.Asset.Version)
	w.str("generator", d.Asset.Generator)
	w.close('}')
	if len(d.ExtensionsUsed) > 0 {
		w.array("extensionsUsed", len(d.ExtensionsUsed), false, func(i int) { w.strValue(d.ExtensionsUsed[i]) })
	}
	w.int("scene", int64(d.Scene))
	w.array("scenes", len(d.Scenes), d.Scenes == nil, func(i int) {
		w.open('{')
		if s := d.Scenes[i]; len(s.Nodes) > 0 {
			w.ints("nodes", s.Nodes)
		}
		w.close('}')
	})
	if len(d.Nodes) > 0 {
		w.array("nodes", len(d.Nodes), false, func(i int) { d.Nodes[i].appendJSON(w) })
	}
	if len(d.Meshes) > 0 {
		w.array("meshes", len(d.Meshes), false, func(i int) { d.Meshes[i].appendJSON(w) })
	}
	if len(d.Materials) > 0 {
		w.array("materials", len(d.Materials), false, func(i int) { d.Materials[i].appendJSON(w) })
	}
	if len(d.Textures) > 0 {
		w.array("textures", len(d.Textures), false, func(i int) {
			w.open('{')
			w.int("sampler", int64(d.Textures[i].Sampler))
			w.int("source", int64(d.Textures[i].Source))
			w.close('}')
		})
	}
	if len(d.Samplers) > 0 {
		w.array("samplers", len(d.Samplers), false, func(i int) {
			w.open('{')
			w.int("magFilter", int64(d.Samplers[i].MagFilter))
			w.int("minFilter", int64(d.Samplers[i].MinFilter))
			w.close('}')
		})
	}
	if len(d.Images) > 0 {
		w.array("images", len(d.Images), false, func(i int) {
			w.open('{')
			w.int("bufferView", int64(d.Images[i].BufferView))
			w.str("mimeType", d.Images[i].MimeType)
			w.close('}')
		})
	}
	if len(d.Accessors) > 0 {
		w.array("accessors", len(d.Accessors), false, func(i int) { d.Accessors[i].appendJSON(w) })
	}
	if len(d.BufferViews) > 0 {
		w.array("bufferViews", len(d.BufferViews), false, func(i int) {
			v := &d.BufferViews[i]
			w.open('{')
			w.int("buffer", int64(v.Buffer))
			w.int("byteOffset", v.ByteOffset)
			w.int("byteLength", v.ByteLength)
			if v.Target != 0 {
				w.int("target", int64(v.Target))
			}
			w.close('}')
		})
	}
	if len(d.Buffers) > 0 {
		w.array("buffers", len(d.Buffers), false, func(i int) {
			w.open('{')
			w.int("byteLength", d.Buffers[i].ByteLength)
			w.close('}')
		})
	}
	w.close('}')
	return w.b, w.err
}

func (n *docNode) appendJSON(w *jsonOut) {
	w.open('{')
	if n.Name != "" {
		w.str("name", n.Name)
	}
	if n.Mesh != nil {
		w.int("mesh", int64(*n.Mesh))
	}
	if len(n.Matrix) > 0 {
		w.floats("matrix", n.Matrix)
	}
	if len(n.Children) > 0 {
		w.ints("children", n.Children)
	}
	if n.Extensions != nil {
		w.key("extensions")
		w.open('{')
		w.key("KHR_node_visibility")
		w.open('{')
		w.bool("visible", n.Extensions.Visibility.Visible)
		w.close('}')
		w.close('}')
	}
	if n.Extras != nil {
		w.key("extras")
		w.open('{')
		w.bool("hidden", n.Extras.Hidden)
		w.close('}')
	}
	w.close('}')
}

func (m *docMesh) appendJSON(w *jsonOut) {
	w.open('{')
	if m.Name != "" {
		w.str("name", m.Name)
	}
	w.array("primitives", len(m.Primitives), m.Primitives == nil, func(i int) {
		p := &m.Primitives[i]
		w.open('{')
		w.key("attributes")
		w.open('{')
		w.int("POSITION", int64(p.Attributes.Position))
		if p.Attributes.Normal != nil {
			w.int("NORMAL", int64(*p.Attributes.Normal))
		}
		if p.Attributes.TexCoord0 != nil {
			w.int("TEXCOORD_0", int64(*p.Attributes.TexCoord0))
		}
		w.close('}')
		w.int("indices", int64(p.Indices))
		w.int("material", int64(p.Material))
		w.int("mode", int64(p.Mode))
		w.close('}')
	})
	w.close('}')
}

func (m *docMaterial) appendJSON(w *jsonOut) {
	w.open('{')
	if m.Name != "" {
		w.str("name", m.Name)
	}
	w.key("pbrMetallicRoughness")
	w.open('{')
	w.floats("baseColorFactor", m.PBR.BaseColorFactor)
	if t := m.PBR.BaseColorTexture; t != nil {
		w.key("baseColorTexture")
		w.open('{')
		w.int("index", int64(t.Index))
		w.close('}')
	}
	w.key("metallicFactor")
	w.floatValue(m.PBR.MetallicFactor)
	w.key("roughnessFactor")
	w.floatValue(m.PBR.RoughnessFactor)
	w.close('}')
	if m.AlphaMode != "" {
		w.str("alphaMode", m.AlphaMode)
	}
	w.bool("doubleSided", m.DoubleSided)
	w.close('}')
}

func (a *docAccessor) appendJSON(w *jsonOut) {
	w.open('{')
	w.int("bufferView", int64(a.BufferView))
	w.int("componentType", int64(a.ComponentType))
	w.int("count", int64(a.Count))
	w.str("type", a.Type)
	if len(a.Max) > 0 {
		w.floats("max", a.Max)
	}
	if len(a.Min) > 0 {
		w.floats("min", a.Min)
	}
	w.close('}')
}
