package discimg

import (
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
)

// retailLevelsTSV is formats/rac2-ntscu-v1.01-levels.tsv, copied so the test
// runs without the shared formats directory (TestLevelTSVCopyCurrent compares
// the two when the directory is there).
const retailLevelsTSV = `# file	level_id	reverb	slot:offset_sectors+size_sectors ...  (slots: 0 data, 1 sound_bank, 2 gameplay, 3 occlusion, 4-6 chunk0-2, 7-9 chunk0-2 sound banks; header field of slot s is at 0x10 + 8*s)
LEVEL0.WAD	0	3	0:735+6484	1:1+734	2:7219+322	3:7541+12
LEVEL1.WAD	1	0	0:636+7700	1:1+635	2:8336+396	3:8732+9	4:8741+1519	5:10260+116	7:10376+157	8:10533+156
LEVEL2.WAD	2	0	0:547+7368	1:1+546	2:7915+386	3:8301+14	4:8315+1214	5:9529+157	7:9686+214	8:9900+214
LEVEL3.WAD	3	0	0:834+7401	1:1+833	2:8235+366	3:8601+15
LEVEL4.WAD	4	4	0:605+7812	1:1+604	2:8417+469	3:8886+24	4:8910+1678	5:10588+1185	7:11773+148	8:11921+147
LEVEL5.WAD	5	0	0:680+7213	1:1+679	2:7893+251	3:8144+4
LEVEL6.WAD	6	3	0:816+8192	1:1+815	2:9008+454	3:9462+17
LEVEL7.WAD	7	0	0:761+7015	1:1+760	2:7776+311	3:8087+8	4:8095+1602	5:9697+1183
LEVEL8.WAD	8	0	0:779+6531	1:1+778	2:7310+439	3:7749+11	4:7760+424	5:8184+1877
LEVEL9.WAD	9	0	0:830+7926	1:1+829	2:8756+422	3:9178+13
LEVEL10.WAD	10	0	0:639+6103	1:1+638	2:6742+288
LEVEL11.WAD	11	0	0:485+7509	1:1+484	2:7994+505	3:8499+25	4:8524+971	5:9495+743	7:10238+344	8:10582+346
LEVEL12.WAD	12	3	0:767+7391	1:1+766	2:8158+397	3:8555+18
LEVEL13.WAD	13	0	0:688+7667	1:1+687	2:8355+417	3:8772+9
LEVEL14.WAD	14	3	0:826+7299	1:1+825	2:8125+338	3:8463+12
LEVEL15.WAD	15	0	0:722+5919	1:1+721	2:6641+240	3:6881+2
LEVEL16.WAD	16	0	0:809+7857	1:1+808	2:8666+291	3:8957+7
LEVEL17.WAD	17	4	0:659+7117	1:1+658	2:7776+389	3:8165+14
LEVEL18.WAD	18	0	0:730+7569	1:1+729	2:8299+330	3:8629+10
LEVEL19.WAD	19	0	0:768+7513	1:1+767	2:8281+403	3:8684+23	4:8707+1588	5:10295+1339	6:11634+497	7:12131+45	8:12176+45	9:12221+45
LEVEL20.WAD	20	0	0:653+6952	1:1+652	2:7605+407	3:8012+18	4:8030+714	5:8744+917	6:9661+276	7:9937+167	8:10104+167	9:10271+168
LEVEL21.WAD	30	0	0:571+5724	1:1+570	2:6295+219	3:6514+10
LEVEL22.WAD	22	0	0:667+5705	1:1+666	2:6372+272	3:6644+5
LEVEL23.WAD	23	0	0:819+5085	1:1+818	2:5904+247	3:6151+4
LEVEL24.WAD	24	0	0:459+3409	1:1+458	2:3868+210
LEVEL25.WAD	25	0	0:670+3346	1:1+669	2:4016+204
LEVEL26.WAD	26	0	0:525+4504	1:1+524	2:5029+332	3:5361+6
`

// retailLevelSizes are the LEVEL<n>.WAD lines of formats/rac2-ntscu-v1.01-inventory.tsv.
const retailLevelSizes = `/G/LEVEL0.WAD	15467136	1286296
/G/LEVEL1.WAD	21890388	1298963
/G/LEVEL10.WAD	14395584	1518268
/G/LEVEL11.WAD	22379168	1530606
/G/LEVEL12.WAD	17556112	1568240
/G/LEVEL13.WAD	17982128	1597647
/G/LEVEL14.WAD	17356704	1621957
/G/LEVEL15.WAD	14095808	1644778
/G/LEVEL16.WAD	18357216	1656233
/G/LEVEL17.WAD	16748576	1682895
/G/LEVEL18.WAD	17691328	1702877
/G/LEVEL19.WAD	25119448	1720969
/G/LEVEL2.WAD	20712440	1322663
/G/LEVEL20.WAD	21377628	1755604
/G/LEVEL21.WAD	13359328	1792229
/G/LEVEL22.WAD	13616432	1807385
/G/LEVEL23.WAD	12603856	1821432
/G/LEVEL24.WAD	8350423	1830883
/G/LEVEL25.WAD	8642189	1836970
/G/LEVEL26.WAD	10990224	1844633
/G/LEVEL3.WAD	17643616	1357500
/G/LEVEL4.WAD	24713692	1382830
/G/LEVEL5.WAD	16685776	1413303
/G/LEVEL6.WAD	19411936	1425983
/G/LEVEL7.WAD	22281520	1444215
/G/LEVEL8.WAD	20602928	1464840
/G/LEVEL9.WAD	18821856	1495572
`

