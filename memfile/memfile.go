// Package memfile owns the files a mount hands the kernel whole: each is an
// anonymous in-memory file (a Linux memfd) holding one file's bytes, made
// once by a writer the caller gives, kept in a byte-bounded LRU so that a
// second open finds it, and read by the kernel itself (FUSE passthrough), so
// that no read of it reaches the server. A memfd's pages are the kernel's
// shared memory, which the kernel cannot drop as it drops the page cache (no
// disk stands behind them): the budget is what bounds them. The package
// knows nothing of FUSE or of the disc: a key, a size and a fill.
package memfile

import (
	"container/list"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
)

// Errors a Get returns besides its fill's.
var (
	// ErrUnsupported: the system has no anonymous memory files.
	ErrUnsupported = errors.New("memfile: anonymous memory files are not supported here")
	// ErrTooLarge: the file is larger than the store takes (MaxFile).
	ErrTooLarge = errors.New("memfile: file larger than the store takes")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("memfile: store closed")
)

// Store is a byte-bounded LRU of anonymous files, keyed by the caller's
// number (a mount's inode number). Safe for concurrent use.
type Store struct {
	max      int64
	maxFiles int // descriptors the store may hold open

	mu     sync.Mutex
	bytes  int64      // of the files held and the ones being made
	ll     *list.List // of *entry made and held, most recent first
	m      map[uint64]*entry
	closed bool

	made    atomic.Int64 // files made (fills that succeeded)
	evicted atomic.Int64
}

type entry struct {
	key   uint64
	size  int64
	fd    int           // the store's own descriptor; -1 once closed
	ready chan struct{} // closed once made (or failed)
	err   error         // the fill's failure, for the Gets that waited on it
	el    *list.Element // nil while being made
}

// New returns a store of at most maxBytes of files and maxFiles of them
// (each holds a descriptor open: a server must keep some for itself), or
// ErrUnsupported where the system has no memfd.
func New(maxBytes int64, maxFiles int) (*Store, error) {
	if maxBytes <= 0 || maxFiles <= 0 {
		return nil, fmt.Errorf("memfile: budget of %d bytes in %d files", maxBytes, maxFiles)
	}
	if err := probe(); err != nil {
		return nil, err
	}
	return &Store{max: maxBytes, maxFiles: maxFiles, ll: list.New(), m: map[uint64]*entry{}}, nil
}

// Max is the store's budget in bytes.
func (s *Store) Max() int64 { return s.max }

// Anonymous returns a descriptor of a new empty anonymous file (a
// caller's probe: can the kernel take one?).
func Anonymous() (int, error) { return create(0) }

// MaxFile is the largest file the store takes: a quarter of its budget, so
// that one file never empties it of the rest.
func (s *Store) MaxFile() int64 { return s.max / 4 }

// Make makes key's file as Get does, but gives out no descriptor, and
// returns at once when the store holds the file or another call is making
// it: a worker that makes files ahead of their readers moves on to the
// next rather than wait. made says whether this call made it.
func (s *Store) Make(key uint64, size int64, fill func(w *Writer) error) (made bool, err error) {
	_, made, err = s.get(key, size, fill, false)
	return made, err
}

// Get returns a new descriptor (close-on-exec; the caller closes it) of
// key's file, which holds size bytes. A file not held is made now: fill
// writes its bytes through w (all size of them: a file left short is an
// error), once however many Gets ask at the same time; a failed fill is
// the error of the Gets that waited on it, and the next Get tries again.
// The file is then held, the least recently got files closed to keep the
// store within its budget (a descriptor given out keeps its file readable
// after that).
func (s *Store) Get(key uint64, size int64, fill func(w *Writer) error) (int, error) {
	fd, _, err := s.get(key, size, fill, true)
	return fd, err
}

