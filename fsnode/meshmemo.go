package fsnode

import (
	"strings"

	"gcfs/discimg/levelcore"
	"gcfs/levelscene"
	"gcfs/mesh"
)

// The meshes views parse from sources, kept for the next view that parses
// the same source the same way: a class's mesh.glb and its level's
// level.glb read the class block at its high LOD, a chunk's tfrags.glb and
// collision.glb and the level.glb that chunk's streams, the core's
// tfrags and collision views and the level.glb those blocks. Whichever is
// sized first parses; on the retail layout the level.glbs' parses were a
// quarter of sizing every view (BenchmarkSizeAllRetail). A first find
// stats a level's level.glb with its directory, before it descends into
// the classes; a walk in tree order sizes the classes first.
//
// Only meshes of the disc's bytes are kept: an encode that reads a source
// through an edit (encodeCtx.current) neither takes nor keeps one. A mesh
// is never modified once read (the scene builders and the glTF writer
// only read it), so one value serves every view at once.

// meshParse is how a source's bytes were parsed.
type meshParse uint8

const (
	parseClassHigh meshParse = iota // mesh.ReadClass, high LOD
	parseClassLow                   // mesh.ReadClass, low LOD
	parseTfrags                     // mesh.ReadTfrags
	parseCollision                  // mesh.ReadCollision
)

type meshKey struct {
	n     *Node
	parse meshParse
}

// meshMemoBudget is the memory the kept meshes may take, for a tree whose
// cache takes cacheSize: an eighth of it, at most 32 MiB. A level's
// meshes must fit for its views to share them: the generated retail
// layout's parse to 1.8-2.8 MB a level (63 MB in all), a real disc's are
// likely larger.
func meshMemoBudget(cacheSize int64) int64 { return min(cacheSize/8, 32<<20) }

// meshMem is what m takes in memory, near enough to bound the memo by.
func meshMem(m *mesh.Mesh) int64 {
	return 128 + 12*int64(cap(m.Positions)) + 12*int64(cap(m.Normals)) + 8*int64(cap(m.UVs)) + 16*int64(cap(m.Triangles))
}

// mesh is the mesh parse makes of source n's bytes: read through ec (an
// edit's bytes are parsed, never kept), or memoMesh's.
func (ec *encodeCtx) mesh(n *Node, how meshParse, parse func([]byte) (*mesh.Mesh, error)) (*mesh.Mesh, error) {
	if b, ok, err := ec.current(n); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return parse(b)
	}
	return n.tree.memoMesh(n, how, func() (*mesh.Mesh, error) {
		b, done, err := readSource(n)
		if err != nil {
			return nil, err
		}
		defer done()
		return parse(b)
	})
}

// memoMesh is the mesh read makes of source n's disc bytes, or the one
// kept from a view's read of them before. An error is not kept: the next
// view reads again, and fails the same way.
func (t *Tree) memoMesh(n *Node, how meshParse, read func() (*mesh.Mesh, error)) (*mesh.Mesh, error) {
	k := meshKey{n, how}
	if m, ok := t.meshes.get(k); ok {
		t.meshHits.Add(1)
		return m, nil
	}
	m, err := read()
	if err != nil {
		return nil, err
	}
	t.meshes.put(k, m, meshMem(m))
	return m, nil
}

// levelMeshes is a level.glb's levelscene.Input.Mesh: the block named by
// path is a node below coreDir, the part of core_data (cd) at at, or one
// of the level's chunk streams (at nil); its mesh is memoMesh's unless ec
// read that node through an edit, or, for a block of the core, read
// core_data through one (the scene slices its blocks out of core_data's
// current bytes itself). The encode has read each through ec before the
// scene asks for its mesh: core_data and the chunks before the scene is
// built, a block of the core through Input.Block as the scene slices it.
// A path whose node is not that part (a class listed twice in the core)
// is read, not looked up.
func levelMeshes(lv, coreDir, cd *Node, ec *encodeCtx) func(path string, at *levelcore.Block, read func() (*mesh.Mesh, error)) (*mesh.Mesh, error) {
	chunks := map[string]*Node{}
	for k, d := range levelChunks(lv) {
		for j, name := range []string{"tfrags", "collision"} {
			if d[j] != nil {
				chunks[levelscene.ChunkStreamPath(k, name)] = d[j]
			}
		}
	}
	return func(path string, at *levelcore.Block, read func() (*mesh.Mesh, error)) (*mesh.Mesh, error) {
		var n *Node
		if at == nil {
			n = chunks[path]
		} else if p := below(coreDir, path); !ec.readEdited[cd] && p != nil && p.within == cd && p.woff == at.Offset && p.size == at.Size {
			n = p
		}
		var how meshParse
		switch name := path[strings.LastIndexByte(path, '/')+1:]; {
		case n == nil:
			return read()
		case name == "class":
			how = parseClassHigh // (the scene reads a class at its high LOD)
		case name == "tfrags":
			how = parseTfrags
		case name == "collision":
			how = parseCollision
		default:
			return read()
		}
		if ec.readEdited[n] {
			return read() // (the scene read the edit's bytes)
		}
		return n.tree.memoMesh(n, how, read)
	}
}
