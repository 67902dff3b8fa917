package mkdisc

import (
	"path/filepath"
	"testing"
)

func TestGenerateSmallBasic(t *testing.T) {
	path := filepath.Join(t.TempDir(), "small.iso")
	res, err := Generate(path, Small, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image %d bytes, %d files, %d containers", res.ImageSize, len(res.Manifest), len(res.Containers))
}
