package integration

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"

	"gcfs/discimg/imagefile"
	"gcfs/discimg/imagefile/imagetest"
)

// The images players keep: CHD (written by the real chdman), CSO, ZSO and a
// block device, each checked against the ISO it was made from.

func requireChdman(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("chdman"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chdman (Debian mame-tools) is required in CI")
		}
		t.Skip("chdman not installed")
	}
}

var (
	imgMu   sync.Mutex
	imgMade = map[string]string{}
)

// chdOf makes (once) a CHD of the small disc with chdman.
func chdOf(t testing.TB, name string, args ...string) string {
	t.Helper()
	requireChdman(t)
	d := getDisc(t, "small")
	imgMu.Lock()
	defer imgMu.Unlock()
	if p, ok := imgMade[name]; ok {
		return p
	}
	out := filepath.Join(workDir, name+".chd")
	cmd := exec.Command("chdman", append([]string{args[0], "-i", d.path, "-o", out}, args[1:]...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chdman %v: %v\n%s", args, err, b)
	}
	imgMade[name] = out
	return out
}

// csoOf writes the small disc as CSO v1 (deflate) or ZSO (LZ4), 2048-byte
// blocks, no index shift, incompressible blocks stored.
func csoOf(t testing.TB, kind string) string {
	t.Helper()
	d := getDisc(t, "small")
	imgMu.Lock()
	defer imgMu.Unlock()
	if p, ok := imgMade[kind]; ok {
		return p
	}
	data, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	out := imagetest.WriteCSO(data, map[string]string{"cso": "cso1", "zso": "zso"}[kind], 2048, 0)
	p := filepath.Join(workDir, "small."+kind)
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	imgMade[kind] = p
	return p
}

// TestContainerManifests: gcfs manifest of each container equals the ISO's.
func TestContainerManifests(t *testing.T) {
	d := getDisc(t, "small")
	want, err := gcfs("manifest", d.path)
	if err != nil {
		t.Fatal(err)
	}
	type tc struct {
		name  string
		image func(t testing.TB) string
		kind  string
	}
	cases := []tc{
		{"chd-createcd", func(t testing.TB) string { return chdOf(t, "cd", "createcd") }, "chd"},
		{"chd-createraw", func(t testing.TB) string { return chdOf(t, "raw", "createraw", "-hs", "4096", "-us", "2048") }, "chd"},
		{"cso", func(t testing.TB) string { return csoOf(t, "cso") }, "cso"},
		{"zso", func(t testing.TB) string { return csoOf(t, "zso") }, "zso"},
	}
	// Each CHD codec alone is read byte for byte against the disc in
	// discimg/imagefile (TestCHDFromChdman); here, chdman's defaults.
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			img := c.image(t)
			got, err := gcfs("manifest", img)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("manifest of %s differs from the ISO's (%d vs %d bytes)", img, len(got), len(want))
			}
			out, err := gcfs("identify", "--json", img)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(out), `"kind": "`+c.kind+`"`) {
				t.Fatalf("identify does not name the container %s:\n%s", c.kind, out)
			}
		})
	}
}

// TestCHDIdentifyHash: identify --hash checks the CHD's data SHA-1.
func TestCHDIdentifyHash(t *testing.T) {
	img := chdOf(t, "cd", "createcd")
	out, err := gcfs("identify", "--hash", img)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "matches the CHD header") || !strings.Contains(string(out), "CHD v5") {
		t.Fatalf("identify --hash:\n%s", out)
	}
	out, err = gcfs("info", img, "/")
	if err != nil || !strings.Contains(string(out), "image_codecs:") || !strings.Contains(string(out), "cdlz") {
		t.Fatalf("info /: %v\n%s", err, out)
	}
}

