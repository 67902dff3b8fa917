package gameplay

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"math/rand"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func testDesc() *Desc {
	d := &Desc{CoreSounds: 3, DeathHeight: -50, Occlusion: [3]int{2, 1, 1}, SharedData: []byte("shared!!")}
	for i := 0; i < 6; i++ {
		m := MobyDesc{UID: int32(1000 + i), OClass: int32(100 + i%3), Group: -1, Scale: 1 + float32(i)/4,
			Position: [3]float32{float32(i), 2 * float32(i), -3}, Rotation: [3]float32{0.1, 0.2 * float32(i), -0.3}, Light: 0}
		if i%2 == 0 {
			m.Pvar = []byte{byte(i), 1, 2, 3, 4, 5, 6, 7}
		}
		if i < 3 {
			m.Group = 0
		}
		d.Mobies = append(d.Mobies, m)
	}
	d.MobyGroups = [][]int{{0, 1, 2}, nil, {5}}
	for i := 0; i < 4; i++ {
		d.Ties = append(d.Ties, TieDesc{OClass: int32(1000 + i%2), UID: int32(i + 7), Matrix: [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, float32(i), 5, 6, 0.01}})
		d.Shrubs = append(d.Shrubs, ShrubDesc{OClass: int32(5000 + i), Colour: [3]int32{10, 20, 30}, Matrix: [16]float32{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 1, float32(i), 3, 0.01}})
	}
	d.TieGroups = [][]int{{0, 3}}
	d.ShrubGroups = [][]int{{1}, {2, 3}}
	d.Cameras = []CameraDesc{{Type: 3, Position: [3]float32{1, 2, 3}, Pvar: []byte{9, 9, 9, 9}}, {Type: 4}}
	d.Sounds = []SoundDesc{{OClass: 7, MClass: 8, Range: 30, Matrix: [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 4, 5, 6, 1}, Pvar: []byte{1, 2}}}
	d.DirLights = [][4][4]float32{{{1, 1, 1, 1}, {0, 0, -1, 0}, {0.5, 0.5, 0.5, 1}, {1, 0, 0, 0}}}
	d.Volumes[0] = [][16]float32{{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 10, 10, 10, 1}}
	d.Volumes[2] = [][16]float32{{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1}}
	d.Paths = [][][4]float32{{{0, 0, 0, 0}, {1, 1, 1, 1}}, {{5, 5, 5, 0}}}
	d.GrindPaths = [][][4]float32{{{0, 1, 2, 0}, {3, 4, 5, 0}, {6, 7, 8, 0}}}
	d.PointLights = [][7]uint16{{64, 128, 192, 640, 65535, 0, 32768}}
	d.EnvSamples = [][0x20]byte{{1, 0, 0, 0, 8, 0}}
	d.EnvTrans = 2
	d.Help[0] = []HelpDesc{{ID: 1, Text: []byte("Hello, \"Ratchet\"\n")}, {ID: 2}, {ID: 3, Text: []byte{'a', 0xff, 0xc3, 'b'}}}
	d.Help[6] = []HelpDesc{{ID: 9, Text: []byte("こんにちは")}}
	d.Areas = []AreaDesc{{Sphere: [4]float32{1, 2, 3, 100}, Links: [5][]int32{{0, 1}, {0}, nil, {0}, nil}}}
	return d
}

func mustRead(t *testing.T, b []byte) *Gameplay {
	t.Helper()
	g, err := Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func jsonOf(t *testing.T, g *Gameplay) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteJSON(&buf, g.Doc); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// checkJSON: the document is UTF-8, and encoding/json, python3's json and
// jq all parse it (each tool when it is installed).
func checkJSON(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	if !utf8.Valid(doc) {
		t.Fatal("the document is not UTF-8")
	}
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	for _, tool := range [][]string{{"jq", "-e", ".blocks"}, {"python3", "-c", "import json,sys; json.load(sys.stdin)"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed: not checked", tool[0])
			continue
		}
		cmd := exec.Command(tool[0], tool[1:]...)
		cmd.Stdin = bytes.NewReader(doc)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s does not read the document: %v\n%s", tool[0], err, out)
		}
	}
	return v
}

