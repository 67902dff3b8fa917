package main

import (
	"reflect"
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
		bad  string // a refusal containing this
	}{
		{args: []string{"/sbin/mount.gcfs", "/x.chd", dir, "-o", "ro,allow_other,uid=5,noauto,user,defaults,cache_size=64MiB,parent=/p.chd"},
			want: "gcfs mount --cache-size 64MiB --parent /p.chd -o ro,allow_other,uid=5 /x.chd " + dir},
		// Issue 18 item 11: rw (mount(8) adds it when no -o is given) and
		// -w go on to gcfs mount, which mounts read-only and says so.
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-n", "-o", "rw"}, want: "gcfs mount -o rw /x.iso " + dir},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", "ro,no_passthrough,debug"}, want: "gcfs mount --no-passthrough --debug -o ro /x.iso " + dir},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-w"}, want: "gcfs mount -o rw /x.iso " + dir},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", "rw", "-r"}, want: "gcfs mount -o rw,ro /x.iso " + dir},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-fv", "-o", "ro"}, want: "gcfs mount -o ro /x.iso " + dir, fake: true},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-t", "gcfs", "-oro,umask=022"}, want: "gcfs mount -o ro,umask=022 /x.iso " + dir},
		{args: []string{"gcfs", "/x.iso", dir, "-o", "ro,allow_other"}, want: "gcfs mount -o ro,allow_other /x.iso " + dir},
		// mount.fuse3 adds dev,suid.
		{args: []string{"gcfs", "/x.iso", dir, "-o", "ro,allow_other,dev,suid"}, want: "gcfs mount -o ro,allow_other /x.iso " + dir},
		{args: []string{"gcfs", "/x.iso", "/nonexistent-dir"}},
		{args: []string{"gcfs", "ls", "/x.iso", "G"}},
		// Issue 18 item 9: as mount.gcfs (or mount.fuse.gcfs), argument 1
		// is the image whatever its name, never a command.
		{args: []string{"/sbin/mount.gcfs", "extract", dir, "-o", "ro"}, want: "gcfs mount -o ro extract " + dir},
		{args: []string{"/sbin/mount.fuse.gcfs", "mount", dir}, want: "gcfs mount mount " + dir},
		{args: []string{"/sbin/mount.gcfs"}, bad: "usage: mount.gcfs IMAGE MOUNTPOINT"},
		{args: []string{"/sbin/mount.gcfs", "/x.iso"}, bad: "usage: mount.gcfs IMAGE MOUNTPOINT"},
		// Issue 18 item 9: mount(8)'s quoting; a value's comma stays in it.
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", `ro,log_file="/x/q,uoted.log",allow_other`},
			want: "gcfs mount --log-file /x/q,uoted.log -o ro,allow_other /x.iso " + dir},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", `log_file=/x/a\,b.log`}, bad: "backslash does not escape a comma"},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", `log_file="/x/a,b.log`}, bad: "not closed"},
		{args: []string{"/sbin/mount.gcfs", "/x.iso", dir, "-q"}, bad: `unknown option "-q"`},
	}
	for _, tc := range cases {
		out, fake, ok, err := helperArgs(app, tc.args)
		switch {
		case tc.bad != "":
			if !ok || err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%q: want a refusal with %q, got %q %v", tc.args, tc.bad, out, err)
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
	// The rewritten line runs as a gcfs mount with the quoted value whole.
	out, _, _, err := helperArgs(app, []string{"/sbin/mount.gcfs", "/x.iso", dir, "-o", `log_file="/x/q,uoted.log"`})
	if err != nil {
		t.Fatal(err)
	}
	if got := interspersedArgs(app, out); !reflect.DeepEqual(got, []string{"gcfs", "mount", "--log-file", "/x/q,uoted.log", "/x.iso", dir}) {
		t.Errorf("interspersed: %q", got)
	}
}

func TestSplitMountOptions(t *testing.T) {
	cases := []struct {
		in   string
		want []mountOption
	}{
		{"ro,allow_other", []mountOption{{key: "ro"}, {key: "allow_other"}}},
		{",,ro,,", []mountOption{{key: "ro"}}},
		{`log_file="/x/q,uoted.log",ro`, []mountOption{{key: "log_file", value: "/x/q,uoted.log", hasValue: true}, {key: "ro"}}},
		{`log_file=/x/"q,u"oted.log`, []mountOption{{key: "log_file", value: "/x/q,uoted.log", hasValue: true}}},
		{`a="x=y",b=`, []mountOption{{key: "a", value: "x=y", hasValue: true}, {key: "b", hasValue: true}}},
		{"uid=5", []mountOption{{key: "uid", value: "5", hasValue: true}}},
		{"", nil},
	}
	for _, c := range cases {
		got, err := splitMountOptions(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitMountOptions(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{`a\,b`, `"a`, `log_file="/x,y`} {
		if got, err := splitMountOptions(bad); err == nil {
			t.Errorf("splitMountOptions(%q) = %+v, want a refusal", bad, got)
		}
	}
}

// FuzzSplitMountOptions: any string splits or is refused without a panic,
// and what it splits into writes back (String) to the same options.
func FuzzSplitMountOptions(f *testing.F) {
	for _, s := range []string{"ro,allow_other", `log_file="/x/q,uoted.log"`, `a\,b`, `"`, ",,=,", `a="b"c"d",e`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		opts, err := splitMountOptions(s)
		if err != nil {
			return
		}
		var parts []string
		for _, o := range opts {
			if o.key == "" {
				t.Fatalf("%q: an empty option %+v", s, o)
			}
			parts = append(parts, o.String())
		}
		again, err := splitMountOptions(strings.Join(parts, ","))
		if err != nil {
			return // a value ending in a backslash written back before a comma
		}
		if !reflect.DeepEqual(again, opts) {
			t.Fatalf("%q: %+v written back as %q reads %+v", s, opts, strings.Join(parts, ","), again)
		}
	})
}
