package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gcfs/codec"
)

// decompress with 1, 2 and 4 workers: the same bytes, and on a corrupt stream
// the same message (rule, offset, clean bytes); a stream large enough for the
// mapped output buffer and for several parallel chunks.
func TestWadDecompressWorkers(t *testing.T) {
	old := wadBigBuffer
	wadBigBuffer = 1 << 20 // the input read into a mapping, the output decoded into one
	t.Cleanup(func() { wadBigBuffer = old })
	dir := t.TempDir()
	raw := codec.SampleData(21, 12<<20)
	enc := codec.Encode(raw, codec.EncodeOptions{})
	in := filepath.Join(dir, "in.wad")
	os.WriteFile(in, enc, 0o644)
	// A corrupt copy: the first byte from the middle on whose change breaks a rule.
	var bad []byte
	for p := len(enc) / 2; p < len(enc); p++ {
		bad = bytes.Clone(enc)
		bad[p] = 0x01 // a literal packet: right after another one, or a length past the end
		if _, err := codec.Decode(bad, codec.Options{}); err != nil {
			break
		}
	}
	badIn := filepath.Join(dir, "bad.wad")
	os.WriteFile(badIn, bad, 0o644)
	if _, err := codec.Decode(bad, codec.Options{}); err == nil {
		t.Fatal("no corrupt copy found")
	}
	var msgs []string
	for _, w := range []string{"1", "2", "4"} {
		out := filepath.Join(dir, "out"+w)
		if _, _, err := wadRun(t, nil, "wad", "decompress", "--workers", w, in, out); err != nil {
			t.Fatalf("workers %s: %v", w, err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, raw) {
			t.Fatalf("workers %s: output differs", w)
		}
		_, _, err := wadRun(t, nil, "wad", "decompress", "--workers", w, badIn, out+".bad")
		if err == nil {
			t.Fatalf("workers %s: the corrupt stream decoded", w)
		}
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs {
		if m != msgs[0] {
			t.Errorf("messages differ across worker counts: %q / %q", m, msgs[0])
		}
	}
	// A limit below the output: the same error from every worker count.
	msgs = msgs[:0]
	for _, w := range []string{"1", "2"} {
		_, _, err := wadRun(t, nil, "wad", "decompress", "--workers", w, "--max-decoded", "5MiB", in, filepath.Join(dir, "lim"))
		if err == nil {
			t.Fatalf("workers %s: no error past --max-decoded", w)
		}
		msgs = append(msgs, err.Error())
	}
	if msgs[0] != msgs[1] {
		t.Errorf("limit messages differ: %q / %q", msgs[0], msgs[1])
	}
}

// The output buffer is sized from the checked stream length, never from the
// header alone, and at most the limit.
func TestWadOutputBuffer(t *testing.T) {
	enc := codec.Encode(codec.SampleData(3, 1000), codec.EncodeOptions{})
	buf, release := wadOutputBuffer(enc, 1<<30)
	if cap(buf) < 1000 || int64(cap(buf)) > int64(len(enc))*wadMaxExpansion+4096 {
		t.Errorf("cap %d for a %d-byte stream", cap(buf), len(enc))
	}
	release()
	lie := bytes.Clone(enc)
	lie[3], lie[4], lie[5], lie[6] = 0xFF, 0xFF, 0xFF, 0xFF // declares 4 GiB
	buf, release = wadOutputBuffer(lie, 1<<40)
	if int64(cap(buf)) > int64(len(lie))*wadMaxExpansion+4096 {
		t.Errorf("cap %d from a header that lies", cap(buf))
	}
	release()
	buf, release = wadOutputBuffer(enc, 100)
	if cap(buf) > 100+4096 {
		t.Errorf("cap %d past the limit", cap(buf))
	}
	release()
}

// TestWadMapFileCutShort: a mapped input cut shorter while it is read gives
// an error naming the file, not a crash (SIGBUS on the lost pages).
func TestWadMapFileCutShort(t *testing.T) {
	old := wadMapMin
	wadMapMin = 1
	t.Cleanup(func() { wadMapMin = old })
	name := filepath.Join(t.TempDir(), "in.wad")
	if err := os.WriteFile(name, bytes.Repeat([]byte{7}, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	data, release, ok := wadMapFile(name)
	if !ok {
		t.Skip("the kernel refused the mapping")
	}
	defer release()
	if err := os.Truncate(name, 0); err != nil {
		t.Fatal(err)
	}
	var sum int
	err := wadFaultsAsErrors(name, func() error {
		for i := 0; i < len(data); i += 4096 {
			sum += int(data[i])
		}
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "changed size") {
		t.Fatalf("read of a cut-short mapping: %v (sum %d)", err, sum)
	}
	if exitCodeOf(err) != 1 {
		t.Errorf("exit code %d, want 1", exitCodeOf(err))
	}
}

// TestWadDecompressMapped: the streaming decompress of mapped inputs of
// varied sizes (under and over the mapping's threshold, at and around
// the decoder's flush size) gives the stream's bytes, and a stream corrupt
// in its middle leaves an existing OUT as it was and no temporary file.
func TestWadDecompressMapped(t *testing.T) {
	fullPassOnly(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.bin")
	for _, n := range []int{0, 1, 100 << 10, 512<<10 - 1, 512 << 10, 512<<10 + 1, 3 << 20} {
		raw := codec.SampleData(int64(n), n)
		in := filepath.Join(dir, "in.wad")
		os.WriteFile(in, codec.Encode(raw, codec.EncodeOptions{}), 0o644)
		if _, _, err := wadRun(t, nil, "wad", "decompress", "--workers", "1", in, out); err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		if got, _ := os.ReadFile(out); !bytes.Equal(got, raw) {
			t.Fatalf("%d bytes: output differs (%d bytes)", n, len(got))
		}
	}
	raw := codec.SampleData(5, 3<<20)
	enc := codec.Encode(raw, codec.EncodeOptions{})
	var bad []byte
	for p := len(enc) / 2; p < len(enc); p++ {
		bad = bytes.Clone(enc)
		bad[p] = 0x01
		if _, err := codec.Decode(bad, codec.Options{}); err != nil {
			break
		}
	}
	badIn := filepath.Join(dir, "bad.wad")
	os.WriteFile(badIn, bad, 0o644)
	os.WriteFile(out, []byte("before"), 0o644)
	_, _, err := wadRun(t, nil, "wad", "decompress", "--workers", "1", badIn, out)
	if err == nil || !strings.Contains(err.Error(), badIn) || !strings.Contains(err.Error(), "decode cleanly") {
		t.Fatalf("corrupt mapped stream: %v", err)
	}
	if got, _ := os.ReadFile(out); string(got) != "before" {
		t.Errorf("OUT changed by a failed decode: %d bytes", len(got))
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
