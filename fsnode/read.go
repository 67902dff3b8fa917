package fsnode

import (
	"errors"
	"fmt"
	"io"
	"os"
	"unsafe"

	"gcfs/bufpool"
	"gcfs/cache"
	"gcfs/codec"
)

// imageRange reads [base, base+size) of the image. Bytes the image does not
// have are an error (*ShortImageError), never zeros.
type imageRange struct {
	r       io.ReaderAt
	imgSize int64
	base    int64
	size    int64
	path    string
}

func (ir *imageRange) Size() int64 { return ir.size }

func (ir *imageRange) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", ir.path, off)
	}
	if off >= ir.size {
		return 0, io.EOF
	}
	want := p
	atEOF := false
	if rem := ir.size - off; int64(len(want)) > rem {
		want = want[:rem]
		atEOF = true
	}
	start := ir.base + off
	end := start + int64(len(want))
	have := want
	short := false
	if end > ir.imgSize {
		short = true
		if start >= ir.imgSize {
			have = want[:0]
		} else {
			have = want[:ir.imgSize-start]
		}
	}
	n := 0
	if len(have) > 0 {
		var err error
		n, err = ir.r.ReadAt(have, start)
		if n < len(have) {
			if err == nil || err == io.EOF {
				// The image file shrank since it was opened.
				return n, &ShortImageError{Path: ir.path, Offset: start + int64(n), End: end, ImageSize: currentSize(ir.r)}
			}
			return n, fmt.Errorf("%s: reading image offset %#x: %w", ir.path, start+int64(n), err)
		}
	}
	if short {
		return n, &ShortImageError{Path: ir.path, Offset: start + int64(n), End: end, ImageSize: ir.imgSize}
	}
	if atEOF {
		return n, io.EOF
	}
	return n, nil
}

// currentSize is the image file's size now (it may have shrunk since it was
// opened), or -1 when r cannot tell.
func currentSize(r io.ReaderAt) int64 {
	if st, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := st.Stat(); err == nil && fi.Mode().IsRegular() {
			return fi.Size()
		}
	}
	return -1
}

// rawReader is a raw file's reader; it logs the first short read of its node.
type rawReader struct {
	imageRange
	n *Node
}

func (rr *rawReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := rr.imageRange.ReadAt(p, off)
	if err != nil && errors.Is(err, ErrShortImage) {
		rr.n.logFile(err)
	}
	return n, err
}

// streamRange is the stream's bytes in the image: the extent clipped to the
// declared size (decoding never reads past it, so sector padding missing from
// a short image does not matter). For a stream inside decoded content see
// streamInput.
func (n *Node) streamRange() *imageRange {
	size := n.streamLen()
	return &imageRange{r: n.tree.Image.R, imgSize: n.tree.Image.Size, base: n.off, size: size, path: n.path}
}

func (n *Node) streamLen() int64 {
	size := n.size
	if n.hdr.Size > 0 && n.hdr.Size < size {
		size = n.hdr.Size
	}
	return size
}

// streamInput is what a decoded file decodes: its stream in the image, or a
// range of the decoded file whose content holds it.
func (n *Node) streamInput() (Reader, error) {
	if n.within == nil {
		return n.streamRange(), nil
	}
	r, err := n.within.Open()
	if err != nil {
		return nil, err
	}
	return &sliceReader{r: r, off: n.woff, size: n.streamLen(), n: n}, nil
}

// streamErr is err as a StreamError naming where the stream lies: its image
// offset, or its offset in the decoded file that holds it.
func (n *Node) streamErr(err error) *StreamError {
	// logPath: a stream scanned at build (a BONUS image sniffed for its
	// PNG) has no path set yet.
	se := &StreamError{Path: n.logPath(), ImageOffset: n.off, Err: err}
	if n.within != nil {
		se.Within, se.ImageOffset = n.within.logPath(), n.woff
	}
	return se
}

func (n *Node) codecOptions() codec.Options {
	return codec.Options{MaxOutput: n.tree.opt.MaxDecoded}
}

