package levelscene

import (
	"math"
	"strings"
	"testing"

	"gcfs/discimg/gameplay"
	"gcfs/discimg/levelcore"
	"gcfs/gltf"
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
