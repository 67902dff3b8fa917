package mkdisc

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadManifest: any input either fails to parse or parses to entries that
// write back and re-read to the same entries.
func FuzzReadManifest(f *testing.F) {
	f.Add("G/LEVEL0.WAD/gameplay\t1234\tda39a3ee5e6b4b0d3255bfef95601890afd80709\n")
	f.Add("a\t0\t" + strings.Repeat("f", 40) + "\r\n\nb\t9\t" + strings.Repeat("0", 40))
	f.Add("a\t-1\tx\n")
	f.Fuzz(func(t *testing.T, in string) {
		m, err := ReadManifest(strings.NewReader(in))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteManifest(&buf, m); err != nil {
			t.Fatalf("parsed entries do not write: %v", err)
		}
		m2, err := ReadManifest(&buf)
		if err != nil || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip: %v, %+v != %+v", err, m, m2)
		}
	})
}
