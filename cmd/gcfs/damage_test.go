package main

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gcfs/discimg"
	"gcfs/discimg/mkdisc"
	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
)

// damaged copies the test disc and applies damage to the copy.
func damaged(t *testing.T, d *testdisc.Disc, damage func(path string) error) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "damaged.iso")
	b, err := os.ReadFile(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := damage(p); err != nil {
		t.Fatal(err)
	}
	return p
}

// rootExtent reads the root directory's LBA and size from the primary
// volume descriptor.
func rootExtent(t *testing.T, path string) (lba, size uint32) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rec := b[16*discimg.SectorSize+156:]
	return binary.LittleEndian.Uint32(rec[2:]), binary.LittleEndian.Uint32(rec[10:])
}

func linesWith(s, sub string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			n++
		}
	}
	return n
}

// Issue 10 case 2: a damaged directory is said on stderr, once, naming it,
// by every command that walks it; manifest and extract exit non-zero.
func TestDamagedDirectoriesAreReported(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rootLBA, rootSize := rootExtent(t, d.Path)
	cases := []struct {
		name   string
		damage func(p string) error
		says   string // what names the directory in the message
	}{
		{"G-extent-past-end", func(p string) error {
			return testdisc.PatchRecord(p, "G", func(rec []byte) { testdisc.Both32(rec[2:], 1<<22) })
		}, "directory /G "},
		{"G-loops-to-root", func(p string) error {
			return testdisc.PatchRecord(p, "G", func(rec []byte) {
				testdisc.Both32(rec[2:], rootLBA)
				testdisc.Both32(rec[10:], rootSize)
			})
		}, "directory /G "},
		{"root-record", func(p string) error {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteAt([]byte{5}, 16*discimg.SectorSize+156)
			return err
		}, "root directory record"},
		{"cut-inside-root", func(p string) error {
			return os.Truncate(p, int64(rootLBA)*discimg.SectorSize+100)
		}, "directory / "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := damaged(t, d, c.damage)
			r := treeRun(t, "ls", "-R", img)
			if r.err != nil {
				t.Errorf("ls -R: %v", r.err)
			}
			if n := linesWith(r.errOut, c.says); n != 1 {
				t.Errorf("ls -R: %d stderr lines name %q, want 1:\n%s", n, c.says, r.errOut)
			}
			r = treeFails(t, "manifest", img)
			if n := linesWith(r.errOut, c.says); n != 1 {
				t.Errorf("manifest: %d stderr lines name %q, want 1:\n%s", n, c.says, r.errOut)
			}
			if !strings.Contains(r.err.Error(), "could not be listed") {
				t.Errorf("manifest's exit message %q does not say directories were lost", r.err)
			}
			r = treeFails(t, "extract", "-q", img, filepath.Join(t.TempDir(), "out"))
			if n := linesWith(r.errOut, c.says); n != 1 {
				t.Errorf("extract: %d stderr lines name %q, want 1:\n%s", n, c.says, r.errOut)
			}
		})
	}
	t.Run("undamaged-exits-0", func(t *testing.T) {
		r := treeRun(t, "manifest", d.Path)
		if r.err == nil {
			t.Fatal("the test disc has a corrupt stream; manifest must fail on it")
		}
		if strings.Contains(r.err.Error(), "could not be listed") {
			t.Errorf("manifest of an undamaged tree says directories were lost: %v", r.err)
		}
	})
}

