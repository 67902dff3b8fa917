package integration

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"gcfs/fsnode/testdisc"
)

var layouts = []string{"small", "retail"}

func TestTreeMatchesLs(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			d := getDisc(t, layout)
			m := testMount(t, d.path)
			type info struct {
				dir  bool
				size int64
				ino  uint64
			}
			got := map[string]info{}
			err := filepath.WalkDir(m.dir, func(p string, de fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if p == m.dir {
					return nil
				}
				var st unix.Stat_t
				if err := unix.Lstat(p, &st); err != nil {
					return err
				}
				rel, _ := filepath.Rel(m.dir, p)
				got[filepath.ToSlash(rel)] = info{st.Mode&unix.S_IFMT == unix.S_IFDIR, st.Size, st.Ino}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(d.entries) {
				t.Errorf("mount shows %d entries, gcfs ls -R %d", len(got), len(d.entries))
			}
			bad := 0
			for _, e := range d.entries {
				g, ok := got[e.Path]
				switch {
				case !ok:
					t.Errorf("%s: in gcfs ls, not in the mount", e.Path)
				case g.dir != (e.Type == "dir"):
					t.Errorf("%s: mount dir=%v, ls type %s", e.Path, g.dir, e.Type)
				case !g.dir && g.size != e.Size:
					t.Errorf("%s: mount size %d, ls %d", e.Path, g.size, e.Size)
				case g.ino != e.Ino:
					t.Errorf("%s: mount inode %d, ls %d", e.Path, g.ino, e.Ino)
				default:
					continue
				}
				if bad++; bad > 20 {
					t.Fatal("too many differences")
				}
			}
		})
	}
}

// TestSHA1MatchesManifest: the mount lists every file of the manifest and
// reads each as it says (on the retail layout, every file of the image's
// bytes and a fourth of the views).
func TestSHA1MatchesManifest(t *testing.T) {
	for _, layout := range layouts {
		t.Run(layout, func(t *testing.T) {
			d := getDisc(t, layout)
			m := testMount(t, d.path)
			var files []string
			filepath.WalkDir(m.dir, func(p string, de fs.DirEntry, err error) error {
				if err == nil && de.Type().IsRegular() {
					rel, _ := filepath.Rel(m.dir, p)
					files = append(files, filepath.ToSlash(rel))
				}
				return nil
			})
			if len(files) != len(d.manifest) {
				t.Errorf("mount has %d files, manifest %d", len(files), len(d.manifest))
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			work := make(chan string)
			for w := 0; w < 2; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for p := range work {
						want, ok := d.manifest[p]
						sum, n, err := sha1File(m.path(p))
						mu.Lock()
						switch {
						case !ok:
							t.Errorf("%s: in the mount, not in the manifest", p)
						case err != nil:
							t.Errorf("%s: %v", p, err)
						case n != want.size || sum != want.sha1:
							t.Errorf("%s: read %d bytes sha1 %s, manifest %d %s", p, n, sum, want.size, want.sha1)
						}
						mu.Unlock()
					}
				}()
			}
			views := 0
			for _, p := range files {
				if layout == "retail" && isViewPath(p) {
					// The retail layout's 44,000 views (PNG, glb, WAV,
					// JSON) are the small layout's code paths at retail
					// counts: a fourth of them, every file of the
					// image's own bytes.
					if views++; views%4 != 1 {
						continue
					}
				}
				work <- p
			}
			close(work)
			wg.Wait()
		})
	}
}

// isViewPath reports whether p names one of the views gcfs computes (the
// formats people open), not bytes the image holds.
func isViewPath(p string) bool {
	switch filepath.Ext(p) {
	case ".png", ".glb", ".wav", ".json", ".srt":
		return true
	}
	return false
}

