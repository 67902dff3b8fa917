// Package mkdisctest generates discs for tests, fast under -race. The race
// detector makes the generator's encoder about ten times slower (the retail
// layout: some 45 s against 4 s), so under -race Generate runs it in a
// child process built without the detector (./gen); otherwise in-process.
// The generator is deterministic by seed: both ways write the same image and
// return the same Result (TestChildMatchesInProcess).
package mkdisctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"

	"gcfs/discimg/mkdisc"
)

// Generate is mkdisc.Generate, run in a normally built child under -race.
// Without a Go toolchain to build the child, it runs in-process.
func Generate(path string, layout mkdisc.Layout, seed int64) (*mkdisc.Result, error) {
	if !raceEnabled {
		return mkdisc.Generate(path, layout, seed)
	}
	gobin, err := exec.LookPath("go")
	if err != nil {
		return mkdisc.Generate(path, layout, seed)
	}
	return generateInChild(gobin, path, layout, seed)
}

// generateInChild builds ./gen (a link from the build cache after the
// first time) into a directory of its own, runs it and removes it.
func generateInChild(gobin, path string, layout mkdisc.Layout, seed int64) (*mkdisc.Result, error) {
	dir, err := os.MkdirTemp("", "gcfs-mkdisctest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "gen")
	if b, err := exec.Command(gobin, "build", "-o", bin, "gcfs/discimg/mkdisc/mkdisctest/gen").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("mkdisctest: go build: %v: %s", err, bytes.TrimSpace(b))
	}
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, string(layout), strconv.FormatInt(seed, 10), path)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("mkdisctest: generating %s: %v: %s", path, err, bytes.TrimSpace(errb.Bytes()))
	}
	var res mkdisc.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		return nil, fmt.Errorf("mkdisctest: the generator's result for %s: %v", path, err)
	}
	return &res, nil
}
