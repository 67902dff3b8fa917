package fsnode

import (
	"errors"
	"fmt"
	"io"

	"gcfs/codec"
)

// A decoded file whose stream breaks a rule fails open (SPEC, Bad input),
// but what lies wholly before the break still reads for the files and
// views inside it: a level core block, a texture's pixels, a sky. They read
// through the index of the clean prefix (codec.NewCleanIndex), from the
// tree's index LRU and cache like any decoded content; a read that reaches
// past the clean end fails with the stream's own error (path, offset,
// rule).

// brokenStream reports whether n is a decoded file whose stream breaks a
// format rule (the size step learned it), leaving a clean prefix of
// n.decSize bytes.
func (n *Node) brokenStream() bool {
	if n.Kind != Decoded || n.staticErr != nil {
		return false
	}
	n.scan()
	return n.decErr != nil && errors.Is(n.decErr, codec.ErrFormat) && n.decSize > 0
}

// errBefore is Err for a range of n's bytes ending at end: nil when n
// cannot be read whole only because its stream breaks a rule past end.
func (n *Node) errBefore(end int64) error {
	if !n.brokenStream() {
		return n.Err()
	}
	if end <= n.decSize {
		return nil
	}
	return reported{n.decErr}
}

// openBefore is Open for a reader of n's bytes before end (a part or a
// texture inside n): a broken stream's clean prefix when end lies in it.
func (n *Node) openBefore(end int64) (Reader, error) {
	r, err := n.Open()
	if err == nil || !n.brokenStream() {
		return r, err
	}
	if end <= n.decSize {
		return n.openClean()
	}
	return nil, reported{n.decErr}
}

// openClean reads a broken stream's clean prefix (Size: its length).
func (n *Node) openClean() (Reader, error) {
	ix, err := n.cleanIndex()
	if err != nil {
		return nil, err
	}
	dr, err := n.decodedReaderOf(ix)
	if err != nil {
		return nil, err
	}
	dr.forModel = true // (the parts' reads: no files ahead)
	return &cleanReader{dr: dr}, nil
}

// cleanIndex is the clean prefix's index: from the LRU, or built again
// (once per node at a time). The LRU holds it under the node as it would
// the whole stream's index, which a broken stream never has; it must give
// the size step's clean length, or nothing is served.
func (n *Node) cleanIndex() (*codec.Index, error) {
	if ix := n.tree.indexes.get(n); ix != nil && ix.Size() == n.decSize {
		return ix, nil
	}
	n.ixMu.Lock()
	defer n.ixMu.Unlock()
	if ix := n.tree.indexes.get(n); ix != nil && ix.Size() == n.decSize {
		return ix, nil
	}
	src, err := n.streamInput()
	if err != nil {
		return nil, n.streamErr(err)
	}
	ix, err := codec.NewCleanIndex(src, src.Size(), n.codecOptions())
	if ix == nil {
		if err == nil {
			err = errors.New("no clean prefix")
		}
		return nil, n.streamErr(err)
	}
	if ix.Size() != n.decSize {
		return nil, n.streamErr(fmt.Errorf("clean prefix index says %d decoded bytes, size scan %d", ix.Size(), n.decSize))
	}
	n.tree.indexes.put(n, ix)
	return ix, nil
}

// cleanReader is a decodedReader over a clean prefix whose reads past the
// prefix fail with the stream's error rather than io.EOF: the bytes there
// exist, they just do not decode.
type cleanReader struct{ dr *decodedReader }

func (cr *cleanReader) Size() int64 { return cr.dr.Size() }

func (cr *cleanReader) ReadAt(p []byte, off int64) (int, error) {
	got, err := cr.dr.ReadAt(p, off)
	if errors.Is(err, io.EOF) {
		err = reported{cr.dr.n.decErr}
	}
	return got, err
}

// reported is a broken stream's error as another file's read meets it: the
// stream's file logged it at its size step, so the view or part that met
// it does not log it again (logFile), though its read still fails with it.
type reported struct{ err error }

func (r reported) Error() string { return r.err.Error() }
func (r reported) Unwrap() error { return r.err }

// AlreadyLogged reports whether err is, or wraps, another file's error that
// the tree logged with that file (a broken stream a view or part met): a
// front end that logs its files' errors leaves it out, so that each problem
// is one line.
func AlreadyLogged(err error) bool {
	var r reported
	return errors.As(err, &r)
}