// TestRandomPread reads decoded files at random offsets and lengths and
// compares with the bytes `gcfs cat` gives.
func TestRandomPread(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path, "--cache-size", "8MiB")
	dec := d.decodedFiles()
	if len(dec) == 0 {
		t.Fatal("the small disc has no decoded files")
	}
	sort.Slice(dec, func(i, j int) bool { return dec[i].Size > dec[j].Size })
	if len(dec) > 12 {
		dec = append(dec[:8], dec[len(dec)-4:]...) // the largest and some of the smallest
	}
	rng := rand.New(rand.NewSource(7))
	for _, e := range dec {
		want, err := gcfs("cat", d.path, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(want)) != e.Size {
			t.Fatalf("%s: gcfs cat gave %d bytes, ls says %d", e.Path, len(want), e.Size)
		}
		f, err := os.Open(m.path(e.Path))
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 300_000)
		for i := 0; i < 100; i++ {
			off := rng.Int63n(e.Size + 1)
			n := 1 + rng.Intn(len(buf))
			got, err := f.ReadAt(buf[:n], off)
			end := min(off+int64(n), e.Size)
			if err != nil && err != io.EOF {
				t.Fatalf("%s: pread(%d, %d): %v", e.Path, off, n, err)
			}
			if int64(got) != end-off || !bytes.Equal(buf[:got], want[off:end]) {
				t.Fatalf("%s: pread(%d, %d) = %d bytes, differing from gcfs cat", e.Path, off, n, got)
			}
		}
		f.Close()
	}
}

