package hugeheap

import (
	"bytes"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

// hugePage is the x86-64 and arm64 (4 KiB base page) PMD size; a range
// not aligned to it cannot be given huge pages, so only the aligned middle
// of the reservation is advised.
const hugePage = 2 << 20

func reserve(n int64) {
	if n < 2*hugePage || int64(int(n)) != n || !wanted() {
		return
	}
	// A fresh large allocation comes straight from newly mapped memory
	// that the runtime knows is zero, so it is neither cleared nor touched
	// here; advising it before the first touch is what lets the kernel
	// fault it in as huge pages. (Advising the heap after the runtime maps
	// it does not work in general: each heap growth is a new MAP_FIXED
	// mapping, which starts without the advice.)
	b := make([]byte, n)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo := (base+hugePage-1)&^(hugePage-1) - base
	hi := (base+uintptr(n))&^(hugePage-1) - base
	if hi > lo {
		// An error (THP compiled out, an old kernel) leaves the heap as
		// it was: nothing to report.
		_ = syscall.Madvise(b[lo:hi], syscall.MADV_HUGEPAGE)
	}
	runtime.KeepAlive(b)
	b = nil
	// Free the range now, so that the allocations to come reuse it.
	runtime.GC()
}

// wanted reports whether a reservation can help and cannot hurt: THP is on
// request only ("[madvise]"; under "always" the heap has huge pages
// already, under "never" it gets none), and the kernel does not count
// address space strictly (vm.overcommit_memory 2), where reserving more
// than the program will touch could fail the allocation.
func wanted() bool {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !bytes.Contains(mode, []byte("[madvise]")) {
		return false
	}
	commit, err := os.ReadFile("/proc/sys/vm/overcommit_memory")
	return err == nil && !bytes.HasPrefix(commit, []byte("2"))
}
