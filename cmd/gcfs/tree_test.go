package main

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/urfave/cli/v2"

	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
	"gcfs/fsnode/testdisc"
)

// treeRun runs gcfs with args in-process, capturing stdout and stderr.
type treeResult struct {
	out, errOut string
	err         error
}

func treeRun(t testing.TB, args ...string) treeResult {
	t.Helper()
	app := newApp()
	var o, e bytes.Buffer
	app.Writer, app.ErrWriter = &o, &e
	app.ExitErrHandler = func(*cli.Context, error) {} // keep the test process alive
	err := app.Run(append([]string{"gcfs"}, args...))
	return treeResult{o.String(), e.String(), err}
}

func treeOK(t testing.TB, args ...string) string {
	t.Helper()
	r := treeRun(t, args...)
	if r.err != nil {
		t.Fatalf("gcfs %s: %v\nstderr: %s", strings.Join(args, " "), r.err, r.errOut)
	}
	return r.out
}

// treeFails runs a command that must fail with a non-zero exit and returns its result.
func treeFails(t testing.TB, args ...string) treeResult {
	t.Helper()
	r := treeRun(t, args...)
	if r.err == nil {
		t.Fatalf("gcfs %s succeeded; want a failure\nstdout: %.2000s", strings.Join(args, " "), r.out)
	}
	if exitCode(r.err) == 0 {
		t.Fatalf("gcfs %s: exit code 0 for %v", strings.Join(args, " "), r.err)
	}
	return r
}

// genLayout gives the test its own copy of layout (seed 1), which it may
// damage (the retail layout's one image is shared: never damage it): the
// layout is generated once per test binary (in layoutDir, which TestMain
// removes) and copied. The Result is shared: read it, never change it.
func genLayout(t *testing.T, layout mkdisc.Layout) (string, *mkdisc.Result) {
	t.Helper()
	layoutMu.Lock()
	g := layouts[layout]
	if g == nil {
		g = &generated{}
		layouts[layout] = g
		if layoutDir == "" {
			layoutDir, g.err = os.MkdirTemp("", "gcfs-cmd-layouts-")
		}
		if g.err == nil {
			g.path = filepath.Join(layoutDir, string(layout)+".iso")
			g.res, g.err = mkdisctest.Generate(g.path, layout, 1)
		}
	}
	layoutMu.Unlock()
	if g.err != nil {
		t.Fatalf("mkdisc %s: %v", layout, g.err)
	}
	if layout == mkdisc.Retail {
		return g.path, g.res // (3.8 GB: read only, by one test)
	}
	path := filepath.Join(t.TempDir(), string(layout)+".iso")
	if err := copyImage(g.path, path); err != nil {
		t.Fatal(err)
	}
	return path, g.res
}

var (
	layoutMu  sync.Mutex
	layoutDir string
	layouts   = map[mkdisc.Layout]*generated{}
)

type generated struct {
	path string
	res  *mkdisc.Result
	err  error
}