// TestConcurrentReaders has 16 readers hash every decoded file and some raw
// ones at once, through a cache small enough to evict.
func TestConcurrentReaders(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path, "--cache-size", "4MiB")
	var files []string
	for _, e := range d.entries {
		if e.Type != "dir" && e.Error == "" && e.Size < 8<<20 {
			files = append(files, e.Path)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			order := rand.New(rand.NewSource(int64(g))).Perm(len(files))
			limit := min(len(order), 60)
			for _, i := range order[:limit] {
				p := files[i]
				sum, n, err := sha1File(m.path(p))
				want := d.manifest[p]
				if err != nil || sum != want.sha1 || n != want.size {
					errs <- fmt.Errorf("reader %d: %s: %d bytes sha1 %s err %v; want %d %s", g, p, n, sum, err, want.size, want.sha1)
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if syscall.Kill(m.pid, 0) != nil {
		t.Error("server died")
	}
}

func run(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// TestShellTools runs stat, du, getfattr, find and ls against the mount.
func TestShellTools(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path)
	dec := d.decodedFiles()
	if len(dec) == 0 {
		t.Fatal("no decoded files")
	}
	e := dec[0]
	st := strings.Fields(run(t, "stat", "-c", "%s %b %B %A %F", m.path(e.Path)))
	if st[0] != strconv.FormatInt(e.Size, 10) {
		t.Errorf("stat size %s, ls %d", st[0], e.Size)
	}
	blocks, _ := strconv.ParseInt(st[1], 10, 64)
	unit, _ := strconv.ParseInt(st[2], 10, 64)
	if blocks*unit < e.Size || blocks*unit >= e.Size+512 {
		t.Errorf("st_blocks %d × %d does not cover size %d", blocks, unit, e.Size)
	}
	if st[3] != "-r--r--r--" {
		t.Errorf("file mode %s", st[3])
	}
	if mode := strings.TrimSpace(run(t, "stat", "-c", "%A", m.path("G"))); mode != "dr-xr-xr-x" {
		t.Errorf("dir mode %s", mode)
	}

	var total int64
	for _, me := range d.manifest {
		total += me.size
	}
	du := strings.Fields(run(t, "du", "-sb", m.dir))
	if du[0] != strconv.FormatInt(total, 10) {
		t.Errorf("du -sb = %s, manifest total %d", du[0], total)
	}
	duk, _ := strconv.ParseInt(strings.Fields(run(t, "du", "-sk", m.dir))[0], 10, 64)
	if duk*1024 < total {
		t.Errorf("du -sk = %d KiB for %d bytes: st_blocks too small", duk, total)
	}

	fa := run(t, "getfattr", "-d", "--absolute-names", m.path(e.Path))
	for _, k := range []string{"user.gcfs.offset=", "user.gcfs.lba=", "user.gcfs.disc_size=", "user.gcfs.wad_tag=", "user.gcfs.compressed_size="} {
		if !strings.Contains(fa, k) {
			t.Errorf("getfattr -d %s lacks %s:\n%s", e.Path, k, fa)
		}
	}
	if fa := run(t, "getfattr", "-d", "--absolute-names", m.path("G/LEVEL0.WAD")); !strings.Contains(fa, "user.gcfs.level_id=") {
		t.Errorf("getfattr -d G/LEVEL0.WAD:\n%s", fa)
	}

	n := len(strings.Split(strings.TrimSpace(run(t, "find", m.dir, "-type", "f")), "\n"))
	if n != len(d.manifest) {
		t.Errorf("find -type f: %d files, manifest %d", n, len(d.manifest))
	}
	if ls := strings.Split(run(t, "ls", "-a", "-1", "-f", m.path("G")), "\n"); len(ls) < 2 || ls[0] != "." || ls[1] != ".." {
		t.Errorf("ls -a -f G does not start with . and ..: %q", ls[:min(3, len(ls))])
	}
	if pm := strings.Fields(procMount(m.dir)); len(pm) < 4 || pm[2] != "fuse.gcfs" || !strings.Contains(","+pm[3]+",", ",ro,") {
		t.Errorf("/proc/mounts: %q", procMount(m.dir))
	}
	var sf unix.Statfs_t
	if err := unix.Statfs(m.dir, &sf); err != nil || sf.Blocks == 0 {
		t.Errorf("statfs: %+v %v", sf, err)
	}
	// Inode numbers are stable across mounts.
	var a, b unix.Stat_t
	unix.Stat(m.path(e.Path), &a)
	m2 := testMount(t, d.path)
	unix.Stat(m2.path(e.Path), &b)
	if a.Ino != b.Ino || a.Ino == 0 {
		t.Errorf("inode of %s: %d then %d", e.Path, a.Ino, b.Ino)
	}
}

func TestWritesFailEROFS(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path)
	f := m.path("SYSTEM.CNF")
	lvl := m.path("G/LEVEL0.WAD")
	cmds := [][]string{
		{"touch", m.path("new")},
		{"touch", f},
		{"rm", "-f", f},
		{"mkdir", m.path("newdir")},
		{"rmdir", m.path("G")},
		{"mv", f, m.path("moved")},
		{"chmod", "777", f},
		{"ln", f, m.path("hard")},
		{"ln", "-s", "x", m.path("sym")},
		{"sh", "-c", "echo x > " + f},
		{"sh", "-c", "echo x >> " + f},
		{"sh", "-c", "echo x > " + lvl + "/gameplay"},
		{"truncate", "-s", "0", f},
		{"setfattr", "-n", "user.x", "-v", "1", f},
	}
	for _, c := range cmds {
		out, err := exec.Command(c[0], c[1:]...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "Read-only file system") {
			t.Errorf("%q: err %v, output %q; want a Read-only file system failure", c, err, out)
		}
	}
	// And through the syscalls directly.
	if _, err := os.OpenFile(f, os.O_RDWR, 0); !isErrno(err, syscall.EROFS) {
		t.Errorf("open O_RDWR: %v", err)
	}
	if err := os.Rename(f, m.path("x")); !isErrno(err, syscall.EROFS) {
		t.Errorf("rename: %v", err)
	}
}

// xattrInt reads a numeric user.gcfs attribute through a mount; -1 (and a
// test error) when it cannot. Safe to call from any goroutine.
func xattrInt(t *testing.T, path, name string) int64 {
	t.Helper()
	buf := make([]byte, 64)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		t.Errorf("getxattr %s %s: %v", path, name, err)
		return -1
	}
	v, err := strconv.ParseInt(string(buf[:n]), 0, 64)
	if err != nil {
		t.Errorf("%s %s = %q", path, name, buf[:n])
		return -1
	}
	return v
}

func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	out, err := exec.Command("cp", "--sparse=always", src, dst).CombinedOutput()
	if err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
}

