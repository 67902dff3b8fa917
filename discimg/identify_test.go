package discimg

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"os"
	"testing"

	"gcfs/discimg/isowriter"
)

func fakeELF(n int) []byte {
	b := patterned(n, 3)
	copy(b, "\x7fELF")
	return b
}

func sha(b []byte) string {
	s := sha1.Sum(b)
	return hex.EncodeToString(s[:])
}

func identifyFiles(t *testing.T, files []isowriter.File, hash bool) (*Identity, string) {
	t.Helper()
	p := writeISO(t, files, isowriter.Options{VolumeID: "RATCHETANDCLANK2", SystemID: "PLAYSTATION"})
	im := openFile(t, p)
	id, err := im.Identify(hash)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	return id, p
}

func file(path string, data []byte) isowriter.File {
	return isowriter.File{Path: path, Size: int64(len(data)), Chunks: []isowriter.Chunk{{Data: data}}}
}

func TestIdentifyRetailLike(t *testing.T) {
	elf := fakeELF(100000)
	id, p := identifyFiles(t, []isowriter.File{
		file("SYSTEM.CNF", []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n")),
		file("AAA.ELF", fakeELF(10)), // an earlier ELF that BOOT2 does not name
		file("SCUS_972.68", elf),
	}, true)
	want := Identity{Serial: "SCUS-97268", Title: "Ratchet & Clank: Going Commando", Region: "NTSC-U", Version: "1.01",
		VMode: "NTSC", Boot: "SCUS_972.68", VolumeID: "RATCHETANDCLANK2", Known: true, ELFSHA1: sha(elf)}
	img, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	want.ImageSHA1 = sha(img)
	if *id != want {
		t.Errorf("got  %+v\nwant %+v", *id, want)
	}
	if id.ELFMatch || id.ImageMatch {
		t.Errorf("synthetic disc matched retail hashes")
	}
}

func TestIdentifyVariants(t *testing.T) {
	cases := []struct {
		name              string
		cnf               string
		bootFile          string
		serial, region    string
		version, vmode    string
		boot              string
		known             bool
		hashedBootPresent bool
	}{
		{"PAL LF lower case", "boot2=cdrom0:\\sces_516.07;1\nver=1.00\nvmode=PAL\n", "SCES_516.07", "SCES-51607", "PAL", "1.00", "PAL", "sces_516.07", true, true},
		{"Japan spaces", "  BOOT2   =   cdrom0:\\SCPS_150.56;1  \r\n VER = 1.00\r\n", "SCPS_150.56", "SCPS-15056", "NTSC-J", "1.00", "", "SCPS_150.56", true, true},
		{"demo", "BOOT2 = cdrom0:\\SCUS_973.74;1\nVER = 1.00\nVMODE = NTSC\n", "SCUS_973.74", "SCUS-97374", "NTSC-U", "1.00", "NTSC", "SCUS_973.74", true, true},
		{"other game", "BOOT2 = cdrom0:\\SLUS_123.45;1\nVER = 1.00\n", "SLUS_123.45", "SLUS-12345", "", "1.00", "", "SLUS_123.45", false, true},
		{"BOOT2 names a missing file", "BOOT2 = cdrom0:\\SCUS_972.68;1\n", "OTHER.ELF", "SCUS-97268", "NTSC-U", "", "", "SCUS_972.68", true, true},
		{"no BOOT2", "VER = 2\n", "SLES_999.99", "SLES-99999", "", "2", "", "SLES_999.99", false, true},
		{"padding after text", "BOOT2 = cdrom0:\\SCUS_972.68;1\n\x00\x00\x00garbage", "SCUS_972.68", "SCUS-97268", "NTSC-U", "", "", "SCUS_972.68", true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			elf := fakeELF(5000)
			id, _ := identifyFiles(t, []isowriter.File{file("SYSTEM.CNF", []byte(c.cnf)), file(c.bootFile, elf)}, false)
			if id.Serial != c.serial || id.Region != c.region || id.Version != c.version || id.VMode != c.vmode || id.Boot != c.boot || id.Known != c.known {
				t.Errorf("got %+v", *id)
			}
			if c.known == (id.Title == "unknown") {
				t.Errorf("title %q for known=%v", id.Title, c.known)
			}
			if c.hashedBootPresent && id.ELFSHA1 != sha(elf) {
				t.Errorf("ELF SHA-1 %q, want %q", id.ELFSHA1, sha(elf))
			}
			if id.ImageSHA1 != "" {
				t.Errorf("image hashed without hash")
			}
		})
	}
}

