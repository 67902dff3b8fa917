// Package mkdisc generates synthetic Going Commando disc images: every file of
// the retail inventory with the retail structure (container headers of every
// family, level headers as in the levels table, WAD streams where the retail disc
// has them), and the manifest of the tree gcfs must show for it, computed from
// the generator's own knowledge, never by reading the image back.
//
// What it writes, briefly (DISC-FACTS is the reference):
//   - Tables in every reading DISC-FACTS calls uncertain, each written so that it
//     wins the measurement outright: pairs with byte sizes (SCENE, MPEG, GADGET,
//     SPACE, AUDIO<n>, HUD), pairs with sector sizes (MISC, ARMOR, BONUS) and
//     flat start lists (SCENE<n>, the global AUDIO). Extents tile the data
//     sectors, so the intended reading covers every one of them.
//   - Sentinels where the notes report them (35 in MPEG, 10 in GADGET, one in
//     every SCENE<n>), unused zero entries, equal starts, and tail overruns: a
//     container whose size is not a sector multiple ends inside its last
//     extent's last sector, shown clamped.
//   - WAD streams made by codec.Encode from codec.SampleData content behind a
//     small typed header: gameplay, chunk tfrags/collision, data-lump hud banks,
//     core_data (its size at core_index+0x8C) and transition textures, MISC irx
//     and frontbin_net, HUD banks, most BONUS images.
//   - Raw extents with a first sector naming them plus a little noise (retail:
//     the rest is holes), or filled with asset-like bytes (small).
//
// Every generated thing draws from its own random source, derived from the seed
// and its name, so the output does not depend on scheduling.
package mkdisc

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
	// Containers describes every indexed container as generated, in path order:
	// what a reader of the image should report for it.
	Containers []ContainerInfo
}

// ContainerInfo is what the generator put in one indexed G/*.WAD container.
type ContainerInfo struct {
	Path       string // "G/LEVEL21.WAD"
	Family     string // "LEVEL", "AUDIO", "SCENE", "MISC", "ARMOR", "MPEG", "GADGET", "BONUS", "SPACE", "HUD"
	HeaderSize int64
	Size       int64  // the container file's size in bytes
	LBA        int64  // its first sector in the image
	Reading    string // the reading the table is written in: "pairs-bytes", "pairs-sectors", "start-list", "level-header"
	Entries    int    // table entries (pairs or starts; the 10 lump slots for LEVEL)
	Shown      int    // entries the tree shows (each equal start counts)
	Unused     int    // zero-size entries (zero starts, absent lumps)
	Sentinels  int    // entries pointing past the container
	Coverage   int64  // sectors touched by the shown extents (distinct extents once)
	Compressed int    // shown entries that begin with a WAD stream
	LevelID    int32  // LEVEL only
	Reverb     int32  // LEVEL only
	LevelName  string // LEVEL only
}
