package codec

import (
	"sync"
	"sync/atomic"
)

// parallelChunks is the input length of one parallel chunk (whole sync
// blocks) and how many chunks the packet data of a stream with header h
// makes (none for a header that failed to parse).
func parallelChunks(h Header) (chunk int64, n int) {
	chunk = syncBlock * chunkBlocks
	if h.Size <= HeaderSize {
		return chunk, 0
	}
	return chunk, int((h.Size - HeaderSize + chunk - 1) / chunk)
}

// chunkRun is the worker pool of the parallel paths (DecodeParallel,
// ScanParallel, NewIndexParallel): up to workers goroutines take chunks
// 0, 1, 2, … in order and run work on each; the caller's in-order pass
// waits for a chunk's own done signal (work closes it) and calls release
// when it is through with the chunk. A worker takes a token before each
// chunk, so at most inflight chunks are worked on or waiting for the
// in-order pass at once: the bound on the memory their results hold.
type chunkRun struct {
	tokens chan struct{}
	quit   chan struct{}
	wg     sync.WaitGroup
}

func startChunks(nChunks, workers, inflight int, work func(c int)) *chunkRun {
	r := &chunkRun{tokens: make(chan struct{}, inflight), quit: make(chan struct{})}
	var next atomic.Int64
	for range min(workers, nChunks) {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			for {
				select {
				case <-r.quit: // (checked first: a free token must not win)
					return
				default:
				}
				select {
				case r.tokens <- struct{}{}:
				case <-r.quit:
					return
				}
				c := int(next.Add(1) - 1)
				if c >= nChunks {
					return // (the token stays: nothing waits for it)
				}
				work(c)
			}
		}()
	}
	return r
}

// release returns the token of a chunk the in-order pass is done with.
func (r *chunkRun) release() { <-r.tokens }

// stop ends the workers (those in a chunk finish it first) and waits for
// them.
func (r *chunkRun) stop() {
	close(r.quit)
	r.wg.Wait()
}
