package mkdisc

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// WriteManifest writes m as a TSV, one `path<TAB>size<TAB>sha1` line a file, in
// the order given (Generate's manifests are already sorted; see SortManifest).
func WriteManifest(w io.Writer, m []ManifestEntry) error {
	bw := bufio.NewWriter(w)
	for _, e := range m {
		if err := checkEntry(e); err != nil {
			return err
		}
		bw.WriteString(e.Path)
		bw.WriteByte('\t')
		bw.WriteString(strconv.FormatInt(e.Size, 10))
		bw.WriteByte('\t')
		bw.WriteString(e.SHA1)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadManifest parses a manifest written by WriteManifest (or `gcfs manifest`).
// Blank lines are ignored; anything else malformed is an error naming the line.
func ReadManifest(r io.Reader) ([]ManifestEntry, error) {
	var m []ManifestEntry
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := strings.TrimSuffix(sc.Text(), "\r")
		if s == "" {
			continue
		}
		f := strings.Split(s, "\t")
		if len(f) != 3 {
			return nil, fmt.Errorf("manifest line %d: %d fields, want path, size, sha1", line, len(f))
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("manifest line %d: size %q: not a number", line, f[1])
		}
		e := ManifestEntry{Path: f[0], Size: size, SHA1: f[2]}
		if err := checkEntry(e); err != nil {
			return nil, fmt.Errorf("manifest line %d: %w", line, err)
		}
		m = append(m, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("manifest line %d: %w", line+1, err)
	}
	return m, nil
}

// SortManifest sorts m by path in byte order, the order manifests are written in.
func SortManifest(m []ManifestEntry) {
	sort.Slice(m, func(i, j int) bool { return m[i].Path < m[j].Path })
}

func checkEntry(e ManifestEntry) error {
	switch {
	case e.Path == "" || strings.HasPrefix(e.Path, "/") || strings.ContainsAny(e.Path, "\t\n\r"):
		return fmt.Errorf("manifest: bad path %q", e.Path)
	case e.Size < 0:
		return fmt.Errorf("manifest: %s: negative size %d", e.Path, e.Size)
	case len(e.SHA1) != 40 || strings.ToLower(e.SHA1) != e.SHA1:
		return fmt.Errorf("manifest: %s: sha1 %q is not 40 lower-case hex digits", e.Path, e.SHA1)
	}
	if _, err := hex.DecodeString(e.SHA1); err != nil {
		return fmt.Errorf("manifest: %s: sha1 %q is not 40 lower-case hex digits", e.Path, e.SHA1)
	}
	return nil
}
