package fsnode

import (
	"testing"

	"golang.org/x/sys/unix"
)

// The background thread runs at backgroundNice, and the test's own thread
// (another one) keeps its priority.
func TestBackgroundThreadPriority(t *testing.T) {
	nice := func() int {
		// The raw getpriority(2) value is 20 - nice.
		p, err := unix.Getpriority(unix.PRIO_PROCESS, unix.Gettid())
		if err != nil {
			t.Error(err)
		}
		return 20 - p
	}
	before := nice()
	got := make(chan int)
	go func() {
		backgroundThread()
		got <- nice()
	}()
	if n := <-got; n != max(before, backgroundNice) {
		t.Fatalf("background thread at nice %d, want %d", n, max(before, backgroundNice))
	}
	if n := nice(); n != before {
		t.Fatalf("the caller's thread went from nice %d to %d", before, n)
	}
}
