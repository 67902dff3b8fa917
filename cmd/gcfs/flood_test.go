package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"gcfs/fsnode/testdisc"
)

const floodEnv = "GCFS_TEST_FLOOD_LS"

// TestRecordFloodLsHelper runs `gcfs ls IMAGE` in a process of its own and
// prints its peak RSS: run only as TestRecordFloodMemory's child.
func TestRecordFloodLsHelper(t *testing.T) {
	img := os.Getenv(floodEnv)
	if img == "" {
		t.Skip("the child process of TestRecordFloodMemory")
	}
	r := treeRun(t, "ls", img)
	st, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(st), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmHWM:" {
			fmt.Printf("ls-exit=%v\nVmHWM-kB=%s\n", r.err == nil, f[1])
		}
	}
}

// Issue 18 item 14: a flood of duplicate directory records, 64 MiB of them
// (the tree's bound on directory bytes), peaked at 186-323 MB RSS in
// `gcfs ls`: each listed record costs its Entry and a tree node, and the
// tree listed up to 1<<18 of them. Whatever the records, ls stays under 150 MB.
func TestRecordFloodMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector multiplies memory")
	}
	floods := []struct {
		name string
		dirs bool
		id   func(i int) string
	}{
		{"one-name", false, func(int) string { return "DUP" }},
		{"one-file-many-names", false, func(i int) string { return fmt.Sprintf("F%07X", i) }},
		{"one-directory-many-names", true, func(i int) string { return fmt.Sprintf("D%07X", i) }},
	}
	for _, f := range floods {
		t.Run(f.name, func(t *testing.T) {
			// Four directories of 16 MiB (less the root's sector): 64 MiB.
			img, err := testdisc.WriteRecordFlood(t.TempDir(), 4, 16<<20-2048, f.dirs, f.id)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(os.Args[0], "-test.run=^TestRecordFloodLsHelper$")
			cmd.Env = append(os.Environ(), floodEnv+"="+img)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("child: %v\n%s", err, out)
			}
			var kb int64
			for _, l := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(l, "VmHWM-kB="); ok {
					kb, _ = strconv.ParseInt(v, 10, 64)
				}
			}
			if kb == 0 || !bytes.Contains(out, []byte("ls-exit=true")) {
				t.Fatalf("child printed no peak RSS or ls failed:\n%s", out)
			}
			t.Logf("gcfs ls peak RSS %d MiB", kb>>10)
			if kb > 150<<10 {
				t.Errorf("gcfs ls of 64 MiB of records peaked at %d MiB RSS, over 150 MiB", kb>>10)
			}
		})
	}
}
