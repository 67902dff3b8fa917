package integration

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"gcfs/discimg"
	"gcfs/fsnode"
	"gcfs/fsnode/fusefs"
)

// benchLayout is the disc the benchmarks use: retail (large files, the
// whole tree) unless -short.
func benchLayout() string {
	if testing.Short() {
		return "small"
	}
	return "retail"
}

// minimalFile is the benchmark's baseline: one file served by splicing from
// the image's descriptor, with nothing else in the way.
type minimalFile struct {
	fs.Inode
	fd        uintptr
	off, size int64
}

func (f *minimalFile) Getattr(ctx context.Context, _ fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = fuse.S_IFREG | 0o444
	out.Size = uint64(f.size)
	return 0
}

func (f *minimalFile) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_KEEP_CACHE, 0
}

func (f *minimalFile) Read(ctx context.Context, _ fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	n := min(int64(len(dest)), f.size-off)
	if n <= 0 {
		return fuse.ReadResultData(nil), 0
	}
	return fuse.ReadResultFd(f.fd, f.off+off, int(n)), 0
}

// serveMinimal mounts the minimal server for image bytes [off, off+size) as
// MNT/data.
func serveMinimal(image string, off, size int64, mnt string) (*fuse.Server, *os.File, error) {
	img, err := os.Open(image)
	if err != nil {
		return nil, nil, err
	}
	root := &fs.Inode{}
	file := &minimalFile{fd: img.Fd(), off: off, size: size}
	long := time.Hour
	opts := &fs.Options{
		EntryTimeout: &long, AttrTimeout: &long, NegativeTimeout: &long,
		MountOptions: fuse.MountOptions{
			FsName: "minimal", Name: "gcfsbench", Options: []string{"ro"},
			MaxWrite: 1 << 20, MaxReadAhead: 1 << 20, MaxBackground: 64,
		},
		OnAdd: func(ctx context.Context) {
			root.AddChild("data", root.NewPersistentInode(ctx, file, fs.StableAttr{Mode: fuse.S_IFREG}), false)
		},
	}
	srv, err := fs.Mount(mnt, root, opts)
	if err != nil {
		img.Close()
		return nil, nil, err
	}
	fusefs.SetReadAhead(mnt, benchReadAhead())
	return srv, img, nil
}

// mountMinimal runs the minimal server in this process.
func mountMinimal(b *testing.B, image string, off, size int64) string {
	mnt, _ := os.MkdirTemp(workDir, "mnt-minimal-")
	srv, img, err := serveMinimal(image, off, size, mnt)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		img.Close()
	})
	return mnt + "/data"
}

// minimalServerEnv makes the test binary a minimal server process instead
// of running tests: IMAGE, OFF, SIZE, MNT separated by tabs (see TestMain).
const minimalServerEnv = "GCFS_BENCH_MINIMAL_SERVER"

// runMinimalServer is the helper process's main: mount, say "ready", serve
// until unmounted.
func runMinimalServer(spec string) int {
	parts := strings.Split(spec, "\t")
	if len(parts) != 4 {
		fmt.Fprintln(os.Stderr, "bad", minimalServerEnv)
		return 2
	}
	off, _ := strconv.ParseInt(parts[1], 10, 64)
	size, _ := strconv.ParseInt(parts[2], 10, 64)
	srv, img, err := serveMinimal(parts[0], off, size, parts[3])
	if err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	srv.Wait()
	img.Close() // and keeps the file (whose descriptor we splice from) alive until here
	return 0
}

// mountMinimalProcess runs the minimal server as a process of its own, as
// gcfs runs: the like-for-like baseline.
func mountMinimalProcess(b *testing.B, image string, off, size int64) string {
	mnt, _ := os.MkdirTemp(workDir, "mnt-minimal-proc-")
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), minimalServerEnv+"="+strings.Join([]string{image, strconv.FormatInt(off, 10), strconv.FormatInt(size, 10), mnt}, "\t"))
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "ready" {
		cmd.Process.Kill()
		cmd.Wait()
		b.Fatalf("minimal server: %q", line)
	}
	b.Cleanup(func() {
		if err := exec.Command("fusermount3", "-u", mnt).Run(); err != nil {
			syscall.Unmount(mnt, syscall.MNT_DETACH)
		}
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
		}
	})
	return mnt + "/data"
}

