package integration

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOverlayMountThenPack: edits made through `gcfs mount --overlay` land
// in DIR; `gcfs pack` rebuilds the disc from DIR and the rebuilt disc shows
// them. A server killed in the middle of an edit loses nothing that was
// written: what was written is in DIR.
func TestOverlayMountThenPack(t *testing.T) {
	d := getDisc(t, "small")
	ov, err := os.MkdirTemp(workDir, "overlay-")
	if err != nil {
		t.Fatal(err)
	}
	m := testMount(t, d.path, "--overlay", ov)
	gp := "G/LEVEL1.WAD/gameplay"
	orig, err := os.ReadFile(m.path(gp))
	if err != nil {
		t.Fatal(err)
	}
	edit := append(bytes.Repeat([]byte("modded "), 1000), orig...)
	if err := os.WriteFile(m.path(gp), edit, 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(m.path(gp)); err != nil || !bytes.Equal(got, edit) {
		t.Fatalf("the mount does not show the edit: %v", err)
	}
	// Mid-edit: written, not closed, and the server killed.
	save := m.path("G/MISC.WAD/save_game")
	f, err := os.OpenFile(save, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("written before the crash")); err != nil {
		t.Fatal(err)
	}
	if m.pid <= 0 {
		t.Fatal("no server pid")
	}
	if err := syscall.Kill(m.pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && syscall.Kill(m.pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
	f.Close()
	if got, err := os.ReadFile(filepath.Join(ov, "G/MISC.WAD/save_game")); err != nil || string(got) != "written before the crash" {
		t.Fatalf("DIR after the kill: %q, %v", got, err)
	}
	m.unmount(t)
	out := filepath.Join(workDir, "overlay-packed.iso")
	defer os.Remove(out)
	if _, err := gcfs("pack", d.path, ov, out); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string][]byte{gp: edit} {
		got, err := gcfs("cat", out, p)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s in the packed disc: %d bytes, %v", p, len(got), err)
		}
	}
	got, err := gcfs("cat", out, "G/MISC.WAD/save_game")
	if err != nil || !bytes.HasPrefix(got, []byte("written before the crash")) {
		t.Errorf("save_game in the packed disc: %q, %v", got, err)
	}
}

// TestOverlayViewsShowEdits: through the mount, the views of an edited file
// show the edit at once, with their new sizes, even when they were read
// (and so cached by the kernel) before the edit: the PNG of an edited PIF,
// the WAV of an edited VAG, the decoded file (and its PNG) of an edited
// .wad. A second form of an edited node cannot be opened for writing
// (EBUSY), and the log names both.
func TestOverlayViewsShowEdits(t *testing.T) {
	m, ov, read := overlayMount(t)
	cases := []struct{ edit, from, view, like string }{
		{"G/ARMOR.WAD/armor0_textures.d/00", "G/ARMOR.WAD/armor0_textures.d/01", "G/ARMOR.WAD/armor0_textures.d/00.png", "G/ARMOR.WAD/armor0_textures.d/01.png"},
		// These grow: a size the kernel cached would cut them short.
		{"G/AUDIO.WAD/vendor/001.vag", "G/AUDIO.WAD/vendor/000.vag", "G/AUDIO.WAD/vendor/001.wav", "G/AUDIO.WAD/vendor/000.wav"},
		{"G/BONUS.WAD/character_renders/01.wad", "G/BONUS.WAD/character_renders/00.wad", "G/BONUS.WAD/character_renders/01", "G/BONUS.WAD/character_renders/00"},
		{"", "", "G/BONUS.WAD/character_renders/01.png", "G/BONUS.WAD/character_renders/00.png"},
	}
	for _, c := range cases {
		if bytes.Equal(read(c.view), read(c.like)) { // both in the kernel's cache now
			t.Fatalf("%s already equals %s", c.view, c.like)
		}
	}
	for _, c := range cases {
		if c.edit != "" {
			if err := os.WriteFile(m.path(c.edit), read(c.from), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range cases {
		want := read(c.like)
		if st, err := os.Stat(m.path(c.view)); err != nil || st.Size() != int64(len(want)) {
			t.Errorf("%s after the edit: stat %v, size %d, want %d", c.view, err, st.Size(), len(want))
		}
		if got := read(c.view); !bytes.Equal(got, want) {
			t.Errorf("%s after the edit: %d bytes, not those of %s (%d)", c.view, len(got), c.like, len(want))
		}
	}
	// The second form of an edited node.
	for _, p := range []string{"G/ARMOR.WAD/armor0_textures.d/00.png", "G/BONUS.WAD/character_renders/01", "G/BONUS.WAD/character_renders/01.png"} {
		f, err := os.OpenFile(m.path(p), os.O_WRONLY, 0)
		if err == nil {
			f.Close()
			t.Errorf("%s opened for writing while another form is edited", p)
		} else if !isErrno(err, syscall.EBUSY) {
			t.Errorf("%s: %v, want EBUSY", p, err)
		}
		if _, err := os.Stat(filepath.Join(ov, filepath.FromSlash(p))); err == nil {
			t.Errorf("%s: copied up into DIR though refused", p)
		}
	}
	m.unmount(t)
	log, _ := os.ReadFile(m.logFile)
	if !bytes.Contains(log, []byte("G/ARMOR.WAD/armor0_textures.d/00.png: is edited in another form already: G/ARMOR.WAD/armor0_textures.d/00 and G/ARMOR.WAD/armor0_textures.d/00.png are one node")) {
		t.Errorf("the log does not name both forms:\n%s", tail(log, 20))
	}
}

// TestOverlayLevelViewsFollowEdits: through the mount, the views a level
// is encoded into follow edits of what they read, at their new sizes: the
// gameplay written back as it was gives gameplay.json and level.glb as
// before (they read EIO once their source had an edit); a moby class's
// slot 00 given slot 01's PNG changes mesh.glb and level.glb, which embed
// it, even after both were read (and cached by the kernel).
func TestOverlayLevelViewsFollowEdits(t *testing.T) {
	m, _, read := overlayMount(t)
	lv := "G/LEVEL1.WAD/"
	json, glb := read(lv+"gameplay.json"), read(lv+"level.glb")
	if err := os.WriteFile(m.path(lv+"gameplay"), read(lv+"gameplay"), 0o644); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(lv+"gameplay.json"), json) || !bytes.Equal(read(lv+"level.glb"), glb) {
		t.Fatal("gameplay.json or level.glb changed by the gameplay written back as it was")
	}
	mobies := lv + "data.d/core/mobies/"
	ents, err := os.ReadDir(m.path(mobies))
	if err != nil {
		t.Fatal(err)
	}
	class := ""
	for _, e := range ents {
		if _, err := os.Stat(m.path(mobies + e.Name() + "/01.png")); err == nil {
			class = mobies + e.Name() + "/"
			break
		}
	}
	if class == "" {
		t.Fatal("no moby class with two texture slots")
	}
	mesh := read(class + "mesh.glb")
	png := read(class + "01.png")
	if bytes.Count(mesh, png) > 1 { // (once is slot 01's own)
		t.Fatal("slot 01's PNG is embedded for slot 00 already")
	}
	if err := os.WriteFile(m.path(class+"00.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p      string
		before []byte
	}{{class + "mesh.glb", mesh}, {lv + "level.glb", glb}} {
		got := read(c.p)
		st, err := os.Stat(m.path(c.p))
		if err != nil || st.Size() != int64(len(got)) {
			t.Errorf("%s: stat %v, size %d, read %d bytes", c.p, err, st.Size(), len(got))
		}
		if bytes.Equal(got, c.before) || bytes.Count(got, png) < bytes.Count(c.before, png)+1 {
			t.Errorf("%s does not embed the edited slot's PNG (%d times, %d before)", c.p, bytes.Count(got, png), bytes.Count(c.before, png))
		}
	}
}

// overlayMount mounts the small disc over a fresh overlay directory: the
// mount, the directory, and a reader of the mount's files.
func overlayMount(t *testing.T) (*mounted, string, func(p string) []byte) {
	t.Helper()
	d := getDisc(t, "small")
	ov, err := os.MkdirTemp(workDir, "overlay-")
	if err != nil {
		t.Fatal(err)
	}
	m := testMount(t, d.path, "--overlay", ov)
	return m, ov, func(p string) []byte {
		t.Helper()
		b, err := os.ReadFile(m.path(p))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
}