// copyImage copies src to a new file dst with extract's copySparse, which
// leaves all-zero stretches holes (the retail layout is 3.8 GB, most of it
// unwritten).
func copyImage(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	_, err = copySparse(out, io.NewSectionReader(in, 0, st.Size()), make([]byte, 1<<20))
	if err == nil {
		err = out.Truncate(st.Size())
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

func manifestText(t testing.TB, m []mkdisc.ManifestEntry) string {
	var b bytes.Buffer
	if err := mkdisc.WriteManifest(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestTreeCLISmall(t *testing.T) {
	img, res := genLayout(t, mkdisc.Small)
	layoutChecks(t, img, res)
	t.Run("ls", func(t *testing.T) { lsChecks(t, img, res) })
	t.Run("cat", func(t *testing.T) { catChecks(t, img, res) })
	t.Run("extract", func(t *testing.T) { extractChecks(t, img, res) })
	t.Run("verify-mismatch", func(t *testing.T) { verifyMismatch(t, img, res) })
	t.Run("identify", func(t *testing.T) {
		var id map[string]any
		if err := json.Unmarshal([]byte(treeOK(t, "identify", "--json", img)), &id); err != nil {
			t.Fatal(err)
		}
		if id["serial"] != "SCUS-97268" || id["known"] != true || id["volume_id"] != "RATCHETANDCLANK2" {
			t.Errorf("identify: %v", id)
		}
		if out := treeOK(t, "identify", img); !strings.Contains(out, "SCUS-97268") {
			t.Errorf("identify text: %s", out)
		}
	})
}

func TestTreeCLIRetail(t *testing.T) {
	if testing.Short() {
		t.Skip("retail layout (3.8 GB sparse) skipped under -short")
	}
	img, res := genLayout(t, mkdisc.Retail)
	if res.ImageSize != 3828350976 {
		t.Errorf("retail image %d bytes", res.ImageSize)
	}
	layoutChecks(t, img, res)
}

// layoutChecks: the manifest matches mkdisc's, verify passes, LEVEL21 is id
// 30, and every container reports what mkdisc put in it.
func layoutChecks(t *testing.T, img string, res *mkdisc.Result) {
	t.Run("manifest", func(t *testing.T) {
		got := treeOK(t, "manifest", img)
		if want := manifestText(t, res.Manifest); got != want {
			gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
			t.Errorf("manifest: %d lines, want %d", len(gl), len(wl))
			for i := 0; i < len(gl) && i < len(wl); i++ {
				if gl[i] != wl[i] {
					t.Fatalf("first difference at line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
				}
			}
		}
	})
	t.Run("verify", func(t *testing.T) {
		table := filepath.Join(t.TempDir(), "table.tsv")
		os.WriteFile(table, []byte(manifestText(t, res.Manifest)), 0o644)
		out := treeOK(t, "verify", img, table)
		if want := fmt.Sprintf("OK: %d files match\n", len(res.Manifest)); out != want {
			t.Errorf("verify: %q, want %q", out, want)
		}
	})
	t.Run("level core", func(t *testing.T) {
		var info struct {
			Header []infoCoreField `json:"core_header"`
			Tables []infoCoreCount `json:"core_tables"`
			Left   []infoCoreSkip  `json:"left_out"`
			Skip   int             `json:"skipped"`
		}
		if err := json.Unmarshal([]byte(treeOK(t, "info", "--json", img, "G/LEVEL21.WAD/data.d/core")), &info); err != nil {
			t.Fatal(err)
		}
		if len(info.Header) != 47 || info.Header[35].Name != "assets_decompressed_size" || len(info.Left) != 0 || info.Skip != 0 {
			t.Fatalf("core info: %d header fields, left out %v, skipped %d", len(info.Header), info.Left, info.Skip)
		}
		served := map[string]infoCoreCount{}
		for _, c := range info.Tables {
			served[c.Table] = c
		}
		if m := served["moby_classes"]; m.Stored <= 0 || int(m.Stored) != m.Read {
			t.Errorf("moby classes %+v", m)
		}
		text := treeOK(t, "info", img, "G/LEVEL21.WAD/data.d/core")
		for _, want := range []string{"core header:", "+0x008c assets_decompressed_size", "moby_classes", "left out:        0"} {
			if !strings.Contains(text, want) {
				t.Errorf("info text lacks %q:\n%s", want, text)
			}
		}
	})
	t.Run("level21", func(t *testing.T) {
		var info map[string]any
		if err := json.Unmarshal([]byte(treeOK(t, "info", "--json", img, "G/LEVEL21.WAD")), &info); err != nil {
			t.Fatal(err)
		}
		if id, ok := info["level_id"].(float64); !ok || id != 30 {
			t.Errorf("LEVEL21 level_id = %#v, want the JSON number 30", info["level_id"])
		}
		if info["level_name"] != "Insomniac Museum" || info["family"] != "LEVEL" || info["table"] != "level-header" {
			t.Errorf("LEVEL21 info: %v", info)
		}
	})
	t.Run("containers", func(t *testing.T) {
		if len(res.Containers) < 80 {
			t.Fatalf("mkdisc described %d containers", len(res.Containers))
		}
		// Compressed extents as mkdisc's manifest has them: NAME beside NAME.wad.
		inManifest := map[string]bool{}
		for _, e := range res.Manifest {
			inManifest[e.Path] = true
		}
		compressed := map[string]int{}
		for _, e := range res.Manifest {
			if p, ok := strings.CutSuffix(e.Path, ".wad"); ok && inManifest[p] {
				compressed[p[:strings.Index(p[2:], "/")+2]]++
			}
		}
		// One listing of the whole tree through the CLI, and the info of every
		// container from one tree (nodeInfo is what `info --json` prints).
		var ents []lsEntry
		if err := json.Unmarshal([]byte(treeOK(t, "ls", "-R", "--json", img)), &ents); err != nil {
			t.Fatal(err)
		}
		app := newApp()
		var o, e bytes.Buffer
		app.Writer, app.ErrWriter = &o, &e
		var tree *openedTree
		app.Commands = append(app.Commands, &cli.Command{Name: "open-for-test", Flags: []cli.Flag{maxDecodedFlag()},
			Action: func(c *cli.Context) (err error) { tree, err = openTree(c, img); return err }})
		if err := app.Run([]string{"gcfs", "open-for-test"}); err != nil {
			t.Fatal(err)
		}
		defer tree.Close()
		for _, c := range res.Containers {
			n, err := tree.lookup(c.Path)
			if err != nil {
				t.Errorf("%s: %v", c.Path, err)
				continue
			}
			b, err := json.Marshal(nodeInfo(n))
			if err != nil {
				t.Fatal(err)
			}
			var info struct {
				Type     string  `json:"type"`
				Family   string  `json:"family"`
				Table    string  `json:"table"`
				Skipped  int     `json:"skipped"`
				Coverage int64   `json:"coverage"`
				Offset   int64   `json:"offset"`
				LevelID  *int32  `json:"level_id"`
				Reverb   *int32  `json:"reverb"`
				Name     *string `json:"level_name"`
			}
			if err := json.Unmarshal(b, &info); err != nil {
				t.Fatal(err)
			}
			if info.Type != "dir" || info.Family != c.Family || info.Table != c.Reading ||
				info.Skipped != c.Unused+c.Sentinels || info.Coverage != c.Coverage || info.Offset != c.LBA*2048 {
				t.Errorf("%s: info %+v, mkdisc put %+v", c.Path, info, c)
			}
			if c.Family == "LEVEL" && (info.LevelID == nil || *info.LevelID != c.LevelID || *info.Reverb != c.Reverb || *info.Name != c.LevelName) {
				t.Errorf("%s: level fields %+v, want id %d reverb %d %q", c.Path, info, c.LevelID, c.Reverb, c.LevelName)
			}
			files, decoded := 0, 0
			for _, e := range ents {
				if !strings.HasPrefix(e.Path, c.Path+"/") || strings.Contains(e.Path[len(c.Path):], ".d/") {
					continue // not an extent of the table (a part, in NAME.d/)
				}
				switch e.Type {
				case "decoded":
					decoded++
					files++
				case "file":
					files++
				}
			}
			want := c.Compressed
			if want == 0 {
				want = compressed[c.Path] // ContainerInfo.Compressed is not filled in by mkdisc yet
			}
			if decoded != want || files != c.Shown+want {
				t.Errorf("%s: %d files (%d decoded), mkdisc put %d shown, %d compressed", c.Path, files, decoded, c.Shown, want)
			}
		}
	})
}

func lsChecks(t *testing.T, img string, res *mkdisc.Result) {
	root := strings.Fields(treeOK(t, "ls", img))
	for _, want := range []string{"G", "SYSTEM.CNF", "SCUS_972.68", "RC2.HDR"} {
		if !contains(root, want) {
			t.Errorf("ls root %v: no %s", root, want)
		}
	}
	if !sort.StringsAreSorted(root) {
		t.Errorf("ls root not sorted: %v", root)
	}
	sizes := map[string]int64{}
	for _, e := range res.Manifest {
		sizes[e.Path] = e.Size
	}
	var ents []lsEntry
	if err := json.Unmarshal([]byte(treeOK(t, "ls", "-R", "--json", img)), &ents); err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range ents {
		if e.Type == "dir" {
			continue
		}
		files++
		if want, ok := sizes[e.Path]; !ok || want != e.Size {
			t.Errorf("ls --json %s: size %d, manifest %d (%v)", e.Path, e.Size, want, ok)
		}
	}
	if files != len(res.Manifest) {
		t.Errorf("ls -R --json: %d files, manifest %d", files, len(res.Manifest))
	}
	plain := strings.Split(strings.TrimSuffix(treeOK(t, "ls", "-R", img), "\n"), "\n")
	if len(plain) != len(ents) {
		t.Errorf("ls -R: %d lines, --json %d entries", len(plain), len(ents))
	}
	long := treeOK(t, "ls", "-l", img, "G/LEVEL0.WAD")
	if want := fmt.Sprintf("-r--r--r-- %12d gameplay\n", sizes["G/LEVEL0.WAD/gameplay"]); !strings.Contains(long, want) {
		t.Errorf("ls -l G/LEVEL0.WAD:\n%s\nwant a line %q", long, want)
	}
	if out := treeOK(t, "ls", "-l", img); !strings.Contains(out, "dr-xr-xr-x            0 G\n") {
		t.Errorf("ls -l root:\n%s", out)
	}
	r := treeFails(t, "ls", img, "G/NOPE.WAD")
	if !strings.Contains(r.err.Error(), img) || !strings.Contains(r.err.Error(), "G/NOPE.WAD") {
		t.Errorf("ls of a missing path: %v", r.err)
	}
	r = treeFails(t, "ls", filepath.Join(t.TempDir(), "none.iso"))
	if !strings.Contains(r.err.Error(), "none.iso") || strings.Contains(r.err.Error(), "\n") {
		t.Errorf("missing image: %q", r.err)
	}
	notISO := filepath.Join(t.TempDir(), "zero.iso")
	os.WriteFile(notISO, make([]byte, 40000), 0o644)
	if r := treeFails(t, "ls", notISO); !strings.Contains(r.err.Error(), "zero.iso") {
		t.Errorf("not ISO: %v", r.err)
	}
	treeFails(t, "ls")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func catChecks(t *testing.T, img string, res *mkdisc.Result) {
	checked, limit := 0, len(res.Manifest)
	if raceEnabled && testing.Short() {
		limit = 3 // (each cat builds the tree: the race pass cats a few, the second pass all)
	}
	for _, e := range res.Manifest {
		if checked >= limit {
			break
		}
		if !strings.HasSuffix(e.Path, "/gameplay") && !strings.HasSuffix(e.Path, "/gameplay.wad") && e.Path != "SYSTEM.CNF" {
			continue
		}
		sum := sha1.Sum([]byte(treeOK(t, "cat", img, e.Path)))
		if hex.EncodeToString(sum[:]) != e.SHA1 {
			t.Errorf("cat %s: sha1 differs from the manifest", e.Path)
		}
		checked++
	}
	if checked < 3 {
		t.Errorf("only %d files checked", checked)
	}
	// Issue 18 item 12: the refusal points at the command that lists it.
	if r := treeFails(t, "cat", img, "G"); !strings.Contains(r.err.Error(), "G is a directory; `gcfs ls "+img+" G` lists it") {
		t.Errorf("cat of a directory: %v", r.err)
	}
}

// treeFiles hashes every regular file under dir, by slash path relative to dir,
// and fails on anything that is neither a file nor a directory.
func treeFiles(t *testing.T, dir string) map[string]string {
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.Type()&fs.ModeSymlink != 0 {
			got[filepath.ToSlash(rel)] = "symlink"
			return nil
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha1.Sum(b)
		got[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func extractChecks(t *testing.T, img string, res *mkdisc.Result) {
	out := filepath.Join(t.TempDir(), "out")
	treeOK(t, "extract", "-q", img, out)
	got := treeFiles(t, out)
	if len(got) != len(res.Manifest) {
		t.Errorf("extracted %d files, manifest %d", len(got), len(res.Manifest))
	}
	for _, e := range res.Manifest {
		if got[e.Path] != e.SHA1 {
			t.Errorf("extracted %s: sha1 %q, manifest %s", e.Path, got[e.Path], e.SHA1)
		}
	}
	// Extracting again over the same tree replaces the files.
	treeOK(t, "extract", "-q", img, out, "G/LEVEL0.WAD")

	// Named parts only, keeping their paths.
	part := filepath.Join(t.TempDir(), "part")
	treeOK(t, "extract", "-q", img, part, "G/LEVEL21.WAD", "SYSTEM.CNF")
	for p := range treeFiles(t, part) {
		if p != "SYSTEM.CNF" && !strings.HasPrefix(p, "G/LEVEL21.WAD/") {
			t.Errorf("extract of named parts wrote %s", p)
		}
	}

	// Symlinks planted inside OUTDIR are never followed.
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	os.Mkdir(outside, 0o755)
	victim := filepath.Join(outside, "victim")
	os.WriteFile(victim, []byte("keep"), 0o644)
	hostile := filepath.Join(base, "out")
	os.Mkdir(hostile, 0o755)
	os.Symlink(outside, filepath.Join(hostile, "G"))
	os.Symlink(victim, filepath.Join(hostile, "SYSTEM.CNF"))
	r := treeFails(t, "extract", "-q", img, hostile)
	if !strings.Contains(r.errOut, "symlink") {
		t.Errorf("stderr does not report the symlink: %.500s", r.errOut)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("victim outside OUTDIR overwritten: %q", b)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("files written outside OUTDIR: %v", ents)
	}
	if st, err := os.Lstat(filepath.Join(hostile, "SYSTEM.CNF")); err != nil || !st.Mode().IsRegular() {
		t.Errorf("SYSTEM.CNF in OUTDIR: %v, %v; want a regular file replacing the symlink", st, err)
	}
	if _, err := os.Stat(filepath.Join(hostile, "RC2.HDR")); err != nil {
		t.Errorf("the rest was not extracted: %v", err)
	}
}

func verifyMismatch(t *testing.T, img string, res *mkdisc.Result) {
	m := append([]mkdisc.ManifestEntry(nil), res.Manifest...)
	m[0].SHA1 = strings.Repeat("0", 40)
	missing := m[1].Path
	m = append(m[:1], m[2:]...)
	m = append(m, mkdisc.ManifestEntry{Path: "ZZZ/NOT_THERE", Size: 1, SHA1: strings.Repeat("a", 40)})
	table := filepath.Join(t.TempDir(), "bad.tsv")
	os.WriteFile(table, []byte(manifestText(t, m)), 0o644)
	r := treeFails(t, "verify", img, table)
	for _, want := range []string{"MISMATCH " + m[0].Path, "EXTRA " + missing, "MISSING ZZZ/NOT_THERE", "FAILED: 3 problems"} {
		if !strings.Contains(r.out, want) {
			t.Errorf("verify output lacks %q:\n%.2000s", want, r.out)
		}
	}
	os.WriteFile(table, []byte("not a table\n"), 0o644)
	if r := treeFails(t, "verify", img, table); !strings.Contains(r.err.Error(), "bad.tsv") {
		t.Errorf("malformed table: %v", r.err)
	}
}

// TestTreeCLIBadInput: corrupt stream, truncated image, hostile names.
func TestTreeCLIBadInput(t *testing.T) {
	d, err := testdisc.Write(t.TempDir(), testdisc.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const bad = "G/MISC.WAD/frontbin"
	t.Run("corrupt-stream", func(t *testing.T) {
		r := treeFails(t, "cat", d.Path, bad)
		for _, s := range []string{d.Path, bad, "two literal packets", "stream offset", "image offset"} {
			if !strings.Contains(r.err.Error(), s) {
				t.Errorf("cat %s: %q does not name %q", bad, r.err, s)
			}
		}
		if got := treeOK(t, "cat", d.Path, bad+".wad"); got != string(d.Files[bad+".wad"]) {
			t.Errorf("cat %s.wad differs", bad)
		}
		var info map[string]any
		json.Unmarshal([]byte(treeOK(t, "info", "--json", d.Path, bad)), &info)
		if e, _ := info["error"].(string); !strings.Contains(e, "two literal packets") || info["size"] != float64(d.Corrupt[bad]) {
			t.Errorf("info %s: %v", bad, info)
		}
		out := filepath.Join(t.TempDir(), "out")
		r = treeFails(t, "extract", "-q", d.Path, out)
		if !strings.Contains(r.errOut, bad) {
			t.Errorf("extract does not report %s: %s", bad, r.errOut)
		}
		got := treeFiles(t, out)
		if _, there := got[bad]; there {
			t.Errorf("%s extracted (partially?)", bad)
		}
		if len(got) != len(d.Files) {
			t.Errorf("extracted %d files, want the %d readable ones", len(got), len(d.Files))
		}
		for p, want := range d.Files {
			sum := sha1.Sum(want)
			if got[p] != hex.EncodeToString(sum[:]) {
				t.Errorf("extracted %s differs", p)
			}
		}
		r = treeFails(t, "manifest", d.Path)
		if !strings.Contains(r.errOut, bad) || strings.Contains(r.out, bad+"\t") {
			t.Errorf("manifest with a corrupt stream: stderr %q", r.errOut)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		cut := filepath.Join(t.TempDir(), "cut.iso")
		b, _ := os.ReadFile(d.Path)
		os.WriteFile(cut, b[:len(b)-3000], 0o644)
		if got := treeOK(t, "cat", cut, "SYSTEM.CNF"); got != string(d.Files["SYSTEM.CNF"]) {
			t.Error("SYSTEM.CNF of a truncated image")
		}
		r := treeFails(t, "cat", cut, "ZTAIL.DUP")
		if !strings.Contains(r.err.Error(), "image") || len(r.out) >= len(d.Files["ZTAIL.DUP"]) {
			t.Errorf("cat past the end: %v (%d bytes out)", r.err, len(r.out))
		}
		if strings.Contains(r.out, "\x00\x00\x00\x00\x00\x00\x00\x00") {
			t.Error("cat past the end wrote zeros")
		}
	})
	t.Run("hostile-names", func(t *testing.T) {
		img := filepath.Join(t.TempDir(), "hostile.iso")
		b, _ := os.ReadFile(d.Path)
		os.WriteFile(img, b, 0o644)
		for old, name := range map[string]string{"SYSTEM.CNF": "..", "ZTAIL.DUP": "../../x", "MPEG1.WAD": "/etc/pw", "BROKEN.WAD": "."} {
			if err := testdisc.PatchName(img, old, name); err != nil {
				t.Fatal(err)
			}
		}
		base := t.TempDir()
		out := filepath.Join(base, "a", "b", "out")
		treeRun(t, "extract", "-q", img, out)
		// Nothing may appear beside OUTDIR, at any level up to the temp dir.
		for _, dir := range []string{base, filepath.Join(base, "a"), filepath.Join(base, "a", "b")} {
			ents, _ := os.ReadDir(dir)
			if len(ents) != 1 {
				t.Errorf("%s holds %d entries, want only the path to OUTDIR", dir, len(ents))
			}
		}
		got := treeFiles(t, out)
		for p := range got {
			if strings.Contains(p, "..") || strings.HasPrefix(p, "/") {
				t.Errorf("extracted %q", p)
			}
		}
		if _, ok := got["G/MISC.WAD/frontend"]; !ok {
			t.Errorf("the rest of the hostile image was not extracted: %v", got)
		}
	})
}

// TestTreeCLIPlainISO: an ISO mastered by xorriso that is no game disc is
// listed as a plain tree and identified as unknown, not refused.
func TestTreeCLIPlainISO(t *testing.T) {
	xorriso, err := exec.LookPath("xorriso")
	if err != nil {
		t.Skip("xorriso not installed")
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(filepath.Join(src, "G"), 0o755)
	os.MkdirAll(filepath.Join(src, "DOCS"), 0o755)
	readme := []byte("hello\n")
	wad := bytes.Repeat([]byte{0x17, 0x42, 0x99}, 2000) // first word is no header size
	os.WriteFile(filepath.Join(src, "DOCS", "README.TXT"), readme, 0o644)
	os.WriteFile(filepath.Join(src, "G", "FOO.WAD"), wad, 0o644)
	img := filepath.Join(dir, "plain.iso")
	if out, err := exec.Command(xorriso, "-as", "mkisofs", "-quiet", "-o", img, src).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	if got, want := treeOK(t, "ls", "-R", "-l", img), "dr-xr-xr-x            0 DOCS\n-r--r--r--            6 DOCS/README.TXT\n"+
		"dr-xr-xr-x            0 G\n-r--r--r--         6000 G/FOO.WAD\n"; got != want {
		t.Errorf("ls -R -l:\n%s\nwant\n%s", got, want)
	}
	if got := treeOK(t, "cat", img, "G/FOO.WAD"); got != string(wad) {
		t.Error("cat G/FOO.WAD differs")
	}
	var id map[string]any
	if err := json.Unmarshal([]byte(treeOK(t, "identify", "--json", img)), &id); err != nil {
		t.Fatal(err)
	}
	if id["known"] != false || id["title"] != "unknown" || id["serial"] != "" {
		t.Errorf("identify of a plain ISO: %v", id)
	}
}
