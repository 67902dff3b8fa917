package fusefs

import (
	"context"
	"sort"

	"gcfs/fsnode"
)

// listLazy mirrors a lazy model directory's children (fsnode's lazy
// directories: a level core's sky.d/textures/, whose listing reads
// core_data) on the first lookup, listing or open inside it; their inodes
// are then made on lookup like every other's. Concurrent callers wait for
// the first (sync.Once), which also orders their reads of d.m.children.
func (d *dirNode) listLazy(ctx context.Context) {
	if !d.m.lazy {
		return
	}
	d.lazyOnce.Do(func() {
		n, ok := d.m.e.(*fsnode.Node)
		if !ok {
			return
		}
		kids := n.List()
		ms := make([]*mnode, 0, len(kids))
		for _, c := range kids {
			if c != nil {
				ms = append(ms, fromNode(c, 0))
			}
		}
		// Sorted here, not through fsys.byName: that map is only written
		// before the mount serves.
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].name < ms[j].name })
		d.m.children = ms
		d.sys.prepareLazy(d.m)
	})
}

// prepareLazy is prepare for a lazy directory's children, made while the
// mount serves: the same name checks, inode numbers unique among them (the
// path hash otherwise, as the build gives), no shared state but atomics.
func (s *fsys) prepareLazy(m *mnode) {
	seen := map[uint64]bool{0: true, 1: true, m.ino: true}
	var prev string
	for i, c := range m.children {
		if !validName(c.name) {
			s.logf("gcfs: %s: entry %q cannot be a file name; left out", pathOr(m, "/"), c.name)
			continue
		}
		if i > 0 && c.name == prev {
			s.logf("gcfs: %s: duplicate entry %q left out", pathOr(m, "/"), c.name)
			continue
		}
		prev = c.name
		if seen[c.ino] {
			c.ino = s.nextIno.Add(1)
		}
		seen[c.ino] = true
		c.added = true
	}
}

// lazyChildren is d's children for a stat: none for a lazy directory (not
// read while another request may be making them), else all.
func (d *dirNode) lazyChildren() []*mnode {
	if d.m.lazy {
		return nil
	}
	return d.m.children
}
