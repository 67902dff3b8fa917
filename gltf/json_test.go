package gltf

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"testing"
)

// randomDocument is a document whose every field is drawn: present or
// absent (nil, empty, zero), strings of any bytes (escapes, HTML
// characters, non-ASCII, invalid UTF-8), floats of every magnitude (the
// exponent form's edges, subnormals, -0).
func randomDocument(r *rand.Rand) *document {
	str := func() string {
		switch r.Intn(4) {
		case 0:
			return ""
		case 1:
			return "moby_1234_slot5"
		}
		alphabet := []string{"a", "Z", "0", "_", " ", "\"", "\\", "/", "<", ">", "&", "\n", "\t", "\b", "\f", "\x00", "\x1f", "\x7f",
			"é", "\u2028", "\u2029", "\xff", "\xc3", "😀", "\ufffd"}
		var b []byte
		for i := r.Intn(8); i > 0; i-- {
			b = append(b, alphabet[r.Intn(len(alphabet))]...)
		}
		return string(b)
	}
	float := func() float64 {
		switch r.Intn(10) {
		case 0:
			return 0
		case 1:
			return math.Copysign(0, -1)
		case 2:
			return []float64{1e-6, 9.999999e-7, 1e21, 9.99999e20, 1e-7, 1e-10, 1e-300, 5e-324, math.MaxFloat64, math.SmallestNonzeroFloat32}[r.Intn(10)] * []float64{1, -1}[r.Intn(2)]
		case 3:
			return float64(math.Float32frombits(r.Uint32())) // any float32 (as the writer's bounds are)
		case 4:
			return math.Float64frombits(r.Uint64())
		case 5:
			return float64(r.Intn(2000) - 1000)
		}
		return (r.Float64() - 0.5) * math.Pow(10, float64(r.Intn(40)-20))
	}
	floats := func() []float64 {
		switch r.Intn(4) {
		case 0:
			return nil
		case 1:
			return []float64{}
		}
		v := make([]float64, r.Intn(17))
		for i := range v {
			v[i] = float()
			for math.IsNaN(v[i]) || math.IsInf(v[i], 0) {
				v[i] = float()
			}
		}
		return v
	}
	ints := func() []int {
		switch r.Intn(4) {
		case 0:
			return nil
		case 1:
			return []int{}
		}
		v := make([]int, r.Intn(6))
		for i := range v {
			v[i] = r.Intn(1<<20) - 10
		}
		return v
	}
	some := func(n int) int { // a count: 0 as often as not
		if r.Intn(2) == 0 {
			return 0
		}
		return 1 + r.Intn(n)
	}
	ptr := func() *int {
		if r.Intn(2) == 0 {
			return nil
		}
		v := r.Intn(100000) - 5
		return &v
	}
	d := &document{Asset: docAsset{Version: "2.0", Generator: str()}, Scene: r.Intn(3)}
	if r.Intn(3) == 0 {
		d.ExtensionsUsed = []string{str(), "KHR_node_visibility"}[:1+r.Intn(2)]
	}
	if r.Intn(4) > 0 {
		d.Scenes = make([]docScene, some(3))
		for i := range d.Scenes {
			d.Scenes[i].Nodes = ints()
		}
	}
	d.Nodes = make([]docNode, some(6))
	for i := range d.Nodes {
		n := &d.Nodes[i]
		n.Name, n.Mesh, n.Matrix, n.Children = str(), ptr(), floats(), ints()
		if r.Intn(3) == 0 {
			n.Extensions = &docNodeExt{Visibility: docVisibility{Visible: r.Intn(2) == 0}}
		}
		if r.Intn(3) == 0 {
			n.Extras = &docHiddenExtra{Hidden: r.Intn(2) == 0}
		}
	}
	d.Meshes = make([]docMesh, some(4))
	for i := range d.Meshes {
		m := &d.Meshes[i]
		m.Name = str()
		if r.Intn(5) > 0 {
			m.Primitives = make([]docPrimitive, some(4))
		}
		for j := range m.Primitives {
			m.Primitives[j] = docPrimitive{Attributes: docAttributes{Position: r.Intn(50), Normal: ptr(), TexCoord0: ptr()},
				Indices: r.Intn(90), Material: r.Intn(9) - 1, Mode: r.Intn(7)}
		}
	}
	d.Materials = make([]docMaterial, some(4))
	for i := range d.Materials {
		m := &d.Materials[i]
		m.Name, m.AlphaMode, m.DoubleSided = str(), str(), r.Intn(2) == 0
		m.PBR = docPBR{BaseColorFactor: floats(), MetallicFactor: float(), RoughnessFactor: float()}
		for math.IsNaN(m.PBR.MetallicFactor) || math.IsInf(m.PBR.MetallicFactor, 0) {
			m.PBR.MetallicFactor = float()
		}
		for math.IsNaN(m.PBR.RoughnessFactor) || math.IsInf(m.PBR.RoughnessFactor, 0) {
			m.PBR.RoughnessFactor = float()
		}
		if r.Intn(2) == 0 {
			m.PBR.BaseColorTexture = &docTexRef{Index: r.Intn(20)}
		}
	}
	d.Textures = make([]docTexture, some(3))
	for i := range d.Textures {
		d.Textures[i] = docTexture{Sampler: r.Intn(2), Source: r.Intn(40)}
	}
	d.Samplers = make([]docSampler, some(2))
	for i := range d.Samplers {
		d.Samplers[i] = docSampler{MagFilter: 9729 * r.Intn(2), MinFilter: 9987}
	}
	d.Images = make([]docImage, some(3))
	for i := range d.Images {
		d.Images[i] = docImage{BufferView: r.Intn(70), MimeType: str()}
	}
	d.Accessors = make([]docAccessor, some(6))
	for i := range d.Accessors {
		d.Accessors[i] = docAccessor{BufferView: r.Intn(70), ComponentType: 5126, Count: r.Intn(1 << 24), Type: str(), Max: floats(), Min: floats()}
	}
	d.BufferViews = make([]docBufferView, some(6))
	for i := range d.BufferViews {
		d.BufferViews[i] = docBufferView{Buffer: r.Intn(2), ByteOffset: r.Int63(), ByteLength: r.Int63n(1 << 40), Target: []int{0, targetArray, targetElement}[r.Intn(3)]}
	}
	if r.Intn(2) == 0 {
		d.Buffers = []docBuffer{{ByteLength: r.Int63()}}
	}
	return d
}

