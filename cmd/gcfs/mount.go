package main

import (
	"bufio"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/urfave/cli/v2"
	"golang.org/x/sys/unix"

	"gcfs/fsnode"
	"gcfs/fsnode/fusefs"
	"gcfs/overlay"
)

// readyFDEnv names the descriptor a background server reports readiness on:
// "ready\n" once the mount serves, or "error: <reason>\n".
const readyFDEnv = "GCFS_READY_FD"

func mountCommands() []*cli.Command {
	return []*cli.Command{
		{
			Name:      "mount",
			Usage:     "mount a disc image read-only at MOUNTPOINT",
			ArgsUsage: "IMAGE MOUNTPOINT",
			Description: "Mounts the image through FUSE and returns once the mount is ready, leaving a\n" +
				"background server; with -f it stays attached and unmounts on SIGINT or SIGTERM.",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "foreground", Aliases: []string{"f"}, Usage: "stay attached; unmount on SIGINT or SIGTERM"},
				&cli.StringFlag{Name: "cache-size", Value: "256MiB", Usage: "decoded-block cache budget (64MiB, 1GiB, ...)"},
				&cli.StringFlag{Name: "max-decoded", Value: "256MiB", Usage: "largest decoded stream; past it reads fail with EIO"},
				&cli.StringSliceFlag{Name: "o", Usage: "comma list of mount options: allow_other, uid=N, gid=N, umask=OCTAL, others go to FUSE"},
				&cli.BoolFlag{Name: "debug", Usage: "log the FUSE request trace and the cache counters"},
				&cli.BoolFlag{Name: "no-passthrough", Usage: "serve every read of a decoded file (by default, where the kernel allows FUSE passthrough, the kernel reads decoded files from memory files the server fills, up to --cache-size of them)"},
				&cli.StringFlag{Name: "overlay", Usage: "mount writable: edits are kept in `DIR` at the tree's paths (gcfs pack rebuilds the disc from them)"},
				&cli.StringFlag{Name: "log-file", Usage: "append the server's log here (default: stderr in the foreground, nowhere in the background)"},
				noViewsFlag(), noIndexCacheFlag(),
				parentFlag(),
			},
			Action: mountAction,
		},
		{
			Name:      "umount",
			Aliases:   []string{"unmount"},
			Usage:     "unmount a gcfs mount",
			ArgsUsage: "MOUNTPOINT",
			Flags: []cli.Flag{
				&cli.BoolFlag{Name: "lazy", Aliases: []string{"z"}, Usage: "detach now even when busy; finish when no longer in use"},
			},
			Action: umountAction,
		},
	}
}

// mountConfig is the parsed command line of gcfs mount.
type mountConfig struct {
	image, mountpoint string
	parent            string // --parent of a child CHD
	cacheSize         int64
	maxDecoded        int64
	fuse              fusefs.Options
	rawOpts           []string // the -o values as given, for the re-exec
	writeRequested    bool     // -o rw (mountMode says what it gets)
	debug             bool
	logFile           string
	noViews           bool
	noPassthrough     bool // --no-passthrough: no memory files for the kernel
	noIndexCache      bool
	overlayDir        string // --overlay: writable, edits kept there
}

func parseMountArgs(c *cli.Context) (*mountConfig, error) {
	if c.NArg() != 2 {
		return nil, fmt.Errorf("mount: want IMAGE MOUNTPOINT, got %d argument(s) (see gcfs mount --help)", c.NArg())
	}
	cfg := &mountConfig{image: c.Args().Get(0), mountpoint: c.Args().Get(1), parent: c.String("parent"), debug: c.Bool("debug"),
		logFile: c.String("log-file"), noViews: c.Bool("no-views"), noIndexCache: c.Bool("no-index-cache"),
		noPassthrough: c.Bool("no-passthrough")}
	// fusermount3 refuses a mount point given through a symlink; mount where it points.
	if r, err := filepath.EvalSymlinks(cfg.mountpoint); err == nil {
		cfg.mountpoint = r
	}
	var err error
	if cfg.cacheSize, err = parseSize("--cache-size", c.String("cache-size"), 1); err != nil {
		return nil, err
	}
	if cfg.maxDecoded, err = parseSize("--max-decoded", c.String("max-decoded"), 1); err != nil {
		return nil, err
	}
	cfg.fuse.UID, cfg.fuse.GID = uint32(os.Getuid()), uint32(os.Getgid())
	cfg.rawOpts = c.StringSlice("o")
	if cfg.writeRequested, err = parseFuseOpts(cfg.rawOpts, &cfg.fuse); err != nil {
		return nil, err
	}
	if cfg.logFile != "" {
		if err := checkLogFile(cfg.logFile, cfg.mountpoint); err != nil {
			return nil, err
		}
	}
	cfg.fuse.Debug = cfg.debug
	if d := c.String("overlay"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("mount: --overlay %s: not a directory", d)
		}
		cfg.overlayDir, _ = filepath.Abs(d)
	}
	return cfg, nil
}

