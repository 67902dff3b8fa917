//go:build !linux

package fsnode

// backgroundThread: thread priorities are set on Linux only.
func backgroundThread() {}
