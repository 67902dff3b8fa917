package fsnode

import (
	"strconv"
	"strings"

	"gcfs/codec"
	"gcfs/discimg"
)

// XattrPrefix starts every extended attribute name of the tree.
const XattrPrefix = "user.gcfs."

// Xattrs lists the node's extended attributes, including user.gcfs.error when
// the file cannot be read whole. Values are decimal strings for numbers.
// For a decoded file this runs the size scan (to know whether it is corrupt).
func (n *Node) Xattrs() []Attr {
	var a []Attr
	add := func(name, value string) { a = append(a, Attr{XattrPrefix + name, value}) }
	num := func(name string, v int64) { add(name, strconv.FormatInt(v, 10)) }
	if n.hasRange {
		num("offset", n.off)
		num("lba", n.off/discimg.SectorSize)
		num("disc_size", n.size)
	}
	if n.within != nil {
		num("parent_offset", n.woff)
	}
	if n.inFile != "" {
		add("in_file", n.inFile)
	}
	if n.hasExpected {
		num("expected_size", n.expected)
	}
	if n.vm != nil {
		add("view", n.vm.kind)
		add("source", n.vm.source.path)
		if n.vm.pixelOrder != "" {
			add("pixel_order", n.vm.pixelOrder)
		}
		if n.vm.lazy != nil {
			n.lazyXattrs(add)
		}
	}
	n.coreXattrs(add)
	if n.viewDirOf != nil { // a subtitle blob's NAME.d/ of SRT views
		add("source", n.viewDirOf.path)
	}
	switch n.Kind {
	case Decoded:
		add("wad_tag", n.hdr.Tag)
		num("compressed_size", n.hdr.Size)
	case Dir:
		if p := n.parts; p != nil {
			add("table", string(p.Layout))
			num("skipped", int64(len(p.Skipped)))
		}
		if c := n.cont; c != nil {
			if c.Level != nil {
				num("level_id", int64(c.Level.ID))
				name := c.Level.Name
				if name == "" {
					name = discimg.LevelName(c.Level.ID)
				}
				add("level_name", name)
				num("reverb", int64(c.Level.Reverb))
			}
			add("family", c.Family)
			add("table", string(c.Reading))
			if c.Documented != "" && c.Documented != c.Reading {
				// the family's published reading, when measurement chose
				// another (a pair table in the other unit is still named)
				add("documented", string(c.Documented))
			}
			num("skipped", int64(c.Skipped))
			if n.toc != "" {
				add("toc", n.toc)
			}
		}
	}
	// The error without the path it starts with: the attribute is the
	// file's own.
	if n.Kind != Dir {
		if err := n.Err(); err != nil {
			add("error", oneLine(strings.TrimPrefix(err.Error(), n.path+": ")))
		} else if w := n.Warning(); w != nil {
			add("error", oneLine(w.Error()))
		}
	} else if err := n.dirErr(); err != nil {
		add("error", oneLine(strings.TrimPrefix(err.Error(), n.path+": ")))
	}
	return a
}

// dirErr says what is wrong with a directory: its record (a loop, an extent
// outside the image) or, for a container, bytes of it past the image's end.
func (n *Node) dirErr() error {
	if n.staticErr != nil {
		return n.staticErr
	}
	if n.entry != nil {
		return n.entry.Err
	}
	return nil
}

// Xattr returns one attribute's value by full name.
func (n *Node) Xattr(name string) (string, bool) {
	for _, a := range n.Xattrs() {
		if a.Name == name {
			return a.Value, true
		}
	}
	return "", false
}

func oneLine(s string) string { return strings.ReplaceAll(s, "\n", " ") }

// Container is the table of a container directory, or nil.
func (n *Node) Container() *discimg.Container { return n.cont }

// TableError says why a G/*.WAD stayed a plain file (its table could not be
// read), or nil.
func (n *Node) TableError() error { return n.tableErr }

// Extent is the container table entry behind a file inside a container, or nil.
func (n *Node) Extent() *discimg.Extent { return n.extent }

// WadOf is, for NAME.wad, the decoded NAME whose stream it is (nil for other
// nodes): the two are one stored range.
func (n *Node) WadOf() *Node { return n.wadOf }

// StreamHeader is a decoded file's WAD header (zero for other nodes).
func (n *Node) StreamHeader() codec.Header { return n.hdr }

// ImageRange returns the image byte offset and length of the node's bytes on
// disc: a raw file's bytes, a decoded file's stream extent, an ISO directory's
// or container's extent. ok is false for nodes without one (the root's
// groups). A raw reader may splice [off, off+size) straight from the image
// when Err() is nil.
func (n *Node) ImageRange() (off, size int64, ok bool) {
	return n.off, n.size, n.hasRange
}
