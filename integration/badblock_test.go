package integration

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"gcfs/discimg"
	"gcfs/discimg/imagefile/imagetest"
	"gcfs/fsnode"
	"gcfs/fsnode/testdisc"
)

// csoWithBadSectors writes iso as a CSO v1 of 2048-byte blocks in which the
// blocks holding the given image sectors fail to decode.
func csoWithBadSectors(t *testing.T, iso []byte, secs ...int64) string {
	t.Helper()
	c := imagetest.WriteCSO(iso, "cso1", 2048, 0)
	for _, sec := range secs {
		idx := func(i int64) int64 { return int64(binary.LittleEndian.Uint32(c[24+4*i:]) &^ 0x80000000) }
		start, end := idx(sec), idx(sec+1)
		binary.LittleEndian.PutUint32(c[24+4*sec:], uint32(start)) // deflate, not stored
		for i := start; i < end; i++ {
			c[i] = 0xff // a reserved deflate block type
		}
	}
	p := filepath.Join(t.TempDir(), "bad.cso")
	if err := os.WriteFile(p, c, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// backgroundMount mounts image in the background as a user does and
// returns the mount and what gcfs mount printed on stderr.
func backgroundMount(t *testing.T, image string) (*mounted, string) {
	t.Helper()
	requireFUSE(t)
	dir, err := os.MkdirTemp(workDir, "mnt-")
	if err != nil {
		t.Fatal(err)
	}
	m := &mounted{dir: dir, logFile: dir + ".log"}
	cmd := exec.Command(gcfsBin, "mount", "--log-file", m.logFile, image, dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("gcfs mount: %v: %s", err, stderr.String())
	}
	m.pid = serverPID(dir)
	t.Cleanup(func() { m.unmount(t) })
	return m, stderr.String()
}

// Issue 18 items 4 and 5 in a mount: a CSO of the small disc whose block
// holding /G's second sector fails, and whose block holding one VAG's first
// bytes fails. The mount starts, says on its stderr that /G lost entries,
// serves the rest; the VAG is EIO with user.gcfs.error saying why, and the
// VAGs after it keep .vag and .wav.
func TestBadBlocksAtMount(t *testing.T) {
	d := getDisc(t, "small")
	iso, err := os.ReadFile(d.path)
	if err != nil {
		t.Fatal(err)
	}
	im, err := discimg.Open(bytes.NewReader(iso), int64(len(iso)))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := im.Lookup("G")
	if !ok || g.Size <= discimg.SectorSize {
		t.Fatalf("/G: %v, want two sectors", g)
	}
	tree, err := fsnode.Build(im, fsnode.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The victim: a VAG whose sector holds no other VAG's start, three
	// more VAGs after it within the build's merged probe reads.
	dir, err := tree.Lookup("G/HUD.WAD/vendor_audio")
	if err != nil {
		t.Fatal(err)
	}
	if hud, _ := im.Lookup("G/HUD.WAD"); hud == nil {
		t.Fatal("no G/HUD.WAD")
	}
	var vags []*fsnode.Node
	for _, c := range dir.Children {
		if _, _, ok := c.ImageRange(); ok && strings.HasSuffix(c.Name, ".vag") {
			vags = append(vags, c)
		}
	}
	off := func(n *fsnode.Node) int64 { o, _, _ := n.ImageRange(); return o }
	sort.Slice(vags, func(i, j int) bool { return off(vags[i]) < off(vags[j]) })
	victim := -1
	for i := 1; i+3 < len(vags); i++ {
		s := off(vags[i]) / discimg.SectorSize
		if off(vags[i-1])/discimg.SectorSize != s && off(vags[i+1])/discimg.SectorSize != s && off(vags[i+3])-off(vags[i]) < 8<<10 {
			victim = i
			break
		}
	}
	if victim < 0 {
		t.Fatal("no VAG of vendor_audio fits")
	}
	vsec := off(vags[victim]) / discimg.SectorSize
	cso := csoWithBadSectors(t, iso, g.LBA+1, vsec)

	m, stderr := backgroundMount(t, cso)
	if n := countLines([]byte(stderr), "directory /G "); n != 1 {
		t.Errorf("gcfs mount's stderr: %d lines name /G, want 1:\n%s", n, stderr)
	}
	if sum, _, err := sha1File(m.path("SYSTEM.CNF")); err != nil || sum != d.manifest["SYSTEM.CNF"].sha1 {
		t.Errorf("SYSTEM.CNF: %v", err)
	}
	ents, err := os.ReadDir(m.path("G"))
	if err != nil || len(ents) == 0 {
		t.Fatalf("G: %d entries, %v", len(ents), err)
	}
	name := strings.TrimSuffix(vags[victim].Path(), ".vag")
	if _, err := os.Stat(m.path("G/HUD.WAD")); err != nil {
		t.Fatalf("G/HUD.WAD is in /G's lost sector (%v): the test needs it in the first", err)
	}
	if got, err := os.ReadFile(m.path(name)); !isErrno(err, syscall.EIO) {
		t.Errorf("%s: %d bytes, %v; want EIO", name, len(got), err)
	}
	buf := make([]byte, 4096)
	if n, err := unix.Getxattr(m.path(name), "user.gcfs.error", buf); err != nil || !strings.Contains(string(buf[:n]), "could not be read") {
		t.Errorf("%s user.gcfs.error: %q, %v", name, buf[:max(n, 0)], err)
	}
	for _, v := range vags[victim+1 : victim+4] {
		want := d.manifest[v.Path()]
		if sum, _, err := sha1File(m.path(v.Path())); err != nil || sum != want.sha1 {
			t.Errorf("%s: %v", v.Path(), err)
		}
		if _, err := os.Stat(m.path(strings.TrimSuffix(v.Path(), ".vag") + ".wav")); err != nil {
			t.Errorf("%s has no .wav: %v", v.Path(), err)
		}
	}
}

// Issue 18 item 13a in a mount: a record of /G named "." is refused, and a
// background mount says on its stderr that the root lost entries.
func TestUnnamableRecordAtMount(t *testing.T) {
	d := getDisc(t, "small")
	img := filepath.Join(t.TempDir(), "dotg.iso")
	copyFile(t, d.path, img)
	if err := testdisc.PatchRecord(img, "G", func(rec []byte) { rec[33] = '.' }); err != nil {
		t.Fatal(err)
	}
	m, stderr := backgroundMount(t, img)
	if n := countLines([]byte(stderr), "directory / "); n != 1 || !strings.Contains(stderr, "names nothing") {
		t.Errorf("gcfs mount's stderr: %d lines name the root, want 1:\n%s", n, stderr)
	}
	if _, err := os.Stat(m.path("SYSTEM.CNF")); err != nil {
		t.Errorf("SYSTEM.CNF: %v", err)
	}
}
