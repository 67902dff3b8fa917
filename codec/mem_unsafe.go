//go:build amd64 || arm64

package codec

import "unsafe"

// Unchecked little-endian loads and stores for decodeFast, whose caller has
// proved every index in range (see decodeFast): on these little-endian
// machines with unaligned access one instruction each, without the bounds
// checks of binary.LittleEndian. (Under -race, checkptr still checks that
// each access stays inside its allocation.)

func ld64(b []byte, i int) uint64 {
	return *(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

func ld32(b []byte, i int) uint32 {
	return *(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i))
}

func st64(b []byte, i int, v uint64) {
	*(*uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)) = v
}

func st32(b []byte, i int, v uint32) {
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(b)), i)) = v
}
