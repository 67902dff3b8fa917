package testdisc

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// WriteRecordFlood writes dir/flood.iso, an image made by hand: the root
// lists directories D0 … D<dirs-1>, each an extent of dirBytes (rounded up to
// whole sectors) of file records all pointing at the one-sector file the root
// also lists as FILE, the i-th (counting over all directories) named name(i):
// a flood of duplicate records (of one name, when name says so; of one file
// under many names otherwise), dirs*dirBytes of them in all. With dirRecords
// the records are directory records, all of the root's extent instead.
func WriteRecordFlood(dir string, dirs int, dirBytes int64, dirRecords bool, name func(i int) string) (path string, err error) {
	secs := (dirBytes + sector - 1) / sector
	const (
		rootLBA = 18
		fileLBA = 19
		firstD  = 20
	)
	total := firstD + int64(dirs)*secs
	path = filepath.Join(dir, "flood.iso")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}()
	rec := func(b []byte, lba, size int64, flags byte, id string) int {
		n := 33 + len(id)
		n += n & 1
		b[0] = byte(n)
		Both32(b[2:], uint32(lba))
		Both32(b[10:], uint32(size))
		b[25] = flags
		binary.LittleEndian.PutUint16(b[28:], 1)
		binary.BigEndian.PutUint16(b[30:], 1)
		b[32] = byte(len(id))
		copy(b[33:], id)
		return n
	}
	// Volume descriptors: the primary at 16, the terminator at 17.
	pvd := make([]byte, 2*sector)
	pvd[0], pvd[6] = 1, 1
	copy(pvd[1:], "CD001")
	copy(pvd[8:40], fmt.Sprintf("%-32s", ""))
	copy(pvd[40:72], fmt.Sprintf("%-32s", "FLOOD"))
	Both32(pvd[80:], uint32(total))
	binary.LittleEndian.PutUint16(pvd[128:], sector)
	binary.BigEndian.PutUint16(pvd[130:], sector)
	rec(pvd[156:190], rootLBA, sector, 2, "\x00")
	pvd[sector], pvd[sector+6] = 255, 1
	copy(pvd[sector+1:], "CD001")
	if _, err := f.WriteAt(pvd, 16*sector); err != nil {
		return "", err
	}
	root := make([]byte, sector)
	p := rec(root, rootLBA, sector, 2, "\x00")
	p += rec(root[p:], rootLBA, sector, 2, "\x01")
	p += rec(root[p:], fileLBA, 5, 0, "FILE;1")
	for i := 0; i < dirs; i++ {
		id := fmt.Sprintf("D%d", i)
		if p+34+len(id) > sector {
			return "", fmt.Errorf("testdisc: %d directories do not fit the root's sector", dirs)
		}
		p += rec(root[p:], firstD+int64(i)*secs, secs*sector, 2, id)
	}
	if _, err := f.WriteAt(root, rootLBA*sector); err != nil {
		return "", err
	}
	if _, err := f.WriteAt([]byte("flood"), fileLBA*sector); err != nil {
		return "", err
	}
	// Sectors of records, the first with "." and ".." before them.
	seq := 0
	b := make([]byte, sector)
	for i := 0; i < dirs; i++ {
		lba := firstD + int64(i)*secs
		for s := int64(0); s < secs; s++ {
			clear(b)
			p := 0
			if s == 0 {
				p += rec(b, lba, secs*sector, 2, "\x00")
				p += rec(b[p:], rootLBA, sector, 2, "\x01")
			}
			for {
				id := name(seq)
				if !dirRecords {
					id += ";1"
				}
				if p+33+len(id)+1 > sector {
					break
				}
				if dirRecords {
					p += rec(b[p:], rootLBA, sector, 2, id)
				} else {
					p += rec(b[p:], fileLBA, 5, 0, id)
				}
				seq++
			}
			if _, err := f.WriteAt(b, (lba+s)*sector); err != nil {
				return "", err
			}
		}
	}
	return path, nil
}
