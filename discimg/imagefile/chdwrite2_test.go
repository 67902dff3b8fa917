package imagefile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"gcfs/cache"
)

func openBytes(t testing.TB, b []byte, opt Options) (*Image, error) {
	t.Helper()
	return Open(bytes.NewReader(b), int64(len(b)), opt)
}

func TestCHDZstdAndCDZS(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso[:4<<20]
	raw := testCHD{hunkBytes: 4096, unitBytes: 2048, codec: tagZstd, compress: zstdCompress}.build(src)
	im, err := openBytes(t, raw, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c := im.Info().Codecs; len(c) != 1 || c[0] != "zstd" {
		t.Fatalf("codecs %v", c)
	}
	sameBytes(t, im, src)
	if got, want, ok, err := im.VerifyData(); !ok || err != nil || got != want {
		t.Fatalf("data SHA-1 %s vs %s, %v", got, want, err)
	}

	frames, meta := cdFrames(src)
	cd := testCHD{hunkBytes: 8 * cdFrameBytes, unitBytes: cdFrameBytes, codec: tagCDZS, compress: cdzsCompress, meta: [][]byte{meta}}.build(frames)
	im, err = openBytes(t, cd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tr := im.Info().Tracks; len(tr) != 1 || tr[0].Type != "MODE1" {
		t.Fatalf("tracks %+v", tr)
	}
	sameBytes(t, im, src)
}

// hostile CHDs: each is refused with a FormatError (or read with a HunkError), never a panic.
func TestCHDHostile(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso[:256<<10]
	good := testCHD{hunkBytes: 4096, unitBytes: 2048, codec: tagZstd, compress: zstdCompress}.build(src)
	if _, err := openBytes(t, good, Options{}); err != nil {
		t.Fatal(err)
	}
	mapOff := int(beU64(good[40:]))
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	cases := map[string][]byte{
		"version 4":        mut(func(b []byte) []byte { b[15] = 4; return b }),
		"hunk size 0":      mut(func(b []byte) []byte { copy(b[56:60], []byte{0, 0, 0, 0}); return b }),
		"unit not divisor": mut(func(b []byte) []byte { copy(b[60:64], []byte{0, 0, 3, 0}); return b }),
		"map past end":     mut(func(b []byte) []byte { copy(b[40:48], []byte{0, 0, 0, 1, 0, 0, 0, 0}); return b }),
		"huge logical":     mut(func(b []byte) []byte { copy(b[32:40], []byte{0, 0, 0, 1, 0, 0, 0, 0}); return b }),
		"map CRC":          mut(func(b []byte) []byte { b[mapOff+10] ^= 1; return b }),
		"map length":       mut(func(b []byte) []byte { copy(b[mapOff:mapOff+4], []byte{0x7f, 0, 0, 0}); return b }),
		"first hunk off":   mut(func(b []byte) []byte { b[mapOff+4] = 0x7f; return b }),
		"truncated":        good[:len(good)-40],
		"header only":      good[:chdV5HdrLen],
		"unknown codec":    mut(func(b []byte) []byte { copy(b[16:20], "abcd"); return b }),
		"has parent":       mut(func(b []byte) []byte { b[110] = 1; return b }),
	}
	for name, b := range cases {
		_, err := openBytes(t, b, Options{})
		if err == nil {
			t.Errorf("%s: opened", name)
			continue
		}
		if !errors.Is(err, ErrFormat) && !errors.Is(err, ErrParent) {
			t.Errorf("%s: %v is neither ErrFormat nor ErrParent", name, err)
		}
	}
	// A corrupt hunk: the open succeeds, that hunk's reads fail, others read.
	gi, _ := openBytes(t, good, Options{})
	e := gi.chd.entries[20]
	b := mut(func(b []byte) []byte { b[e.offset+uint64(e.length)/2] ^= 0xff; return b })
	im, err := openBytes(t, b, Options{})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	if _, err := im.ReadAt(buf, 20*4096); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of corrupt hunk 20: %v", err)
	}
	if _, err := im.ReadAt(buf, 21*4096); err != nil || !bytes.Equal(buf, src[21*4096:22*4096]) {
		t.Fatalf("hunk 21: %v", err)
	}
}

func beU64(b []byte) uint64 {
	var v uint64
	for _, x := range b[:8] {
		v = v<<8 | uint64(x)
	}
	return v
}

func TestCHDParent(t *testing.T) {
	iso, want := sourceISO(t)
	requireChdman(t)
	dir := t.TempDir()
	parent := chdman(t, iso, "createraw", "-hs", "4096", "-us", "2048")
	// The child: the same disc with a few sectors changed.
	child := append([]byte(nil), want...)
	for _, s := range []int{20, 3000, 9000} {
		for i := 0; i < 2048; i++ {
			child[s*2048+i] ^= byte(i)
		}
	}
	childISO := filepath.Join(dir, "child.iso")
	if err := os.WriteFile(childISO, child, 0o644); err != nil {
		t.Fatal(err)
	}
	childCHD := filepath.Join(dir, "child.chd")
	chdmanRun(t, "createraw", "-i", childISO, "-o", childCHD, "-op", parent, "-hs", "4096", "-us", "2048")
	cb, _ := os.ReadFile(childCHD)

	if _, err := openBytes(t, cb, Options{}); !errors.Is(err, ErrParent) {
		t.Fatalf("child without parent: %v", err)
	}
	other := testCHD{hunkBytes: 4096, unitBytes: 2048, codec: tagZstd, compress: zstdCompress}.build(want[:1<<20])
	op, err := openBytes(t, other, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openBytes(t, cb, Options{Parent: op}); !errors.Is(err, ErrParent) {
		t.Fatalf("child with the wrong parent: %v", err)
	}
	pp := openPath(t, parent, Options{})
	im, err := openBytes(t, cb, Options{Parent: pp})
	if err != nil {
		t.Fatal(err)
	}
	if im.Info().ParentSHA1 == "" {
		t.Fatal("no parent SHA-1 in info")
	}
	refs := 0
	for _, e := range im.chd.entries {
		if e.typ == compParent {
			refs++
		}
	}
	if refs == 0 {
		t.Fatal("child has no parent references")
	}
	sameBytes(t, im, child)
	if got, wantSum, ok, err := im.VerifyData(); !ok || err != nil || got != wantSum {
		t.Fatalf("child data SHA-1 %s vs %s: %v", got, wantSum, err)
	}
}

// TestSharedCacheKeys: a tree block whose file number equals the image's
// (inode numbers are path hashes, so one can) does not shadow a hunk.
func TestSharedCacheKeys(t *testing.T) {
	_, iso := sourceISO(t)
	src := iso[:64<<10]
	c := cache.New(1 << 20)
	im, err := openBytes(t, testCHD{hunkBytes: 4096, unitBytes: 2048, codec: tagZstd, compress: zstdCompress}.build(src), Options{Cache: c})
	if err != nil {
		t.Fatal(err)
	}
	junk := bytes.Repeat([]byte{0xee}, 4096)
	for b := 0; b < 16; b++ {
		c.Get(cache.Key{File: im.chd.fileID, Block: b}, func() ([]byte, error) { return junk, nil })
	}
	sameBytes(t, im, src)
}
