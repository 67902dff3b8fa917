// Package mkdisc generates synthetic Going Commando disc images: every file of
// the retail inventory with the retail structure (container headers of every
// family, level headers as in the levels table, WAD streams where the retail disc
// has them), and the manifest of the tree gcfs must show for it, computed from
// the generator's own knowledge, never by reading the image back.
//
// API CONTRACT (written before the implementation).
package mkdisc

import "errors"

// Layout selects the image's size and placement.
type Layout string

const (
	Retail Layout = "retail" // retail LBAs and sizes, 3,828,350,976-byte sparse image
	Small  Layout = "small"  // every name and structure, a few tens of MB
)

// ManifestEntry is one file of the tree: path relative to the root, no leading
// slash ("G/LEVEL0.WAD/gameplay"), size in bytes, lower-case hex SHA-1.
type ManifestEntry struct {
	Path string
	Size int64
	SHA1 string
}

// Result is what Generate wrote.
type Result struct {
	ImageSize int64
	Manifest  []ManifestEntry // sorted by Path (byte order)
}

// Generate writes the image to path and returns its manifest. Deterministic for
// a given layout and seed.
func Generate(path string, layout Layout, seed int64) (*Result, error) {
	return nil, errors.New("TODO")
}
