package levelscene

import (
	"math"
	"strings"
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
	"gcfs/mesh"
)

// TestMissingClasses: instances whose class the core does not hold, or
// holds without a block, are left out and named; no node references a
// missing mesh; the scene still encodes.
func TestMissingClasses(t *testing.T) {
	d := &gameplay.Desc{}
	for i := 0; i < 5; i++ {
		d.Mobies = append(d.Mobies, gameplay.MobyDesc{UID: int32(i), OClass: 100 + int32(i%2), Group: -1, Scale: 1})
	}
	d.Ties = []gameplay.TieDesc{{OClass: 1000, Matrix: [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0.01}}}
	core := &levelcore.Core{Mobies: []levelcore.Class{{Kind: levelcore.Moby, OClass: 101}}}
	res, err := Build(Input{Gameplay: gameplay.Build(d).Bytes, Core: core})
	if err != nil {
		t.Fatal(err)
	}
	if res.InstancesLeftOut != 6 {
		t.Errorf("%d instances left out, want 6", res.InstancesLeftOut)
	}
	all := strings.Join(res.LeftOut, "; ")
	for _, want := range []string{"moby 100: no such class in the core", "moby 101: no class block", "tie 1000: no such class"} {
		if !strings.Contains(all, want) {
			t.Errorf("left out %q: no %q", all, want)
		}
	}
	for _, n := range res.Scene.Nodes {
		if n.Mesh != gltf.NoMesh && (n.Mesh < 0 || n.Mesh >= len(res.Scene.Meshes)) {
			t.Errorf("node %s references mesh %d of %d", n.Name, n.Mesh, len(res.Scene.Meshes))
		}
	}
	if _, err := gltf.Encode(res.Scene); err != nil {
		t.Fatalf("an empty scene does not encode: %v", err)
	}
}

func TestMobyMatrix(t *testing.T) {
	m := mobyMatrix([3]float32{1, 2, 3}, [3]float32{0, 0, math.Pi / 2}, 2)
	// Rz(90°) scaled by 2: x axis → (0, 2, 0), y axis → (−2, 0, 0)
	want := [16]float32{0, 2, 0, 0, -2, 0, 0, 0, 0, 0, 2, 0, 1, 2, 3, 1}
	for i := range m {
		if math.Abs(float64(m[i]-want[i])) > 1e-6 {
			t.Fatalf("matrix %v, want %v", m, want)
		}
	}
}

func TestShortGameplay(t *testing.T) {
	if _, err := Build(Input{Gameplay: make([]byte, 8)}); err == nil {
		t.Fatal("a gameplay shorter than its header built a scene")
	}
}

// FuzzBuild: any gameplay bytes over an empty core give a scene that
// encodes, whose nodes reference meshes that exist, at most one node a
// record plus the group and static nodes.
func FuzzBuild(f *testing.F) {
	d := &gameplay.Desc{Mobies: []gameplay.MobyDesc{{OClass: 1, Scale: 1}}}
	f.Add(gameplay.Build(d).Bytes)
	f.Add(make([]byte, gameplay.HeaderSize))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, err := Build(Input{Gameplay: b, Core: &levelcore.Core{}})
		if err != nil {
			return
		}
		g, _ := gameplay.Read(b)
		if max := len(g.Mobies) + len(g.Ties) + len(g.Shrubs) + 8; len(res.Scene.Nodes) > max {
			t.Fatalf("%d nodes for %d records", len(res.Scene.Nodes), max-8)
		}
		for _, n := range res.Scene.Nodes {
			if n.Mesh != gltf.NoMesh && (n.Mesh < 0 || n.Mesh >= len(res.Scene.Meshes)) {
				t.Fatalf("node %s: mesh %d of %d", n.Name, n.Mesh, len(res.Scene.Meshes))
			}
		}
		if _, err := gltf.Encode(res.Scene); err != nil {
			t.Fatal(err)
		}
	})
}

// TestClassBlocks: a class is read with its entry's whole slot count (a
// slot whose texture was left out still reads, its material plain, as the
// class's mesh.glb has it), and from Input.Block where that gives the
// block (an edit) instead of its slice of CoreData.
func TestClassBlocks(t *testing.T) {
	strips := mesh.Box([3]int16{0, 0, 0}, 500, []int32{0, 1})
	block, err := mesh.WriteMoby(&mesh.MobyClass{Scale: 1, High: strips, Low: strips})
	if err != nil {
		t.Fatal(err)
	}
	d := &gameplay.Desc{Mobies: []gameplay.MobyDesc{{UID: 1, OClass: 7, Group: -1, Scale: 1}}}
	// slot 1's texture left out: Slots holds slot 0 alone
	cl := levelcore.Class{Kind: levelcore.Moby, OClass: 7, Block: &levelcore.Block{Offset: 0, Size: int64(len(block))},
		Slots: []levelcore.Slot{{Slot: 0}}, SlotCount: 2}
	in := Input{Gameplay: gameplay.Build(d).Bytes, Core: &levelcore.Core{Mobies: []levelcore.Class{cl}}, CoreData: block}
	res, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Scene.Meshes) != 1 || res.InstancesLeftOut != 0 {
		t.Fatalf("%d meshes, %d instances left out (%q): the class with a slot left out did not read", len(res.Scene.Meshes), res.InstancesLeftOut, res.LeftOut)
	}
	// The block given by Input.Block: zeros, which do not read.
	var asked []string
	in.Block = func(path string) ([]byte, bool, error) {
		asked = append(asked, path)
		if path == ClassBlockPath(levelcore.Moby, 7) {
			return make([]byte, len(block)), true, nil
		}
		return nil, false, nil
	}
	if res, err = Build(in); err != nil {
		t.Fatal(err)
	}
	if len(res.Scene.Meshes) != 0 || res.InstancesLeftOut != 1 || !strings.Contains(strings.Join(res.LeftOut, "; "), "moby 7") {
		t.Errorf("the edited class block: %d meshes, %d instances left out, left out %q", len(res.Scene.Meshes), res.InstancesLeftOut, res.LeftOut)
	}
	if strings.Join(asked, ",") != "mobies/0007/class" {
		t.Errorf("asked for %q", asked)
	}
}
