package fsnode

import (
	"sync"
	"sync/atomic"
	"time"

	"gcfs/cache"
)

// Read-ahead across files (issue 11, "through the mount"). A reader that
// reads a decoded file whole is likely to open the next one next: cp -r,
// tar, rsync, find | xargs cat and a script walking a level visit files in
// readdir order, depth first, which is the tree's order. Each file costs
// the reader a lookup, an open and a read, round trips between kernel and
// server during which nothing would decode, and then the file's scan and
// decode, during which nothing would cross to the kernel. So when a
// decoded file is read from its start, and again when its read-ahead chain
// reaches its end, the tree's one file-ahead worker sizes the decoded
// files after it in tree order and decodes their first blocks into the
// cache, on a core the reader is not using, up to fileAheadBytes of output
// and fileAheadFiles files ahead (never more than an eighth of the cache,
// so that what it decodes stays until it is read). It first asks the
// kernel to read their streams from the image (adviseAhead: on a cold image
// its scans would otherwise wait for the disk file by file, and fall
// behind the reader), and sizes a file not sized yet by decoding it whole,
// index and blocks in one pass, when it fits (scanDecoding). The next
// file's lookup, open and reads then find its index and its blocks ready.
// A newer request replaces an older one: the worker follows the last file
// read, and stops where it was once the reader goes elsewhere. Scans and decodes merge
// with the foreground's (a node's scan runs once; the cache merges
// concurrent misses), so nothing is done twice, and what is done ahead for
// a reader that does not come costs a spare core's time, within the bounds.

// Bounds of the work done ahead of the reader.
const (
	fileAheadBytes = 8 << 20
	fileAheadFiles = 64
	// With a store of files made whole for the kernel (memfiles.go):
	// those files are the store's, not the cache's, and its reader costs
	// the server an open and no reads, so the worker runs further ahead.
	memAheadBytes = 32 << 20
	memAheadFiles = 256
)

// fileAhead is the tree's worker state.
type fileAhead struct {
	order []*Node // the decoded files in tree order; Node.seq indexes it

	mu      sync.Mutex
	from    int           // the next request: the first file to prepare
	running bool          // the worker goroutine runs
	wake    chan struct{} // a new request for a running worker (1 buffered)
	gen     atomic.Uint64
	done    uint64 // the last request the worker took
	// files counts the files the worker prepared (sized and began decoding),
	// for tests.
	files atomic.Int64
}

// orderFiles numbers the decoded files in tree order for the worker (after
// the build: the tree no longer changes).
func (t *Tree) orderFiles() {
	t.ahead.wake = make(chan struct{}, 1)
	_ = t.Walk(func(n *Node) error {
		n.seq = -1
		if n.Kind == Decoded && n.staticErr == nil {
			n.seq = int32(len(t.ahead.order))
			t.ahead.order = append(t.ahead.order, n)
		}
		return nil
	})
}

// readAheadFiles asks the worker to prepare the files after n, when the
// tree reads ahead (a mount) and n is one of its decoded files.
func (dr *decodedReader) readAheadFiles() {
	if dr.readsAhead() {
		dr.n.tree.filesAheadOf(dr.n)
	}
}

// filesAheadOf asks the worker to prepare the files after n, one of the
// tree's decoded files, once the tree is built.
func (t *Tree) filesAheadOf(n *Node) {
	if !t.ready.Load() || n.seq < 0 || int(n.seq)+1 >= len(t.ahead.order) {
		return
	}
	if t.Cache.MaxBytes()/8 < 1<<20 {
		return // too small a cache to keep anything decoded ahead
	}
	a := &t.ahead
	a.mu.Lock()
	defer a.mu.Unlock()
	a.from = int(n.seq) + 1
	a.gen.Add(1)
	select {
	case a.wake <- struct{}{}:
	default:
	}
	if !a.running {
		a.running = true
		go t.runFileAhead()
	}
}

