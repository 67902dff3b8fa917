package integration

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// gcfsBin is the binary TestMain builds; workDir holds it and the images.
var gcfsBin, workDir string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if spec := os.Getenv(minimalServerEnv); spec != "" {
		return runMinimalServer(spec) // a benchmark's helper process
	}
	var err error
	workDir, err = os.MkdirTemp("", "gcfs-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(workDir)
	// The servers' index sidecars go here, never to the user's cache.
	os.Setenv("XDG_CACHE_HOME", filepath.Join(workDir, "xdg-cache"))
	gcfsBin = filepath.Join(workDir, "gcfs")
	if prebuilt := os.Getenv("GCFS_TEST_BIN"); prebuilt != "" {
		// A binary built elsewhere (for runs against a tree that is
		// being edited); copied so the path identifies our servers.
		data, err := os.ReadFile(prebuilt)
		if err == nil {
			err = os.WriteFile(gcfsBin, data, 0o755)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "GCFS_TEST_BIN:", err)
			return 1
		}
	} else {
		build := exec.Command("go", "build", "-o", gcfsBin, "gcfs/cmd/gcfs")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building gcfs:", err)
			return 1
		}
	}
	code := m.Run()
	// Whatever happened, leave no mount of ours behind.
	for _, mnt := range mountsUnder(workDir) {
		fmt.Fprintln(os.Stderr, "integration: unmounting leftover", mnt)
		exec.Command("fusermount3", "-uz", mnt).Run()
		syscall.Unmount(mnt, syscall.MNT_DETACH)
		code = 1
	}
	return code
}

// requireFUSE skips without /dev/fuse, except under CI where that is a failure.
func requireFUSE(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("/dev/fuse is missing under CI: %v", err)
		}
		t.Skipf("no /dev/fuse: %v", err)
	}
	if _, err := exec.LookPath("fusermount3"); err != nil && os.Geteuid() != 0 {
		t.Skip("no fusermount3 and not root")
	}
}

// gcfs runs the binary and returns stdout; a non-zero exit is an error
// carrying stderr.
func gcfs(args ...string) ([]byte, error) {
	cmd := exec.Command(gcfsBin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("gcfs %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// disc is one generated image with what mkdisc says it holds.
type disc struct {
	path     string
	manifest map[string]manifestEntry
	paths    []string // manifest order
	entries  []lsEntry
	err      error
}

type manifestEntry struct {
	size int64
	sha1 string
}

// lsEntry is one entry of `gcfs ls -R --json`.
type lsEntry struct {
	Path  string `json:"path"`
	Name  string `json:"name"`
	Type  string `json:"type"`
	Mode  string `json:"mode"`
	Size  int64  `json:"size"`
	Ino   uint64 `json:"ino"`
	Error string `json:"error,omitempty"`
}

var (
	discMu sync.Mutex
	discs  = map[string]*disc{}
)

// getDisc generates a layout once per test binary.
func getDisc(t testing.TB, layout string) *disc {
	t.Helper()
	if layout == "retail" && testing.Short() {
		t.Skip("retail layout (3.8 GB sparse) skipped in -short mode")
	}
	discMu.Lock()
	defer discMu.Unlock()
	d := discs[layout]
	if d == nil {
		d = makeDisc(layout)
		discs[layout] = d
	}
	if d.err != nil {
		t.Fatalf("%s disc: %v", layout, d.err)
	}
	return d
}

func makeDisc(layout string) *disc {
	d := &disc{path: filepath.Join(workDir, layout+".iso")}
	start := time.Now()
	if _, err := gcfs("mkdisc", "--layout", layout, "--seed", "1", d.path); err != nil {
		d.err = err
		return d
	}
	fmt.Fprintf(os.Stderr, "integration: mkdisc %s took %v\n", layout, time.Since(start).Round(time.Millisecond))
	d.manifest, d.paths, d.err = readManifest(d.path + ".manifest.tsv")
	if d.err != nil {
		return d
	}
	out, err := gcfs("ls", "-R", "--json", d.path)
	if err != nil {
		d.err = err
		return d
	}
	if err := json.Unmarshal(out, &d.entries); err != nil {
		d.err = fmt.Errorf("ls --json: %v", err)
	}
	return d
}

func readManifest(path string) (map[string]manifestEntry, []string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	m := map[string]manifestEntry{}
	var paths []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			return nil, nil, fmt.Errorf("%s: bad line %q", path, line)
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			if f[1] == "size" { // a header line
				continue
			}
			return nil, nil, fmt.Errorf("%s: bad size in %q", path, line)
		}
		m[f[0]] = manifestEntry{size, f[2]}
		paths = append(paths, f[0])
	}
	return m, paths, sc.Err()
}

// decodedFiles lists the decoded files of a disc, from ls.
func (d *disc) decodedFiles() []lsEntry {
	var out []lsEntry
	for _, e := range d.entries {
		if e.Type == "decoded" && e.Error == "" {
			out = append(out, e)
		}
	}
	return out
}

// mounted is one running gcfs mount.
type mounted struct {
	dir     string
	logFile string
	pid     int
}

// testMount mounts image with `gcfs mount` (background server) and unmounts
// it when the test ends, lazily if it is busy. The FUSE trace goes to the
// log only under -v; the log is shown when the test fails.
func testMount(t testing.TB, image string, extra ...string) *mounted {
	t.Helper()
	requireFUSE(t)
	dir, err := os.MkdirTemp(workDir, "mnt-")
	if err != nil {
		t.Fatal(err)
	}
	m := &mounted{dir: dir, logFile: dir + ".log"}
	args := append([]string{"mount", "--log-file", m.logFile}, extra...)
	if testing.Verbose() {
		args = append(args, "--debug")
	}
	args = append(args, image, dir)
	if _, err := gcfs(args...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			if log, err := os.ReadFile(m.logFile); err == nil {
				t.Logf("server log %s:\n%s", m.logFile, tail(log, 60))
			}
		}
		m.unmount(t)
	})
	if !isMounted(dir) {
		t.Fatalf("gcfs mount returned but %s is not in /proc/mounts", dir)
	}
	m.pid = serverPID(dir)
	return m
}