// Issue 10 case 3: a file with a recorded error gets one answer from every
// front end: refused, with a message naming it, and a non-zero exit.
func TestRecordedFileErrorRefusedEverywhere(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const name = "SYSTEM.CNF"
	cases := []struct {
		name  string
		patch func(rec []byte)
		says  string
	}{
		{"lba-le-differs-from-be", func(rec []byte) { rec[9]++ }, "differs from big-endian"},
		{"interleaved", func(rec []byte) { rec[26], rec[27] = 1, 1 }, "interleaved"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := damaged(t, d, func(p string) error { return testdisc.PatchRecord(p, name, c.patch) })
			r := treeFails(t, "cat", img, name)
			if r.out != "" {
				t.Errorf("cat wrote %d bytes of a refused file", len(r.out))
			}
			if !strings.Contains(r.err.Error(), name) || !strings.Contains(r.err.Error(), c.says) {
				t.Errorf("cat: %q does not name %s and %q", r.err, name, c.says)
			}
			if n := linesWith(r.errOut, name); n != 0 {
				t.Errorf("cat: %s also reported on stderr (%d lines): %s", name, n, r.errOut)
			}
			r = treeFails(t, "manifest", img)
			if strings.Contains(r.out, name+"\t") {
				t.Errorf("manifest lists %s", name)
			}
			if n := linesWith(r.errOut, name); n != 1 {
				t.Errorf("manifest: %d stderr lines name %s, want 1:\n%s", n, name, r.errOut)
			}
			out := filepath.Join(t.TempDir(), "out")
			r = treeFails(t, "extract", "-q", img, out)
			if _, err := os.Stat(filepath.Join(out, name)); err == nil {
				t.Errorf("extract wrote %s", name)
			}
			if n := linesWith(r.errOut, name); n != 1 {
				t.Errorf("extract: %d stderr lines name %s, want 1:\n%s", n, name, r.errOut)
			}
		})
	}
}

// Issue 10 case 8: an error line names its file once, and a failing file is
// reported once per command.
func TestFileErrorsSaidOnce(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	img := damaged(t, d, func(p string) error { return os.Truncate(p, d.Size-3000) })
	const name = "ZTAIL.DUP"
	for _, args := range [][]string{
		{"cat", img, name},
		{"manifest", img},
		{"extract", "-q", img, filepath.Join(t.TempDir(), "out")},
	} {
		r := treeFails(t, args...)
		all := r.errOut + r.err.Error() + "\n"
		if strings.Contains(all, name+": "+name) {
			t.Errorf("%s: the path is repeated: %s", args[0], all)
		}
		if n := linesWith(all, name); n != 1 {
			t.Errorf("%s: %d lines name %s, want 1:\n%s", args[0], n, name, all)
		}
		if !strings.Contains(all, "image has") {
			t.Errorf("%s: the message does not give the image's size: %s", args[0], all)
		}
	}
}

