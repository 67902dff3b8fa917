package integration

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"gcfs/discimg"
	"gcfs/fsnode"
	"gcfs/fsnode/fusefs"
)

// BenchmarkLevelCoreEditions: the tree's third edition (data.d/core/ in
// every level) against the second (fsnode.Options.NoLevelCore), in one run
// so that the ratios compare like with like: the tree build (open, build,
// walk; ms), its node count (the third edition's also with every
// sky.d/textures/ listed), the live heap the tree holds, and `find | xargs
// stat` of the whole tree mounted in this process, cold (no index cache,
// page cache dropped: every decoded size from a size scan) and warm (the
// same mount again). The third edition's find descends into
// sky.d/textures/, which lists them (reads each sky's header).
func BenchmarkLevelCoreEditions(b *testing.B) {
	requireFUSE(b)
	d := getDisc(b, benchLayout())
	res := map[string][]float64{}
	add := func(k string, v float64) { res[k] = append(res[k], v) }
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	editions := []struct {
		name   string
		noCore bool
	}{{"second", true}, {"third", false}}
	b.StopTimer()
	// The heap a built tree holds (before any mount of this benchmark:
	// a mount's leftovers would blur it).
	for _, ed := range editions {
		base := heapInuse()
		f, img := openBenchImage(b, d.path)
		tree, err := fsnode.Build(img, fsnode.Options{NoLevelCore: ed.noCore})
		if err != nil {
			b.Fatal(err)
		}
		add(ed.name+"-heap-MiB", float64(heapInuse()-base)/(1<<20))
		runtime.KeepAlive(tree)
		tree.Quiesce()
		f.Close()
	}
	b.StartTimer()
	for i := 0; i < b.N; i++ {
		for _, ed := range editions {
			b.StopTimer()
			dropCaches()
			b.StartTimer()
			t0 := time.Now()
			f, img := openBenchImage(b, d.path)
			tree, err := fsnode.Build(img, fsnode.Options{NoLevelCore: ed.noCore})
			if err != nil {
				b.Fatal(err)
			}
			nodes := 0
			_ = tree.Walk(func(*fsnode.Node) error { nodes++; return nil })
			add(ed.name+"-build-ms", ms(t0))
			b.StopTimer()
			add(ed.name+"-nodes", float64(nodes))
			mnt, srv := mountTreeHere(b, tree, f)
			dropCaches()
			b.StartTimer()
			t0 = time.Now()
			findStatDir(b, mnt)
			add(ed.name+"-findstat-cold-ms", ms(t0))
			t0 = time.Now()
			findStatDir(b, mnt)
			add(ed.name+"-findstat-warm-ms", ms(t0))
			b.StopTimer()
			listed := 0
			_ = fsnode.WalkListing(tree.Root, func(*fsnode.Node) error { listed++; return nil })
			add(ed.name+"-nodes-listed", float64(listed))
			if err := srv.Unmount(); err != nil {
				syscall.Unmount(mnt, syscall.MNT_DETACH)
			}
			tree.Quiesce()
			f.Close()
			b.StartTimer()
		}
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k)
	}
	for _, k := range []string{"build-ms", "findstat-cold-ms", "findstat-warm-ms", "nodes", "heap-MiB"} {
		if s := median(res["second-"+k]); s > 0 {
			b.ReportMetric(median(res["third-"+k])/s, "third/second-"+k)
		}
	}
}

func heapInuse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

func openBenchImage(b *testing.B, path string) (*os.File, *discimg.Image) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	st, _ := f.Stat()
	img, err := discimg.Open(f, st.Size())
	if err != nil {
		b.Fatal(err)
	}
	return f, img
}

// mountTreeHere mounts a built tree in this process.
func mountTreeHere(b *testing.B, tree *fsnode.Tree, f *os.File) (string, interface{ Unmount() error }) {
	mnt, err := os.MkdirTemp(workDir, "mnt-edition-")
	if err != nil {
		b.Fatal(err)
	}
	srv, err := fusefs.Mount(mnt, tree, fusefs.Options{Image: f, Logf: func(string, ...any) {}})
	if err != nil {
		b.Fatal(err)
	}
	return mnt, srv
}

func findStatDir(b *testing.B, dir string) {
	out, err := exec.Command("sh", "-c", "find \"$1\" -print0 | xargs -0 stat >/dev/null", "sh", dir).CombinedOutput()
	if err != nil {
		b.Fatalf("%v %s", err, strings.TrimSpace(string(out)))
	}
}

// BenchmarkLevelCoreListRSS: the server's memory (gcfs mount, a process of
// its own, no index cache) after listing every level whole (find | stat of
// every G/LEVELn.WAD, sky.d/textures/ included), against just after the
// mount.
func BenchmarkLevelCoreListRSS(b *testing.B) {
	requireFUSE(b)
	d := getDisc(b, benchLayout())
	var ready, listed, peak []float64
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		clearIndexCache(b)
		m := testMount(b, d.path)
		kb := func(f string) float64 {
			v, err := procStatusKB(m.pid, f)
			if err != nil {
				b.Fatal(err)
			}
			return float64(v) / 1024
		}
		ready = append(ready, kb("VmRSS"))
		b.StartTimer()
		out, err := exec.Command("sh", "-c", "find \"$1\"/G -maxdepth 1 -name 'LEVEL*.WAD' -print0 | xargs -0 -I{} find {} -print0 | xargs -0 stat >/dev/null", "sh", m.dir).CombinedOutput()
		b.StopTimer()
		if err != nil {
			b.Fatalf("%v %s", err, out)
		}
		listed = append(listed, kb("VmRSS"))
		peak = append(peak, kb("VmHWM"))
		m.unmount(b)
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(median(ready), "rss-mounted-MiB")
	b.ReportMetric(median(listed), "rss-levels-listed-MiB")
	b.ReportMetric(median(peak), "peakRSS-MiB")
}
