package fusefs

import (
	"context"

	"gcfs/fsnode"
)

// listLazy makes a lazy model directory's inodes (fsnode's lazy
// directories: a level core's sky.d/textures/, whose listing reads
// core_data) on the first lookup, listing or stat inside it; every other
// directory's were made at mount. Concurrent callers wait for the first.
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
		d.m.children = ms
		d.populate(ctx, map[uint64]bool{d.m.ino: true})
	})
}

// lazyChildren is d's children for a stat: none for a lazy directory (not
// read while another request may be making them), else all.
func (d *dirNode) lazyChildren() []*mnode {
	if d.m.lazy {
		return nil
	}
	return d.m.children
}
