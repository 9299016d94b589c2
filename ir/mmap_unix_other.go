//go:build unix && !linux

package ir

// dropPages does nothing where package syscall has no madvise (darwin,
// the BSDs): the mapping's pages stay resident until the process ends,
// which only costs memory.
func dropPages([]byte) {}
