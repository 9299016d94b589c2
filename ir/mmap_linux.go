package ir

import "syscall"

// dropPages lets the kernel reclaim the resident pages of a read-only
// shared file mapping; the mapping stays valid, and a page touched again
// is filled from the file cache. An error leaves the pages resident,
// which only costs memory.
func dropPages(data []byte) { _ = syscall.Madvise(data, syscall.MADV_DONTNEED) }
