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
		b.addLazyView(gp, "level.glb", ViewGLB, func(sizeOnly bool) (encodedView, error) {
			return levelGLB(lv, gp, core, cd, sizeOnly)
		})
	}
}

// levelGLB reads the level's decoded streams and encodes its scene (sizes
// it from its plan, sizeOnly). A texture's PNG view that fails its checks
// (wholeSize) leaves its material plain in both encodes alike; one that
// fails while it is read fails the encode, which must not come out at
// another size than the sizing's.
func levelGLB(lv, gp, coreDir *Node, cd *Node, sizeOnly bool) (encodedView, error) {
	in := levelscene.Input{Core: coreDir.LevelCore()}
	var readErr error
	in.Texture = func(path string, mat *gltf.Material) error {
		png := coreDir
		for _, name := range strings.Split(path, "/") {
			if png = png.Child(name); png == nil {
				return fmt.Errorf("no %s in %s", path, coreDir.path)
			}
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
	var dones []func()
	defer func() {
		for _, done := range dones {
			done()
		}
	}()
	read := func(n *Node) ([]byte, error) {
		b, done, err := readSource(n)
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
	for k := 0; k < 3; k++ {
		d := childNamed(lv, fmt.Sprintf("chunk%d.d", k))
		var ch [2][]byte
		if d == nil {
			in.Chunks = append(in.Chunks, ch)
			continue
		}
		for j, name := range []string{"tfrags", "collision"} {
			n := childNamed(d, name)
			if n == nil || n.Kind != Decoded {
				continue
			}
			if ch[j], err = read(n); err != nil {
				ch[j] = nil
				unread = append(unread, fmt.Sprintf("chunk%d %s: %v", k, name, err))
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