// get is Get (wantFD) and Make (not: no descriptor, and no wait).
func (s *Store) get(key uint64, size int64, fill func(w *Writer) error, wantFD bool) (fd int, made bool, err error) {
	if size < 0 || size > s.MaxFile() {
		return -1, false, ErrTooLarge
	}
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return -1, false, ErrClosed
		}
		e, ok := s.m[key]
		if !ok {
			break // (locked) make it below
		}
		if e.el == nil {
			s.mu.Unlock()
			if !wantFD {
				return -1, false, nil // another call is making it
			}
			<-e.ready
			if e.err != nil {
				return -1, false, e.err
			}
			continue
		}
		if e.size != size {
			// The caller's size changed (it learnt a better one): the
			// held file is not this one's.
			s.dropLocked(e)
			break
		}
		s.ll.MoveToFront(e.el)
		defer s.mu.Unlock()
		if !wantFD {
			return -1, false, nil
		}
		fd, err := dup(e.fd)
		return fd, false, err
	}
	e := &entry{key: key, size: size, fd: -1, ready: make(chan struct{})}
	s.m[key] = e
	s.bytes += size
	s.mu.Unlock()

	fd, err = s.make(size, fill)

	s.mu.Lock()
	defer s.mu.Unlock()
	defer close(e.ready)
	if err == nil && s.closed {
		closeFD(fd)
		err = ErrClosed
	}
	if err != nil {
		e.err = err
		delete(s.m, key)
		s.bytes -= size
		return -1, false, err
	}
	e.fd = fd
	e.el = s.ll.PushFront(e)
	s.made.Add(1)
	s.evictLocked(e)
	if !wantFD {
		return -1, true, nil
	}
	fd, err = dup(fd)
	return fd, true, err
}

// make creates and fills one file, checking it holds size bytes.
func (s *Store) make(size int64, fill func(w *Writer) error) (int, error) {
	fd, err := create(size)
	if err != nil {
		return -1, err
	}
	w := &Writer{fd: fd, size: size}
	if err := fill(w); err != nil {
		closeFD(fd)
		return -1, err
	}
	if w.wrote != size {
		closeFD(fd)
		return -1, fmt.Errorf("memfile: fill wrote %d of %d bytes", w.wrote, size)
	}
	return fd, nil
}

// evictLocked closes the least recently got files, but keep, while the
// store is over its budget.
func (s *Store) evictLocked(keep *entry) {
	for s.bytes > s.max || s.ll.Len() > s.maxFiles {
		el := s.ll.Back()
		if el == nil || el.Value.(*entry) == keep {
			return
		}
		s.dropLocked(el.Value.(*entry))
		s.evicted.Add(1)
	}
}

// dropLocked forgets a held file and closes the store's descriptor.
func (s *Store) dropLocked(e *entry) {
	s.ll.Remove(e.el)
	delete(s.m, e.key)
	s.bytes -= e.size
	closeFD(e.fd)
	e.fd = -1
}

// Holds reports whether the store holds a file for key, of any size.
func (s *Store) Holds(key uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[key]
	return ok && e.el != nil
}

// Close closes every file held; a Get after it fails with ErrClosed (a
// fill under way finishes, and its file is closed).
func (s *Store) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for el := s.ll.Front(); el != nil; {
		next := el.Next()
		s.dropLocked(el.Value.(*entry))
		el = next
	}
}

// Stats is what the store holds and has done.
type Stats struct {
	Files   int   // held
	Bytes   int64 // held, and being made
	Made    int64 // files made since New
	Evicted int64 // of those, closed to stay within the budget
}

func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Stats{Files: s.ll.Len(), Bytes: s.bytes, Made: s.made.Load(), Evicted: s.evicted.Load()}
}

// Writer writes one file being made: its bytes in order or in any order,
// each byte once, none past its size.
type Writer struct {
	fd    int
	size  int64
	wrote int64 // bytes written (a fill that rewrites a range counts it twice and fails)
}

// Size is the file's size.
func (w *Writer) Size() int64 { return w.size }

// WriteAt writes p at off.
func (w *Writer) WriteAt(p []byte, off int64) (int, error) {
	return w.WriteVecAt([][]byte{p}, off)
}

// WriteVecAt writes the pieces one after the other from off (one system
// call for many pieces), and returns the bytes written.
func (w *Writer) WriteVecAt(vecs [][]byte, off int64) (int, error) {
	n := int64(0)
	for _, v := range vecs {
		n += int64(len(v))
	}
	if off < 0 || off > w.size || n > w.size-off {
		return 0, fmt.Errorf("memfile: write of %d bytes at %d past the file's %d", n, off, w.size)
	}
	got, err := writeVec(w.fd, vecs, off)
	w.wrote += int64(got)
	if err == nil && int64(got) != n {
		err = fmt.Errorf("memfile: wrote %d of %d bytes at %d", got, n, off)
	}
	return got, err
}