// TestCorruptStream: a WAD stream broken in the image gives EIO on open of
// the decoded file, one log line, its NAME.wad still reads, everything else
// reads as the manifest says, and the server stays up.
func TestCorruptStream(t *testing.T) {
	d := getDisc(t, "small")
	intact := testMount(t, d.path)
	dec := d.decodedFiles()
	victim := dec[len(dec)/2]
	off := xattrInt(t, intact.path(victim.Path), "user.gcfs.offset")
	if off < 0 {
		t.FailNow()
	}
	bad := filepath.Join(t.TempDir(), "corrupt.iso")
	copyFile(t, d.path, bad)
	f, err := os.OpenFile(bad, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// After the 16-byte header: a literal, then a match reaching before the
	// output's start (issue 2's error vector).
	if _, err := f.WriteAt([]byte{0x01, 'a', 'b', 'c', 'd', 0x21, 0xFC, 0x00}, off+16); err != nil {
		t.Fatal(err)
	}
	f.Close()

	m := testMount(t, bad)
	for i := 0; i < 3; i++ {
		if _, err := os.Open(m.path(victim.Path)); !isErrno(err, syscall.EIO) {
			t.Fatalf("open %s: %v, want EIO", victim.Path, err)
		}
	}
	raw, err := os.ReadFile(m.path(victim.Path + ".wad"))
	if err != nil {
		t.Fatalf("%s.wad: %v", victim.Path, err)
	}
	if !bytes.HasPrefix(raw[16:], []byte{0x01, 'a', 'b', 'c', 'd', 0x21, 0xFC}) {
		t.Errorf("%s.wad does not show the corrupted bytes", victim.Path)
	}
	parallel(d.paths, func(p string) {
		if p == victim.Path || p == victim.Path+".wad" {
			return
		}
		want := d.manifest[p]
		sum, n, err := sha1File(m.path(p))
		if err != nil || sum != want.sha1 || n != want.size {
			t.Errorf("%s: %d %s %v; want %d %s", p, n, sum, err, want.size, want.sha1)
		}
	})
	m.unmount(t) // flushes the log
	log, _ := os.ReadFile(m.logFile)
	lines := 0
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, victim.Path) && !isTraceLine(l) {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d log lines name %s, want 1:\n%s", lines, victim.Path, tail(log, 20))
	}
}

// TestBrokenCoreDataMounted: a level's core_data whose stream breaks a rule
// part way (its declared size cuts a packet) gives EIO on open, but through
// the mount every file of data.d/core/ either reads as the manifest says
// (the blocks and textures before the break) or fails with EIO (a glb view
// of a class past it is left out); never other bytes. Many read; the server logs the stream once.
func TestBrokenCoreDataMounted(t *testing.T) {
	d := getDisc(t, "small")
	const lvl = "G/LEVEL4.WAD/data.d/"
	intact := testMount(t, d.path)
	wad := intact.path(lvl + "core_data.wad")
	stream, err := os.ReadFile(wad)
	if err != nil {
		t.Fatal(err)
	}
	off := xattrInt(t, wad, "user.gcfs.offset")
	cut, _, ok := testdisc.CutInPacket(stream, len(stream)*3/5, 0)
	if !ok {
		t.Fatal("no cut of core_data breaks a packet")
	}
	bad := filepath.Join(t.TempDir(), "broken-core.iso")
	copyFile(t, d.path, bad)
	f, err := os.OpenFile(bad, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	binary.LittleEndian.PutUint32(size[:], uint32(cut))
	if _, err := f.WriteAt(size[:], off+3); err != nil {
		t.Fatal(err)
	}
	f.Close()

	m := testMount(t, bad)
	if _, err := os.Open(m.path(lvl + "core_data")); !isErrno(err, syscall.EIO) {
		t.Fatalf("open core_data: %v, want EIO", err)
	}
	var core []string
	for _, p := range d.paths {
		if strings.HasPrefix(p, lvl+"core/") {
			core = append(core, p)
		}
	}
	var mu sync.Mutex
	read, failed := 0, 0
	parallel(core, func(p string) {
		want := d.manifest[p]
		sum, n, err := sha1File(m.path(p))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case err == nil && (sum != want.sha1 || n != want.size):
			t.Errorf("%s: read %d bytes sha1 %s, manifest %d %s", p, n, sum, want.size, want.sha1)
		case err == nil:
			read++
		case isErrno(err, syscall.EIO), isViewPath(p) && errors.Is(err, fs.ErrNotExist):
			failed++ // (a view that fails is left out of its directory)
		default:
			t.Errorf("%s: %v, want its bytes or EIO", p, err)
		}
	})
	if read < 20 || failed == 0 {
		t.Errorf("%d files of data.d/core/ read, %d failed", read, failed)
	}
	m.unmount(t) // flushes the log
	log, _ := os.ReadFile(m.logFile)
	lines := 0
	for _, l := range strings.Split(string(log), "\n") {
		if strings.Contains(l, "truncated packet") && !isTraceLine(l) {
			lines++
		}
	}
	if lines != 1 {
		t.Errorf("%d log lines name the broken stream, want 1:\n%s", lines, tail(log, 40))
	}
}

