//go:build !race

package mkdisctest

const raceEnabled = false
