package main

import "testing"

// fullPassOnly skips an end-to-end check of the CLI in make test's race pass
// (-race -short). Such a check builds and reads whole trees a few times
// over, which the race detector makes 5-10 times slower, and the concurrent
// code it drives (tree building, reading, decoding, rebuilding) has race
// tests of its own in its package. The second pass runs it at full size,
// without -race.
func fullPassOnly(t *testing.T) {
	t.Helper()
	if raceEnabled && testing.Short() {
		t.Skip("end-to-end CLI check: run by make test's second pass (no -race)")
	}
}
