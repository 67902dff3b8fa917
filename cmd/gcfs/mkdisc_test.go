package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"gcfs/discimg/mkdisc"
)

// runGcfs runs the CLI in-process and returns its output and error.
func runGcfs(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, &out
	app.ExitErrHandler = func(*cli.Context, error) {} // keep the test process alive
	err := app.Run(append([]string{"gcfs"}, args...))
	return out.String(), err
}

// mkdiscAndVerify makes a disc through the CLI and checks the tree gcfs reads
// from it against the manifest written beside it.
func mkdiscAndVerify(t *testing.T, layout string, wantSize int64) {
	out := filepath.Join(t.TempDir(), layout+".iso")
	if msg, err := runGcfs(t, "mkdisc", out, "--layout", layout, "--seed", "3"); err != nil {
		t.Fatalf("mkdisc: %v\n%s", err, msg)
	} else if !strings.Contains(msg, layout+" layout, seed 3") {
		t.Errorf("mkdisc printed %q", msg)
	}
	st, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	if wantSize > 0 && st.Size() != wantSize {
		t.Errorf("image is %d bytes, want %d", st.Size(), wantSize)
	}
	mf, err := os.Open(out + ".manifest.tsv")
	if err != nil {
		t.Fatal(err)
	}
	m, err := mkdisc.ReadManifest(mf)
	mf.Close()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, e := range m {
		have[e.Path] = true
	}
	for _, p := range []string{"SYSTEM.CNF", "RC2.HDR", "G/MPEG1.WAD", "G/LEVEL21.WAD/gameplay", "G/LEVEL21.WAD/gameplay.wad",
		"G/MISC.WAD/irx", "G/MISC.WAD/irx.wad", "G/ARMOR.WAD/wrench5_textures", "G/MPEG.WAD/video00.pss", "G/SCENE0.WAD/scene00/speech_english_left.vag", "G/AUDIO.WAD/vendor/000.vag", "G/AUDIO.WAD/vendor/000.wav", "G/BONUS.WAD/goodies_images/00.png", "G/BONUS.WAD/credits_images/00.png", "G/BONUS.WAD/paintings/05",
		"G/LEVEL1.WAD/data.d/core_data", "G/LEVEL1.WAD/data.d/transition_textures.d/00", "G/LEVEL1.WAD/chunk0.d/collision",
		"G/MISC.WAD/irx.d/989snd.irx", "G/MISC.WAD/irx.d/image.png", "G/MPEG.WAD/subtitles07.d/italian.srt", "G/ARMOR.WAD/armor0_textures.d/00", "G/MPEG.WAD/video20.pss", "G/HUD.WAD/hud_bank4",
		"G/BONUS.WAD/credits_text", "G/AUDIO3.WAD/thermanator_thaw.vag"} {
		if !have[p] {
			t.Errorf("manifest has no %s", p)
		}
	}
	msg, err := runGcfs(t, "verify", out, out+".manifest.tsv")
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, firstLines(msg, 20))
	}
	if want := fmt.Sprintf("OK: %d files match", len(m)); !strings.Contains(msg, want) {
		t.Errorf("verify printed %q, want %q", firstLines(msg, 5), want)
	}
}

func firstLines(s string, n int) string {
	l := strings.SplitN(s, "\n", n+1)
	return strings.Join(l[:min(n, len(l))], "\n")
}

func TestMkdiscSmallVerifies(t *testing.T) {
	fullPassOnly(t)
	mkdiscAndVerify(t, "small", 0)
}

// The retail layout writes a 3.8 GB sparse image and hashes it whole twice:
// run with GCFS_RETAIL=1.
func TestMkdiscRetailVerifies(t *testing.T) {
	if os.Getenv("GCFS_RETAIL") == "" {
		t.Skip("set GCFS_RETAIL=1 to generate and verify the retail layout")
	}
	mkdiscAndVerify(t, "retail", 3828350976)
}

func TestMkdiscErrors(t *testing.T) {
	fullPassOnly(t)
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"mkdisc"}, "want one argument"},
		{[]string{"mkdisc", filepath.Join(dir, "a"), filepath.Join(dir, "b")}, "want one argument"},
		{[]string{"mkdisc", filepath.Join(dir, "c"), "--layout", "huge"}, `unknown layout "huge"`},
		{[]string{"mkdisc", "--layout=huge", filepath.Join(dir, "c")}, `unknown layout "huge"`},
		{[]string{"mkdisc", filepath.Join(dir, "d"), "--seed", "x"}, "seed"},
		{[]string{"mkdisc", dir}, "is a directory"},
		{[]string{"mkdisc", filepath.Join(dir, "missing", "e.iso")}, "no such file or directory"},
	} {
		_, err := runGcfs(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line with %q", c.args, err, c.want)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("failed runs left %d files in %s", len(ents), dir)
	}
}

// TestMkdiscTreeMasteredByRealTools writes the small layout's files as a
// directory, masters it with xorriso and with genisoimage (UDF bridge), and
// checks the tree gcfs reads from those images against the same manifest:
// the reader is not tuned to our own ISO writer.
func TestMkdiscTreeMasteredByRealTools(t *testing.T) {
	fullPassOnly(t)
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	if msg, err := runGcfs(t, "mkdisc", "--tree", tree, "--seed", "5"); err != nil {
		t.Fatalf("mkdisc --tree: %v\n%s", err, msg)
	}
	m, err := os.ReadFile(tree + ".manifest.tsv")
	if err != nil {
		t.Fatal(err)
	}
	n := strings.Count(string(m), "\n")
	for _, tool := range []struct {
		name string
		args []string
	}{
		{"xorriso", []string{"-as", "mkisofs", "-quiet", "-V", "RATCHETANDCLANK2", "-sysid", "PLAYSTATION"}},
		{"genisoimage", []string{"-quiet", "-udf", "-V", "RATCHETANDCLANK2", "-sysid", "PLAYSTATION"}},
	} {
		t.Run(tool.name, func(t *testing.T) {
			if _, err := exec.LookPath(tool.name); err != nil {
				t.Skipf("%s not installed", tool.name)
			}
			img := filepath.Join(dir, tool.name+".iso")
			if out, err := exec.Command(tool.name, append(tool.args, "-o", img, tree)...).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", tool.name, err, out)
			}
			msg, err := runGcfs(t, "verify", img, tree+".manifest.tsv")
			if err != nil || !strings.Contains(msg, fmt.Sprintf("OK: %d files match", n)) {
				t.Errorf("verify on the %s image: %v\n%s", tool.name, err, firstLines(msg, 20))
			}
		})
	}
	// --tree refuses a non-empty directory
	if _, err := runGcfs(t, "mkdisc", "--tree", tree); err == nil || !strings.Contains(err.Error(), "not an empty directory") {
		t.Errorf("mkdisc --tree over a full directory: %v", err)
	}
}