// scan learns a decoded file's size once: it builds the stream's index (a
// scan-speed pass that decodes nothing: the codec fills window snapshots
// lazily), remembers the size and keeps the index in the LRU for Open. Only
// a stream that fails gets the size scan too, for its clean length; a
// corrupt stream is logged once.
func (n *Node) scan() { n.scanOnce.Do(func() { n.doScan(0, nil, nil) }) }

// scanDecoding is scan for a caller about to decode the file whole (the
// file-ahead worker): if the size is not known yet, it decodes the stream
// and builds its index in one pass (decodeIndex), when its output fits in
// budget bytes, instead of a scan now and a decode after.
func (n *Node) scanDecoding(budget int64, sc *wholeScratch) {
	n.scanOnce.Do(func() { n.doScan(budget, sc, nil) })
}

// doScan is the size step; decodeBudget > 0 lets it decode the stream whole
// for its index (scanDecoding), and a non-nil hand takes that decode's
// output instead of the cache (decodeSource).
func (n *Node) doScan(decodeBudget int64, sc *wholeScratch, hand **[]byte) {
	defer func() {
		if n.hasExpected && n.decErr == nil && n.decSize != n.expected {
			n.warn = expectedErr(n.decSize, n.expected)
			n.tree.logf("%s: %v", n.logPath(), n.warn)
		}
	}()
	if n.sideScan() {
		return // the persisted index knows it
	}
	var built *codec.Index
	defer func() {
		n.sideRecordScan()
		if built != nil {
			n.sideRecordIndex(built) // (the size first: an index is kept with it)
		}
	}()
	if n.within == nil && decodeBudget == 0 {
		// (Not for the file-ahead worker's scans: it sizes the next files
		// itself, each decoded once for its index and blocks; a sibling
		// scan racing it would scan them instead, and they would be
		// decoded again when read.)
		n.prefetchSiblings()
	}
	src, err := n.streamInput()
	if err != nil {
		n.decErr = n.streamErr(err)
		n.logFile(n.decErr)
		return
	}
	var ix *codec.Index
	if decodeBudget > 0 {
		ix = n.decodeIndex(src, decodeBudget, sc, hand)
	}
	if ix == nil {
		ix, err = n.buildIndex(src)
	}
	if err == nil {
		n.decSize = ix.Size()
		n.tree.indexes.put(n, ix)
		built = ix
		return
	}
	st, err := codec.Scan(src, src.Size(), n.codecOptions())
	n.decSize = max(st.DecodedSize, 0)
	if err == nil {
		// NewIndex failed where Scan passes: an I/O error that went away,
		// or a disagreement. Either way the file cannot be trusted whole.
		err = fmt.Errorf("index failed where the size scan passed")
	}
	n.decErr = n.streamErr(err)
	n.logFile(n.decErr)
}