// Issue 10 case 4: an image that shrinks under manifest: the bytes it lost
// are an error, not a hole hashed as zeros.
func TestManifestImageShrinks(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(d.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := discimg.Open(f, d.Size)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := fsnode.Build(img, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := tree.Lookup("ZTAIL.DUP")
	if err != nil {
		t.Fatal(err)
	}
	off, size, _ := n.ImageRange()
	if err := os.Truncate(d.Path, off+size/2); err != nil {
		t.Fatal(err)
	}
	sawTail := false
	for _, h := range hashTree(tree.Root, f, img.Size) {
		want, whole := d.Files[h.path]
		if h.path == "ZTAIL.DUP" {
			sawTail = true
			var se *fsnode.ShortImageError
			if h.err == nil || !errors.As(h.err, &se) {
				t.Errorf("ZTAIL.DUP after the image shrank: sha1 %s, err %v; want a ShortImageError", h.sha1, h.err)
			} else if se.ImageSize != off+size/2 {
				t.Errorf("ShortImageError says the image has %d bytes, it has %d", se.ImageSize, off+size/2)
			}
			continue
		}
		if whole && h.err == nil {
			sum := sha1.Sum(want)
			if h.sha1 != hex.EncodeToString(sum[:]) {
				t.Errorf("%s: sha1 %s, want %x", h.path, h.sha1, sum)
			}
		}
	}
	if !sawTail {
		t.Error("ZTAIL.DUP not hashed")
	}
	// Straight at the sparse walk: a range past the end is an error.
	if err := sparseWalk(f, off, off+size, func(int64, int64) error { return nil },
		func(int64, int64) error { return nil }); !errors.Is(err, fsnode.ErrShortImage) {
		t.Errorf("sparseWalk past the current end: %v, want ErrShortImage", err)
	}
	// extract's raw copies go through the same walk.
	out, err := os.Create(filepath.Join(t.TempDir(), "ZTAIL.DUP"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if err := copyRawSparse(out, f, off, size, make([]byte, 1<<16)); !errors.Is(err, fsnode.ErrShortImage) {
		t.Errorf("extract's copy past the current end: %v, want ErrShortImage", err)
	}
	if err := copyRangeKernel(int(out.Fd()), int(f.Fd()), out, f, off, off+size, off, make([]byte, 1<<16)); !errors.Is(err, fsnode.ErrShortImage) {
		t.Errorf("extract's small-file copy past the current end: %v, want ErrShortImage", err)
	}
}

// Issue 10 case 5: thousands of duplicate records are a few lines and a count.
func TestRepeatedWarningsSummarised(t *testing.T) {
	const files = 1200
	p, _, err := testdisc.WriteDuplicates(t.TempDir(), files, func(i int) []byte { return []byte(fmt.Sprintf("file %d\n", i)) })
	if err != nil {
		t.Fatal(err)
	}
	r := treeRun(t, "ls", "-R", p)
	if r.err != nil {
		t.Fatalf("ls -R: %v", r.err)
	}
	lines := strings.Count(r.errOut, "\n")
	if lines > 20 {
		t.Errorf("ls -R printed %d warning lines for %d duplicate records", lines, files-1)
	}
	if n := linesWith(r.errOut, "duplicate name"); n < 1 {
		t.Errorf("no duplicate is shown: %s", r.errOut)
	}
	// The count of what is not shown is said: recorded ones and counted ones.
	total := 0
	for _, l := range strings.Split(r.errOut, "\n") {
		var n int
		if i := strings.Index(l, "warning: "); i >= 0 {
			if _, err := fmt.Sscanf(strings.TrimPrefix(l[i+len("warning: "):], "and "), "%d more", &n); err == nil {
				total += n
			}
		}
	}
	if shown := linesWith(r.errOut, "duplicate name"); total+shown-1 < files-1 {
		t.Errorf("%d shown + %d counted, want all %d duplicates accounted for:\n%s", shown, total, files-1, r.errOut)
	}
	if got := treeOK(t, "ls", p, "D"); strings.TrimSpace(got) != "DUP" {
		t.Errorf("ls D: %q, want the one DUP", got)
	}
}

// Issue 10 case 3, as reported: a multi-extent file whose extents are not
// contiguous was served as its first extent; now every front end refuses it.
func TestMultiExtentNotContiguousRefused(t *testing.T) {
	fullPassOnly(t)
	img, _ := genLayout(t, mkdisc.Small)
	// RC2.HDR becomes the first extent of a file whose second is
	// SCUS_972.68's (renamed), which does not follow it.
	if err := testdisc.PatchRecord(img, "RC2.HDR", func(rec []byte) { rec[25] |= 0x80 }); err != nil {
		t.Fatal(err)
	}
	if err := testdisc.PatchRecord(img, "SCUS_972.68", func(rec []byte) {
		rec[32] = 9
		copy(rec[33:33+13], "RC2.HDR;1\x00\x00\x00\x00")
	}); err != nil {
		t.Fatal(err)
	}
	const name = "RC2.HDR"
	r := treeFails(t, "cat", img, name)
	if r.out != "" || !strings.Contains(r.err.Error(), "not contiguous") {
		t.Errorf("cat: %d bytes, %v", len(r.out), r.err)
	}
	r = treeFails(t, "manifest", img)
	if strings.Contains(r.out, name+"\t") || linesWith(r.errOut, name) != 1 {
		t.Errorf("manifest: listed %v, stderr %s", strings.Contains(r.out, name+"\t"), r.errOut)
	}
	out := filepath.Join(t.TempDir(), "out")
	r = treeFails(t, "extract", "-q", img, out)
	if _, err := os.Stat(filepath.Join(out, name)); err == nil || linesWith(r.errOut, name) != 1 {
		t.Errorf("extract: wrote it (%v), stderr %s", err == nil, r.errOut)
	}
}
