package main

import (
	"reflect"
	"testing"
)

func TestInterspersedArgs(t *testing.T) {
	app := newApp()
	cases := []struct{ in, want []string }{
		{[]string{"gcfs", "ls", "d.iso", "G", "-l", "-R"}, []string{"gcfs", "ls", "-l", "-R", "d.iso", "G"}},
		{[]string{"gcfs", "identify", "d.iso", "--json"}, []string{"gcfs", "identify", "--json", "d.iso"}},
		{[]string{"gcfs", "wad", "compress", "in", "out", "--tag", "gameplay"}, []string{"gcfs", "wad", "compress", "--tag", "gameplay", "in", "out"}},
		{[]string{"gcfs", "wad", "decompress", "-", "-"}, []string{"gcfs", "wad", "decompress", "-", "-"}},
		{[]string{"gcfs", "cat", "d.iso", "--", "-l"}, []string{"gcfs", "cat", "d.iso", "--", "-l"}},
		{[]string{"gcfs", "--version"}, []string{"gcfs", "--version"}},
	}
	for _, c := range cases {
		if got := interspersedArgs(app, c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("interspersedArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