// decodeIndex builds the index of a stream held in the image by decoding
// it whole (codec.NewIndexDecode: about 1.4 times as fast as a scan and a
// decode after it) and puts its blocks in the tree's cache, when the
// stream and its output fit in budget bytes and the file's blocks go to
// the tree's cache (a mount's tree, built). Anything else, or any failure
// (a corrupt stream, one decoding past the budget, a short read), gives
// nil: the scan then does it as it would have, and reports what it finds.
//
// Given hand (and no scratch: decodeSource's), the output goes to the
// caller too, whole in a buffer of wholeBufs (*hand; the caller gives it
// back), and the blocks to the cache's cold segment.
func (n *Node) decodeIndex(src Reader, budget int64, sc *wholeScratch, hand **[]byte) *codec.Index {
	c := n.tree.Cache
	inLen := src.Size()
	if n.within != nil || n.Ino == 0 || c == nil || inLen > budget {
		return nil
	}
	var in, dst []byte
	var dstBuf *[]byte // the pool's output buffer, if used
	if sc == nil {
		// No scratch (a source read once): the pool's buffers, the
		// output's room a guess the decode grows past if it must (to
		// budget at most), not the budget itself, which may be 64 MiB.
		inBuf := wholeBufs.Get(int(inLen)) // inLen <= budget
		defer wholeBufs.Put(inBuf)
		dstBuf = wholeBufs.Get(int(min(budget, 4*inLen) + wholeOutSlack))
		defer func() {
			if hand == nil || *hand != dstBuf {
				wholeBufs.Put(dstBuf) // (an output that grew past it is the collector's)
			}
		}()
		in, dst = *inBuf, (*dstBuf)[:0]
	} else {
		in, dst = sc.buffers(inLen, budget)
	}
	if got, _ := src.ReadAt(in, 0); int64(got) != inLen {
		return nil
	}
	ix, out, err := codec.NewIndexDecode(dst, in, n.codecOptions(), budget)
	if err != nil {
		return nil
	}
	n.tree.decodedIndexes.Add(1)
	key := n.cacheKey(n.Ino, ix)
	if hand != nil && dstBuf != nil {
		cacheBlocks(c, key, ix.Cut(out), -1, true)
		if cap(out) == cap(dst) && unsafe.SliceData(out) == unsafe.SliceData(dst) {
			*dstBuf = out // the pool's buffer, holding the output
			*hand = dstBuf
		} else {
			*hand = &out // it grew past the buffer
		}
		return ix
	}
	n.wholeIn.Store(c)
	// (Copies, in buffers the cache recycles once they are served:
	// ServeSlices. The output is the next file's buffer.)
	cacheBlocks(c, key, ix.Cut(out), -1, false)
	return ix
}

// wholeScratch is decodeIndex's input and output buffers, kept by its
// caller (the file-ahead worker) from file to file. Sized once for the
// largest budget asked, the output never grows as a file decodes: a
// growing buffer copies what it holds at each doubling and faults in
// fresh pages, and a sync.Pool, emptied by each collection, made the
// worker allocate them again after most.
type wholeScratch struct{ in, out []byte }

// wholeScratchMax bounds the input buffer a scratch allocates ahead of
// the files that need it.
const wholeScratchMax = 2 * fileAheadBytes

// buffers returns an input buffer of inLen bytes and an empty output
// buffer that holds budget bytes of output.
func (sc *wholeScratch) buffers(inLen, budget int64) (in, out []byte) {
	if int64(cap(sc.in)) < inLen {
		sc.in = make([]byte, max(inLen, min(budget, wholeScratchMax))) // at most budget
	}
	if want := budget + wholeOutSlack; int64(cap(sc.out)) < want {
		sc.out = make([]byte, 0, want)
	}
	return sc.in[:inLen], sc.out[:0]
}

// wholeBufs holds, between uses, the buffers of streams handled whole: a
// stream read into memory for a whole decode or a parallel scan, a whole
// decode's output before its blocks are copied into the cache, a mesh
// source read whole (readSource). Each is used for one call and given back:
// sizing every lazily sized view of the retail tree made them afresh, some
// 220 MB of the 1.1 GB a round allocated.
var wholeBufs bufpool.Pool

// wholeOutSlack is room past a budget's output (more than the decoder's
// slack past its last packet): NewIndexDecode then never grows the buffer,
// since a stream whose output passes the budget fails first.
const wholeOutSlack = 64 << 10

// parallelScanMin is the shortest stream whose size scan runs on every
// core (codec.NewIndexParallel, which cuts the stream into 512 KiB chunks),
// reading the stream into memory first; wholeMax bounds it too.
const parallelScanMin = 1 << 20

// buildIndex scans the stream for its index: on every core when it is
// long enough and the process has more than one, else sequentially. Both
// give the same size and the same error; a stream that cannot be read into
// memory whole is scanned sequentially, which reports the read error.
func (n *Node) buildIndex(src Reader) (*codec.Index, error) {
	n.tree.scanned.Add(1)
	inLen := src.Size()
	if wholeWorkers > 1 && inLen >= parallelScanMin && inLen <= wholeMax && n.tree.takeBig() {
		defer n.tree.releaseBig()
		p := wholeBufs.Get(int(inLen)) // bounded just above, and by the tree's slots
		defer wholeBufs.Put(p)
		buf := *p
		if got, _ := src.ReadAt(buf, 0); int64(got) == inLen {
			n.tree.parallelScans.Add(1)
			return codec.NewIndexParallel(buf, wholeWorkers, n.codecOptions())
		}
	}
	return codec.NewIndex(src, inLen, n.codecOptions())
}