// TestDocumentJSONMatchesMarshal: the hand-written JSON is byte for byte
// encoding/json's Marshal of the same document, over documents with
// every field drawn (randomDocument).
func TestDocumentJSONMatchesMarshal(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for i := 0; i < 20000; i++ {
		d := randomDocument(r)
		want, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("document %d: Marshal: %v", i, err)
		}
		got, err := d.appendJSON(nil)
		if err != nil {
			t.Fatalf("document %d: appendJSON: %v", i, err)
		}
		if !bytes.Equal(got, want) {
			at := 0
			for at < len(got) && at < len(want) && got[at] == want[at] {
				at++
			}
			t.Fatalf("document %d differs at byte %d:\n got %q\nwant %q", i, at, got[max(0, at-40):min(len(got), at+40)], want[max(0, at-40):min(len(want), at+40)])
		}
	}
}

// TestDocumentJSONRefusesNonFinite: a NaN or an infinity in a float is an
// error, as Marshal's.
func TestDocumentJSONRefusesNonFinite(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		d := &document{Materials: []docMaterial{{PBR: docPBR{BaseColorFactor: []float64{1, f, 0, 1}}}}}
		if _, err := json.Marshal(d); err == nil {
			t.Fatalf("test setup: Marshal took %v", f)
		}
		if _, err := d.appendJSON(nil); err == nil {
			t.Errorf("appendJSON took %v", f)
		}
	}
}

// FuzzDocumentJSON: documents drawn from the fuzzer's seed match Marshal.
func FuzzDocumentJSON(f *testing.F) {
	f.Add(int64(1))
	f.Add(int64(-99))
	f.Fuzz(func(t *testing.T, seed int64) {
		d := randomDocument(rand.New(rand.NewSource(seed)))
		want, err := json.Marshal(d)
		if err != nil {
			t.Skip() // (randomDocument draws only finite floats)
		}
		got, err := d.appendJSON(nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("seed %d: %v\n got %s\nwant %s", seed, err, got, want)
		}
	})
}
