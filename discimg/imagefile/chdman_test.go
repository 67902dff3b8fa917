package imagefile

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"gcfs/cache"
	"gcfs/discimg/mkdisc"
	"gcfs/discimg/mkdisc/mkdisctest"
)

// The source ISO (small layout, ~33 MB) is built once per test binary.
var (
	isoOnce sync.Once
	isoDir  string
	isoPath string
	isoData []byte
	isoErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if isoDir != "" {
		os.RemoveAll(isoDir)
	}
	os.Exit(code)
}

func sourceISO(t testing.TB) (string, []byte) {
	t.Helper()
	isoOnce.Do(func() {
		isoDir, isoErr = os.MkdirTemp("", "imagefile-test-")
		if isoErr != nil {
			return
		}
		isoPath = filepath.Join(isoDir, "small.iso")
		if _, isoErr = mkdisctest.Generate(isoPath, mkdisc.Small, 1); isoErr != nil {
			return
		}
		isoData, isoErr = os.ReadFile(isoPath)
	})
	if isoErr != nil {
		t.Fatal(isoErr)
	}
	return isoPath, isoData
}

// prefixISO is the first n bytes of the source ISO as a file (made once per
// n): chdman compresses it in a fraction of the whole disc's time.
func prefixISO(t testing.TB, n int) (string, []byte) {
	t.Helper()
	_, iso := sourceISO(t)
	data := iso[:min(n, len(iso))]
	p := filepath.Join(isoDir, fmt.Sprintf("prefix%d.iso", n))
	chdMu.Lock()
	defer chdMu.Unlock()
	if _, err := os.Stat(p); err != nil {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return p, data
}

// chdman makes (once per argument list) a CHD with the real chdman.
var (
	chdMu   sync.Mutex
	chdMade = map[string]string{}
)

func requireChdman(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("chdman"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("chdman (Debian mame-tools) is required in CI")
		}
		t.Skip("chdman not installed (apt-get install mame-tools)")
	}
}

func chdman(t testing.TB, input string, args ...string) string {
	t.Helper()
	requireChdman(t)
	key := fmt.Sprint(input, args)
	chdMu.Lock()
	defer chdMu.Unlock()
	if p, ok := chdMade[key]; ok {
		return p
	}
	out := filepath.Join(isoDir, fmt.Sprintf("c%d.chd", len(chdMade)))
	cmd := exec.Command("chdman", append([]string{args[0], "-i", input, "-o", out}, args[1:]...)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("chdman %v: %v\n%s", args, err, b)
	}
	chdMade[key] = out
	return out
}

func openPath(t testing.TB, path string, opt Options) *Image {
	t.Helper()
	im, f, err := OpenFile(path, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return im
}

// sameBytes compares the whole presented image with the ISO, and a few
// hundred random unaligned reads.
func sameBytes(t *testing.T, im *Image, want []byte) { samePrefix(t, im, want, int64(len(want))) }

// samePrefix compares the first n bytes, and random reads over the whole.
func samePrefix(t *testing.T, im *Image, want []byte, n int64) {
	t.Helper()
	if im.Size() != int64(len(want)) {
		t.Fatalf("size %d, want %d", im.Size(), len(want))
	}
	want0 := want
	want = want[:min(n, int64(len(want)))]
	got := make([]byte, len(want))
	if n, err := im.ReadAt(got, 0); err != nil || n != len(got) {
		t.Fatalf("ReadAt whole: %d, %v", n, err)
	}
	if !bytes.Equal(got, want) {
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("first difference at byte %d (sector %d)", i, i/2048)
			}
		}
	}
	want = want0
	rng := rand.New(rand.NewSource(2))
	for range 300 {
		off := rng.Int63n(int64(len(want)))
		n := 1 + rng.Intn(70000)
		buf := make([]byte, n)
		k, err := im.ReadAt(buf, off)
		end := min(off+int64(n), int64(len(want)))
		if int64(k) != end-off || !bytes.Equal(buf[:k], want[off:end]) {
			t.Fatalf("ReadAt(%d, %d) = %d, %v: bytes differ", n, off, k, err)
		}
		if end-off < int64(n) && err == nil {
			t.Fatalf("short read at the end without io.EOF")
		}
	}
}