func parseSize(flag, s string, min int64) (int64, error) {
	v, err := humanize.ParseBytes(s)
	if err != nil || v > 1<<50 {
		return 0, fmt.Errorf("mount: %s %q: not a size (use e.g. 64MiB, 1GiB)", flag, s)
	}
	if int64(v) < min {
		return 0, fmt.Errorf("mount: %s %q: must be at least %d bytes", flag, s, min)
	}
	return int64(v), nil
}

// parseFuseOpts reads -o values (each an option string as mount(8) writes
// it: see splitMountOptions). It reports whether the options ask for a
// writable mount: "rw" (typed, or added by mount(8) itself), the last of ro
// and rw winning as in mount(8); mountMode decides what that means.
func parseFuseOpts(vals []string, o *fusefs.Options) (rw bool, err error) {
	for _, v := range vals {
		opts, err := splitMountOptions(v)
		if err != nil {
			return false, fmt.Errorf("mount: %v", err)
		}
		for _, opt := range opts {
			key, val, hasVal := opt.key, opt.value, opt.hasValue
			switch {
			case key == "ro" && !hasVal:
				rw = false
			case key == "rw" && !hasVal:
				rw = true
			case key == "allow_other" && !hasVal:
				o.AllowOther = true
			case key == "uid" || key == "gid":
				n, err := strconv.ParseUint(val, 10, 32)
				if !hasVal || err != nil {
					return false, fmt.Errorf("mount: -o %s: want a numeric id", opt)
				}
				if key == "uid" {
					o.UID = uint32(n)
				} else {
					o.GID = uint32(n)
				}
			case key == "umask":
				n, err := strconv.ParseUint(val, 8, 32)
				if !hasVal || err != nil || n > 0o777 {
					return false, fmt.Errorf("mount: -o %s: want an octal mask such as 022", opt)
				}
				m := uint32(n)
				o.Umask = &m
			default:
				// FUSE's own option list is comma-separated with no quoting
				// through go-fuse: a comma in a value cannot get there whole.
				if strings.Contains(opt.value, ",") {
					return false, fmt.Errorf("mount: -o %q: a FUSE option's value cannot hold a comma", opt.String())
				}
				o.FuseOptions = append(o.FuseOptions, opt.String())
			}
		}
	}
	return rw, nil
}

// mountMode decides how a mount that asked to be writable is made. The
// image is never written, so without an overlay (which does not exist yet:
// an --overlay flag changes this one place) the mount is read-only, as the
// kernel mounts a write-protected ISO read-only and says so ("WARNING:
// source write-protected, mounted read-only") rather than failing: mount(8)
// adds "rw" itself to `mount -t gcfs IMAGE DIR` with no -o. note is the one
// line to tell the user ("" when there is nothing to say).
func mountMode(cfg *mountConfig) (note string) {
	if !cfg.writeRequested {
		return ""
	}
	return fmt.Sprintf("gcfs: %s is read-only: mounting read-only", cfg.image)
}

