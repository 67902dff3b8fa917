// Package integration owns the tests that mount gcfs for real: they build the
// gcfs binary once, generate synthetic discs with `gcfs mkdisc`, mount them
// through FUSE and compare what the kernel shows with what `gcfs ls`, `gcfs
// cat` and mkdisc's manifest say; and the mount benchmarks. It has no
// non-test code.
package integration
