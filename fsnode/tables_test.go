package fsnode

import (
	"encoding/binary"
	"fmt"
	"testing"

	"gcfs/discimg"
)

// Issue 18, item 2, through the tree: MPEG.WAD's entries past its end that
// overlap each other (video21 inside video20) or share bytes (video23 =
// video22) keep its table; every subtitle and every video in the run is
// listed, the two past the run are counted.
func TestMPEGBeyondOverlapTree(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	mpeg := mustLookup(t, tree, "G/MPEG.WAD")
	c := mpeg.Container()
	if c == nil {
		t.Fatalf("MPEG.WAD has no table: %v", mpeg.TableError())
	}
	base, _, _ := mpeg.ImageRange()
	slot := func(i int) (uint32, uint32) {
		return binary.LittleEndian.Uint32(c.Header[8+8*i:]), binary.LittleEndian.Uint32(c.Header[12+8*i:])
	}
	s20, n20 := slot(41)
	s22, n22 := slot(45)
	patchImage(t, path, base+8+8*43, append(le32(int32(s20+1)), le32(int32(n20/2))...)) // video21 inside video20
	patchImage(t, path, base+8+8*47, append(le32(int32(s22)), le32(int32(n22))...))     // video23 = video22
	tree, _ = openDisc(t, path, -1, Options{})
	mpeg = mustLookup(t, tree, "G/MPEG.WAD")
	if c = mpeg.Container(); c == nil {
		t.Fatalf("MPEG.WAD stays a plain file: %v", mpeg.TableError())
	}
	for v := range 50 {
		if mpeg.Child(fmt.Sprintf("subtitles%02d", v)) == nil {
			t.Errorf("subtitles%02d not listed", v)
		}
		// video21 starts inside video20, on no pack header: no .pss name
		name := fmt.Sprintf("video%02d", v)
		if listed := mpeg.Child(name+".pss") != nil || mpeg.Child(name) != nil; listed != (v < 48) {
			t.Errorf("%s: listed %v", name, listed)
		}
	}
	v21 := mustLookup(t, tree, "G/MPEG.WAD/video21")
	if in, _ := v21.Xattr(XattrPrefix + "in_file"); in != "G/MPEG1.WAD" {
		t.Errorf("video21: in_file %q", in)
	}
	if c.Sentinels != 2 {
		t.Errorf("sentinels %d, want 2", c.Sentinels)
	}
}

// Issue 18, item 1, through the tree: ARMOR.WAD's table rewritten with byte
// sizes (note 003's unit) keeps every slot name; the container says which
// reading was measured and which is documented.
func TestArmorInBytesTree(t *testing.T) {
	path := copyOf(t)
	tree, _ := openDisc(t, path, -1, Options{})
	armor := mustLookup(t, tree, "G/ARMOR.WAD")
	c := armor.Container()
	if c == nil || c.Reading != discimg.ReadingPairsSectors {
		t.Fatalf("ARMOR.WAD: %+v", c)
	}
	var before []discimg.Extent
	before = append(before, c.Extents...)
	base, _, _ := armor.ImageRange()
	for i := range 30 {
		n := binary.LittleEndian.Uint32(c.Header[12+8*i:])
		patchImage(t, path, base+12+8*int64(i), le32(int32(n*discimg.SectorSize)))
	}
	tree, _ = openDisc(t, path, -1, Options{})
	armor = mustLookup(t, tree, "G/ARMOR.WAD")
	if c = armor.Container(); c == nil || c.Reading != discimg.ReadingPairsBytes || !c.Named || len(c.Extents) != len(before) {
		t.Fatalf("ARMOR.WAD in bytes: %+v", c)
	}
	for i, e := range c.Extents {
		if e.Name != before[i].Name || e.Offset != before[i].Offset || e.Size != before[i].Size {
			t.Errorf("extent %d %+v, was %+v", i, e, before[i])
		}
	}
	mustLookup(t, tree, "G/ARMOR.WAD/wrench5_textures.d/00")
	tbl, _ := armor.Xattr(XattrPrefix + "table")
	doc, _ := armor.Xattr(XattrPrefix + "documented")
	if tbl != "pairs-bytes" || doc != "pairs-sectors" {
		t.Errorf("table %q documented %q", tbl, doc)
	}
}
