package fsnode

import (
	"fmt"
	"strconv"
	"strings"

	"gcfs/gltf"
	"gcfs/levelscene"
)

// The whole level as one scene (SPEC "The tree, third edition"):
// G/LEVELn.WAD/level.glb, a lazily sized view of the level's gameplay (its
// user.gcfs.source), assembled by package levelscene from the decoded
// gameplay, core_data and chunk streams this file reads, encoded by package
// gltf. Its materials embed the PNG views of the level's textures (tfrag,
// sky and class slots), as each mesh's own glb does. What the scene leaves
// out (classes without a readable mesh, blocks that do not read, a sky that
// does not, a texture whose PNG view fails before it is read) is named in
// user.gcfs.left_out.

// levelScenes adds level.glb to every level with a decoded gameplay and a
// level core.
func (b *builder) levelScenes() {
	found := nodesWhere(b.t.Root, isLevelGameplay)
	for _, gp := range found {
		lv := gp.Parent
		dd := childNamed(lv, "data.d")
		if dd == nil || childNamed(lv, "level.glb") != nil {
			continue
		}
		core, cd := childNamed(dd, "core"), childNamed(dd, "core_data")
		if core == nil || core.LevelCore() == nil || cd == nil {
			continue
		}
		gp, lv := gp, lv
		v := b.addLazyView(gp, "level.glb", ViewGLB, func(ec *encodeCtx) (encodedView, error) {
			return levelGLB(lv, gp, core, cd, ec)
		})
		if v != nil {
			v.vm.lazy.deps = func() []*Node { return levelInputs(lv, core, cd) }
		}
	}
}

// levelGLB reads the level's decoded streams and encodes its scene (sizes
// it from its plan, sizeOnly). A texture's PNG view that fails its checks
// (wholeSize) leaves its material plain in both encodes alike; one that
// fails while it is read fails the encode, which must not come out at
// another size than the sizing's.
func levelGLB(lv, gp, coreDir *Node, cd *Node, ec *encodeCtx) (encodedView, error) {
	sizeOnly := ec.sizeOnly
	in := levelscene.Input{Core: coreDir.LevelCore()}
	var readErr error
	in.Texture = func(path string, mat *gltf.Material) error {
		png := below(coreDir, path)
		if png == nil {
			return fmt.Errorf("no %s in %s", path, coreDir.path)
		}
		if b, ok, err := ec.currentPNG(png); ok || err != nil {
			mat.PNG = b
			return err
		}
		size, err := wholeSize(png)
		if err != nil {
			return err
		}
		mat.PNGSize = size
		if sizeOnly {
			return nil
		}
		if mat.PNG, err = readWholeInto(png, make([]byte, size)); err != nil && readErr == nil { // size bounded by wholeSize
			readErr = err
		}
		return nil
	}
	// a block's edit (a class's, the core's tfrags): the scene reads it,
	// as the block's own glb does
	in.Block = func(path string) ([]byte, bool, error) {
		if n := below(coreDir, path); n != nil {
			return ec.current(n)
		}
		return nil, false, nil
	}
	in.Mesh = levelMeshes(lv, coreDir, cd, ec)
	var dones []func()
	defer func() {
		for _, done := range dones {
			done()
		}
	}()
	read := func(n *Node) ([]byte, error) {
		b, done, err := ec.source(n)
		dones = append(dones, done)
		return b, err
	}
	var err error
	if in.Gameplay, err = read(gp); err != nil {
		return encodedView{}, err
	}
	if in.CoreData, err = read(cd); err != nil {
		return encodedView{}, err
	}
	var unread []string
	for k, d := range levelChunks(lv) {
		var ch [2][]byte
		for j, n := range d {
			if n == nil {
				continue
			}
			if ch[j], err = read(n); err != nil {
				ch[j] = nil
				unread = append(unread, fmt.Sprintf("chunk%d %s: %v", k, n.Name, err))
			}
		}
		in.Chunks = append(in.Chunks, ch)
	}
	res, err := levelscene.Build(in)
	if err != nil {
		return encodedView{}, err
	}
	if readErr != nil {
		return encodedView{}, readErr
	}
	return sceneView(res.Scene, sizeOnly, []Attr{
		{Name: "meshes", Value: strconv.Itoa(len(res.Scene.Meshes))},
		{Name: "nodes", Value: strconv.Itoa(len(res.Scene.Nodes))},
		{Name: "instances_left_out", Value: strconv.Itoa(res.InstancesLeftOut)},
		{Name: "left_out", Value: strings.Join(append(res.LeftOut, unread...), "; ")},
	})
}

// levelChunks are the decoded tfrags and collision streams of the level's
// chunk0.d/ .. chunk2.d/ (nil where there is none).
func levelChunks(lv *Node) [3][2]*Node {
	var out [3][2]*Node
	for k := range out {
		d := childNamed(lv, fmt.Sprintf("chunk%d.d", k))
		if d == nil {
			continue
		}
		for j, name := range []string{"tfrags", "collision"} {
			if n := childNamed(d, name); n != nil && n.Kind == Decoded {
				out[k][j] = n
			}
		}
	}
	return out
}

// below is the node at path (slash-separated) below dir, nil if none.
func below(dir *Node, path string) *Node {
	n := dir
	for _, name := range strings.Split(path, "/") {
		if n = n.Child(name); n == nil {
			return nil
		}
	}
	return n
}

// levelInputs are what level.glb reads besides its gameplay: core_data,
// the blocks of it the scene reads (the core's tfrags, collision and sky,
// each class's), the chunks' streams, and the PNG views of the level's
// textures (tfrag, sky, class slots).
func levelInputs(lv, coreDir, cd *Node) []*Node {
	out := []*Node{cd}
	for _, name := range []string{"tfrags", "collision", "sky"} {
		if n := coreDir.Child(name); n != nil && n.Kind != Dir {
			out = append(out, n)
		}
	}
	for _, ch := range levelChunks(lv) {
		out = append(out, nonNil(ch[:])...)
	}
	out = append(out, tfragPNGs(func() *Node { return coreDir })...)
	if t := coreDir.Child("sky.d"); t != nil {
		if tx := t.Child("textures"); tx != nil {
			out = append(out, tx.List()...)
		}
	}
	for _, kind := range []string{"mobies", "ties", "shrubs"} {
		if kd := coreDir.Child(kind); kd != nil {
			for _, cdir := range kd.Children {
				for _, c := range cdir.Children {
					if c.Name == "class" && c.vm == nil || c.vm != nil && c.vm.kind == ViewPNG {
						out = append(out, c)
					}
				}
			}
		}
	}
	return out
}
