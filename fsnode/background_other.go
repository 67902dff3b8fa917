//go:build !linux

package fsnode

// BackgroundThreads is 0: no thread is lowered (background_linux.go).
const BackgroundThreads = 0

// backgroundThread: thread priorities are set on Linux only.
func backgroundThread() {}
