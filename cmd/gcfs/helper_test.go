package main

import (
	"strings"
	"testing"
)

func TestHelperArgs(t *testing.T) {
	app := newApp()
	dir := t.TempDir()
	cases := []struct {
		args []string
		want string // joined rewritten args; "" for not a helper line
		fake bool
		bad  bool
	}{
		{[]string{"/sbin/mount.gcfs", "/x.chd", dir, "-o", "ro,allow_other,uid=5,noauto,user,defaults,cache_size=64MiB,parent=/p.chd"},
			"/sbin/mount.gcfs mount --cache-size 64MiB --parent /p.chd -o allow_other,uid=5 /x.chd " + dir, false, false},
		{[]string{"/sbin/mount.gcfs", "/x.iso", dir, "-n", "-o", "rw"}, "", false, true},
		{[]string{"/sbin/mount.gcfs", "/x.iso", dir, "-w"}, "", false, true},
		{[]string{"/sbin/mount.gcfs", "/x.iso", dir, "-fv", "-o", "ro"}, "/sbin/mount.gcfs mount /x.iso " + dir, true, false},
		{[]string{"/sbin/mount.gcfs", "/x.iso", dir, "-t", "gcfs", "-oro,umask=022"}, "/sbin/mount.gcfs mount -o umask=022 /x.iso " + dir, false, false},
		{[]string{"gcfs", "/x.iso", dir, "-o", "ro,allow_other"}, "gcfs mount -o allow_other /x.iso " + dir, false, false},
		// mount.fuse3 adds dev,suid.
		{[]string{"gcfs", "/x.iso", dir, "-o", "ro,allow_other,dev,suid"}, "gcfs mount -o allow_other /x.iso " + dir, false, false},
		{[]string{"gcfs", "/x.iso", "/nonexistent-dir"}, "", false, false},
		{[]string{"gcfs", "ls", "/x.iso", "G"}, "", false, false},
		{[]string{"/sbin/mount.gcfs", "mount", "--foreground", "/x.iso", dir}, "", false, false},
	}
	for _, tc := range cases {
		out, fake, ok, err := helperArgs(app, tc.args)
		switch {
		case tc.bad:
			if !ok || err == nil {
				t.Errorf("%q: want a refusal, got %q %v", tc.args, out, err)
			}
		case tc.want == "":
			if ok {
				t.Errorf("%q: taken as a helper line: %q %v", tc.args, out, err)
			}
		default:
			if !ok || err != nil || strings.Join(out, " ") != tc.want || fake != tc.fake {
				t.Errorf("%q:\n got %q fake=%v %v\nwant %q fake=%v", tc.args, strings.Join(out, " "), fake, err, tc.want, tc.fake)
			}
		}
	}
}
