package memfile

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"
)

func newStore(t *testing.T, max int64) *Store {
	t.Helper()
	s, err := New(max, 1000)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// pattern is key's bytes: distinct for each key and offset.
func pattern(key uint64, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(uint64(i)*7 + key*13)
	}
	return b
}

// fillWith writes b in pieces of 1000 bytes, the last pieces first.
func fillWith(b []byte) func(w *Writer) error {
	return func(w *Writer) error {
		var vecs [][]byte
		for off := 0; off < len(b); off += 1000 {
			vecs = append(vecs, b[off:min(off+1000, len(b))])
		}
		half := len(vecs) / 2
		if _, err := w.WriteVecAt(vecs[half:], int64(half*1000)); err != nil {
			return err
		}
		_, err := w.WriteVecAt(vecs[:half], 0)
		return err
	}
}

// readFD reads the whole file behind fd and closes fd.
func readFD(t *testing.T, fd int) []byte {
	t.Helper()
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size)
	n, err := unix.Pread(fd, b, 0)
	if err != nil || int64(n) != st.Size {
		t.Fatalf("pread: %d of %d, %v", n, st.Size, err)
	}
	return b
}

func TestGetMakesOnceAndHolds(t *testing.T) {
	s := newStore(t, 1<<20)
	want := pattern(1, 12345)
	var fills atomic.Int64
	fill := func(w *Writer) error { fills.Add(1); return fillWith(want)(w) }
	for i := 0; i < 3; i++ {
		fd, err := s.Get(1, int64(len(want)), fill)
		if err != nil {
			t.Fatal(err)
		}
		if got := readFD(t, fd); !bytes.Equal(got, want) {
			t.Fatalf("get %d: the file's bytes differ", i)
		}
	}
	if n := fills.Load(); n != 1 {
		t.Fatalf("filled %d times, want 1", n)
	}
	st := s.Stats()
	if st.Files != 1 || st.Bytes != int64(len(want)) || st.Made != 1 {
		t.Fatalf("stats %+v", st)
	}
	// An empty file is a file.
	fd, err := s.Get(2, 0, func(*Writer) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	if got := readFD(t, fd); len(got) != 0 {
		t.Fatalf("empty file holds %d bytes", len(got))
	}
}

func TestConcurrentGetsMerge(t *testing.T) {
	s := newStore(t, 64<<20)
	const keys, gets = 8, 16
	var fills [keys]atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, keys*gets)
	for k := 0; k < keys; k++ {
		want := pattern(uint64(k), 100000+k)
		for g := 0; g < gets; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				fd, err := s.Get(uint64(k), int64(len(want)), func(w *Writer) error {
					fills[k].Add(1)
					<-release // every Get of the key arrives while it fills
					return fillWith(want)(w)
				})
				if err != nil {
					errs <- err
					return
				}
				var st unix.Stat_t
				_ = unix.Fstat(fd, &st)
				b := make([]byte, st.Size)
				n, _ := unix.Pread(fd, b, 0)
				unix.Close(fd)
				if n != len(want) || !bytes.Equal(b, want) {
					errs <- fmt.Errorf("key %d: bytes differ", k)
				}
			}()
		}
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for k := range fills {
		if n := fills[k].Load(); n != 1 {
			t.Fatalf("key %d filled %d times, want 1", k, n)
		}
	}
}

func TestBudgetEvictsLeastRecent(t *testing.T) {
	s := newStore(t, 40000) // MaxFile 10000
	get := func(key uint64) int {
		fd, err := s.Get(key, 10000, fillWith(pattern(key, 10000)))
		if err != nil {
			t.Fatal(err)
		}
		return fd
	}
	for k := uint64(1); k <= 4; k++ {
		unix.Close(get(k))
	}
	unix.Close(get(1)) // 1 is now the most recent: 2 goes next
	kept := get(5)     // a descriptor given out outlives its file's eviction
	st := s.Stats()
	if st.Files != 4 || st.Bytes != 40000 || st.Evicted != 1 {
		t.Fatalf("stats %+v, want 4 files, 40000 bytes, 1 evicted", st)
	}
	var fills atomic.Int64
	for _, k := range []uint64{1, 3, 4, 5} {
		fd, err := s.Get(k, 10000, func(w *Writer) error { fills.Add(1); return fillWith(pattern(k, 10000))(w) })
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
	}
	if fills.Load() != 0 {
		t.Fatalf("%d held files were made again", fills.Load())
	}
	s.Close()
	if got := readFD(t, kept); !bytes.Equal(got, pattern(5, 10000)) {
		t.Fatal("a descriptor given out lost its bytes when the store let go of its file")
	}
	if _, err := s.Get(9, 1, fillWith([]byte{1})); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
	if st := s.Stats(); st.Files != 0 || st.Bytes != 0 {
		t.Fatalf("after Close: %+v", st)
	}
}