// TestCHDMountReadsByteExact mounts a CD CHD and reads every file.
func TestCHDMountReadsByteExact(t *testing.T) {
	d := getDisc(t, "small")
	img := chdOf(t, "cd", "createcd")
	m := testMount(t, img, "--cache-size", "16MiB")
	n := 0
	err := filepath.WalkDir(m.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(m.dir, p)
		want, ok := d.manifest[filepath.ToSlash(rel)]
		sum, size, err := sha1File(p)
		switch {
		case !ok:
			t.Errorf("%s: not in the manifest", rel)
		case err != nil:
			t.Errorf("%s: %v", rel, err)
		case size != want.size || sum != want.sha1:
			t.Errorf("%s: %d bytes sha1 %s, manifest %d %s", rel, size, sum, want.size, want.sha1)
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(d.manifest) {
		t.Fatalf("read %d files, manifest has %d", n, len(d.manifest))
	}
}

// TestBlockDevice: a read-only loop device of the ISO reads as the ISO (its
// size comes from the device, not stat).
func TestBlockDevice(t *testing.T) {
	d := getDisc(t, "small")
	out, err := exec.Command("losetup", "-r", "-f", "--show", d.path).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") != "" && os.Geteuid() == 0 {
			t.Fatalf("losetup: %v: %s", err, out)
		}
		t.Skipf("no loop device: %v: %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() { exec.Command("losetup", "-d", dev).Run() })
	ls, err := gcfs("ls", dev)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ls), "SYSTEM.CNF") {
		t.Fatalf("gcfs ls %s:\n%s", dev, ls)
	}
	want, _ := gcfs("manifest", d.path)
	got, err := gcfs("manifest", dev)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("manifest of %s differs from the ISO's: %v", dev, err)
	}
	id, err := gcfs("identify", dev)
	if err != nil || !strings.Contains(string(id), "block device") {
		t.Fatalf("identify %s: %v\n%s", dev, err, id)
	}
}

