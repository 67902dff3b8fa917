package assets

import (
	"encoding/binary"
	"reflect"
	"testing"
)

// TestDecodeIndexed8MatchesPIF: a level texture decodes as the PIF holding
// the same palette and pixels does (one swizzle, one alpha rule).
func TestDecodeIndexed8MatchesPIF(t *testing.T) {
	const w, h = 5, 3
	pal := make([]byte, IndexedPaletteBytes)
	for i := range pal {
		pal[i] = byte(i * 13)
	}
	pix := make([]byte, w*h)
	for i := range pix {
		pix[i] = byte(i * 37)
	}
	pif := make([]byte, PIFHeaderSize, PIFHeaderSize+len(pal)+len(pix))
	copy(pif, "2FIP")
	for i, v := range []int32{int32(cap(pif)), w, h, PIFFormat8} {
		binary.LittleEndian.PutUint32(pif[4+4*i:], uint32(v))
	}
	pif = append(append(pif, pal...), pix...)
	want, err := DecodePIF(pif)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeIndexed8(w, h, pix, pal)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("indexed %+v, PIF %+v", got.Palette[:4], want.Palette[:4])
	}
	if _, err := DecodeIndexed8(w, h, pix[1:], pal); err == nil {
		t.Fatal("short pixels decoded")
	}
	if _, err := DecodeIndexed8(0, h, nil, pal); err == nil {
		t.Fatal("zero width decoded")
	}
	if _, err := DecodeIndexed8(w, h, pix, pal[4:]); err == nil {
		t.Fatal("short palette decoded")
	}
}