func TestCHDFromChdman(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		kind  string
		codec []string
	}{
		{"cd-default", []string{"createcd"}, "cd", []string{"cdlz", "cdzl", "cdfl"}},
		{"cd-cdzl", []string{"createcd", "-c", "cdzl"}, "cd", []string{"cdzl"}},
		{"cd-cdlz", []string{"createcd", "-c", "cdlz"}, "cd", []string{"cdlz"}},
		{"cd-cdfl", []string{"createcd", "-c", "cdfl"}, "cd", []string{"cdfl"}},
		{"cd-none", []string{"createcd", "-c", "none"}, "cd", []string{"none"}},
		{"raw-default", []string{"createraw", "-hs", "4096", "-us", "2048"}, "raw", []string{"lzma", "zlib", "huff", "flac"}},
		{"raw-zlib", []string{"createraw", "-hs", "4096", "-us", "2048", "-c", "zlib"}, "raw", []string{"zlib"}},
		{"raw-lzma", []string{"createraw", "-hs", "4096", "-us", "2048", "-c", "lzma"}, "raw", []string{"lzma"}},
		{"raw-huff", []string{"createraw", "-hs", "4096", "-us", "2048", "-c", "huff"}, "raw", []string{"huff"}},
		{"raw-flac", []string{"createraw", "-hs", "4096", "-us", "2048", "-c", "flac"}, "raw", []string{"flac"}},
		{"raw-none", []string{"createraw", "-hs", "4096", "-us", "2048", "-c", "none"}, "raw", []string{"none"}},
		{"raw-big-hunk", []string{"createraw", "-hs", "65536", "-us", "2048", "-c", "zlib,lzma"}, "raw", []string{"zlib", "lzma"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.name != "cd-default" && tc.name != "raw-default" {
				t.Skip("-short: defaults only")
			}
			// The defaults compress the whole disc; each codec alone, 8 MiB
			// of it (2,048 hunks and more).
			defaults := strings.HasSuffix(tc.name, "-default") || strings.HasSuffix(tc.name, "-none")
			iso, want := sourceISO(t)
			if !defaults {
				iso, want = prefixISO(t, 8<<20)
			}
			p := chdman(t, iso, tc.args...)
			var logs []string
			im := openPath(t, p, Options{Cache: cache.New(8 << 20), Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
			if im.Kind() != KindCHD || im.Plain() {
				t.Fatalf("kind %v plain %v", im.Kind(), im.Plain())
			}
			inf := im.Info()
			if inf.Version != 5 || fmt.Sprint(inf.Codecs) != fmt.Sprint(tc.codec) {
				t.Fatalf("info %+v, want codecs %v", inf, tc.codec)
			}
			if (tc.kind == "cd") != (len(inf.Tracks) > 0) {
				t.Fatalf("tracks %v for a %s CHD", inf.Tracks, tc.kind)
			}
			if raceEnabled && len(want) > 8<<20 && tc.codec[0] != "none" {
				// Under -race the whole disc's compressed hunks take
				// minutes to decode: its first 4 MiB and random reads
				// here; the 8 MiB cases check every byte and the data
				// SHA-1, and the integration tests the whole disc with a
				// normal build. Uncompressed ("none") is checked whole.
				samePrefix(t, im, want, 4<<20)
			} else {
				sameBytes(t, im, want)
				got, wantSum, checked, err := im.VerifyData()
				if uncompressed := tc.codec[0] == "none"; checked == uncompressed || err != nil || got != wantSum {
					t.Fatalf("data SHA-1 %s, header %s, %v", got, wantSum, err)
				}
			}
			if len(logs) != 0 {
				t.Fatalf("log lines on a good image: %q", logs)
			}
		})
	}
}

func TestCHDCorruptHunk(t *testing.T) {
	iso, want := sourceISO(t)
	p := chdman(t, iso, "createraw", "-hs", "4096", "-us", "2048", "-c", "zlib")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	im0 := openPath(t, p, Options{})
	h := int64(-1)
	for i, e := range im0.chd.entries {
		if i > 50 && e.typ == compType0 && e.length > 64 {
			h = int64(i)
			break
		}
	}
	if h < 0 {
		t.Fatal("no compressed hunk")
	}
	e := im0.chd.entries[h]
	b[e.offset+uint64(e.length/2)] ^= 0x55
	bad := filepath.Join(t.TempDir(), "bad.chd")
	if err := os.WriteFile(bad, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var logs []string
	im := openPath(t, bad, Options{Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	buf := make([]byte, 4096)
	_, err = im.ReadAt(buf, h*4096)
	var he *HunkError
	if !errors.As(err, &he) || he.Hunk != h || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("read of the bad hunk: %v", err)
	}
	if _, err2 := im.ReadAt(buf, h*4096+100); !errors.Is(err2, ErrCorrupt) {
		t.Fatalf("second read of the bad hunk: %v", err2)
	}
	if len(logs) != 1 {
		t.Fatalf("%d log lines, want 1: %q", len(logs), logs)
	}
	// The rest reads.
	for _, h := range []int64{0, h - 1, h + 1, 5000} {
		if _, err := im.ReadAt(buf, h*4096); err != nil || !bytes.Equal(buf, want[h*4096:h*4096+4096]) {
			t.Fatalf("hunk %d: %v", h, err)
		}
	}
}

func chdmanRun(t testing.TB, args ...string) {
	t.Helper()
	requireChdman(t)
	if b, err := exec.Command("chdman", args...).CombinedOutput(); err != nil {
		t.Fatalf("chdman %v: %v\n%s", args, err, b)
	}
}