// benchReadAhead is the minimal server's readahead: gcfs's own unless
// GCFS_BENCH_RA_KB overrides both (to compare settings).
func benchReadAhead() int {
	if kb, err := strconv.Atoi(os.Getenv("GCFS_BENCH_RA_KB")); err == nil && kb > 0 {
		return kb << 10
	}
	return fusefs.DefaultReadAhead
}

// readSpan reads n bytes from path at off in 1 MiB reads and returns MB/s.
func readSpan(b *testing.B, path string, off, n int64) float64 {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	start := time.Now()
	var got int64
	for got < n {
		k, err := f.ReadAt(buf[:min(int64(len(buf)), n-got)], off+got)
		got += int64(k)
		if err != nil {
			b.Fatalf("%s at %d: %v", path, off+got, err)
		}
	}
	return float64(n) / 1e6 / time.Since(start).Seconds()
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func reportRSS(b *testing.B, m *mounted, name string) {
	if m == nil || m.pid == 0 {
		return
	}
	if kb, err := procStatusKB(m.pid, "VmHWM"); err == nil {
		b.ReportMetric(float64(kb)/1024, name+"-peakRSS-MiB")
	}
}

// BenchmarkRawSequential reads the largest raw file of the disc through gcfs,
// through the minimal splicing server, and straight from the image, cold
// (page cache dropped) and warm, in one run so the ratios compare like with
// like.
func BenchmarkRawSequential(b *testing.B) {
	d := getDisc(b, benchLayout())
	var big lsEntry
	for _, e := range d.entries {
		if e.Type == "file" && e.Error == "" && e.Size > big.Size {
			big = e
		}
	}
	if big.Size == 0 {
		b.Fatal("no raw file")
	}
	n := min(big.Size, 512<<20)
	m := testMount(b, d.path)
	off := xattrIntB(b, m.path(big.Path), "user.gcfs.offset")
	minimal := mountMinimalProcess(b, d.path, off, big.Size)
	inproc := mountMinimal(b, d.path, off, big.Size)
	if os.Getenv("GCFS_BENCH_RA_KB") != "" {
		fusefs.SetReadAhead(m.dir, benchReadAhead())
	}
	b.Logf("%s: %d bytes, reading %d", big.Path, big.Size, n)
	canDrop := dropCaches()
	if !canDrop {
		b.Log("cannot drop caches (not root): cold figures skipped")
	}
	type variant struct {
		name string
		path string
		off  int64
	}
	vs := []variant{{"direct", d.path, off}, {"minimal", minimal, 0}, {"minimal-inproc", inproc, 0}, {"gcfs", m.path(big.Path), 0}}
	res := map[string][]float64{}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range vs {
			v := vs[(i+j)%len(vs)] // rotate the order: no variant always goes first
			if canDrop {
				dropCaches()
				res[v.name+"-cold"] = append(res[v.name+"-cold"], readSpan(b, v.path, v.off, n))
			}
			readSpan(b, v.path, v.off, n) // warm up
			res[v.name+"-warm"] = append(res[v.name+"-warm"], readSpan(b, v.path, v.off, n))
		}
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k+"-MB/s")
	}
	for _, t := range []string{"cold", "warm"} {
		if g, mn := res["gcfs-"+t], res["minimal-"+t]; len(g) > 0 {
			b.ReportMetric(median(g)/median(mn), "gcfs/minimal-"+t)
			b.ReportMetric(median(g)/median(res["minimal-inproc-"+t]), "gcfs/minimal-inproc-"+t)
			b.ReportMetric(median(g)/median(res["direct-"+t]), "gcfs/direct-"+t)
		}
	}
	reportRSS(b, m, "gcfs")
}

func xattrIntB(b *testing.B, path, name string) int64 {
	buf := make([]byte, 64)
	n, err := unix.Getxattr(path, name, buf)
	if err != nil {
		b.Fatalf("getxattr %s %s: %v", path, name, err)
	}
	var v int64
	if _, err := fmt.Sscan(string(buf[:n]), &v); err != nil {
		b.Fatalf("%s %s = %q", path, name, buf[:n])
	}
	return v
}