// Open returns a reader for a file. A decoded file whose stream is corrupt
// fails here (the FUSE layer maps it to EIO). ReadAt on a raw file returns an
// error (not zeros) for bytes the image does not have.
func (n *Node) Open() (Reader, error) {
	switch n.Kind {
	case Raw:
		if n.staticErr != nil && !errors.Is(n.staticErr, ErrShortImage) {
			// A recorded error (extents that do not join, LBA fields that
			// disagree, an interleaved extent): the bytes at the extent are
			// not known to be the file's, so none are served. Bytes past
			// the image's end fail only the reads that reach them.
			n.logFile(n.staticErr)
			return nil, n.staticErr
		}
		return &rawReader{imageRange: imageRange{r: n.tree.Image.R, imgSize: n.tree.Image.Size, base: n.off, size: n.size, path: n.path}, n: n}, nil
	case View:
		return n.openView()
	case Nested:
		if n.staticErr != nil {
			return nil, n.staticErr
		}
		r, err := n.within.openBefore(n.woff + n.size)
		if err != nil {
			return nil, err
		}
		return &sliceReader{r: r, off: n.woff, size: n.size, n: n}, nil
	case Decoded:
		if n.staticErr != nil {
			n.logFile(n.staticErr)
			return nil, n.staticErr
		}
		n.scan()
		if n.decErr != nil {
			return nil, n.decErr
		}
		return n.openDecoded()
	}
	return nil, fmt.Errorf("%s: is a directory", n.path)
}

// openForModel is Open for the model's own reads (a view's encode or
// source, a table's parse, a probe): its decoded readers read ahead within
// the file as any do, but ask for no files ahead (fileahead.go), which is
// for a reader walking the tree's files. Sizing gameplay.json and the glb
// views in a find read a level's decoded streams from their start, and
// each such read had the file-ahead worker decode the 64 files after the
// stream into the cache: CPU and memory the walk did not ask for.
func (n *Node) openForModel() (Reader, error) { return modelReader(n.Open()) }

// openForModelBefore is openForModel for a read of n's bytes before end
// (openBefore: a broken stream's clean prefix serves it).
func (n *Node) openForModelBefore(end int64) (Reader, error) { return modelReader(n.openBefore(end)) }

func modelReader(r Reader, err error) (Reader, error) {
	switch x := r.(type) {
	case *decodedReader:
		x.forModel = true
	case *sliceReader:
		if dr, ok := x.r.(*decodedReader); ok {
			dr.forModel = true
		}
	}
	return r, err
}

// openDecoded is Open for a decoded file whose size step passed.
func (n *Node) openDecoded() (Reader, error) {
	ix, err := n.index()
	if err != nil {
		return nil, err
	}
	dr, err := n.decodedReaderOf(ix)
	if err != nil {
		return nil, err // (not a nil *decodedReader in a Reader)
	}
	return dr, nil
}

// decodedReaderOf reads n's decoded bytes through ix (the stream's index,
// or a broken stream's clean prefix's) and the cache of decoded blocks.
func (n *Node) decodedReaderOf(ix *codec.Index) (*decodedReader, error) {
	src, err := n.streamInput()
	if err != nil {
		return nil, n.streamErr(err)
	}
	c, key := n.tree.Cache, n.Ino
	if n.Ino == 0 {
		// During the build there is no inode number to key blocks by
		// yet: the build's own cache, keyed by a build-time number, so
		// that the parts of one decoded file (a texlist's textures)
		// do not each decode its blocks again.
		c, key = n.tree.buildCache, n.buildKey()
	}
	return &decodedReader{n: n, ix: ix, src: src, cache: c, key: n.cacheKey(key, ix)}, nil
}

