package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README and docs/ travel with a clone, which has no ../shared: they
// must not send a reader there, and every relative link must resolve.
func TestDocsSelfContained(t *testing.T) {
	root := filepath.Join("..", "..")
	files := []string{filepath.Join(root, "README.md")}
	more, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(more) == 0 {
		t.Fatal("docs/ has no .md files")
	}
	files = append(files, more...)
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		if strings.Contains(s, "../shared") {
			t.Errorf("%s points into ../shared, which a clone does not have", f)
		}
		for _, m := range link.FindAllStringSubmatch(s, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			p := filepath.Join(filepath.Dir(f), target)
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, target)
			}
		}
	}
	readme, _ := os.ReadFile(files[0])
	for _, want := range []string{"docs/tree.md", "docs/formats.md"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("README.md does not link %s", want)
		}
	}
}
