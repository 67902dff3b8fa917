//go:build race

package main

// raceEnabled: the race detector multiplies a process's memory, so the
// peak-RSS bounds are not checked under it.
const raceEnabled = true