func TestReadWhatBuildWrote(t *testing.T) {
	d := testDesc()
	b := Build(d)
	g := mustRead(t, b.Bytes)
	if len(g.Problems) != 0 {
		t.Fatalf("problems in a stream Build wrote: %v", g.ProblemLines())
	}
	if len(g.Blocks) != NumBlocks {
		t.Fatalf("%d blocks, want %d", len(g.Blocks), NumBlocks)
	}
	for i, bl := range g.Blocks {
		want := int64(len(b.Bytes))
		if i+1 < len(g.Blocks) {
			want = g.Blocks[i+1].Offset
		}
		if bl.Offset != int64(b.Offsets[i]) || bl.Offset+bl.Size != want {
			t.Errorf("block %s: %#x+%#x, want at %#x up to %#x", bl.Name, bl.Offset, bl.Size, b.Offsets[i], want)
		}
	}
	if len(g.Mobies) != len(d.Mobies) {
		t.Fatalf("%d mobies, want %d", len(g.Mobies), len(d.Mobies))
	}
	for i, m := range g.Mobies {
		w := d.Mobies[i]
		if m.Index != i || m.UID != w.UID || m.OClass != w.OClass || m.Position != w.Position || m.Rotation != w.Rotation ||
			m.Scale != w.Scale || m.Group != w.Group || m.PvarIndex != b.MobyPvar[i] {
			t.Errorf("moby %d: %+v, want %+v (pvar %d)", i, m, w, b.MobyPvar[i])
		}
	}
	for i, x := range g.Ties {
		w := d.Ties[i]
		if x.OClass != w.OClass || x.UID != w.UID || x.Matrix != w.Matrix {
			t.Errorf("tie %d: %+v, want %+v", i, x, w)
		}
	}
	for i, x := range g.Shrubs {
		w := d.Shrubs[i]
		if x.OClass != w.OClass || x.Matrix != w.Matrix || x.Colour != w.Colour {
			t.Errorf("shrub %d: %+v, want %+v", i, x, w)
		}
	}
	if len(g.Ties) != len(d.Ties) || len(g.Shrubs) != len(d.Shrubs) {
		t.Fatalf("%d ties, %d shrubs; want %d, %d", len(g.Ties), len(g.Shrubs), len(d.Ties), len(d.Shrubs))
	}
	v := checkJSON(t, jsonOf(t, g))
	blocks := v["blocks"].(map[string]any)
	recs := blocks["moby_instances"].(map[string]any)["records"].([]any)
	for i, r := range recs {
		r := r.(map[string]any)
		w := d.Mobies[i]
		if r["uid"].(float64) != float64(w.UID) || r["o_class"].(float64) != float64(w.OClass) ||
			r["position"].([]any)[1].(float64) != float64(w.Position[1]) || r["scale"].(float64) != float64(w.Scale) {
			t.Errorf("gameplay.json moby %d: %v", i, r)
		}
		if w.Pvar != nil && r["pvar"] != hexStr(w.Pvar) {
			t.Errorf("moby %d pvar %v, want %s", i, r["pvar"], hexStr(w.Pvar))
		}
		if w.Pvar == nil && r["pvar"] != nil {
			t.Errorf("moby %d has no pvar, the document says %v", i, r["pvar"])
		}
	}
	groups := blocks["moby_groups"].(map[string]any)["groups"].([]any)
	if m := groups[0].(map[string]any)["members"].([]any); len(m) != 3 || m[2].(float64) != 2 {
		t.Errorf("moby group 0: %v", m)
	}
	msgs := blocks["help_us_english"].(map[string]any)["messages"].([]any)
	if s := msgs[0].(map[string]any)["text"]; s != "Hello, \"Ratchet\"\n" {
		t.Errorf("message 0: %q", s)
	}
	if s := msgs[1].(map[string]any)["text"]; s != nil {
		t.Errorf("message 1 has no string, the document says %q", s)
	}
	m2 := msgs[2].(map[string]any)
	if m2["text"] != "a\u00ff\u00c3b" || m2["text_hex"] != "61ffc362" {
		t.Errorf("message 2: %q, %v: invalid bytes must be escaped and kept in hex", m2["text"], m2["text_hex"])
	}
	if s := blocks["help_japanese"].(map[string]any)["messages"].([]any)[0].(map[string]any)["text"]; s != "こんにちは" {
		t.Errorf("Japanese message: %q", s)
	}
	links := blocks["areas"].(map[string]any)["areas"].([]any)[0].(map[string]any)["links"].(map[string]any)
	if p := links["paths"].([]any); len(p) != 2 || p[1].(float64) != 1 {
		t.Errorf("area links: %v", links)
	}
	spl := blocks["grind_paths"].(map[string]any)["splines"].([]any)[0].(map[string]any)["points"].([]any)
	if len(spl) != 3 || spl[2].([]any)[1].(float64) != 7 {
		t.Errorf("grind path points: %v", spl)
	}
	// stable: the same bytes every time
	if !bytes.Equal(jsonOf(t, g), jsonOf(t, mustRead(t, b.Bytes))) {
		t.Error("two encodes of the same stream differ")
	}
}

