package main

import (
	"encoding/binary"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"testing"

	"gcfs/discimg/mkdisc"
	"gcfs/fsnode/testdisc"
)

// TestInfoBrokenCoreData: info on a level core whose core_data stream
// breaks a rule part way says how many bytes decode cleanly and names the
// entries past them (text and JSON); a block before the break still cats.
func TestInfoBrokenCoreData(t *testing.T) {
	img, _ := genLayout(t, mkdisc.Small)
	const lvl = "G/LEVEL4.WAD/data.d/"
	stream := catOf(t, img, lvl+"core_data.wad")
	var wad struct {
		Offset int64 `json:"offset"`
	}
	if err := json.Unmarshal([]byte(treeOK(t, "info", "--json", "--no-index-cache", img, lvl+"core_data.wad")), &wad); err != nil || wad.Offset <= 0 {
		t.Fatalf("core_data.wad offset %d: %v", wad.Offset, err)
	}
	cut, clean, ok := testdisc.CutInPacket(stream, len(stream)*3/5, 0)
	if !ok {
		t.Fatal("no cut of core_data breaks a packet")
	}
	f, err := os.OpenFile(img, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	binary.LittleEndian.PutUint32(size[:], uint32(cut))
	_, err = f.WriteAt(size[:], wad.Offset+3)
	f.Close()
	if err != nil {
		t.Fatalf("breaking core_data: %v", err)
	}
	var info struct {
		Short *struct {
			Decoded int64            `json:"decoded"`
			Error   string           `json:"error"`
			Past    []map[string]any `json:"past_end"`
		} `json:"core_data_short"`
	}
	if err := json.Unmarshal([]byte(treeOK(t, "info", "--json", "--no-index-cache", img, lvl+"core")), &info); err != nil {
		t.Fatal(err)
	}
	if s := info.Short; s == nil || s.Decoded != int64(clean) || !strings.Contains(s.Error, "truncated packet") || len(s.Past) == 0 {
		t.Fatalf("info --json core_data_short: %+v, want %d clean bytes, the rule and the entries past them", s, clean)
	}
	text := treeOK(t, "info", "--no-index-cache", img, lvl+"core")
	if !strings.Contains(text, strconv.Itoa(clean)+" bytes decode cleanly") {
		t.Errorf("info text lacks the clean length:\n%s", text)
	}
	if got := catOf(t, img, lvl+"core/occlusion"); len(got) == 0 {
		t.Error("core/occlusion, before the break, does not cat")
	}
}
