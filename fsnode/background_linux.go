package fsnode

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// backgroundNice is the CPU priority of the threads that decode ahead of
// readers: the scheduler runs them when a core would otherwise idle.
const backgroundNice = 10

// BackgroundThreads is how many goroutines can run at once on threads
// that backgroundThread lowered: the tree's size-ahead and file-ahead
// workers. A lowered thread that the kernel has put aside for a busier
// one still holds its P (the Go runtime's right to run Go code), so at
// GOMAXPROCS = cores a walk's FUSE requests had a P fewer than the cores
// whenever a worker was behind on CPU. A server gives its runtime this
// many Ps more than it has cores (see cmd/gcfs's mount): the kernel's
// priorities then decide who runs, as they should.
const BackgroundThreads = 2

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
