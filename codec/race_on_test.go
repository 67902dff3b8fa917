//go:build race

package codec

// raceEnabled: the race detector makes decoding ~10x slower, so the
// NewIndexParallel tests check fewer corruptions and, with small blocks,
// the index's shape (one decode) rather than every block twice.
const raceEnabled = true