// TestTruncatedImage: files wholly inside a truncated image read as the
// manifest says; files past its end fail with EIO, never zeros.
func TestTruncatedImage(t *testing.T) {
	d := getDisc(t, "small")
	intact := testMount(t, d.path)
	st, err := os.Stat(d.path)
	if err != nil {
		t.Fatal(err)
	}
	cut := st.Size() / 2 / 2048 * 2048
	short := filepath.Join(t.TempDir(), "short.iso")
	copyFile(t, d.path, short)
	if err := os.Truncate(short, cut); err != nil {
		t.Fatal(err)
	}
	m := testMount(t, short)
	var mu sync.Mutex
	inside, outside := 0, 0
	parallel(d.paths, func(p string) {
		if _, err := os.Stat(m.path(p)); err != nil {
			return // e.g. inside a container whose table is past the cut
		}
		want := d.manifest[p]
		if _, err := unix.Getxattr(intact.path(p), "user.gcfs.parent_offset", make([]byte, 64)); err == nil {
			return // a part inside decoded content: no image range of its own
		}
		if _, err := unix.Getxattr(intact.path(p), "user.gcfs.view", make([]byte, 64)); err == nil {
			return // a view: computed from its source, no image range of its own
		}
		off := xattrInt(t, intact.path(p), "user.gcfs.offset")
		size := xattrInt(t, intact.path(p), "user.gcfs.disc_size")
		if off < 0 || size < 0 {
			return
		}
		sum, n, err := sha1File(m.path(p))
		mu.Lock()
		defer mu.Unlock()
		switch {
		case off+size <= cut:
			inside++
			if err != nil || sum != want.sha1 || n != want.size {
				t.Errorf("%s (inside): %d %s %v", p, n, sum, err)
			}
		case off >= cut && want.size > 0:
			outside++
			if err == nil {
				t.Errorf("%s (past the end): read %d bytes without error", p, n)
			} else if !isErrno(err, syscall.EIO) {
				t.Errorf("%s (past the end): %v, want EIO", p, err)
			}
		}
	})
	if inside == 0 || outside == 0 {
		t.Errorf("cut at %d: %d files inside, %d outside; the test proves nothing", cut, inside, outside)
	}
	if _, err := os.ReadFile(m.path("SYSTEM.CNF")); err != nil || syscall.Kill(m.pid, 0) != nil {
		t.Errorf("server not serving after errors: %v", err)
	}
}

// TestMemoryRetail reads every decoded file of the retail layout through a
// mount with a 64 MiB cache, and bounds the server's memory in two parts:
//   - what the reads add: the peak RSS while reading (VmHWM, reset through
//     clear_refs once the tree is walked) over the RSS before them, at most
//     --cache-size + 64 MiB (the reads total ~190 MB: a cache that kept
//     them, or a decode buffer per file kept, goes past it);
//   - the walked tree's own memory: at most 64 MiB + 2 KiB a file (the
//     third edition took the retail tree to some 50,000 files and the tree
//     to ~1.5 KiB a file with its inodes; shrinking that is open work).
//
// A single bound on the peak (cache + 64 MiB + 1 KiB a file) was left a few
// hundred KiB of margin by the third edition's tree and would have failed
// on a machine that allocated a little differently.
func TestMemoryRetail(t *testing.T) {
	d := getDisc(t, "retail")
	const cacheMiB = 64
	m := testMount(t, d.path, "--cache-size", fmt.Sprintf("%dMiB", cacheMiB))
	if m.pid == 0 {
		t.Fatal("server process not found")
	}
	files := 0
	if err := filepath.WalkDir(m.dir, func(string, fs.DirEntry, error) error { files++; return nil }); err != nil {
		t.Fatal(err)
	}
	base, err := procStatusKB(m.pid, "VmRSS")
	if err != nil {
		t.Fatal(err)
	}
	if treeKiB := int64(64<<10) + 2*int64(files); base > treeKiB {
		t.Errorf("server RSS %d MiB after a walk of %d files, over 64 MiB + 2 KiB a file (%d MiB)", base>>10, files, treeKiB>>10)
	}
	// "5" resets the peak RSS to the current RSS (proc(5), clear_refs).
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", m.pid), []byte("5"), 0); err != nil {
		t.Fatalf("resetting the server's VmHWM: %v", err)
	}
	var total int64
	for _, e := range d.decodedFiles() {
		sum, n, err := sha1File(m.path(e.Path))
		if want := d.manifest[e.Path]; err != nil || sum != want.sha1 {
			t.Errorf("%s: %v (sha1 %s, want %s)", e.Path, err, sum, want.sha1)
		}
		total += n
	}
	hwm, err := procStatusKB(m.pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("walked %d files: server RSS %d MiB; read %d decoded bytes: peak %d MiB (cache %d MiB)", files, base>>10, total, hwm>>10, cacheMiB)
	if grew := hwm - base; grew > int64(cacheMiB+64)<<10 {
		t.Errorf("the reads took the server's RSS from %d to %d MiB: %d MiB more, over --cache-size + 64 MiB (%d MiB)", base>>10, hwm>>10, grew>>10, cacheMiB+64)
	}
}

