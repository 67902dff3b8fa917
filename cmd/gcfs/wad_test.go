package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"gcfs/codec"
)

// wadRun runs gcfs with args in-process, stdin from in.
func wadRun(t *testing.T, in []byte, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	app := newApp()
	var o, e bytes.Buffer
	app.Writer, app.ErrWriter = &o, &e
	app.Reader = bytes.NewReader(in)
	app.ExitErrHandler = func(*cli.Context, error) {}
	err = app.Run(append([]string{"gcfs"}, args...))
	return o.String(), e.String(), err
}

func exitCodeOf(err error) int {
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

func TestWadCompressDecompressFiles(t *testing.T) {
	dir := t.TempDir()
	raw := codec.SampleData(11, 300000)
	in := filepath.Join(dir, "asset.bin")
	os.WriteFile(in, raw, 0o644)
	wad := filepath.Join(dir, "asset.wad")
	back := filepath.Join(dir, "asset.out")

	_, errOut, err := wadRun(t, nil, "wad", "compress", "--tag", "gameplay", "--best", in, wad)
	if err != nil {
		t.Fatalf("compress: %v %s", err, errOut)
	}
	if !strings.Contains(errOut, "ratio") || !strings.Contains(errOut, "300000 ->") {
		t.Errorf("compress stderr %q lacks the ratio", errOut)
	}
	enc, _ := os.ReadFile(wad)
	if h, err := codec.ParseHeader(enc); err != nil || h.Tag != "gameplay" || h.Size != int64(len(enc)) {
		t.Errorf("header %+v %v", h, err)
	}
	if err := codec.Validate(enc); err != nil {
		t.Errorf("Validate: %v", err)
	}
	if _, _, err := wadRun(t, nil, "wad", "decompress", wad, back); err != nil {
		t.Fatalf("decompress: %v", err)
	}
	if got, _ := os.ReadFile(back); !bytes.Equal(got, raw) {
		t.Errorf("round trip differs")
	}

	out, _, err := wadRun(t, nil, "wad", "info", wad)
	if err != nil {
		t.Fatalf("info: %v", err)
	}
	for _, want := range []string{`tag:            "gameplay"`, "decoded size:   300000", "declared size:  " + strconv.Itoa(len(enc)), "short matches:", "block markers:"} {
		if !strings.Contains(out, want) {
			t.Errorf("info lacks %q:\n%s", want, out)
		}
	}
}

func TestWadStdinStdout(t *testing.T) {
	raw := []byte(strings.Repeat("ratchet and clank ", 1000))
	enc, _, err := wadRun(t, raw, "wad", "compress", "-", "-")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := codec.ParseHeader([]byte(enc)); err != nil || h.Tag != "gcfs" {
		t.Fatalf("default tag: %+v %v", h, err)
	}
	dec, _, err := wadRun(t, []byte(enc), "wad", "decompress", "-", "-")
	if err != nil || dec != string(raw) {
		t.Fatalf("decompress stdin: %v", err)
	}
	info, _, err := wadRun(t, []byte(enc), "wad", "info", "-")
	if err != nil || !strings.Contains(info, "decoded size:   18000") {
		t.Fatalf("info stdin: %v\n%s", err, info)
	}
}

func TestWadErrors(t *testing.T) {
	dir := t.TempDir()
	enc := codec.Encode(codec.SampleData(2, 50000), codec.EncodeOptions{})
	bad := bytes.Clone(enc)
	bad = bad[:len(bad)-1] // declared size now past the file
	badPath := filepath.Join(dir, "bad.wad")
	os.WriteFile(badPath, bad, 0o644)
	out := filepath.Join(dir, "out.bin")

	_, _, err := wadRun(t, nil, "wad", "decompress", badPath, out)
	if err == nil || exitCodeOf(err) == 0 {
		t.Fatalf("decompress of a broken stream succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, badPath) || !strings.Contains(msg, "0x3") || !strings.Contains(msg, string(codec.RuleDeclaredSize)) {
		t.Errorf("error %q should name the file, the offset and the rule", msg)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("OUT written on error")
	}

	// A packet error inside the stream: literal pair at 0x15.
	pair := []byte("WAD\x1e\x00\x00\x00test\x00\x00\x00\x00\x00\x01abcd\x01efgh\x00")
	pair[3] = byte(len(pair))
	pairPath := filepath.Join(dir, "pair.wad")
	os.WriteFile(pairPath, pair, 0o644)
	_, _, err = wadRun(t, nil, "wad", "decompress", pairPath, out)
	if err == nil || !strings.Contains(err.Error(), "0x15") || !strings.Contains(err.Error(), string(codec.RuleLiteralPair)) ||
		!strings.Contains(err.Error(), "4 bytes decode cleanly") {
		t.Errorf("literal pair error: %v", err)
	}
	stdout, _, err := wadRun(t, nil, "wad", "info", pairPath)
	if err == nil || !strings.Contains(stdout, "decodes cleanly up to the error") {
		t.Errorf("info on a broken stream: %v\n%s", err, stdout)
	}
	// Stdout stays empty when decoding fails.
	stdout, _, err = wadRun(t, pair, "wad", "decompress", "-", "-")
	if err == nil || stdout != "" {
		t.Errorf("decompress to stdout on error: %v, %d bytes written", err, len(stdout))
	}
	// The output limit.
	_, _, err = wadRun(t, nil, "wad", "decompress", "--max-decoded", "1KiB", filepath.Join(dir, "missing"), out)
	if err == nil || !strings.Contains(err.Error(), "missing") {
		t.Errorf("missing input: %v", err)
	}
	good := filepath.Join(dir, "good.wad")
	os.WriteFile(good, enc, 0o644)
	_, _, err = wadRun(t, nil, "wad", "decompress", "--max-decoded", "1KiB", good, out)
	if err == nil || !strings.Contains(err.Error(), string(codec.RuleOutputLimit)) {
		t.Errorf("max-decoded: %v", err)
	}
	if _, _, err = wadRun(t, nil, "wad", "decompress", good); exitCodeOf(err) != 2 {
		t.Errorf("wrong arg count: %v", err)
	}
	if _, _, err = wadRun(t, nil, "wad", "compress", "--tag", "0123456789", good, out); exitCodeOf(err) != 2 {
		t.Errorf("long tag: %v", err)
	}
	// No temporary files left behind.
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") || e.Name() == "out.bin" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}
