package main

import (
	"bytes"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"testing"
)

// TestWritebackWriter: what goes through the writer is the file's content,
// every byte handed to the writeback once it finishes, in writes of any
// size; on a pipe, where sync_file_range fails, it writes all the same.
func TestWritebackWriter(t *testing.T) {
	data := make([]byte, 3*writebackChunk+12345)
	rand.New(rand.NewSource(1)).Read(data)
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	w := newWritebackWriter(f)
	rng := rand.New(rand.NewSource(2))
	for off := 0; off < len(data); {
		n := min(len(data)-off, 1+rng.Intn(1<<20))
		if got, err := w.Write(data[off : off+n]); got != n || err != nil {
			t.Fatalf("write %d at %d: %d, %v", n, off, got, err)
		}
		off += n
	}
	w.finish()
	if w.started != int64(len(data)) || w.off != int64(len(data)) {
		t.Errorf("handed %d, wrote %d of %d bytes", w.started, w.off, len(data))
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(f.Name()); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("file differs (%v)", err)
	}

	r, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	read := make(chan []byte)
	go func() { b, _ := io.ReadAll(r); read <- b }()
	w = newWritebackWriter(pw)
	for off := 0; off < len(data); off += writebackChunk / 2 {
		if _, err := w.Write(data[off:min(off+writebackChunk/2, len(data))]); err != nil {
			t.Fatal(err)
		}
	}
	w.finish()
	pw.Close()
	if got := <-read; !bytes.Equal(got, data) {
		t.Fatalf("through a pipe: %d bytes, want %d", len(got), len(data))
	}
}
