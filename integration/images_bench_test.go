package integration

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkCHDExtractRaw is what a user would otherwise run first: chdman
// extractraw of the CD CHD to a plain file (wall time per op).
func BenchmarkCHDExtractRaw(b *testing.B) {
	img := chdOf(b, "cd", "createcd")
	out := filepath.Join(workDir, "extract.raw")
	b.ResetTimer()
	for range b.N {
		os.Remove(out)
		if o, err := exec.Command("chdman", "extractraw", "-f", "-i", img, "-o", out).CombinedOutput(); err != nil {
			b.Fatalf("chdman extractraw: %v\n%s", err, o)
		}
	}
	b.StopTimer()
	os.Remove(out)
}

// BenchmarkCHDManifest is a full gcfs manifest of the same CHD (every file
// decoded and hashed, straight from the CHD).
func BenchmarkCHDManifest(b *testing.B) {
	img := chdOf(b, "cd", "createcd")
	b.ResetTimer()
	for range b.N {
		if _, err := gcfs("manifest", img); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkISOManifest is the same manifest of the plain ISO, for scale.
func BenchmarkISOManifest(b *testing.B) {
	d := getDisc(b, "small")
	b.ResetTimer()
	for range b.N {
		if _, err := gcfs("manifest", d.path); err != nil {
			b.Fatal(err)
		}
	}
}