// index returns the stream's random-access index: the one the size step
// built, from the bounded LRU, or built again now if it was evicted (once
// per node at a time).
func (n *Node) index() (*codec.Index, error) {
	if ix := n.tree.indexes.get(n); ix != nil {
		return ix, nil
	}
	n.ixMu.Lock()
	defer n.ixMu.Unlock()
	if ix := n.tree.indexes.get(n); ix != nil {
		return ix, nil
	}
	src, err := n.streamInput()
	if err != nil {
		return nil, n.streamErr(err)
	}
	if ix := n.sideLoadIndex(src); ix != nil {
		n.tree.indexes.put(n, ix)
		return ix, nil
	}
	ix, err := n.buildIndex(src)
	if err != nil {
		return nil, n.streamErr(err)
	}
	if ix.Size() != n.decSize {
		// The size step and the index disagree: trust neither silently.
		// A size from the sidecar was wrong: the entry gets the stream's.
		n.sideRecord(ix.Size(), nil)
		n.sideRecordIndex(ix)
		return nil, n.streamErr(fmt.Errorf("index says %d decoded bytes, size scan %d", ix.Size(), n.decSize))
	}
	defer n.sideRecordIndex(ix)
	n.tree.indexes.put(n, ix)
	return ix, nil
}

// decodedReader reads a decoded file through its index and the tree's cache
// of decoded blocks. Safe for concurrent ReadAt.
type decodedReader struct {
	n     *Node
	ix    *codec.Index
	src   io.ReaderAt
	cache *cache.Cache
	key   uint64 // the file's key in cache: its inode number
	// forModel: the reader serves the model (openForModel), not a reader
	// walking the tree's files; it asks for no files ahead.
	forModel bool
	// noFilesAhead: a reader that asks for no files ahead either, but
	// reads as a reader does (a file made whole for the kernel: memfiles.go).
	noFilesAhead bool
	serve        servedBlocks // what ServeSlices handed out
}

func (dr *decodedReader) Size() int64 { return dr.ix.Size() }

func (dr *decodedReader) block(i int) ([]byte, error) {
	load := func() ([]byte, error) {
		prev, ok := dr.inOrder(i)
		if !ok {
			if b, ok := dr.decodeWhole(i); ok {
				return b, nil
			}
			if i > 0 && dr.cache != nil {
				prev, _ = dr.cache.Peek(cache.Key{File: dr.key, Block: i - 1})
			}
		}
		var dst []byte
		if dr.cache != nil {
			_, bn := dr.ix.Block(i)
			dst = dr.cache.NewBuffer(bn) // (GetRecyclable: back to it once served)
		}
		cs := &dr.n.tree.cursors
		b, cur, err := dr.ix.DecodeNextTo(dr.src, cs.take(dr.key, i), i, prev, dst)
		cs.put(dr.key, cur)
		dr.release(prev) // (the decode's window: its output is b's own)
		if err != nil && dr.ix == dr.n.keptIx.Load() {
			// Through the index the sidecar kept: it may be what is
			// wrong. The block's bytes through a fresh scan's index.
			return dr.blockThroughFresh(i)
		}
		return b, err
	}
	if dr.cache == nil {
		return load()
	}
	if dr.forModel {
		// The model's read (a view's encode, a listing's sizing): its
		// blocks go to the cold segment, unless a reader has them.
		return dr.cache.GetCold(cache.Key{File: dr.key, Block: i}, load)
	}
	return dr.cache.GetRecyclable(cache.Key{File: dr.key, Block: i}, load)
}

