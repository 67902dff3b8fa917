package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"
)

// The mount helpers. mount(8) runs "mount.gcfs IMAGE DIR [-sfnvrw] [-N ns]
// [-o OPTS] [-t TYPE]" for "mount -t gcfs" and fstab lines of type gcfs, and
// "mount.fuse.gcfs IMAGE DIR ..." for type fuse.gcfs (it looks for
// /sbin/mount.fuse.gcfs before fuse3's /sbin/mount.fuse); fuse3's
// mount.fuse3, when it is the one run, runs "gcfs IMAGE DIR -o OPTS". All
// become "gcfs mount [flags] IMAGE DIR", which returns once the mount is
// ready.

// helperUsage is what a mount helper run without its arguments prints.
const helperUsage = `usage: mount.gcfs IMAGE MOUNTPOINT [-fnrsvw] [-o OPTIONS]
(mount(8) runs it for "mount -t gcfs IMAGE MOUNTPOINT" and fstab lines of type gcfs)
OPTIONS: ro, allow_other, uid=N, gid=N, umask=OCTAL, cache_size=SIZE,
max_decoded=SIZE, parent=FILE, log_file=FILE, debug, no_passthrough; a value holding a comma
is double-quoted: log_file="/x/q,uoted.log". See gcfs mount --help.`

// errHelperUsage: a mount helper run without IMAGE and MOUNTPOINT.
var errHelperUsage = errors.New(helperUsage)

// isHelperName reports whether args[0] names a mount helper (mount.gcfs,
// mount.fuse.gcfs): then the first argument is the image, whatever its
// name, never a gcfs command.
func isHelperName(arg0 string) bool {
	return strings.HasPrefix(filepath.Base(arg0), "mount.")
}

// helperArgs rewrites a helper command line into a gcfs mount command line;
// ok is false when args are an ordinary gcfs command line.
func helperArgs(app *cli.App, args []string) (out []string, fake bool, ok bool, err error) {
	if len(args) == 0 {
		return nil, false, false, nil
	}
	if isHelperName(args[0]) {
		if len(args) < 3 {
			return nil, false, true, errHelperUsage
		}
	} else {
		// mount.fuse3's form: gcfs IMAGE DIR [-o OPTS]; only when IMAGE is
		// no gcfs command nor flag and DIR is a directory.
		if len(args) < 3 || app.Command(args[1]) != nil || strings.HasPrefix(args[1], "-") {
			return nil, false, false, nil
		}
		if st, err := os.Stat(args[2]); err != nil || !st.IsDir() {
			return nil, false, false, nil
		}
	}
	image, dir := args[1], args[2]
	var opts []mountOption
	addOpts := func(s string) error {
		o, err := splitMountOptions(s)
		opts = append(opts, o...)
		return err
	}
	rest := args[3:]
	for i := 0; i < len(rest); i++ {
		a := rest[i]
		switch {
		case a == "-o" || a == "-N" || a == "-t":
			if i+1 >= len(rest) {
				return nil, false, true, fmt.Errorf("mount.gcfs: %s needs a value", a)
			}
			if a == "-o" {
				if err := addOpts(rest[i+1]); err != nil {
					return nil, false, true, fmt.Errorf("mount.gcfs: %v", err)
				}
			}
			i++
		case strings.HasPrefix(a, "-o"):
			if err := addOpts(a[2:]); err != nil {
				return nil, false, true, fmt.Errorf("mount.gcfs: %v", err)
			}
		case strings.HasPrefix(a, "-t") || strings.HasPrefix(a, "-N"):
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, f := range a[1:] {
				switch f {
				case 's', 'n', 'v':
				case 'r':
					opts = append(opts, mountOption{key: "ro"})
				case 'w':
					opts = append(opts, mountOption{key: "rw"})
				case 'f':
					fake = true
				default:
					return nil, false, true, fmt.Errorf("mount.gcfs: unknown option %q", "-"+string(f))
				}
			}
		default:
			return nil, false, true, fmt.Errorf("mount.gcfs: unexpected argument %q (want IMAGE DIR [-o OPTIONS])", a)
		}
	}
	// "gcfs", not args[0]: the rewritten line is parsed as a gcfs command.
	out = []string{"gcfs", "mount"}
	var pass []string
	for _, opt := range opts {
		key, val, hasVal := opt.key, opt.value, opt.hasValue
		switch {
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
		case key == "no_passthrough" && !hasVal:
			out = append(out, "--no-passthrough")
		case ignoredMountOption(key):
		default:
			// ro and rw too, in order: gcfs mount's -o takes the last.
			pass = append(pass, opt.String())
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
