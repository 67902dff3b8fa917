package fsnode

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"gcfs/codec"
	"gcfs/discimg/gameplay"
)

// parseJSONTools: encoding/json, jq and python3's json read doc (each tool
// checked when it is installed).
func parseJSONTools(t *testing.T, what string, doc []byte) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("%s: encoding/json: %v", what, err)
	}
	for _, tool := range [][]string{{"jq", "-e", ".blocks"}, {"python3", "-c", "import json,sys; json.load(sys.stdin)"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed: not checked", tool[0])
			continue
		}
		cmd := exec.Command(tool[0], tool[1:]...)
		cmd.Stdin = bytes.NewReader(doc)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %s does not read it: %v\n%.500s", what, tool[0], err, out)
		}
	}
	return v
}

// TestGameplayTree: every level's gameplay has gameplay.d/ (the blocks as
// ranges of the decoded stream, read from its cached blocks: no second
// decode) and gameplay.json (sized by one encode at its first lookup, the
// size kept; exactly as long as what reads; parsed by jq and python3; its
// moby instances those package gameplay reads).
func TestGameplayTree(t *testing.T) {
	path, _ := small(t)
	tree, logs := openDisc(t, path, -1, Options{CacheSize: 64 << 20})
	levels := 0
	for _, lv := range tree.Root.Child("G").Children {
		gp := lv.Child("gameplay")
		if gp == nil || gp.Kind != Decoded {
			continue
		}
		levels++
		d, js := lv.Child("gameplay.d"), lv.Child("gameplay.json")
		if d == nil || js == nil {
			t.Fatalf("%s: gameplay.d %v, gameplay.json %v", lv.Path(), d != nil, js != nil)
		}
		whole := readAll(t, gp)
		g, err := gameplay.Read(whole)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Children) != len(g.Blocks) {
			t.Fatalf("%s: %d files for %d blocks", d.Path(), len(d.Children), len(g.Blocks))
		}
		misses := tree.Cache.Stats().Misses
		for _, bl := range g.Blocks {
			n := d.Child(bl.Name)
			if n == nil || n.Size() != bl.Size {
				t.Fatalf("%s/%s: %v, want %d bytes", d.Path(), bl.Name, n, bl.Size)
			}
			if got := readAll(t, n); !bytes.Equal(got, whole[bl.Offset:bl.Offset+bl.Size]) {
				t.Errorf("%s: not bytes %#x.. of gameplay", n.Path(), bl.Offset)
			}
		}
		if m := tree.Cache.Stats().Misses; m != misses {
			t.Errorf("%s: reading the blocks of a cached gameplay missed the cache %d times", d.Path(), m-misses)
		}
		enc := tree.ViewEncodes()
		size := js.Size()
		if tree.ViewEncodes() != enc+1 || js.Size() != size || tree.ViewEncodes() != enc+1 {
			t.Errorf("%s: sizing encoded %d times (want once, then kept)", js.Path(), tree.ViewEncodes()-enc)
		}
		doc := readAll(t, js)
		if int64(len(doc)) != size {
			t.Fatalf("%s: %d bytes read, size %d", js.Path(), len(doc), size)
		}
		v := parseJSONTools(t, js.Path(), doc)
		recs := v["blocks"].(map[string]any)["moby_instances"].(map[string]any)["records"].([]any)
		if len(recs) != len(g.Mobies) || len(recs) == 0 {
			t.Fatalf("%s: %d moby records, %d read", js.Path(), len(recs), len(g.Mobies))
		}
		for i, r := range recs {
			r := r.(map[string]any)
			m := g.Mobies[i]
			if r["uid"].(float64) != float64(m.UID) || r["o_class"].(float64) != float64(m.OClass) || r["index"].(float64) != float64(i) {
				t.Fatalf("%s: moby %d %v, read %+v", js.Path(), i, r, m)
			}
		}
		if k, src := js.View(); k != ViewJSON || src != gp {
			t.Errorf("%s: view %q of %v", js.Path(), k, src)
		}
		if u, _ := js.Xattr(XattrPrefix + "undecoded"); u != "0" {
			t.Errorf("%s: undecoded %q", js.Path(), u)
		}
		if u, _ := js.Xattr(XattrPrefix + "moby_instances"); u != strconv.Itoa(len(g.Mobies)) {
			t.Errorf("%s: moby_instances %q", js.Path(), u)
		}
	}
	if levels < 20 {
		t.Fatalf("%d levels with gameplay", levels)
	}
	if len(logs.Lines()) != 0 {
		t.Errorf("logged %q", logs.Lines())
	}
}

// TestGameplayNoViews: --no-views keeps gameplay.d/ (bytes of the stream)
// and hides gameplay.json.
func TestGameplayNoViews(t *testing.T) {
	path, _ := small(t)
	tree, _ := openDisc(t, path, -1, Options{NoViews: true})
	lv := mustLookup(t, tree, "G/LEVEL1.WAD")
	if lv.Child("gameplay.json") != nil || lv.Child("gameplay.d") == nil {
		t.Errorf("--no-views: gameplay.json %v, gameplay.d %v", lv.Child("gameplay.json") != nil, lv.Child("gameplay.d") != nil)
	}
}

