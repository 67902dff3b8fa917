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