type tsvLevel struct {
	file   string
	id     int32
	reverb int32
	size   int64
	slots  map[int][2]int32 // slot -> {offset_sectors, size_sectors}
}

func parseLevels(t *testing.T) []tsvLevel {
	t.Helper()
	sizes := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(retailLevelSizes), "\n") {
		f := strings.Split(line, "\t")
		n, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		sizes[strings.TrimPrefix(f[0], "/G/")] = n
	}
	var out []tsvLevel
	for _, line := range strings.Split(strings.TrimSpace(retailLevelsTSV), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		id, err1 := strconv.Atoi(f[1])
		rv, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			t.Fatalf("bad line %q", line)
		}
		l := tsvLevel{file: f[0], id: int32(id), reverb: int32(rv), size: sizes[f[0]], slots: map[int][2]int32{}}
		if l.size == 0 {
			t.Fatalf("no inventory size for %s", f[0])
		}
		for _, s := range f[3:] {
			var slot, off, n int
			if _, err := fmtSscanf(s, &slot, &off, &n); err != nil {
				t.Fatalf("bad slot %q: %v", s, err)
			}
			l.slots[slot] = [2]int32{int32(off), int32(n)}
		}
		out = append(out, l)
	}
	if len(out) != 27 {
		t.Fatalf("%d levels in the TSV, want 27", len(out))
	}
	return out
}

func levelHeader(id, reverb int32, slots map[int][2]int32) []byte {
	b := make([]byte, LevelHeaderSize)
	binary.LittleEndian.PutUint32(b[0:], LevelHeaderSize)
	binary.LittleEndian.PutUint32(b[8:], uint32(id))
	binary.LittleEndian.PutUint32(b[12:], uint32(reverb))
	for s, v := range slots {
		binary.LittleEndian.PutUint32(b[0x10+8*s:], uint32(v[0]))
		binary.LittleEndian.PutUint32(b[0x14+8*s:], uint32(v[1]))
	}
	return b
}

// fmtSscanf parses one "slot:offset+size" field of the levels TSV.
func fmtSscanf(s string, slot, off, n *int) (int, error) {
	a, rest, ok1 := strings.Cut(s, ":")
	b, c, ok2 := strings.Cut(rest, "+")
	if !ok1 || !ok2 {
		return 0, strconv.ErrSyntax
	}
	for _, p := range []struct {
		s string
		v *int
	}{{a, slot}, {b, off}, {c, n}} {
		x, err := strconv.Atoi(p.s)
		if err != nil {
			return 0, err
		}
		*p.v = x
	}
	return 3, nil
}

// Every retail level header, rebuilt from the TSV in a container of its
// inventory size, reads back as exactly the TSV's lumps.
func TestRetailLevels(t *testing.T) {
	clamped := 0
	for _, l := range parseLevels(t) {
		c := mustRead(t, l.file, levelHeader(l.id, l.reverb, l.slots), l.size)
		if c.Family != "LEVEL" || c.Reading != ReadingLevel || c.Level == nil || !c.PerLevel {
			t.Fatalf("%s: family %s reading %s", l.file, c.Family, c.Reading)
		}
		if c.Level.ID != l.id || c.Level.Reverb != l.reverb || c.Level.Name != LevelName(l.id) || c.Level.Name == "" {
			t.Fatalf("%s: header %+v", l.file, c.Level)
		}
		if len(c.Extents) != len(l.slots) || c.Skipped != 10-len(l.slots) || c.Sentinels != 0 {
			t.Fatalf("%s: %d extents, %d skipped, want %d", l.file, len(c.Extents), c.Skipped, len(l.slots))
		}
		var maxEnd, total int64
		for _, e := range c.Extents {
			v, ok := l.slots[e.Index]
			if !ok || e.Name != LevelLumpName(e.Index) {
				t.Fatalf("%s: unexpected extent %+v", l.file, e)
			}
			if c.Level.Lumps[e.Index].OffsetSectors != v[0] || c.Level.Lumps[e.Index].SizeSectors != v[1] {
				t.Fatalf("%s: lump %d = %+v", l.file, e.Index, c.Level.Lumps[e.Index])
			}
			off, end := int64(v[0])*SectorSize, int64(v[0]+v[1])*SectorSize
			if end > l.size {
				if end-l.size > 2047 {
					t.Fatalf("%s: TSV lump %d ends %d bytes past the file", l.file, e.Index, end-l.size)
				}
				end = l.size
				clamped++
			}
			if e.Offset != off || e.Size != end-off {
				t.Fatalf("%s: extent %+v, want offset %d size %d", l.file, e, off, end-off)
			}
			maxEnd = max(maxEnd, e.Offset+e.Size)
			total += int64(v[1])
		}
		// The lumps tile the file from sector 1.
		if maxEnd != l.size || c.Coverage != total {
			t.Errorf("%s: lumps end at %d (file %d), coverage %d of %d sectors", l.file, maxEnd, l.size, c.Coverage, total)
		}
		if l.file == "LEVEL21.WAD" && (c.Level.ID != 30 || c.Level.Name != "Insomniac Museum") {
			t.Errorf("LEVEL21: id %d name %q", c.Level.ID, c.Level.Name)
		}
	}
	if clamped == 0 {
		t.Error("no level's last lump needed the tail clamp")
	}
	t.Logf("%d of 27 levels clamp their last lump", clamped)
}

