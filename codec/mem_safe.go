//go:build !(amd64 || arm64)

package codec

import "encoding/binary"

// Checked versions of mem_unsafe.go's loads and stores for other machines.

func ld64(b []byte, i int) uint64    { return binary.LittleEndian.Uint64(b[i:]) }
func ld32(b []byte, i int) uint32    { return binary.LittleEndian.Uint32(b[i:]) }
func st64(b []byte, i int, v uint64) { binary.LittleEndian.PutUint64(b[i:], v) }
func st32(b []byte, i int, v uint32) { binary.LittleEndian.PutUint32(b[i:], v) }