// checkMountpoint refuses a mount point that is missing, not a directory,
// already a mount, or not empty; each with its own reason.
func checkMountpoint(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		if errors.Is(err, syscall.ENOTCONN) {
			return fmt.Errorf("mount point %s is a dead FUSE mount (transport endpoint is not connected); run gcfs umount %s", dir, dir)
		}
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("mount point %s does not exist", dir)
		}
		return fmt.Errorf("mount point %s: %v", dir, unwrapPathError(err))
	}
	if !st.IsDir() {
		return fmt.Errorf("mount point %s is not a directory", dir)
	}
	if isMount(dir) {
		// A FUSE server killed without unmounting leaves a mount whose
		// attributes the kernel may still answer from its cache; statfs
		// always asks the server, and a dead one answers ENOTCONN.
		var sf syscall.Statfs_t
		if err := syscall.Statfs(dir, &sf); errors.Is(err, syscall.ENOTCONN) {
			return fmt.Errorf("mount point %s is a dead FUSE mount (transport endpoint is not connected); run gcfs umount %s", dir, dir)
		}
		return fmt.Errorf("mount point %s is already a mount", dir)
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("mount point %s: %v", dir, unwrapPathError(err))
	}
	names, _ := f.Readdirnames(1)
	f.Close()
	if len(names) > 0 {
		return fmt.Errorf("mount point %s is not empty", dir)
	}
	return nil
}

// checkLogFile refuses a --log-file under the mount point: the server opens
// it before mounting, so it would be created in the mount point (making the
// next mount's "not empty" refusal), then hidden by the mount with every
// line written after. The file need not exist yet: its nearest existing
// ancestor is resolved and the rest of the path joined on.
func checkLogFile(logFile, mountpoint string) error {
	lf, err := realPathPrefix(logFile)
	if err != nil {
		return fmt.Errorf("--log-file %s: %v", logFile, err)
	}
	mnt, err := realPathPrefix(mountpoint)
	if err != nil {
		return nil // checkMountpoint says what is wrong with it
	}
	if lf == mnt || strings.HasPrefix(lf, strings.TrimSuffix(mnt, "/")+"/") {
		return fmt.Errorf("--log-file %s is under the mount point %s: the mount would hide it and every line after; put it elsewhere", logFile, mountpoint)
	}
	return nil
}

// realPathPrefix resolves the symlinks of path's longest existing prefix and
// joins the rest on, cleaned: the path the file has or would have.
func realPathPrefix(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	rest := ""
	for dir := abs; ; {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(dir), rest)
		dir = parent
	}
}

// isMount reports whether dir is a mount point: listed in mountinfo, or on a
// different device than its parent.
func isMount(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err == nil {
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
			for _, line := range strings.Split(string(data), "\n") {
				f := strings.Fields(line)
				if len(f) > 4 && unescapeMountPath(f[4]) == abs {
					return true
				}
			}
		}
	}
	var s, p syscall.Stat_t
	if syscall.Stat(dir, &s) != nil || syscall.Stat(filepath.Join(dir, ".."), &p) != nil {
		return false
	}
	return s.Dev != p.Dev
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for space, ...).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func mountAction(c *cli.Context) error {
	cfg, err := parseMountArgs(c)
	if err != nil {
		return err
	}
	// The refusals come first, in the caller's process, so they print
	// without a server ever starting.
	oi, err := openImage(cfg.image, cfg.parent, cfg.cacheSize)
	if err != nil {
		return err
	}
	if err := checkMountpoint(cfg.mountpoint); err != nil {
		oi.Close()
		return err
	}
	if note := mountMode(cfg); note != "" {
		fmt.Fprintln(errWriter(c), note)
	}
	if !c.Bool("foreground") {
		// The background server logs only to --log-file: say here, where
		// the user sees it, which directories the mount will lack.
		for _, err := range fsnode.ImageDirErrors(oi.img) {
			fmt.Fprintf(errWriter(c), "gcfs: %s: warning: %s\n", cfg.image, fsnode.DirLoss(err))
		}
		oi.Close()
		return startBackground(cfg)
	}
	return serve(cfg, oi)
}

