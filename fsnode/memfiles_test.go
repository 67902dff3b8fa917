package fsnode

import (
	"bytes"
	"testing"

	"golang.org/x/sys/unix"

	"gcfs/memfile"
)

// memFileBytes reads the whole file behind fd and closes fd.
func memFileBytes(t *testing.T, fd int) []byte {
	t.Helper()
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size)
	if n, err := unix.Pread(fd, b, 0); err != nil || int64(n) != st.Size {
		t.Fatalf("pread: %d of %d bytes, %v", n, st.Size, err)
	}
	return b
}

// TestMemFile: a decoded file's MemFile holds its decoded bytes, once the
// tree has a store that takes it; without a store, for a file larger than
// the store takes, for a corrupt stream and for a file that is not decoded
// there is none, and the file reads as before.
func TestMemFile(t *testing.T) {
	d := writeDisc(t)
	tree, _ := openDisc(t, d.Path, -1, Options{CacheSize: 64 << 20, ReadAhead: 2})
	p := "G/MISC.WAD/frontend"
	n := mustLookup(t, tree, p)
	if _, ok := n.MemFile(); ok {
		t.Fatal("a MemFile without a store")
	}
	small, err := memfile.New(4*(n.Size()-1), 100) // takes files just short of n
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	tree.SetMemFiles(small)
	if _, ok := n.MemFile(); ok {
		t.Fatalf("a MemFile of %d bytes from a store that takes %d", n.Size(), small.MaxFile())
	}
	if !bytes.Equal(readAll(t, n), d.Files[p]) {
		t.Fatalf("%s: read differs", p)
	}

	s, err := memfile.New(64<<20, 100)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tree.SetMemFiles(s)
	fd, ok := n.MemFile()
	if !ok {
		t.Fatal("no MemFile for a decoded file the store takes")
	}
	if got := memFileBytes(t, fd); !bytes.Equal(got, d.Files[p]) {
		t.Fatalf("%s: MemFile holds %d bytes, not mkdisc's %d", p, len(got), len(d.Files[p]))
	}
	if !s.Holds(n.Ino) {
		t.Error("the store does not hold the file it made")
	}
	for c := range d.Corrupt {
		if _, ok := mustLookup(t, tree, c).MemFile(); ok {
			t.Errorf("%s: a MemFile of a corrupt stream", c)
		}
	}
	if _, ok := mustLookup(t, tree, "SYSTEM.CNF").MemFile(); ok {
		t.Error("a MemFile of a raw file")
	}
	tree.SetMemFiles(nil)
	if _, ok := n.MemFile(); ok {
		t.Error("a MemFile after the store was taken away")
	}
}
