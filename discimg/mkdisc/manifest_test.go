package mkdisc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

func TestManifestRoundTrip(t *testing.T) {
	m := []ManifestEntry{
		{Path: "G/LEVEL0.WAD/gameplay", Size: 1234, SHA1: "da39a3ee5e6b4b0d3255bfef95601890afd80709"},
		{Path: "SYSTEM.CNF", Size: 60, SHA1: "0123456789abcdef0123456789abcdef01234567"},
	}
	var buf bytes.Buffer
	if err := WriteManifest(&buf, m); err != nil {
		t.Fatal(err)
	}
	want := "G/LEVEL0.WAD/gameplay\t1234\tda39a3ee5e6b4b0d3255bfef95601890afd80709\n" +
		"SYSTEM.CNF\t60\t0123456789abcdef0123456789abcdef01234567\n"
	if buf.String() != want {
		t.Fatalf("WriteManifest wrote %q, want %q", buf.String(), want)
	}
	got, err := ReadManifest(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, m) {
		t.Fatalf("ReadManifest = %+v, want %+v", got, m)
	}
}

func TestManifestRejects(t *testing.T) {
	for _, in := range []string{
		"a\t1\n",
		"a\tx\tda39a3ee5e6b4b0d3255bfef95601890afd80709\n",
		"a\t-1\tda39a3ee5e6b4b0d3255bfef95601890afd80709\n",
		"a\t1\tDA39A3EE5E6B4B0D3255BFEF95601890AFD80709\n",
		"a\t1\tda39a3ee5e6b4b0d3255bfef95601890afd8070\n",
		"/a\t1\tda39a3ee5e6b4b0d3255bfef95601890afd80709\n",
		"a\t1\tzz39a3ee5e6b4b0d3255bfef95601890afd80709\n",
	} {
		if _, err := ReadManifest(strings.NewReader(in)); err == nil {
			t.Errorf("ReadManifest(%q): no error", in)
		}
	}
	if err := WriteManifest(&bytes.Buffer{}, []ManifestEntry{{Path: "a\tb", SHA1: strings.Repeat("0", 40)}}); err == nil {
		t.Error("WriteManifest accepted a path with a tab")
	}
}

func TestEmbeddedTables(t *testing.T) {
	inv, err := parseInventory()
	if err != nil {
		t.Fatal(err)
	}
	if len(inv) != 97 {
		t.Fatalf("inventory has %d files, want 97", len(inv))
	}
	lv, err := parseLevels()
	if err != nil {
		t.Fatal(err)
	}
	if len(lv) != numLevels || lv[21].File != "LEVEL21.WAD" || lv[21].ID != 30 {
		t.Fatalf("levels table: %d rows, row 21 = %+v", len(lv), lv[21])
	}
}