// startBackground re-executes gcfs in the foreground as a detached server and
// waits until it reports the mount ready or fails.
func startBackground(cfg *mountConfig) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("mount: cannot find the gcfs executable: %v", err)
	}
	image, _ := filepath.Abs(cfg.image)
	mnt, _ := filepath.Abs(cfg.mountpoint)
	args := []string{"mount", "--foreground",
		"--cache-size", strconv.FormatInt(cfg.cacheSize, 10),
		"--max-decoded", strconv.FormatInt(cfg.maxDecoded, 10)}
	for _, o := range cfg.rawOpts {
		args = append(args, "-o", o)
	}
	if cfg.writeRequested {
		// The last of ro and rw wins: the server mounts what mountMode
		// said here, and does not say it again.
		args = append(args, "-o", "ro")
	}
	if cfg.debug {
		args = append(args, "--debug")
	}
	if cfg.noViews {
		args = append(args, "--no-views")
	}
	if cfg.noIndexCache {
		args = append(args, "--no-index-cache")
	}
	if cfg.noPassthrough {
		args = append(args, "--no-passthrough")
	}
	if cfg.logFile != "" {
		lf, _ := filepath.Abs(cfg.logFile)
		args = append(args, "--log-file", lf)
	}
	if cfg.parent != "" {
		p, _ := filepath.Abs(cfg.parent)
		args = append(args, "--parent", p)
	}
	if cfg.overlayDir != "" {
		args = append(args, "--overlay", cfg.overlayDir)
	}
	args = append(args, image, mnt)

	pr, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("mount: %v", err)
	}
	defer pr.Close()
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		pw.Close()
		return fmt.Errorf("mount: %v", err)
	}
	defer null.Close()
	// The server's stderr comes here until it is ready (then it points it
	// at its log or /dev/null), so that what a helper such as fusermount3
	// printed can be part of a failure's message.
	er, ew, err := os.Pipe()
	if err != nil {
		pw.Close()
		return fmt.Errorf("mount: %v", err)
	}
	defer er.Close()
	stderrTail := make(chan string, 1)
	go func() {
		var last []byte
		buf := make([]byte, 4096)
		for {
			n, err := er.Read(buf)
			last = append(last, buf[:n]...)
			if len(last) > 4096 {
				last = last[len(last)-4096:]
			}
			if err != nil {
				stderrTail <- string(last)
				return
			}
		}
	}()
	cmd := exec.Command(exe, args...)
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, null, ew
	cmd.ExtraFiles = []*os.File{pw} // fd 3
	cmd.Env = append(os.Environ(), readyFDEnv+"=3")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		pw.Close()
		ew.Close()
		return fmt.Errorf("mount: starting the server: %v", err)
	}
	pw.Close()
	ew.Close()
	line, _ := bufio.NewReader(pr).ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "ready" {
		cmd.Process.Release()
		return nil
	}
	werr := cmd.Wait()
	detail := ""
	select {
	case t := <-stderrTail:
		detail = lastLine(t)
	case <-time.After(time.Second):
	}
	msg, ok := strings.CutPrefix(line, "error: ")
	if !ok {
		msg = fmt.Sprintf("mount: the server exited before the mount was ready (%v)", werr)
	}
	if detail != "" && !strings.Contains(msg, detail) {
		msg += " (" + detail + ")"
	}
	return errors.New(msg)
}

// lastLine returns the last non-empty line of s that is not the server's
// own error line (which the ready pipe carries already).
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" && !strings.HasPrefix(l, "gcfs: ") {
			return l
		}
	}
	return ""
}

// readyReporter tells a waiting parent how the mount went; without one it
// does nothing.
type readyReporter struct{ f *os.File }

func newReadyReporter() *readyReporter {
	v := os.Getenv(readyFDEnv)
	os.Unsetenv(readyFDEnv)
	fd, err := strconv.Atoi(v)
	if v == "" || err != nil || fd < 3 {
		return &readyReporter{}
	}
	return &readyReporter{f: os.NewFile(uintptr(fd), "ready-pipe")}
}

func (r *readyReporter) report(err error) {
	if r.f == nil {
		return
	}
	if err != nil {
		fmt.Fprintf(r.f, "error: %s\n", strings.ReplaceAll(err.Error(), "\n", " "))
	} else {
		fmt.Fprintln(r.f, "ready")
	}
	r.f.Close()
	r.f = nil
}

// indexSaveDelay: a mount saves its index sidecar this long after the last
// size it learned.
const indexSaveDelay = 2 * time.Second

// mountReadAhead: the decoded blocks a mount decodes in the background after
// each read's last block, and from a file's start when it is opened: 1 MiB,
// the size of the kernel's read requests, so that the next request's
// blocks are being decoded while this one's are copied to the kernel.
const mountReadAhead = 16

