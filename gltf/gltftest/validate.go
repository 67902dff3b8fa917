// Package gltftest runs the Khronos glTF validator (npm gltf-validator,
// through scripts/gltf-validate.js) over glb files for tests. Under CI (env
// CI set) a missing validator fails the test; elsewhere it skips.
package gltftest

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Report is the validator's verdict on one file.
type Report struct {
	Path     string   `json:"path"`
	Errors   int      `json:"errors"`
	Warnings int      `json:"warnings"`
	Infos    int      `json:"infos"`
	Messages []string `json:"messages"`
}

// Output is scripts/gltf-validate.js's document.
type Output struct {
	Validator string   `json:"validator"`
	Files     []Report `json:"files"`
}

// script is scripts/gltf-validate.js of this repository.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "scripts", "gltf-validate.js")
}

// Validate runs the validator over paths in one node process per batch of
// files and returns its reports; it skips (or, under CI, fails) the test when
// node or the validator is missing.
func Validate(t testing.TB, paths ...string) Output {
	t.Helper()
	missing := func(why string) {
		if os.Getenv("CI") != "" {
			t.Fatalf("glTF validator: %s (under CI it must be installed: .ci/run does)", why)
		}
		t.Skipf("glTF validator: %s", why)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("no node")
	}
	var all Output
	const batch = 500 // files per process: argument lists stay short
	for len(paths) > 0 {
		n := min(batch, len(paths))
		cmd := exec.Command(node, append([]string{script()}, paths[:n]...)...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 2 {
			missing(stderr.String())
		}
		if err != nil {
			t.Fatalf("gltf-validate.js: %v: %s", err, stderr.String())
		}
		var o Output
		if err := json.Unmarshal(out, &o); err != nil {
			t.Fatalf("gltf-validate.js output: %v: %.200s", err, out)
		}
		all.Validator = o.Validator
		all.Files = append(all.Files, o.Files...)
		paths = paths[n:]
	}
	return all
}

// RequireValid fails the test for every file with an error.
func RequireValid(t testing.TB, o Output) {
	t.Helper()
	for _, f := range o.Files {
		if f.Errors > 0 {
			t.Errorf("%s: %d validator errors: %q", f.Path, f.Errors, f.Messages)
		}
	}
}