func TestIdentifyUnknownDisc(t *testing.T) {
	id, _ := identifyFiles(t, []isowriter.File{file("README.TXT", []byte("hello"))}, false)
	want := Identity{Title: "unknown", VolumeID: "RATCHETANDCLANK2"}
	if *id != want {
		t.Errorf("got %+v", *id)
	}
}

func TestIdentifyHugeSystemCNF(t *testing.T) {
	// A SYSTEM.CNF of 1 MB: only its head is read; the BOOT2 line is found.
	cnf := append([]byte("BOOT2 = cdrom0:\\SCUS_972.68;1\n"), bytes.Repeat([]byte("X = Y\n"), 200000)...)
	id, _ := identifyFiles(t, []isowriter.File{file("SYSTEM.CNF", cnf), file("SCUS_972.68", fakeELF(10))}, false)
	if id.Serial != "SCUS-97268" {
		t.Errorf("got %+v", *id)
	}
}

func TestIdentifyTruncatedELF(t *testing.T) {
	elf := fakeELF(200000)
	p := writeISO(t, []isowriter.File{file("SYSTEM.CNF", []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\n")), file("SCUS_972.68", elf)}, isowriter.Options{})
	im := openFile(t, p)
	e, _ := im.Lookup("SCUS_972.68")
	f, _ := os.Open(p)
	defer f.Close()
	im, err := Open(f, e.Offset()+1000)
	if err != nil {
		t.Fatal(err)
	}
	id, err := im.Identify(false)
	if err != nil {
		t.Fatalf("Identify: %v", err)
	}
	if id.Serial != "SCUS-97268" || id.ELFSHA1 != "" {
		t.Errorf("got %+v", *id)
	}
}

func TestSerialFromBoot(t *testing.T) {
	for in, want := range map[string]string{"SCUS_972.68": "SCUS-97268", "sces_516.07": "SCES-51607", "SCPS_150.56": "SCPS-15056", "BOOT.ELF": "", "": "", "SCUS_97268": "SCUS-97268"} {
		if got := SerialFromBoot(in); got != want {
			t.Errorf("SerialFromBoot(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHashRangePipelined(t *testing.T) {
	data := patterned(1<<20+12345, 5)
	for _, buf := range []int{1000, 4096, 1 << 20, 2 << 20} {
		got, err := hashRange(bytes.NewReader(data), 7, int64(len(data))-7, buf)
		if err != nil || got != sha(data[7:]) {
			t.Errorf("buffer %d: %s %v", buf, got, err)
		}
	}
	if _, err := hashRange(bytes.NewReader(data), 0, int64(len(data))+1, 4096); err == nil {
		t.Errorf("hashing past the end succeeded")
	}
}

func BenchmarkIdentifyHash(b *testing.B) {
	// Hashing a 256 MiB sparse image: read + SHA-1 throughput.
	const blocks = 128 * 1024
	p := writeISO(b, []isowriter.File{file("SYSTEM.CNF", []byte("BOOT2 = cdrom0:\\SCUS_972.68;1\n"))}, isowriter.Options{TotalBlocks: blocks})
	im := openFile(b, p)
	b.SetBytes(blocks * SectorSize)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := im.Identify(true); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHashRangeSparseFile(t *testing.T) {
	// Holes larger than the buffer, data inside and across buffer boundaries:
	// skipping holes must hash exactly what reading would.
	p := t.TempDir() + "/sparse"
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const size = 20 << 20
	for _, off := range []int64{0, 9 << 20, 9<<20 + 1<<20 - 10, size - 100} {
		if _, err := f.WriteAt(patterned(100, byte(off)), off); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	all, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ off, n int64 }{{0, size}, {5, size - 5}, {1 << 20, 10 << 20}} {
		got, err := hashRange(f, c.off, c.n, 1<<20)
		if err != nil || got != sha(all[c.off:c.off+c.n]) {
			t.Errorf("range %d+%d: %s %v, want %s", c.off, c.n, got, err, sha(all[c.off:c.off+c.n]))
		}
	}
	h := newHoleFinder(f)
	if !h.isHole(2<<20, 1<<20) || h.isHole(9<<20, 100) {
		t.Logf("file system reports no holes (SEEK_DATA unsupported?): the read path was tested")
	}
}