func TestBadFills(t *testing.T) {
	s := newStore(t, 1<<20)
	if _, err := s.Get(1, s.MaxFile()+1, fillWith(nil)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("too large: %v", err)
	}
	if _, err := s.Get(1, -1, fillWith(nil)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("negative size: %v", err)
	}
	boom := errors.New("boom")
	if _, err := s.Get(1, 10, func(*Writer) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("failed fill: %v", err)
	}
	if _, err := s.Get(1, 10, fillWith(make([]byte, 9))); err == nil {
		t.Fatal("a fill that left the file short was taken")
	}
	if _, err := s.Get(1, 10, fillWith(make([]byte, 11))); err == nil {
		t.Fatal("a fill that wrote past the file's end was taken")
	}
	if _, err := s.Get(1, 10, func(w *Writer) error { _, err := w.WriteAt([]byte{1}, -1); return err }); err == nil {
		t.Fatal("a write at a negative offset was taken")
	}
	if st := s.Stats(); st.Files != 0 || st.Bytes != 0 || st.Made != 0 {
		t.Fatalf("failed fills left %+v", st)
	}
	// The next Get tries again.
	fd, err := s.Get(1, 10, fillWith(pattern(1, 10)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFD(t, fd); !bytes.Equal(got, pattern(1, 10)) {
		t.Fatal("bytes differ")
	}
	// A size learnt anew replaces the held file.
	fd, err = s.Get(1, 20, fillWith(pattern(1, 20)))
	if err != nil {
		t.Fatal(err)
	}
	if got := readFD(t, fd); !bytes.Equal(got, pattern(1, 20)) {
		t.Fatal("the file of the new size differs")
	}
	if _, err := New(0, 1); err == nil {
		t.Fatal("New(0, 1) made a store")
	}
	if _, err := New(1, 0); err == nil {
		t.Fatal("New(1, 0) made a store")
	}
}

// TestManyPieces: a fill of more pieces than one pwritev takes.
func TestManyPieces(t *testing.T) {
	s := newStore(t, 1<<24)
	want := pattern(3, 3000*7)
	fd, err := s.Get(3, int64(len(want)), func(w *Writer) error {
		var vecs [][]byte
		for off := 0; off < len(want); off += 7 {
			vecs = append(vecs, want[off:off+7], nil)
		}
		_, err := w.WriteVecAt(vecs, 0)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := readFD(t, fd); !bytes.Equal(got, want) {
		t.Fatal("bytes differ")
	}
}

// TestFileBound: the store holds at most its number of files, whatever
// their bytes.
func TestFileBound(t *testing.T) {
	s, err := New(1<<30, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for k := uint64(1); k <= 5; k++ {
		fd, err := s.Get(k, 10, fillWith(pattern(k, 10)))
		if err != nil {
			t.Fatal(err)
		}
		unix.Close(fd)
	}
	st := s.Stats()
	if st.Files != 3 || st.Bytes != 30 || st.Evicted != 2 {
		t.Fatalf("stats %+v, want 3 files of 30 bytes, 2 evicted", st)
	}
	for k := uint64(1); k <= 5; k++ {
		if got, want := s.Holds(k), k >= 3; got != want {
			t.Errorf("holds %d: %v, want %v", k, got, want)
		}
	}
}

// TestMake: Make makes a file once, gives out nothing, and returns at once
// when the store holds the file or a Get is making it.
func TestMake(t *testing.T) {
	s := newStore(t, 1<<20)
	var fills atomic.Int64
	fill := func(w *Writer) error { fills.Add(1); return fillWith(pattern(1, 100))(w) }
	if made, err := s.Make(1, 100, fill); !made || err != nil {
		t.Fatalf("first Make: made %v, %v", made, err)
	}
	if made, err := s.Make(1, 100, fill); made || err != nil || fills.Load() != 1 {
		t.Fatalf("Make of a held file: made %v, %v, %d fills", made, err, fills.Load())
	}
	started, release := make(chan struct{}), make(chan struct{})
	done := make(chan error)
	go func() {
		fd, err := s.Get(2, 100, func(w *Writer) error {
			close(started)
			<-release
			return fillWith(pattern(2, 100))(w)
		})
		if err == nil {
			unix.Close(fd)
		}
		done <- err
	}()
	<-started
	if made, err := s.Make(2, 100, fill); made || err != nil {
		t.Fatalf("Make while a Get makes the file: made %v, %v", made, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if fills.Load() != 1 || !s.Holds(2) {
		t.Fatalf("%d fills by Make, store holds 2: %v", fills.Load(), s.Holds(2))
	}
	fd, err := s.Get(1, 100, fill)
	if err != nil {
		t.Fatal(err)
	}
	if got := readFD(t, fd); !bytes.Equal(got, pattern(1, 100)) {
		t.Fatal("the file Make made reads wrong")
	}
}