// serve mounts and serves until unmounted or signalled.
func serve(cfg *mountConfig, oi *openedImage) (err error) {
	ready := newReadyReporter()
	defer func() { ready.report(err) }()
	defer oi.Close()
	img, f := oi.img, oi.file

	logger, closeLog, err := openLog(cfg.logFile)
	if err != nil {
		return err
	}
	defer closeLog()
	logf := logSink(logger)

	// GCFS_CPUPROFILE=FILE profiles the server (for finding hot spots).
	if path := os.Getenv("GCFS_CPUPROFILE"); path != "" {
		if pf, err := os.Create(path); err == nil && pprof.StartCPUProfile(pf) == nil {
			defer func() { pprof.StopCPUProfile(); pf.Close() }()
		}
	}

	// GCFS_HEAPPROFILE=FILE writes the server's heap profile as it ends
	// (for finding where the tree's memory goes).
	if path := os.Getenv("GCFS_HEAPPROFILE"); path != "" {
		defer func() {
			if pf, err := os.Create(path); err == nil {
				runtime.GC()
				pprof.WriteHeapProfile(pf)
				pf.Close()
			}
		}()
	}

	// Keep the heap near what the cache may hold and the tree needs, so
	// the server's RSS tracks --cache-size rather than the garbage
	// collector's pacing (memlimit.go).
	pacer := startMemPacer(cfg.cacheSize, func() int64 { return oi.cache.Stats().Bytes })
	defer pacer.stop()
	// Within that limit, collect less often than Go's default: the heap is
	// mostly the cache's blocks, which a collection cannot free, and on a
	// cold read of every decoded file the default pacing's cycles took a
	// tenth of the time (all files through a fresh mount: 703-722 ms at
	// GOGC=100, 633-674 at 400, in interleaved runs). GOGC, when set, wins.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}

	// Catch the signals before the mount exists: one that arrives as it
	// appears must unmount it, not kill the server under it.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	start := time.Now()
	topt := fsnode.Options{CacheSize: cfg.cacheSize, Cache: oi.cache, MaxDecoded: cfg.maxDecoded, NoViews: cfg.noViews, Logf: logf,
		IndexSaveDelay: indexSaveDelay, ReadAhead: mountReadAhead}
	indexCacheOptions(cfg.noIndexCache, oi.file, &topt)
	tree, err := fsnode.Build(img, topt)
	if err != nil {
		return fmt.Errorf("%s: %v", cfg.image, err)
	}
	// What the build read and dropped (its block cache, the probes'
	// prefixes) goes back to the system now, before the mount serves: at
	// GOGC 400 it would otherwise stay in the heap, and so in the peak, until
	// the cache fills.
	debug.FreeOSMemory()
	// A P for each of the tree's low-priority background threads, beyond
	// the cores: the retail tree's first find without the sidecar, median
	// of 6 interleaved runs, went from 2,965 ms at 2 Ps to 2,731 at 4 (2,678
	// at 3); a cat of every decoded file did not change (958, 937, 907 ms).
	runtime.GOMAXPROCS(mountProcs(os.Getenv("GOMAXPROCS"), runtime.GOMAXPROCS(0)))
	// What the mount learns (decoded sizes scanned by stat) is saved in the
	// background as it goes and once more as the server ends.
	defer func() {
		tree.Quiesce() // no background scan reads the image past its close
		if err := tree.SaveIndex(); err != nil {
			logf("gcfs: %v", err)
		}
	}()
	opt := cfg.fuse
	// The front end's lines go through the tree's limiter too: repeated
	// problems are summarised, the counts logged as the mount ends. With
	// --debug (the FUSE request trace) every line is kept.
	opt.Logf = tree.Logf
	if cfg.debug {
		opt.Logf = logf
	}
	defer tree.FlushLog()
	// Splice raw reads only from a plain ISO file or device; a CHD, CSO or
	// ZSO is read decoded (fusefs then takes the non-splice path).
	opt.Image = oi.spliceFile()
	opt.FsName, _ = filepath.Abs(cfg.image)
	if st, err := f.Stat(); err == nil {
		opt.Mtime = st.ModTime()
	}
	if cfg.overlayDir != "" {
		if opt.Overlay, err = overlay.New(tree, cfg.overlayDir, opt.Logf); err != nil {
			return fmt.Errorf("--overlay: %v", err)
		}
	}
	if !cfg.noPassthrough {
		opt.MemFiles = cfg.cacheSize
	}
	srv, err := fusefs.Mount(cfg.mountpoint, tree, opt)
	if err != nil {
		return fmt.Errorf("mount %s at %s: %s", cfg.image, cfg.mountpoint, mountError(err))
	}
	pass := "decoded files served"
	if tree.MemFiles() != nil {
		pass = "decoded files passed through"
	}
	logf("gcfs: %s mounted at %s in %v (cache %s, max decoded %s, %s)", cfg.image, cfg.mountpoint,
		time.Since(start).Round(time.Millisecond), humanize.IBytes(uint64(cfg.cacheSize)), humanize.IBytes(uint64(cfg.maxDecoded)), pass)
	if ready.f != nil {
		// Background server: stderr was the parent's pipe until now.
		if err := redirectStderr(cfg.logFile); err != nil {
			logf("gcfs: %v", err)
		}
	}
	ready.report(nil)

	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()

	var tick <-chan time.Time
	if cfg.debug {
		t := time.NewTicker(10 * time.Second)
		defer t.Stop()
		tick = t.C
	}
	unmounting := false
	for {
		select {
		case <-done:
			logCacheStats(logf, tree, "unmounted")
			return nil
		case <-tick:
			logCacheStats(logf, tree, "running")
		case s := <-sigs:
			if unmounting {
				logf("gcfs: second %v: exiting while the mount is still busy", s)
				logCacheStats(logf, tree, "exit")
				return nil
			}
			unmounting = true
			logf("gcfs: %v: unmounting %s", s, cfg.mountpoint)
			if err := srv.Unmount(); err != nil {
				logf("gcfs: unmount %s: %s; detaching lazily", cfg.mountpoint, oneLine(err.Error()))
				if err := unmount(cfg.mountpoint, true); err != nil {
					logf("gcfs: lazy unmount %s: %v", cfg.mountpoint, err)
				}
			}
		}
	}
}