// TestRefusals: each refusal of gcfs mount has its own reason and a
// non-zero exit, and mounts nothing.
func TestRefusals(t *testing.T) {
	requireFUSE(t)
	d := getDisc(t, "small")
	tmp := t.TempDir()
	empty := filepath.Join(tmp, "empty")
	os.Mkdir(empty, 0o755)
	full := filepath.Join(tmp, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "x"), nil, 0o644)
	notISO := filepath.Join(tmp, "random.bin")
	os.WriteFile(notISO, bytes.Repeat([]byte{0x5a}, 64<<10), 0o644)
	aFile := filepath.Join(tmp, "file")
	os.WriteFile(aFile, nil, 0o644)
	busy := testMount(t, d.path)

	cases := []struct {
		name, image, mnt, want string
	}{
		{"missing image", filepath.Join(tmp, "nope.iso"), empty, "no such file"},
		{"image is a directory", tmp, empty, "directory"},
		{"not ISO 9660", notISO, empty, "ISO 9660"},
		{"mount point missing", d.path, filepath.Join(tmp, "nodir"), "does not exist"},
		{"mount point not a directory", d.path, aFile, "not a directory"},
		{"mount point not empty", d.path, full, "not empty"},
		{"already a mount", d.path, busy.dir, "already a mount"},
	}
	// A failure inside the background server (here fusermount3 refusing
	// an option) reaches the caller with the helper's own words.
	// Issue 18 item 12: with fusermount3's exit code, not its wait status.
	out, err := gcfs("mount", "-o", "no_such_fuse_option", d.path, empty)
	if err == nil || !strings.Contains(err.Error(), "no_such_fuse_option") || !strings.Contains(err.Error(), "exited with code 1 ") || isMounted(empty) {
		t.Errorf("mount -o no_such_fuse_option: %v %s", err, out)
	}
	// Issue 18 item 8: a log file under the mount point is refused before
	// it is created (it would be hidden by the mount, and make the mount
	// point non-empty for the next mount).
	out, err = gcfs("mount", "--log-file", filepath.Join(empty, "gcfs.log"), d.path, empty)
	if err == nil || !strings.Contains(err.Error(), "under the mount point") || isMounted(empty) {
		if isMounted(empty) {
			gcfs("umount", "-z", empty)
		}
		t.Errorf("mount --log-file inside the mount point: %v %s", err, out)
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Errorf("the refused mount left %v in the mount point", names)
	}
	if os.Geteuid() != 0 {
		unreadable := filepath.Join(tmp, "unreadable.iso")
		os.WriteFile(unreadable, nil, 0)
		cases = append(cases, struct{ name, image, mnt, want string }{"unreadable image", unreadable, empty, "permission denied"})
	}
	for _, c := range cases {
		cmd := exec.Command(gcfsBin, "mount", c.image, c.mnt)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		msg := strings.TrimSpace(stderr.String())
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() == 0 {
			t.Errorf("%s: exit %v, want non-zero", c.name, err)
		}
		if strings.Count(msg, "\n") != 0 || !strings.Contains(strings.ToLower(msg), strings.ToLower(c.want)) {
			t.Errorf("%s: message %q, want one line containing %q", c.name, msg, c.want)
		}
		if c.mnt != busy.dir && isMounted(c.mnt) {
			t.Errorf("%s: mounted anyway", c.name)
		}
	}
}