// fileAheadLinger is how long an idle worker waits for the next request
// before its goroutine (and thread) ends: a reader takes a file's round
// trips between two requests.
const fileAheadLinger = 200 * time.Millisecond

// runFileAhead serves requests until none comes for fileAheadLinger. It
// runs on a thread of its own at a low CPU priority (backgroundThread):
// the work it does ahead must not delay the FUSE requests of the reader
// it works for, on a machine with few cores.
func (t *Tree) runFileAhead() {
	backgroundThread()
	a := &t.ahead
	idle := time.NewTimer(fileAheadLinger)
	defer idle.Stop()
	var sc wholeScratch // the worker's decode buffers, for its lifetime
	for {
		a.mu.Lock()
		gen := a.gen.Load()
		if gen == a.done {
			a.mu.Unlock()
			idle.Reset(fileAheadLinger)
			select {
			case <-a.wake:
				continue
			case <-idle.C:
			}
			a.mu.Lock()
			if a.gen.Load() == a.done {
				a.running = false
				a.mu.Unlock()
				return
			}
			a.mu.Unlock()
			continue
		}
		a.done = gen
		from := a.from
		a.mu.Unlock()
		t.prepareFiles(from, gen, &sc)
	}
}

// prepareFiles sizes the decoded files from order[from] on and decodes
// their blocks into the cache, within the bounds, until a newer request
// (generation) arrives.
func (t *Tree) prepareFiles(from int, gen uint64, sc *wholeScratch) {
	a := &t.ahead
	budget, files := min(int64(fileAheadBytes), t.Cache.MaxBytes()/8), fileAheadFiles
	if s := t.memFiles.Load(); s != nil {
		// Files made whole leave the cache (fillMem): the store bounds them.
		budget, files = min(int64(memAheadBytes), s.Max()/8), memAheadFiles
	}
	t.adviseAhead(from)
	for k := from; k < len(a.order) && k < from+files && budget > 0; k++ {
		if a.gen.Load() != gen {
			return
		}
		n := a.order[k]
		// A file not sized yet is sized by decoding it (within what is
		// left of the budget): the blocks come with the index.
		if n.scanDecoding(budget, sc); n.decErr != nil {
			continue // its reader reports it
		}
		if t.memFileAhead(n, &budget) {
			a.files.Add(1)
			continue
		}
		r, err := n.openDecoded()
		if err != nil {
			continue
		}
		dr, ok := r.(*decodedReader)
		if !ok || dr.cache != t.Cache {
			continue
		}
		a.files.Add(1)
		for j := 0; j < dr.ix.NumBlocks() && budget > 0; j++ {
			_, bn := dr.ix.Block(j)
			budget -= int64(bn)
			if dr.cache.Cached(cache.Key{File: dr.key, Block: j}) {
				continue
			}
			if a.gen.Load() != gen {
				return
			}
			b, err := dr.block(j)
			if err != nil {
				break // the reader reports it
			}
			dr.release(b)
		}
	}
}

// fileAheadInput bounds the stream bytes the worker asks the kernel to read
// ahead of the reader.
const fileAheadInput = 16 << 20

// adviseAhead asks the kernel to start reading the streams of the next
// files from order[from] on (up to fileAheadFiles files and fileAheadInput
// bytes of stream; each file once), so that the worker's scans and decodes
// find them in the page cache instead of waiting for the disk one file at
// a time, as they otherwise would on a cold image.
// It returns the spans it advised.
func (t *Tree) adviseAhead(from int) []span {
	a := &t.ahead
	var next []*Node
	var in int64
	for k := from; k < len(a.order) && k < from+fileAheadFiles && in < fileAheadInput; k++ {
		n := a.order[k]
		in += n.streamLen()
		if n.advised.CompareAndSwap(false, true) {
			next = append(next, n)
		}
	}
	spans := streamSpans(next, fileAheadInput)
	if len(spans) > 0 {
		t.advise(spans)
	}
	return spans
}