// TestCHDBadHunkMount: a CHD hunk whose data is damaged gives EIO for reads
// of the file over it, one log line naming the image and hunk, and every
// other file still reads.
func TestCHDBadHunkMount(t *testing.T) {
	d := getDisc(t, "small")
	src := chdOf(t, "raw-zlib", "createraw", "-hs", "4096", "-us", "2048", "-c", "zlib")
	// A plain file of a few hunks (bytes of the image: not a range of
	// decoded content, not a view), and where its first hunk is stored.
	var cands []lsEntry
	for _, e := range d.entries {
		if e.Type == "file" && e.Size > 16384 && e.Error == "" {
			cands = append(cands, e)
		}
	}
	sort.Slice(cands, func(a, b int) bool { return cands[a].Size < cands[b].Size })
	var victim lsEntry
	var inf struct {
		Offset *int64 `json:"offset"`
		View   string `json:"view"`
	}
	for _, e := range cands {
		out, err := gcfs("info", "--json", d.path, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		inf.Offset, inf.View = nil, ""
		if err := json.Unmarshal(out, &inf); err != nil {
			t.Fatal(err)
		}
		if inf.Offset != nil && inf.View == "" {
			victim = e
			break
		}
	}
	if victim.Path == "" {
		t.Fatal("no plain file of more than 16 KiB on the disc")
	}
	hunk := *inf.Offset/4096 + 1 // wholly inside the file
	f, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	im, err := imagefile.Open(f, st.Size(), imagefile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	off, length, ok := im.HunkExtent(hunk)
	f.Close()
	if !ok || length < 16 {
		t.Fatalf("hunk %d: stored at %d+%d, ok %v", hunk, off, length, ok)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 8; i++ {
		b[off+length/2+i] ^= 0x5a
	}
	bad := filepath.Join(workDir, "bad-hunk.chd")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	m := testMount(t, bad)
	for range 2 { // the second read fails again, and logs nothing new
		if _, _, err := sha1File(m.path(victim.Path)); !errors.Is(err, syscall.EIO) {
			t.Fatalf("reading %s over the bad hunk: %v, want EIO", victim.Path, err)
		}
	}
	for _, p := range []string{"SYSTEM.CNF", d.paths[len(d.paths)-1]} {
		want := d.manifest[p]
		if sum, n, err := sha1File(m.path(p)); err != nil || sum != want.sha1 || n != want.size {
			t.Fatalf("%s: %v", p, err)
		}
	}
	logb, _ := os.ReadFile(m.logFile)
	lines := 0
	for _, l := range strings.Split(string(logb), "\n") {
		if strings.Contains(l, fmt.Sprintf("hunk %d ", hunk)) {
			lines++
			if !strings.Contains(l, "bad-hunk.chd") || !strings.Contains(l, "zlib") {
				t.Errorf("log line does not name the image and codec: %q", l)
			}
		}
	}
	if lines != 1 {
		t.Fatalf("%d log lines about hunk %d, want 1:\n%s", lines, hunk, logb)
	}
}

// TestCHDParentCLI: a child CHD (chdman -op) needs --parent, refuses a
// wrong one, and with its parent lists, hashes and mounts as the disc it
// was made from.
func TestCHDParentCLI(t *testing.T) {
	d := getDisc(t, "small")
	parent := chdOf(t, "raw", "createraw", "-hs", "4096", "-us", "2048")
	// The child's disc: the parent's with one plain file's bytes changed.
	var victim lsEntry
	for _, e := range d.entries {
		if e.Type == "file" && e.Size > 8192 && e.Error == "" {
			victim = e
			break
		}
	}
	out, err := gcfs("info", "--json", d.path, victim.Path)
	if err != nil {
		t.Fatal(err)
	}
	var inf struct {
		Offset int64 `json:"offset"`
	}
	json.Unmarshal(out, &inf)
	data, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4096; i++ {
		data[inf.Offset+i] ^= 0xa5
	}
	childISO := filepath.Join(workDir, "child.iso")
	if err := os.WriteFile(childISO, data, 0o644); err != nil {
		t.Fatal(err)
	}
	child := filepath.Join(workDir, "child.chd")
	if b, err := exec.Command("chdman", "createraw", "-f", "-i", childISO, "-o", child, "-op", parent, "-hs", "4096", "-us", "2048").CombinedOutput(); err != nil {
		t.Fatalf("chdman: %v\n%s", err, b)
	}
	if _, err := gcfs("ls", child); err == nil || !strings.Contains(err.Error(), "--parent") {
		t.Fatalf("ls of a child without --parent: %v", err)
	}
	if _, err := gcfs("ls", "--parent", chdOf(t, "cd", "createcd"), child); err == nil || !strings.Contains(err.Error(), "parent SHA-1") {
		t.Fatalf("ls with the wrong parent: %v", err)
	}
	// Issue 18 item 12: a parent that is no CHD, and a --parent for an
	// image that is no CHD, are each named for what they are.
	if _, err := gcfs("ls", "--parent", d.path, child); err == nil || !strings.Contains(err.Error(), "--parent "+d.path+": not a CHD (ISO image)") {
		t.Fatalf("ls with an ISO as the parent: %v", err)
	}
	if _, err := gcfs("ls", "--parent", parent, d.path); err == nil || !strings.Contains(err.Error(), "--parent given but the image is not a CHD") {
		t.Fatalf("ls of an ISO with --parent: %v", err)
	}
	want, err := gcfs("manifest", childISO)
	if err != nil {
		t.Fatal(err)
	}
	got, err := gcfs("manifest", "--parent", parent, child)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("manifest of the child differs from its ISO's: %v", err)
	}
	if bytes.Equal(want, mustGcfs(t, "manifest", d.path)) {
		t.Fatal("the child's disc does not differ from the parent's")
	}
	m := testMount(t, child, "--parent", parent)
	sum, n, err := sha1File(m.path(victim.Path))
	if err != nil {
		t.Fatal(err)
	}
	line := fmt.Sprintf("%s\t%d\t%s\n", victim.Path, n, sum)
	if !strings.Contains(string(want), line) {
		t.Fatalf("mounted child's %s is %d bytes %s, not as in its ISO", victim.Path, n, sum)
	}
}

func mustGcfs(t testing.TB, args ...string) []byte {
	t.Helper()
	out, err := gcfs(args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCHDExtract: gcfs extract of a CD CHD writes the files the ISO holds.
func TestCHDExtract(t *testing.T) {
	d := getDisc(t, "small")
	img := chdOf(t, "cd", "createcd")
	out := filepath.Join(t.TempDir(), "x")
	if _, err := gcfs("extract", img, out); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range d.paths {
		want := d.manifest[p]
		sum, size, err := sha1File(filepath.Join(out, filepath.FromSlash(p)))
		if err != nil || sum != want.sha1 || size != want.size {
			t.Fatalf("%s: %d bytes %s (%v), manifest %d %s", p, size, sum, err, want.size, want.sha1)
		}
		n++
	}
	if n == 0 {
		t.Fatal("empty manifest")
	}
}