// redirectStderr points fd 2 at the log file, or /dev/null without one.
func redirectStderr(logFile string) error {
	path := logFile
	if path == "" {
		path = os.DevNull
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Dup2(int(f.Fd()), 2)
}

// logSink is the mount log's one sink: every line with its control
// characters escaped (names from the disc, rule strings from the index
// cache, paths), so that no line can forge another or drive a terminal.
func logSink(l *log.Logger) func(format string, args ...any) {
	return func(format string, args ...any) { l.Print(fsnode.EscapeControl(fmt.Sprintf(format, args...))) }
}

func openLog(path string) (*log.Logger, func(), error) {
	if path == "" {
		return log.New(os.Stderr, "", log.LstdFlags), func() {}, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("--log-file %s: %v", path, unwrapPathError(err))
	}
	return log.New(f, "", log.LstdFlags), func() { f.Close() }, nil
}

// mountProcs is the GOMAXPROCS a mount's server runs with, given the
// environment's GOMAXPROCS and the runtime's: the cores the runtime found
// and one P more for each thread fsnode lowers (fsnode.BackgroundThreads:
// a lowered thread that waits for a core still holds its P). A GOMAXPROCS
// set in the environment is kept as it is.
func mountProcs(env string, procs int) int {
	if env != "" {
		return procs
	}
	return procs + fsnode.BackgroundThreads
}

func logCacheStats(logf func(string, ...any), t *fsnode.Tree, when string) {
	if t == nil || t.Cache == nil {
		return
	}
	s := t.Cache.Stats()
	logf("gcfs: cache %s: %d hits, %d misses, %d evictions, %d dropped (served to the page cache), %d blocks, %s of %s",
		when, s.Hits, s.Misses, s.Evictions, s.Dropped, s.Entries, humanize.IBytes(uint64(s.Bytes)), humanize.IBytes(uint64(s.MaxBytes)))
}

func umountAction(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("umount: want MOUNTPOINT (see gcfs umount --help)")
	}
	dir := c.Args().Get(0)
	m, err := findMount(dir)
	if err != nil {
		return fmt.Errorf("umount %s: %v", dir, err)
	}
	if m == nil {
		if _, err := os.Stat(dir); err != nil && !errors.Is(err, syscall.ENOTCONN) {
			return fmt.Errorf("umount %s: %v", dir, unwrapPathError(err))
		}
		return fmt.Errorf("umount %s: not a mount point", dir)
	}
	if !isGcfsMountType(m.fstype) {
		return fmt.Errorf("umount %s: a %s mount, not a gcfs mount: not unmounted", dir, m.fstype)
	}
	return unmount(m.point, c.Bool("lazy"))
}

