//go:build !linux

package main

// hugeHeap is Linux's (hugeheap_linux.go): elsewhere it does nothing.
type hugeHeap struct{}

func newHugeHeap() *hugeHeap { return nil }

func (h *hugeHeap) advise() {}

func (h *hugeHeap) reserve(n int) {}
