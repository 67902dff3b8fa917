//go:build !race

package imagefile

const raceEnabled = false