// BenchmarkDecodedSequential reads every decoded file (up to 512 MiB of
// output) through the mount and through the in-process model (the speed
// the mount can reach), page cache dropped before each: cold on a first
// mount (no index sidecar: every file is scanned at its lookup), and the
// model the same; block-cache warm (page cache dropped, blocks still
// cached) and page-cache warm; cold on a remount (the sidecar the first
// mount saved: no scan); and the large files alone (1 MiB of output or
// more: the per-byte path, where the kernel's round trips per file weigh
// least) cold on a first mount and in the model.
func BenchmarkDecodedSequential(b *testing.B) {
	d := getDisc(b, benchLayout())
	var files, large []lsEntry
	var total, largeTotal int64
	for _, e := range d.decodedFiles() {
		if total+e.Size > 512<<20 {
			break
		}
		files = append(files, e)
		total += e.Size
		if e.Size >= 1<<20 {
			large = append(large, e)
			largeTotal += e.Size
		}
	}
	canDrop := dropCaches()
	readAllFiles := func(m *mounted, files []lsEntry, total int64) float64 {
		buf := make([]byte, 1<<20)
		start := time.Now()
		for _, e := range files {
			f, err := os.Open(m.path(e.Path))
			if err != nil {
				b.Fatal(err)
			}
			if n, err := readAll(f, nil, buf); err != nil || n != e.Size {
				b.Fatalf("%s: %d bytes, %v", e.Path, n, err)
			}
			f.Close()
		}
		return float64(total) / 1e6 / time.Since(start).Seconds()
	}
	drop := func() {
		if canDrop {
			dropCaches()
		}
	}
	res := map[string][]float64{}
	var last *mounted
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		m := testMount(b, d.path, "--cache-size", "1GiB")
		drop()
		b.StartTimer()
		res["cold"] = append(res["cold"], readAllFiles(m, files, total))
		drop()
		res["model-cold"] = append(res["model-cold"], readModel(b, d.path, files))
		if canDrop {
			dropCaches()
			res["blockcache-warm"] = append(res["blockcache-warm"], readAllFiles(m, files, total))
		}
		res["pagecache-warm"] = append(res["pagecache-warm"], readAllFiles(m, files, total))
		b.StopTimer()
		reportRSS(b, m, "gcfs")
		m.unmount(b) // saves the sidecar
		m = testMount(b, d.path, "--cache-size", "1GiB")
		drop()
		b.StartTimer()
		res["remount-cold"] = append(res["remount-cold"], readAllFiles(m, files, total))
		b.StopTimer()
		m.unmount(b)
		if len(large) > 0 {
			clearIndexCache(b)
			m = testMount(b, d.path, "--cache-size", "1GiB")
			drop()
			b.StartTimer()
			res["large-cold"] = append(res["large-cold"], readAllFiles(m, large, largeTotal))
			drop()
			res["large-model-cold"] = append(res["large-model-cold"], readModel(b, d.path, large))
			b.StopTimer()
		}
		if last != nil {
			last.unmount(b)
		}
		last = m
		b.StartTimer()
	}
	b.StopTimer()
	b.Logf("%d decoded files, %d bytes; %d of 1 MiB or more, %d bytes", len(files), total, len(large), largeTotal)
	for k, v := range res {
		b.ReportMetric(median(v), k+"-MB/s")
	}
	b.ReportMetric(median(res["cold"])/median(res["model-cold"]), "gcfs/model-cold")
	if len(large) > 0 {
		b.ReportMetric(median(res["large-cold"])/median(res["large-model-cold"]), "gcfs/model-large-cold")
	}
}

// readModel reads the files through the fsnode model in this process, with
// a fresh tree (empty cache) and no FUSE: the speed the mount can reach.
func readModel(b *testing.B, image string, files []lsEntry) float64 {
	f, err := os.Open(image)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	start := time.Now()
	img, err := discimg.Open(f, st.Size())
	if err != nil {
		b.Fatal(err)
	}
	tree, err := fsnode.Build(img, fsnode.Options{CacheSize: 1 << 30})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, fusefs.DefaultReadAhead)
	var total int64
	start = time.Now() // the mount's figure excludes its tree build too
	for _, e := range files {
		n, err := tree.Lookup(e.Path)
		if err != nil {
			b.Fatal(err)
		}
		r, err := n.Open()
		if err != nil {
			b.Fatal(err)
		}
		for off := int64(0); off < r.Size(); off += int64(len(buf)) {
			k, err := r.ReadAt(buf, off)
			if err != nil && k < len(buf) && off+int64(k) < r.Size() {
				b.Fatalf("%s: %v", e.Path, err)
			}
			total += int64(k)
		}
	}
	return float64(total) / 1e6 / time.Since(start).Seconds()
}

