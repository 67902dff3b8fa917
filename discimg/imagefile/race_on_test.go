//go:build race

package imagefile

// raceEnabled: the race detector makes decoding ~10x slower, so the
// per-codec cases compare a prefix and random reads instead of every byte.
const raceEnabled = true
