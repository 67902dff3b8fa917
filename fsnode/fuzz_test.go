package fsnode

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"gcfs/discimg"
	"gcfs/fsnode/testdisc"
)

// FuzzBuild: whatever the image bytes, Build, Walk, Size, Xattrs and reading
// every file neither panic nor allocate without bound, and raw reads return
// either the bytes or an error, never a short count without one.
func FuzzBuild(f *testing.F) {
	d, err := testdisc.Write(f.TempDir(), testdisc.Options{SampleSize: 3000})
	if err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(d.Path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Add(seed[:17*2048])
	f.Fuzz(func(t *testing.T, data []byte) {
		img, err := discimg.Open(bytes.NewReader(data), int64(len(data)))
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