func (m *mounted) unmount(t testing.TB) {
	if !isMounted(m.dir) {
		return
	}
	if _, err := gcfs("umount", m.dir); err != nil {
		t.Logf("umount: %v; detaching lazily", err)
		if _, err := gcfs("umount", "-z", m.dir); err != nil {
			t.Errorf("lazy umount: %v", err)
			syscall.Unmount(m.dir, syscall.MNT_DETACH)
		}
	}
	// Let the server exit so its log is complete and nothing lingers.
	if m.pid > 0 {
		deadline := time.Now().Add(10 * time.Second)
		for time.Now().Before(deadline) && syscall.Kill(m.pid, 0) == nil {
			if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.pid)); bytes.Contains(st, []byte(") Z ")) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func (m *mounted) path(p string) string { return filepath.Join(m.dir, filepath.FromSlash(p)) }

func tail(b []byte, lines int) string {
	s := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(s) > lines {
		s = s[len(s)-lines:]
	}
	return strings.Join(s, "\n")
}

// procMounts returns the /proc/mounts lines whose mount point is dir.
func procMount(dir string) string {
	data, _ := os.ReadFile("/proc/mounts")
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[1] == dir {
			return line
		}
	}
	return ""
}

func isMounted(dir string) bool { return procMount(dir) != "" }

func mountsUnder(dir string) []string {
	data, _ := os.ReadFile("/proc/mounts")
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[1], dir+"/") {
			out = append(out, f[1])
		}
	}
	return out
}

// serverPID finds the background server serving dir (its command line ends
// with the mount point), 0 if none.
func serverPID(dir string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cl, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
		if len(args) > 2 && args[0] == gcfsBin && args[1] == "mount" && args[len(args)-1] == dir {
			return pid
		}
	}
	return 0
}

// procStatusKB reads a field such as VmHWM (in kB) from /proc/PID/status.
func procStatusKB(pid int, field string) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			v = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB"))
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}

func sha1File(path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha1.New()
	n, err := readAll(f, h, make([]byte, 1<<20))
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// readAll reads r to its end in len(buf) reads (io.Copy would pick a 32 KiB
// buffer through *os.File's WriteTo), writing to w when not nil.
func readAll(r io.Reader, w io.Writer, buf []byte) (int64, error) {
	var total int64
	for {
		n, err := r.Read(buf)
		total += int64(n)
		if w != nil && n > 0 {
			w.Write(buf[:n])
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// dropCaches empties the kernel's page cache (root only); false when it
// cannot.
func dropCaches() bool {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3\n"), 0) == nil
}

func isErrno(err error, e syscall.Errno) bool { return errors.Is(err, e) }

// parallel calls fn for every item with two workers (the machine has two
// cores), in no particular order.
func parallel[T any](items []T, fn func(T)) {
	work := make(chan T)
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for it := range work {
				fn(it)
			}
		}()
	}
	for _, it := range items {
		work <- it
	}
	close(work)
	wg.Wait()
}
