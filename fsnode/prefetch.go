package fsnode

import (
	"sort"
	"syscall"

	"golang.org/x/sys/unix"
)

// Prefetch bounds: stream ranges closer than prefetchGap merge into one
// advice, and one directory asks for at most prefetchMax bytes.
const (
	prefetchGap = 64 << 10
	prefetchMax = 32 << 20
)

// span is a range [lo, hi) of image bytes.
type span struct{ lo, hi int64 }

// prefetchSiblings asks the kernel, once per directory and in the
// background, to start reading the streams of the decoded files in n's
// directory into the page cache. The first size asked of a decoded file in a
// directory is a sign that the others' will follow (ls -l, a copy, a script
// walking a level): each is a scan of the file's whole stream, and on a cold
// image each scan otherwise waits for the disk in turn. It is advice only
// (POSIX_FADV_WILLNEED): nothing is allocated or read in the server, and an
// image that is not a file gets none.
func (n *Node) prefetchSiblings() {
	dir := n.Parent
	if dir == nil {
		return
	}
	dir.prefetchOnce.Do(func() {
		n.scanSiblings(dir)
		var files []*Node
		for _, c := range dir.Children {
			if c.Kind == Decoded && c.staticErr == nil {
				files = append(files, c)
			}
		}
		if len(files) < 2 {
			return // the one being scanned reads its own
		}
		if spans := streamSpans(files, prefetchMax); len(spans) > 0 {
			go n.tree.advise(spans)
		}
	})
}

// advise asks the kernel to start reading spans of the image into the page
// cache (POSIX_FADV_WILLNEED): advice only, nothing read or allocated here,
// none for an image that is not a file.
func (t *Tree) advise(spans []span) {
	f, ok := t.Image.R.(syscall.Conn) // *os.File
	if !ok {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	// Control holds the descriptor open while it runs (or fails once the
	// file is closed): the advice never reaches another file.
	_ = rc.Control(func(fd uintptr) {
		for _, s := range spans {
			_ = unix.Fadvise(int(fd), s.lo, s.hi-s.lo, unix.FADV_WILLNEED) // advice only
		}
	})
}

// streamSpans is where the streams of the decoded files lie in the image
// (those held in the image itself, not inside another decoded file):
// sorted, merged across gaps of up to prefetchGap, inside the image, at
// most limit bytes in all (the first ones in image order).
func streamSpans(files []*Node, limit int64) []span {
	var spans []span
	for _, c := range files {
		if c.within != nil {
			continue
		}
		s := c.streamRange()
		lo, hi := s.base, min(s.base+s.size, s.imgSize)
		if hi > lo {
			spans = append(spans, span{lo, hi})
		}
	}
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].lo < spans[j].lo })
	merged := spans[:1]
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if s.lo <= last.hi+prefetchGap {
			last.hi = max(last.hi, s.hi)
			continue
		}
		merged = append(merged, s)
	}
	budget := limit
	for i := range merged {
		if budget <= 0 {
			return merged[:i]
		}
		merged[i].hi = merged[i].lo + min(merged[i].hi-merged[i].lo, budget)
		budget -= merged[i].hi - merged[i].lo
	}
	return merged
}

// scanSiblings sizes the other decoded files of dir in the background (the
// first size asked in a directory is a sign that the others' will follow),
// on the cores the tree may use besides the asking one: from the
// directory's last file backwards, so that the foreground, which goes
// forwards, and the background meet in the middle instead of waiting on
// each other's scans. Only once the tree is built (its children no longer
// change), at most one directory per spare core at a time.
func (n *Node) scanSiblings(dir *Node) {
	t := n.tree
	if !t.ready.Load() || t.scanSem == nil {
		return
	}
	var todo []*Node
	for i := len(dir.Children) - 1; i >= 0; i-- {
		if c := dir.Children[i]; c != n && c.Kind == Decoded && c.staticErr == nil {
			todo = append(todo, c)
		}
	}
	if len(todo) == 0 {
		return
	}
	select {
	case t.scanSem <- struct{}{}:
	default:
		return // every spare core is scanning another directory
	}
	t.siblingScans.Add(1)
	go func() {
		defer t.siblingScans.Done()
		defer func() { <-t.scanSem }()
		for _, c := range todo {
			c.scan()
		}
	}()
}

// Quiesce waits for the background directory scans (and the size-ahead
// worker) started so far: a
// command that is about to save the index sidecar and close the image calls
// it, so that no scan reads a closed image or logs after the command ended.
func (t *Tree) Quiesce() { t.siblingScans.Wait() }
