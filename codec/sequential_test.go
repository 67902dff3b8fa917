package codec

import "testing"

// sequentialTest skips a test of single-goroutine code (everything but
// DecodeParallel and NewIndexParallel, whose workers are in chunkrun.go and
// parallel.go) under -race -short: the race detector has nothing to find
// there and makes the decoder ten times slower. make test runs the package
// twice, -race -short and then without the detector in full, so these run
// in the second pass.
func sequentialTest(t *testing.T) {
	t.Helper()
	if raceEnabled && testing.Short() {
		t.Skip("single-goroutine code under -race -short: the non-race run covers it")
	}
}
