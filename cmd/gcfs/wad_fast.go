package main

import (
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"

	"gcfs/codec"
)

// The whole-process path of `gcfs wad decompress`: the input read with one
// read into a buffer sized from the file's size, the output decoded into one
// buffer sized once and written with one write; both buffers large ones are
// anonymous mappings with huge pages where the kernel gives them (a third of
// the page faults of the heap buffers on a 32 MiB output).

// wadBigBuffer is the size from which a buffer is an anonymous mapping (a
// variable for the tests).
var wadBigBuffer int64 = 8 << 20

// wadMap returns an anonymous read-write mapping of n bytes (ok false if
// the kernel refuses), with huge pages asked for.
func wadMap(n int64) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		return nil, false
	}
	const madvHugepage = 14 // fewer page faults; ignored where unsupported
	syscall.Madvise(b, madvHugepage)
	return b, true
}

// wadReadBig reads the regular file name of at least wadBigBuffer bytes
// whole into a mapping. ok false (anything else, or it changed size while
// read) means: read it with wadReadInput, which also words the errors.
func wadReadBig(name string) (data []byte, release func(), ok bool) {
	if name == "-" {
		return nil, nil, false // stdin, even beside a file named "-"
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < wadBigBuffer || st.Size() > 1<<40 {
		return nil, nil, false
	}
	b, ok := wadMap(st.Size() + 1)
	if !ok {
		return nil, nil, false
	}
	n, err := io.ReadFull(f, b) // one read, and one more that finds the end
	if err != io.ErrUnexpectedEOF || int64(n) != st.Size() {
		syscall.Munmap(b)
		return nil, nil, false
	}
	return b[:n], func() { syscall.Munmap(b) }, true
}

// wadMaxExpansion is the most output one byte of packet data can give: a
// match with a length byte is 4 bytes for up to 288 (little literals copy
// 1:1, a literal packet is longer than its bytes).
const wadMaxExpansion = 72

// wadOutputBuffer returns an empty buffer with room for the whole decode of
// the stream in src up to limit bytes, so the output is never grown: from
// the stream's length (the header's size only once checked against
// len(src)) times the most a byte can expand, at most limit. Large buffers
// are anonymous mappings: only the pages the output touches are ever
// allocated. release frees it (after the last use of the buffer).
func wadOutputBuffer(src []byte, limit int64) (buf []byte, release func()) {
	n := int64(len(src))
	if h, err := codec.ParseHeader(src); err == nil && h.Size <= n {
		n = h.Size - codec.HeaderSize
	}
	n = min(n*wadMaxExpansion, limit) + 4096 // and room for the decoder's over-writes
	if n < wadBigBuffer {
		return make([]byte, 0, n), func() {}
	}
	b, ok := wadMap(n)
	if !ok {
		return nil, func() {} // the decoder allocates and grows its own
	}
	return b[:0], func() { syscall.Munmap(b) }
}

// wadParallelMin is the fewest cores on which decompress decodes in parallel
// by default: the parallel decode does about 1.6 times the sequential
// decoder's work on asset data (the second decode of each chunk's start, the
// markers, the stitching), so on 2 cores it gains nothing.
const wadParallelMin = 4

// wadWorkers is the cores a decode of --workers N runs on.
func wadWorkers(workers int) int {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
		if workers < wadParallelMin {
			workers = 1
		}
	}
	return workers
}

// wadDecode decodes src on up to workers cores (0 or less: every core the
// process may use, from wadParallelMin of them; 1: the sequential decoder).
func wadDecode(src []byte, opt codec.Options, workers int) (out []byte, release func(), err error) {
	workers = wadWorkers(workers)
	buf, release := wadOutputBuffer(src, opt.MaxOutput)
	if workers == 1 {
		out, err = codec.AppendDecode(buf, src, opt)
	} else {
		out, err = codec.AppendDecodeParallel(buf, src, workers, opt)
	}
	return out, release, err
}

// wadMapMin is the size from which the streaming decompress maps its input
// file rather than reading it (a variable for the tests).
var wadMapMin int64 = 256 << 10

// wadMapFile maps the regular file name of at least wadMapMin bytes
// read-only, its pages populated in one call: the input is the page cache's
// own pages, with no copy and no page fault per page (a read into a heap
// buffer of a 6 MiB stream cost 1,550 faults and the copy). ok false means:
// read it (stdin, anything not a regular file, a refused mapping). A file
// cut shorter while mapped faults on its lost pages: the reader must run
// under wadFaultsAsErrors. Bytes changed while mapped are only a different
// stream: the decoder derives each packet from one load and checks it.
func wadMapFile(name string) (data []byte, release func(), ok bool) {
	if name == "-" {
		return nil, nil, false
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < wadMapMin || st.Size() > 1<<40 {
		return nil, nil, false
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, false
	}
	return b, func() { syscall.Munmap(b) }, true
}

// wadFaultsAsErrors runs fn with memory faults turned into an error naming
// name (a mapped input cut shorter while read) instead of a crash. fn must
// not read the mapping from other goroutines.
func wadFaultsAsErrors(name string, fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer debug.SetPanicOnFault(old)
	defer func() {
		if r := recover(); r != nil {
			if fe, ok := r.(interface{ Addr() uintptr }); ok && fe != nil {
				err = wadFail("%s: the file changed size while read (fault at %#x)", name, fe.Addr())
				return
			}
			panic(r)
		}
	}()
	return fn()
}