// BenchmarkDecodedRandom4K: cold random 4 KiB preads into decoded files on
// a fresh mount; median and p99 latency.
func BenchmarkDecodedRandom4K(b *testing.B) {
	d := getDisc(b, benchLayout())
	var files []lsEntry
	for _, e := range d.decodedFiles() {
		if e.Size >= 64<<10 {
			files = append(files, e)
		}
	}
	if len(files) == 0 {
		b.Fatal("no decoded files of 64 KiB or more")
	}
	var lat []time.Duration
	var m *mounted
	rng := rand.New(rand.NewSource(1))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if m != nil {
			m.unmount(b)
		}
		m = testMount(b, d.path)
		dropCaches()
		handles := make([]*os.File, len(files))
		for j, e := range files {
			f, err := os.Open(m.path(e.Path))
			if err != nil {
				b.Fatal(err)
			}
			handles[j] = f
			// The first open runs the size scan; keep it out of the timing.
		}
		b.StartTimer()
		buf := make([]byte, 4096)
		for k := 0; k < 500; k++ {
			j := rng.Intn(len(files))
			off := rng.Int63n(files[j].Size-4096) &^ 4095
			t0 := time.Now()
			if _, err := handles[j].ReadAt(buf, off); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		b.StopTimer()
		for _, f := range handles {
			f.Close()
		}
		b.StartTimer()
	}
	b.StopTimer()
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "median-µs")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
	reportRSS(b, m, "gcfs")
}

// BenchmarkFindStat: `find MOUNT -type f | xargs stat` over the whole tree of
// a fresh mount with no index sidecar (every decoded size comes from a size
// scan: findstat-cold), the same mount again (findstat-warm), and a second
// mount of the image after the first saved its sidecar, page cache dropped
// (findstat-remount: sizes from the sidecar, no stream read).
func BenchmarkFindStat(b *testing.B) {
	d := getDisc(b, benchLayout())
	var cold, warm, remount []float64
	var m *mounted
	findStat := func() float64 {
		t0 := time.Now()
		out, err := exec.Command("sh", "-c", "find \"$1\" -type f -print0 | xargs -0 stat >/dev/null", "sh", m.dir).CombinedOutput()
		if err != nil {
			b.Fatalf("%v %s", err, out)
		}
		return float64(time.Since(t0).Microseconds()) / 1000
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		if m != nil {
			m.unmount(b)
		}
		clearIndexCache(b)
		m = testMount(b, d.path)
		dropCaches()
		b.StartTimer()
		cold = append(cold, findStat()) // fresh mount: every decoded size from a size scan
		warm = append(warm, findStat()) // the same mount again: sizes known, kernel caches warm
		b.StopTimer()
		m.unmount(b) // the server saves the sidecar as it ends
		m = testMount(b, d.path)
		dropCaches()
		b.StartTimer()
		remount = append(remount, findStat())
	}
	b.StopTimer()
	b.ReportMetric(median(cold), "findstat-cold-ms")
	b.ReportMetric(median(warm), "findstat-warm-ms")
	b.ReportMetric(median(remount), "findstat-remount-ms")
	b.ReportMetric(float64(len(d.entries)), "entries")
	reportRSS(b, m, "gcfs")
}

// clearIndexCache removes the index sidecars of the test's gcfs processes
// ($XDG_CACHE_HOME/gcfs, a directory under workDir): the next mount is a
// first one.
func clearIndexCache(t testing.TB) {
	dir := os.Getenv("XDG_CACHE_HOME")
	if dir == "" || !strings.HasPrefix(dir, os.TempDir()) {
		t.Fatalf("XDG_CACHE_HOME %q is not a test directory", dir)
	}
	if err := os.RemoveAll(filepath.Join(dir, "gcfs")); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkMountReady: from `gcfs mount` starting to its return with the
// mount ready.
// Cold: no index sidecar, page cache dropped first (the ISO directories and
// container headers come from disk); warm: no sidecar, mounted again at
// once; remount: the sidecar the last mount saved, page cache dropped (the
// build decodes nothing).
func BenchmarkMountReady(b *testing.B) {
	d := getDisc(b, benchLayout())
	res := map[string][]float64{}
	var m *mounted
	for i := 0; i < b.N; i++ {
		for _, mode := range []string{"cold", "warm", "remount"} {
			b.StopTimer()
			if m != nil {
				m.unmount(b)
			}
			if mode != "remount" {
				clearIndexCache(b)
			}
			if mode != "warm" {
				dropCaches()
			}
			b.StartTimer()
			t0 := time.Now()
			m = testMount(b, d.path)
			res[mode] = append(res[mode], float64(time.Since(t0).Microseconds())/1000)
		}
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), "ready-"+k+"-ms")
	}
	reportRSS(b, m, "gcfs")
}
