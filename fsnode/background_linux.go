package fsnode

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundNice is the CPU priority of the threads that decode ahead of
// readers: the scheduler runs them when a core would otherwise idle.
const backgroundNice = 10

// backgroundThread locks the calling goroutine to its thread and lowers
// that thread's priority to backgroundNice (never raises it: a server run
// under nice stays there). The goroutine must end without unlocking: the
// runtime then ends the thread, instead of handing it, still at the low
// priority, to other goroutines.
func backgroundThread() {
	runtime.LockOSThread()
	tid := unix.Gettid()
	// getpriority(2) gives 20 - nice.
	if p, err := unix.Getpriority(unix.PRIO_PROCESS, tid); err == nil && 20-p < backgroundNice {
		_ = unix.Setpriority(unix.PRIO_PROCESS, tid, backgroundNice)
	}
}