func hexStr(b []byte) string {
	const h = "0123456789abcdef"
	var s strings.Builder
	for _, c := range b {
		s.WriteByte(h[c>>4])
		s.WriteByte(h[c&15])
	}
	return s.String()
}

func put32(b []byte, off int64, v int32) { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }

// undecodedAt finds the problem of block name; the test fails without one.
func problemOf(t *testing.T, g *Gameplay, block, reason string) Problem {
	t.Helper()
	for _, p := range g.Problems {
		if p.Block == block && strings.Contains(p.Reason, reason) {
			return p
		}
	}
	t.Fatalf("no problem of %s saying %q: %v", block, reason, g.ProblemLines())
	return Problem{}
}

func TestBadInput(t *testing.T) {
	b := Build(testDesc())
	off := func(slot int) int64 { return int64(b.Offsets[slot]) }
	cases := []struct {
		name, block, reason string
		damage              func(s []byte)
		check               func(t *testing.T, g *Gameplay)
	}{
		{"offset past the stream", "cameras", "past the stream", func(s []byte) { put32(s, 4*slotCameras, int32(len(s)+0x100)) }, nil},
		{"count past the next block", "tie_instances", "run past the next block", func(s []byte) { put32(s, off(slotTieInstances), 50) },
			func(t *testing.T, g *Gameplay) {
				if len(g.Ties) != 0 || len(g.Mobies) != 6 {
					t.Errorf("%d ties, %d mobies: the tie block alone should be left out", len(g.Ties), len(g.Mobies))
				}
			}},
		{"count past the stream", "areas", "run past the stream's end", func(s []byte) { put32(s, off(slotAreas)+4, 1<<20) }, nil},
		{"moby record size", "moby_instances", "size field 0x80", func(s []byte) { put32(s, off(slotMobyInstances)+0x10+2*MobyRecordSize, 0x80) },
			func(t *testing.T, g *Gameplay) {
				if len(g.Mobies) != 5 || g.Mobies[2].Index != 3 {
					t.Errorf("%d mobies decoded: want the other 5, indices kept", len(g.Mobies))
				}
			}},
		{"group member past the instances", "moby_groups", "member 99 past the 6 instances", func(s []byte) {
			gc := int64(3)
			data := (0x10 + 4*gc + 15) &^ 15
			binary.LittleEndian.PutUint16(s[off(slotMobyGroups)+data+2:], 99)
		}, nil},
		{"pvar index past the table", "moby_instances", "pvar index 7 past the 6-entry", func(s []byte) {
			// moby 2's pvar index 1 → 7: the table grows to what the block holds
			put32(s, off(slotMobyInstances)+0x10+2*MobyRecordSize+0x68, 7)
		}, nil},
		{"string without terminator", "help_us_english", "no terminator", func(s []byte) {
			o := off(slotHelp0)
			so := int64(binary.LittleEndian.Uint32(s[o+8:]))
			for i := o + so; i < off(slotHelp0+1); i++ {
				s[i] = 'x'
			}
		}, func(t *testing.T, g *Gameplay) {
			if len(g.Mobies) != 6 {
				t.Error("the rest should decode")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := append([]byte(nil), b.Bytes...)
			c.damage(s)
			g := mustRead(t, s)
			p := problemOf(t, g, c.block, c.reason)
			if p.Offset < 0 || p.Offset+p.Size > int64(len(s)) {
				t.Errorf("problem range %#x+%#x outside the stream", p.Offset, p.Size)
			}
			if c.check != nil {
				c.check(t, g)
			}
			doc := jsonOf(t, g)
			checkJSON(t, doc)
			if !bytes.Contains(doc, []byte(`"reason": `)) {
				t.Error("the document shows no undecoded part")
			}
			t.Logf("%s", p)
		})
	}
}

func TestNonFiniteFloats(t *testing.T) {
	d := testDesc()
	d.Mobies[0].Position = [3]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	checkJSON(t, jsonOf(t, mustRead(t, Build(d).Bytes)))
}

func TestShortStream(t *testing.T) {
	if _, err := Read(make([]byte, HeaderSize-1)); err == nil {
		t.Fatal("a stream shorter than its header read")
	}
	g := mustRead(t, make([]byte, HeaderSize))
	if len(g.Blocks) != 0 {
		t.Fatalf("an all-zero header has %d blocks", len(g.Blocks))
	}
	checkJSON(t, jsonOf(t, g))
}

func FuzzRead(f *testing.F) {
	b := Build(testDesc()).Bytes
	f.Add(b)
	f.Add(b[:HeaderSize+0x40])
	f.Fuzz(func(t *testing.T, s []byte) {
		g, err := Read(s)
		if err != nil {
			if len(s) >= HeaderSize {
				t.Fatalf("a %d-byte stream failed: %v", len(s), err)
			}
			return
		}
		for _, bl := range g.Blocks {
			if bl.Offset < HeaderSize || bl.Size <= 0 || bl.Offset+bl.Size > int64(len(s)) {
				t.Fatalf("block %+v outside the stream", bl)
			}
		}
		for _, p := range g.Problems {
			if p.Offset < 0 || p.Size < 0 || p.Offset+p.Size > int64(len(s)) {
				t.Fatalf("problem %v outside the stream", p)
			}
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, g.Doc); err != nil {
			t.Fatal(err)
		}
		if !utf8.Valid(buf.Bytes()) || !json.Valid(buf.Bytes()) {
			t.Fatal("invalid JSON")
		}
		if n := JSONSize(g.Doc); n != int64(buf.Len()) {
			t.Fatalf("JSONSize %d, WriteJSON wrote %d bytes", n, buf.Len())
		}
		sameInstances(t, s, g)
	})
}

// sameInstances fails unless ReadInstances of s gives g's instances (g is
// Read's) and no document.
func sameInstances(t *testing.T, s []byte, g *Gameplay) {
	t.Helper()
	gi, err := ReadInstances(s)
	if err != nil {
		t.Fatalf("ReadInstances failed where Read passed: %v", err)
	}
	if gi.Doc != nil || !reflect.DeepEqual(gi.Mobies, g.Mobies) || !reflect.DeepEqual(gi.Ties, g.Ties) || !reflect.DeepEqual(gi.Shrubs, g.Shrubs) {
		t.Fatalf("ReadInstances: %d mobies, %d ties, %d shrubs (doc %v); Read: %d, %d, %d",
			len(gi.Mobies), len(gi.Ties), len(gi.Shrubs), gi.Doc != nil, len(g.Mobies), len(g.Ties), len(g.Shrubs))
	}
}

// TestReadInstances: ReadInstances places what Read places, on the stream
// Build writes and on damaged copies of it (bytes overwritten at random,
// cut short).
func TestReadInstances(t *testing.T) {
	b := Build(testDesc()).Bytes
	g := mustRead(t, b)
	if len(g.Mobies) == 0 || len(g.Ties) == 0 || len(g.Shrubs) == 0 {
		t.Fatalf("test setup: %d mobies, %d ties, %d shrubs", len(g.Mobies), len(g.Ties), len(g.Shrubs))
	}
	sameInstances(t, b, g)
	rng := rand.New(rand.NewSource(1))
	for i := range 300 {
		d := bytes.Clone(b)
		for range 1 + rng.Intn(8) {
			binary.LittleEndian.PutUint32(d[rng.Intn(len(d)-4):], rng.Uint32()>>uint(rng.Intn(32)))
		}
		if i%3 == 0 {
			d = d[:HeaderSize+rng.Intn(len(d)-HeaderSize)]
		}
		if g, err := Read(d); err == nil {
			sameInstances(t, d, g)
		}
	}
}

// TestJSONStrings: keys, strings and Text are written as JSON strings that
// read back as the same text, whether plain ASCII (written as they are) or
// needing escapes (control bytes, quotes, DEL, non-ASCII, invalid UTF-8 as
// \u00XX per byte).
func TestJSONStrings(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain_name 01", `"plain_name 01"`},
		{"", `""`},
		{`a"b\c`, `"a\"b\\c"`},
		{"tab\there\n", `"tab\there\n"`},
		{"del\x7f", `"del\u007f"`},
		{"caf\u00e9", "\"caf\u00e9\""},
		{"bad\xffbyte", `"bad\u00ffbyte"`},
	}
	for _, c := range cases {
		for _, v := range []any{c.in, Text(c.in), Obj{{c.in, int64(1)}}} {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, v); err != nil {
				t.Fatal(err)
			}
			if n := JSONSize(v); n != int64(buf.Len()) {
				t.Errorf("%T %q: JSONSize %d, WriteJSON wrote %d bytes", v, c.in, n, buf.Len())
			}
			got := strings.TrimSuffix(buf.String(), "\n")
			want := c.want
			if _, ok := v.(Obj); ok {
				want = "{\n  " + c.want + ": 1\n}"
			}
			if got != want {
				t.Errorf("%T %q: wrote %s, want %s", v, c.in, got, want)
			}
		}
	}
}