// TestGameplayBadInput: a gameplay whose stream holds a moby record with
// the wrong size field, a group member past the instances, a string without
// its terminator and a block offset past the stream: each is undecoded in
// gameplay.json (offset, size, hex, reason), logged once; the rest decodes,
// gameplay.d/ keeps its other blocks, and the document still parses.
func TestGameplayBadInput(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	gp := mustLookup(t, tree, "G/LEVEL2.WAD/gameplay")
	plain := readAll(t, gp)
	g, err := gameplay.Read(plain)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	off := func(name string) int64 {
		for _, bl := range g.Blocks {
			if bl.Name == name {
				return bl.Offset
			}
		}
		t.Fatalf("no %s", name)
		return 0
	}
	bad := append([]byte(nil), plain...)
	le.PutUint32(bad[off("moby_instances")+0x10+MobyRecordSizeForTest:], 0x80) // record 1's size field
	grp := off("moby_groups")
	gc := int64(le.Uint32(bad[grp:]))
	le.PutUint16(bad[grp+((0x10+4*gc+15)&^15):], 0x7fff) // the first member of the member data
	// the last message's string runs to the block's end
	help := off("help_french")
	last, so := int64(-1), int64(0)
	for i := int64(0); i < int64(le.Uint32(bad[help:])); i++ {
		if o := int64(le.Uint32(bad[help+8+0x10*i:])); o != 0 {
			last, so = i, o
		}
	}
	for i := help + so; i < off("help_german"); i++ {
		bad[i] = 'x'
	}
	le.PutUint32(bad[4*2:], uint32(len(bad)+0x40)) // cameras past the stream
	wad := mustLookup(t, tree, "G/LEVEL2.WAD/gameplay.wad")
	h, err := codec.ParseHeader(readAll(t, wad)[:codec.HeaderSize])
	if err != nil {
		t.Fatal(err)
	}
	st := codec.Encode(bad, codec.EncodeOptions{Tag: h.Tag})
	woff, wsize, _ := wad.ImageRange()
	if int64(len(st)) > wsize {
		t.Fatalf("the damaged stream (%d bytes) does not fit the %d-byte lump", len(st), wsize)
	}
	patchImage(t, path, woff, st)

	tree, logs := openDisc(t, path, -1, Options{LogBurst: 100})
	lv := mustLookup(t, tree, "G/LEVEL2.WAD")
	js := lv.Child("gameplay.json")
	if js == nil || lv.Child("gameplay.d") == nil || lv.Child("gameplay.d").Child("cameras") != nil || lv.Child("gameplay.d").Child("moby_instances") == nil {
		t.Fatalf("gameplay.json %v; gameplay.d should be there without cameras", js != nil)
	}
	doc := readAll(t, js)
	v := parseJSONTools(t, js.Path(), doc)
	blocks := v["blocks"].(map[string]any)
	if c, ok := blocks["cameras"].(map[string]any); !ok || !strings.Contains(c["reason"].(string), "outside the stream") {
		t.Errorf("cameras: %v", blocks["cameras"])
	}
	recs := blocks["moby_instances"].(map[string]any)["records"].([]any)
	r1 := recs[1].(map[string]any)["undecoded"].(map[string]any)
	if !strings.Contains(r1["reason"].(string), "size field 0x80") || r1["size"].(float64) != MobyRecordSizeForTest || r1["hex"].(string)[:8] != "80000000" {
		t.Errorf("moby record 1: %v", r1)
	}
	if recs[2].(map[string]any)["uid"] == nil {
		t.Error("moby record 2 did not decode")
	}
	g0 := blocks["moby_groups"].(map[string]any)["groups"].([]any)
	found := false
	for _, x := range g0 {
		if u, ok := x.(map[string]any)["undecoded"].(map[string]any); ok && strings.Contains(u["reason"].(string), "past the") {
			found = true
		}
	}
	if !found {
		t.Errorf("no moby group undecoded: %v", g0)
	}
	msgs := blocks["help_french"].(map[string]any)["messages"].([]any)
	msg := msgs[last].(map[string]any)["text"].(map[string]any)
	if !strings.Contains(msg["reason"].(string), "no terminator") {
		t.Errorf("French message %d: %v", last, msg)
	}
	if _, ok := msgs[0].(map[string]any)["text"].(string); !ok && last != 0 {
		t.Errorf("French message 0: %v", msgs[0])
	}
	if u, _ := js.Xattr(XattrPrefix + "undecoded"); u != "4" {
		t.Errorf("undecoded %q, want 4", u)
	}
	_ = readAll(t, js) // a second read logs nothing more
	if n := logs.Count("gameplay: undecoded:"); n != 3 || logs.Count("gameplay: left out:") != 1 || len(logs.Lines()) != 4 {
		t.Errorf("logged %q", logs.Lines())
	}
}

const MobyRecordSizeForTest = gameplay.MobyRecordSize
