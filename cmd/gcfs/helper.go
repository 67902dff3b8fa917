package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// The mount helpers. mount(8) runs "mount.gcfs IMAGE DIR [-sfnvrw] [-N ns]
// [-o OPTS] [-t TYPE]" for "mount -t gcfs" and fstab lines of type gcfs;
// fuse3's mount.fuse3 runs "gcfs IMAGE DIR -o OPTS" for type fuse.gcfs. Both
// become "gcfs mount [flags] IMAGE DIR", which returns once the mount is ready.

// helperArgs rewrites a helper command line into a gcfs mount command line;
// ok is false when args are an ordinary gcfs command line.
func helperArgs(app *cli.App, args []string) (out []string, fake bool, ok bool, err error) {
	if len(args) < 3 {
		return nil, false, false, nil
	}
	base := filepath.Base(args[0])
	asHelper := strings.HasPrefix(base, "mount.")
	if app.Command(args[1]) != nil || strings.HasPrefix(args[1], "-") {
		return nil, false, false, nil // a gcfs command (also the background server's re-exec)
	}
	if !asHelper {
		// mount.fuse3's form: gcfs IMAGE DIR [-o OPTS]; only when DIR is a directory.
		if st, err := os.Stat(args[2]); err != nil || !st.IsDir() {
			return nil, false, false, nil
		}
	}
	image, dir := args[1], args[2]
	var opts []string
	rest := args[3:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-o" || a == "-N" || a == "-t":
			if i+1 >= len(rest) {
				return nil, false, true, fmt.Errorf("mount.gcfs: %s needs a value", a)
			}
			if a == "-o" {
				opts = append(opts, rest[i+1])
			}
			i++
		case strings.HasPrefix(a, "-o"):
			opts = append(opts, a[2:])
		case strings.HasPrefix(a, "-t") || strings.HasPrefix(a, "-N"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, f := range a[1:] {
				switch f {
				case 's', 'n', 'v', 'r':
				case 'f':
					fake = true
				case 'w':
					return nil, false, true, fmt.Errorf("mount.gcfs: -w: gcfs mounts are read-only")
				default:
					return nil, false, true, fmt.Errorf("mount.gcfs: unknown option -%c", f)
				}
			}
		default:
			return nil, false, true, fmt.Errorf("mount.gcfs: unexpected argument %q (want IMAGE DIR [-o OPTIONS])", a)
		}
	}
	out = []string{args[0], "mount"}
	var pass []string
	for _, o := range opts {
		for _, opt := range strings.Split(o, ",") {
			key, val, hasVal := strings.Cut(strings.TrimSpace(opt), "=")
			switch {
			case key == "" || key == "ro":
			case key == "rw":
				return nil, false, true, fmt.Errorf("mount.gcfs: -o rw: gcfs mounts are read-only")
			case key == "cache_size" && hasVal:
				out = append(out, "--cache-size", val)
			case key == "max_decoded" && hasVal:
				out = append(out, "--max-decoded", val)
			case key == "parent" && hasVal:
				out = append(out, "--parent", val)
			case key == "log_file" && hasVal:
				out = append(out, "--log-file", val)
			case key == "debug" && !hasVal:
				out = append(out, "--debug")
			case ignoredMountOption(key):
			default:
				pass = append(pass, opt)
			}
		}
	}
	if len(pass) > 0 {
		out = append(out, "-o", strings.Join(pass, ","))
	}
	return append(out, image, dir), fake, true, nil
}

// ignoredMountOption: fstab and mount(8) options that mean nothing to gcfs.
func ignoredMountOption(key string) bool {
	switch key {
	case "defaults", "auto", "noauto", "user", "users", "nouser", "owner", "group",
		"nofail", "_netdev", "exec", "suid", "dev", "async", "sync",
		"atime", "noatime", "relatime", "norelatime", "strictatime", "diratime", "nodiratime",
		"loop", "comment":
		return true
	}
	return strings.HasPrefix(key, "x-") || strings.HasPrefix(key, "comment")
}