// gcfsMountType is the type gcfs's mounts have in the mount table: FUSE
// with go-fuse's Name "gcfs" as the subtype (fusefs.MountOptions).
const gcfsMountType = "fuse.gcfs"

func isGcfsMountType(t string) bool { return t == gcfsMountType }

// mountEntry is one line of /proc/self/mountinfo.
type mountEntry struct {
	point, fstype, source string
}

// findMount returns the mount whose mount point is dir (the last one
// listed, which is the one on top), or nil when dir is not a mount point.
// dir is resolved without stat-ing it where that fails, so that a dead FUSE
// mount (whose stat answers ENOTCONN) is still found.
func findMount(dir string) (*mountEntry, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	} else if r, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		abs = filepath.Join(r, filepath.Base(abs))
	}
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	var found *mountEntry
	for _, line := range strings.Split(string(data), "\n") {
		if e, ok := parseMountinfoLine(line); ok && e.point == abs {
			found = &e
		}
	}
	return found, nil
}

// parseMountinfoLine reads "ID PARENT MAJ:MIN ROOT POINT OPTS [TAGS...] -
// FSTYPE SOURCE SUPEROPTS" (proc(5)).
func parseMountinfoLine(line string) (mountEntry, bool) {
	f := strings.Fields(line)
	if len(f) < 5 {
		return mountEntry{}, false
	}
	e := mountEntry{point: unescapeMountPath(f[4])}
	for i := 6; i < len(f); i++ {
		if f[i] == "-" {
			if i+1 < len(f) {
				e.fstype = unescapeMountPath(f[i+1])
			}
			if i+2 < len(f) {
				e.source = unescapeMountPath(f[i+2])
			}
			break
		}
	}
	return e, true
}

// unmount detaches a FUSE mount with fusermount3 (which works for the
// mount's owner without privileges), falling back to umount2 as root.
func unmount(dir string, lazy bool) error {
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	var msg string
	for _, bin := range []string{"fusermount3", "fusermount"} {
		path, err := exec.LookPath(bin)
		if err != nil {
			continue
		}
		out, err := exec.Command(path, append(args, dir)...).CombinedOutput()
		if err == nil {
			return nil
		}
		msg = oneLine(string(out))
		if msg == "" {
			msg = bin + " " + exitStatus(err)
		}
		break
	}
	flags := 0
	if lazy {
		flags = syscall.MNT_DETACH
	}
	err := syscall.Unmount(dir, flags)
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.EBUSY) || strings.Contains(msg, "busy") {
		return fmt.Errorf("umount %s: %s is busy; `gcfs umount -z %s` unmounts it lazily", dir, dir, dir)
	}
	if msg != "" {
		return fmt.Errorf("umount %s: %s", dir, msg)
	}
	return fmt.Errorf("umount %s: %v", dir, err)
}

// exitStatus says how a command ended: its exit code (not the wait status
// go-fuse prints as "exited with code 256") or the signal that ended it.
func exitStatus(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return fmt.Sprintf("was killed by %v", ws.Signal())
		}
		return fmt.Sprintf("exited with code %d", ee.ExitCode())
	}
	return err.Error()
}

// fusermountWaitStatus matches go-fuse's mount failure, which prints the
// helper's wait status: "fusermount exited with code 256" is exit code 1.
var fusermountWaitStatus = regexp.MustCompile(`fusermount exited with code (\d+)\s*`)

// mountError rewrites go-fuse's mount error with fusermount3's exit code.
// What fusermount3 printed went to the server's stderr: the caller of a
// background server adds its last line to the message, a foreground
// server's user has seen it.
func mountError(err error) string {
	return fusermountWaitStatus.ReplaceAllStringFunc(strings.TrimSpace(err.Error()), func(m string) string {
		n, perr := strconv.ParseUint(fusermountWaitStatus.FindStringSubmatch(m)[1], 10, 32)
		if perr != nil {
			return m
		}
		ws := syscall.WaitStatus(n)
		if ws.Signaled() {
			return fmt.Sprintf("fusermount was killed by %v", ws.Signal())
		}
		return fmt.Sprintf("fusermount exited with code %d", ws.ExitStatus())
	})
}

// oneLine folds a multi-line message (fusermount3's output) into one log line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\n", "; ")), " ")
}