// TestForegroundSignals: -f serves until SIGINT/SIGTERM, then unmounts
// (lazily when busy) and exits 0.
func TestForegroundSignals(t *testing.T) {
	requireFUSE(t)
	d := getDisc(t, "small")
	for _, busy := range []bool{false, true} {
		t.Run(fmt.Sprintf("busy=%v", busy), func(t *testing.T) {
			mnt, _ := os.MkdirTemp(workDir, "mnt-fg-")
			cmd := exec.Command(gcfsBin, "mount", "-f", d.path, mnt)
			var logBuf bytes.Buffer
			cmd.Stderr = &logBuf
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() {
				if isMounted(mnt) {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
				}
				cmd.Process.Kill()
			})
			deadline := time.Now().Add(30 * time.Second)
			for !isMounted(mnt) {
				if time.Now().After(deadline) {
					t.Fatalf("not mounted after 30s: %s", logBuf.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
			var held *os.File
			sig := syscall.SIGINT
			if busy {
				var err error
				if held, err = os.Open(filepath.Join(mnt, "SYSTEM.CNF")); err != nil {
					t.Fatal(err)
				}
				sig = syscall.SIGTERM
			}
			cmd.Process.Signal(sig)
			if busy {
				for i := 0; i < 500 && isMounted(mnt); i++ {
					time.Sleep(10 * time.Millisecond)
				}
				if isMounted(mnt) {
					t.Fatal("busy mount not detached after SIGTERM")
				}
				// The open file still reads while detached.
				if _, err := io.ReadAll(held); err != nil {
					t.Errorf("read of a file held across the lazy unmount: %v", err)
				}
				held.Close()
			}
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("exit: %v\n%s", err, logBuf.String())
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("server did not exit after %v\n%s", sig, logBuf.String())
			}
			if isMounted(mnt) {
				t.Fatal("still mounted")
			}
			if !strings.Contains(logBuf.String(), "cache") {
				t.Errorf("no cache counters in the log:\n%s", logBuf.String())
			}
		})
	}
}

// TestUmount: both gcfs umount and fusermount3 -u end the mount and the
// background server.
func TestUmount(t *testing.T) {
	d := getDisc(t, "small")
	for _, tool := range []string{"gcfs", "fusermount3"} {
		m := testMount(t, d.path)
		if m.pid == 0 {
			t.Fatal("no server process found")
		}
		var err error
		if tool == "gcfs" {
			_, err = gcfs("umount", m.dir)
		} else {
			err = exec.Command("fusermount3", "-u", m.dir).Run()
		}
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		if isMounted(m.dir) {
			t.Fatalf("%s: still mounted", tool)
		}
		deadline := time.Now().Add(10 * time.Second)
		for syscall.Kill(m.pid, 0) == nil {
			if st, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.pid)); len(st) == 0 || bytes.Contains(st, []byte(") Z ")) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: server %d still running after unmount", tool, m.pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
		log, _ := os.ReadFile(m.logFile)
		if !bytes.Contains(log, []byte("hits")) {
			t.Errorf("%s: no cache counters logged on unmount:\n%s", tool, tail(log, 10))
		}
	}
	if _, err := gcfs("umount", t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a mount point") {
		t.Errorf("gcfs umount of a plain directory: %v", err)
	}
	// Issue 18 item 12: a busy mount's refusal says how to unmount it.
	m := testMount(t, d.path)
	held, err := os.Open(m.path("SYSTEM.CNF"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = gcfs("umount", m.dir)
	held.Close()
	if err == nil || !strings.Contains(err.Error(), m.dir+" is busy; `gcfs umount -z "+m.dir+"` unmounts it lazily") {
		t.Errorf("gcfs umount of a busy mount: %v", err)
	}
}

// TestMountOptions: -o uid=,gid=,umask= change owner and modes; --max-decoded
// makes larger streams fail with EIO while smaller ones read.
func TestMountOptions(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path, "-o", "uid=1234,gid=5678,umask=027", "--max-decoded", "64KiB")
	var st unix.Stat_t
	if err := unix.Stat(m.path("SYSTEM.CNF"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Uid != 1234 || st.Gid != 5678 || st.Mode&0o777 != 0o440 {
		t.Errorf("SYSTEM.CNF: uid %d gid %d mode %o", st.Uid, st.Gid, st.Mode&0o777)
	}
	if err := unix.Stat(m.path("G"), &st); err != nil {
		t.Fatal(err)
	}
	if st.Mode&0o777 != 0o550 {
		t.Errorf("G: mode %o", st.Mode&0o777)
	}
	big, small := 0, 0
	for _, e := range d.decodedFiles() {
		_, n, err := sha1File(m.path(e.Path))
		switch {
		case e.Size > 64<<10:
			big++
			if err == nil {
				t.Errorf("%s: %d decoded bytes read past --max-decoded 64KiB", e.Path, n)
			} else if !isErrno(err, syscall.EIO) {
				t.Errorf("%s: %v, want EIO", e.Path, err)
			}
		case e.Size < 32<<10:
			small++
			if want := d.manifest[e.Path]; err != nil || n != want.size {
				t.Errorf("%s: %d bytes, %v", e.Path, n, err)
			}
		}
	}
	if big == 0 || small == 0 {
		t.Errorf("%d decoded files over the limit, %d well under it: the test proves nothing", big, small)
	}
}

// TestPlainISO mounts an image mastered by xorriso from a tree the test
// writes (no Going Commando structure at all): the mount shows that tree,
// byte for byte.
func TestPlainISO(t *testing.T) {
	requireFUSE(t)
	if _, err := exec.LookPath("xorriso"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("xorriso missing under CI")
		}
		t.Skip("no xorriso")
	}
	src := t.TempDir()
	rng := rand.New(rand.NewSource(3))
	want := map[string][]byte{}
	for i, p := range []string{"README.TXT", "DATA/A.BIN", "DATA/SUB/B.BIN", "DATA/SUB/EMPTY.DAT", "BIG.BIN"} {
		n := []int{100, 70000, 3 << 20, 0, 9<<20 + 17}[i]
		b := make([]byte, n)
		rng.Read(b)
		os.MkdirAll(filepath.Join(src, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), b, 0o644); err != nil {
			t.Fatal(err)
		}
		want[p] = b
	}
	iso := filepath.Join(t.TempDir(), "plain.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-quiet", "-o", iso, src).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	m := testMount(t, iso)
	got := map[string]bool{}
	filepath.WalkDir(m.dir, func(p string, de fs.DirEntry, err error) error {
		if err == nil && de.Type().IsRegular() {
			rel, _ := filepath.Rel(m.dir, p)
			got[filepath.ToSlash(rel)] = true
		}
		return nil
	})
	if len(got) != len(want) {
		t.Errorf("mount shows %d files, want %d: %v", len(got), len(want), got)
	}
	for p, b := range want {
		data, err := os.ReadFile(m.path(p))
		if err != nil || !bytes.Equal(data, b) {
			t.Errorf("%s: %d bytes, %v; want %d bytes as written", p, len(data), err, len(b))
		}
	}
}

// TestDeadServer: a mount whose server was killed is refused as a mount
// point with its own reason, and gcfs umount clears it.
func TestDeadServer(t *testing.T) {
	d := getDisc(t, "small")
	m := testMount(t, d.path)
	if m.pid == 0 {
		t.Fatal("no server process found")
	}
	syscall.Kill(m.pid, syscall.SIGKILL)
	for i := 0; i < 200 && syscall.Kill(m.pid, 0) == nil; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := os.Stat(m.path("SYSTEM.CNF")); !isErrno(err, syscall.ENOTCONN) {
		t.Fatalf("stat on a dead mount: %v, want ENOTCONN", err)
	}
	// The kernel may still hold the root's attributes (long timeouts); the
	// refusal names the dead mount and the way out all the same.
	if _, err := gcfs("mount", d.path, m.dir); err == nil ||
		!strings.Contains(err.Error(), "dead FUSE mount") || !strings.Contains(err.Error(), "gcfs umount") {
		t.Errorf("mount over a dead mount: %v", err)
	}
	if _, err := gcfs("umount", m.dir); err != nil {
		t.Fatalf("umount of a dead mount: %v", err)
	}
	if isMounted(m.dir) {
		t.Fatal("dead mount still listed")
	}
}
