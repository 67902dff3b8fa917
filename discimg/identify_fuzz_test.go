package discimg

import (
	"strings"
	"testing"
)

// FuzzSystemCNF feeds arbitrary SYSTEM.CNF text to the parser Identify uses
// and checks its keys, the boot path taken from BOOT2 and the serial.
func FuzzSystemCNF(f *testing.F) {
	f.Add([]byte("BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n"))
	f.Add([]byte("boot2=cdrom0:\\\\G\\SLES_516.07;1\nver=1.00\n\x00\x00garbage"))
	f.Add([]byte("BOOT2 = cdrom0:;1\n=\n==\nBOOT2 = second\n"))
	f.Add([]byte("\r\r\n\n BOOT2 :: \\\\ ;;\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		kv := parseSystemCNF(data)
		for k, v := range kv {
			if k != strings.ToUpper(strings.TrimSpace(k)) || v != strings.TrimSpace(v) {
				t.Fatalf("key %q value %q not normalised", k, v)
			}
			if strings.ContainsAny(k+v, "\r\n\x00") {
				t.Fatalf("key %q value %q holds a line break or NUL", k, v)
			}
		}
		boot := bootPath(kv["BOOT2"])
		if strings.HasPrefix(boot, "/") || strings.HasSuffix(boot, "/") || strings.Contains(boot, "\\") {
			t.Fatalf("boot path %q from %q", boot, kv["BOOT2"])
		}
		if s := SerialFromBoot(boot[strings.LastIndexByte(boot, '/')+1:]); s != "" && (len(s) != 10 || s[4] != '-') {
			t.Fatalf("serial %q from %q", s, boot)
		}
	})
}