// blockThroughFresh is block i of the reader's (kept) index, decoded
// through the index a fresh scan built (fallbackIndex): the same output
// range, the stream's true bytes.
func (dr *decodedReader) blockThroughFresh(i int) ([]byte, error) {
	fresh, err := dr.n.fallbackIndex(dr.ix)
	if err != nil {
		return nil, err
	}
	off, bn := dr.ix.Block(i)
	b := make([]byte, bn) // a block of the kept index: at most a block's length (codec.LoadIndex)
	if got, err := fresh.ReadAt(dr.src, b, off); got != bn {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

func (dr *decodedReader) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	err := dr.walk(off, len(p), func(b, block []byte) {
		done += copy(p[done:], b)
		dr.release(block)
	})
	return done, err
}

// Slices returns the decoded bytes [off, off+n) as pieces of the cached
// blocks, in order, without copying them (the caller must not modify them;
// they stay valid after the blocks leave the cache: the cache never
// recycles their buffers). At the file's end it returns what there is with
// io.EOF; on any other error, the pieces before it.
func (dr *decodedReader) Slices(off int64, n int) ([][]byte, error) {
	vecs := make([][]byte, 0, n/(64<<10)+2)
	err := dr.walk(off, n, func(b, _ []byte) { vecs = append(vecs, b) })
	return vecs, err
}

// release ends the hold on a block that dr.block returned (cache.Release).
func (dr *decodedReader) release(block []byte) {
	if dr.cache != nil && block != nil {
		dr.cache.Release(block)
	}
}

// walk hands fn the decoded bytes [off, off+n) block by block, with the
// block each piece is of; the block is fn's to release (dr.release) or
// keep.
func (dr *decodedReader) walk(off int64, n int, fn func(piece, block []byte)) error {
	size := dr.ix.Size()
	if off < 0 {
		return fmt.Errorf("%s: negative offset %d", dr.n.path, off)
	}
	first, last := -1, -1
	defer func() {
		if last >= 0 {
			dr.readAhead(first, last) // after a read that got bytes
		}
	}()
	for n > 0 {
		if off >= size {
			return io.EOF
		}
		i := dr.ix.BlockAt(off)
		boff, bn := dr.ix.Block(i)
		b, err := dr.block(i)
		if err != nil {
			se := dr.n.streamErr(err)
			dr.n.logFile(se) // once per file: a short image, or a stream the scan passed
			return se
		}
		if len(b) != bn || off < boff || off-boff >= int64(len(b)) {
			dr.release(b)
			return dr.n.streamErr(fmt.Errorf("decoded block %d has %d bytes at output offset %d, index says %d at %d (read at %d)", i, len(b), boff, bn, boff, off))
		}
		if first < 0 {
			first = i
		}
		last = i
		piece := b[off-boff:]
		if len(piece) > n {
			piece = piece[:n]
		}
		fn(piece, b)
		n -= len(piece)
		off += int64(len(piece))
	}
	return nil
}

// sliceReader reads [off, off+size) of another file's reader: a part inside
// decoded content, read through the decoded file's index and cache.
type sliceReader struct {
	r    Reader
	off  int64
	size int64
	n    *Node
}

func (sr *sliceReader) Size() int64 { return sr.size }

func (sr *sliceReader) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: negative offset %d", sr.n.path, off)
	}
	if off >= sr.size {
		return 0, io.EOF
	}
	want := p
	if rem := sr.size - off; int64(len(want)) > rem {
		want = want[:rem]
	}
	got, err := sr.r.ReadAt(want, sr.off+off)
	if got == len(want) {
		if len(want) < len(p) {
			return got, io.EOF
		}
		return got, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		// The table that placed the part promised bytes its file does not
		// decode (a level core block past a core_data that decodes short).
		err = fmt.Errorf("%s: the file that holds it ends at %d, before the part's byte %d", sr.n.path, sr.off+off+int64(got), sr.off+sr.size)
		sr.n.logFile(err)
	}
	return got, err
}

// Slices is decodedReader.Slices for the range, when the file it reads is a
// decoded one (no copy).
func (sr *sliceReader) Slices(off int64, n int) ([][]byte, error) {
	return sr.slices(off, n)
}

func (sr *sliceReader) slices(off int64, n int) ([][]byte, error) {
	s, ok := sr.r.(interface {
		Slices(off int64, n int) ([][]byte, error)
	})
	if !ok || off < 0 {
		b := make([]byte, n)
		got, err := sr.ReadAt(b, off)
		return [][]byte{b[:got]}, err
	}
	if off >= sr.size {
		return nil, io.EOF
	}
	atEnd := false
	if rem := sr.size - off; int64(n) > rem {
		n, atEnd = int(rem), true
	}
	vecs, err := s.Slices(sr.off+off, n)
	if err == nil && atEnd {
		err = io.EOF
	}
	return vecs, err
}