func TestLevelTSVCopyCurrent(t *testing.T) {
	b, err := os.ReadFile("../../shared/formats/rac2-ntscu-v1.01-levels.tsv") // the project's ../shared
	if err != nil {
		t.Skip("shared formats directory not present")
	}
	if strings.TrimSpace(string(b)) != strings.TrimSpace(retailLevelsTSV) {
		t.Fatal("levels TSV copy differs from formats/rac2-ntscu-v1.01-levels.tsv")
	}
}

// Negative, huge, header-overlapping and out-of-file lumps are skipped and
// counted; the good ones are still shown.
func TestHostileLevel(t *testing.T) {
	const size = 100 * SectorSize
	slots := map[int][2]int32{
		0: {1, 10},                    // good
		1: {-5, 3},                    // negative offset
		2: {20, -1},                   // negative size
		3: {0x7fffffff, 0x7fffffff},   // far past the file
		4: {0, 4},                     // inside the header
		5: {95, 0x7fffffff},           // runs far past the end
		6: {-0x80000000, -0x80000000}, // most negative
		7: {99, 2},                    // overruns by a whole sector: sentinel
		8: {50, 50},                   // ends exactly at the file's end
		9: {0, 0},                     // unused
	}
	c := mustRead(t, "LEVEL99.WAD", levelHeader(77, 9, slots), size)
	if c.Level.ID != 77 || c.Level.Name != "" || c.Level.Reverb != 9 {
		t.Fatalf("header %+v", c.Level)
	}
	if len(c.Extents) != 2 || c.Extents[0].Name != "data" || c.Extents[1].Name != "chunk1_sound_bank" {
		t.Fatalf("extents %+v", c.Extents)
	}
	if c.Skipped != 8 || c.Unused != 1 || c.Sentinels != 3 {
		t.Fatalf("skipped %d unused %d sentinels %d", c.Skipped, c.Unused, c.Sentinels)
	}
	if k := c.Candidates[0]; k.Invalid != 4 || !k.Consistent {
		t.Fatalf("candidate %+v", k)
	}
	// Overlapping lumps are still shown; the candidate records the overlap.
	c = mustRead(t, "LEVEL98.WAD", levelHeader(1, 0, map[int][2]int32{0: {1, 10}, 1: {5, 10}}), size)
	if len(c.Extents) != 2 || c.Candidates[0].Consistent {
		t.Fatalf("overlap: %d extents, candidate %+v", len(c.Extents), c.Candidates[0])
	}
}

func TestLevelNames(t *testing.T) {
	want := map[int32]string{
		0: "Aranos Tutorial", 1: "Oozla", 2: "Maktar Nebula", 3: "Endako", 4: "Barlow",
		5: "Feltzin System", 6: "Notak", 7: "Siberius", 8: "Tabora", 9: "Dobbo",
		10: "Hrugis Cloud", 11: "Joba", 12: "Todano", 13: "Boldan", 14: "Aranos Prison",
		15: "Gorn", 16: "Snivelak", 17: "Smolg", 18: "Damosel", 19: "Grelbin",
		20: "Yeedil", 22: "Dobbo Orbit", 23: "Damosel Orbit", 24: "Ship Shack",
		25: "Wupash Nebula", 26: "Jamming Array", 30: "Insomniac Museum",
	}
	for id := int32(-3); id < 40; id++ {
		if got := LevelName(id); got != want[id] {
			t.Errorf("LevelName(%d) = %q, want %q", id, got, want[id])
		}
	}
	for s, n := range []string{"data", "sound_bank", "gameplay", "occlusion", "chunk0", "chunk1", "chunk2", "chunk0_sound_bank", "chunk1_sound_bank", "chunk2_sound_bank"} {
		if LevelLumpName(s) != n {
			t.Errorf("LevelLumpName(%d) = %q", s, LevelLumpName(s))
		}
	}
	if LevelLumpName(10) != "" || LevelLumpName(-1) != "" {
		t.Error("LevelLumpName out of range")
	}
}
