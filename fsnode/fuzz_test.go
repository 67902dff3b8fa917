package fsnode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"testing"

	"gcfs/discimg"
	"gcfs/fsnode/testdisc"
)

// fuzzImage applies the fuzz input to a copy of base: a list of patches
// {u32 offset (mod the image size), u8 n, n bytes}, and a first byte 0xFF
// followed by a u32 cuts the image to that length (mod its size). Go's fuzzer
// crawls with 100 KB inputs; patches keep the inputs small.
func fuzzImage(base, data []byte) []byte {
	img := append([]byte(nil), base...)
	if len(data) >= 5 && data[0] == 0xFF {
		img = img[:int(binary.LittleEndian.Uint32(data[1:])%uint32(len(img)))]
		data = data[5:]
	}
	for len(data) >= 5 && len(img) > 0 {
		off := int(binary.LittleEndian.Uint32(data) % uint32(len(img)))
		n := int(data[4])
		data = data[5:]
		n = min(n, len(data))
		copy(img[off:], data[:n])
		data = data[n:]
	}
	return img
}

func patch(off uint32, b ...byte) []byte {
	p := binary.LittleEndian.AppendUint32(nil, off)
	return append(append(p, byte(len(b))), b...)
}

// FuzzBuild: whatever the image bytes, Build, Walk, Size, Xattrs and reading
// every file neither panic nor allocate without bound, and reads return
// either the bytes or an error, never a short count without one.
func FuzzBuild(f *testing.F) {
	d, err := testdisc.Write(f.TempDir(), testdisc.Options{SampleSize: 3000})
	if err != nil {
		f.Fatal(err)
	}
	base, err := os.ReadFile(d.Path)
	if err != nil {
		f.Fatal(err)
	}
	img, err := discimg.Open(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		f.Fatal(err)
	}
	misc, _ := img.Lookup("G/MISC.WAD")
	m := uint32(misc.Offset())
	f.Add([]byte{})
	f.Add(patch(m+8, 0xff, 0xff, 0, 0))                 // debug_font starts far away
	f.Add(patch(m+12, 0, 0, 0, 0x80))                   // a huge size
	f.Add(patch(m, 0x7c, 0x13))                         // the SCENE start-list family
	f.Add(patch(m+3*2048+3, 0xff, 0xff, 0xff, 0x7f))    // irx declares more than its extent
	f.Add(patch(m+3*2048+40, 0x01, 'a', 'b', 'c', 'd')) // damage inside irx
	f.Add(append([]byte{0xFF}, binary.LittleEndian.AppendUint32(nil, m+5000)...))
	f.Fuzz(func(t *testing.T, data []byte) {
		b := fuzzImage(base, data)
		img, err := discimg.Open(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		tree, err := Build(img, Options{MaxDecoded: 1 << 20, CacheSize: 1 << 20})
		if err != nil {
			return
		}
		buf := make([]byte, 64<<10)
		_ = tree.Walk(func(n *Node) error {
			_ = n.Xattrs()
			if n.IsDir() {
				return nil
			}
			size := n.Size()
			if size < 0 || (n.Kind == Decoded && size > 1<<20) {
				t.Fatalf("%s: size %d", n.Path(), size)
			}
			r, err := n.Open()
			if err != nil {
				return nil
			}
			for off := int64(0); off < r.Size() && off < 4<<20; off += int64(len(buf)) {
				got, err := r.ReadAt(buf, off)
				want := min(int64(len(buf)), r.Size()-off)
				if int64(got) < want && (err == nil || errors.Is(err, io.EOF)) {
					t.Fatalf("%s: short read %d of %d at %d without an error", n.Path(), got, want, off)
				}
				if err != nil && !errors.Is(err, io.EOF) {
					break
				}
			}
			return nil
		})
	})
}
