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
	// A fresh allocation comes from newly mapped memory that the runtime
	// knows is zero, so it is neither cleared nor touched, and advising it
	// before the first touch is what lets the kernel fault it in as huge
	// pages. But the runtime clears an allocation it cannot prove zero
	// (one reaching into an arena's used part): perf showed such clearing
	// under reserve, 4 KiB fault by 4 KiB fault. So the range is taken in
	// chunks, which bounds what one clearing costs, and the first chunk
	// found in memory (cleared) ends the reservation.
	// (Advising the heap after the runtime maps it does not work in
	// general: each heap growth is a new MAP_FIXED mapping, which starts
	// without the advice.)
	chunks := make([][]byte, 0, n/reserveChunk+1)
	lo, hi := ^uintptr(0), uintptr(0)
	for left := n; left > 0; left -= reserveChunk {
		b := make([]byte, min(left, reserveChunk))
		chunks = append(chunks, b)
		base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		lo, hi = min(lo, base), max(hi, base+uintptr(len(b)))
		if resident(base) {
			// The runtime cleared this chunk: the heap is handing out
			// memory it used before, and the rest would likely be
			// cleared too, 4 KiB fault by 4 KiB fault. Stop here.
			break
		}
	}
	// The chunks lie end to end where the heap grew for them, and are
	// then advised as one range, whose 2 MiB-aligned middle is most of it
	// (each chunk alone would lose up to 2 MiB at each end). Should the
	// heap have grown elsewhere part way (a span far wider than what was
	// allocated), each chunk is advised alone, so that no mapping outside
	// the heap is touched.
	var total uintptr
	for _, b := range chunks {
		total += uintptr(len(b))
	}
	if hi-lo <= total+reserveChunk {
		advise(lo, hi)
	} else {
		for _, b := range chunks {
			base := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
			advise(base, base+uintptr(len(b)))
		}
	}
	runtime.KeepAlive(chunks)
	chunks = nil
	// Free the range now, so that the allocations to come reuse it.
	runtime.GC()
}

// advise marks the 2 MiB-aligned middle of [lo, hi) for huge pages. An
// error (THP compiled out, an old kernel) leaves the heap as it was:
// nothing to report.
func advise(lo, hi uintptr) {
	lo, hi = (lo+hugePage-1)&^(hugePage-1), hi&^(hugePage-1)
	if hi > lo {
		_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, lo, hi-lo, syscall.MADV_HUGEPAGE)
	}
}

// resident reports whether the page at addr is in memory (mincore), that
// is, whether something has touched it.
func resident(addr uintptr) bool {
	var vec [1]byte
	page := addr &^ uintptr(os.Getpagesize()-1)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, page, 1, uintptr(unsafe.Pointer(&vec[0])))
	return errno == 0 && vec[0]&1 != 0
}

// reserveChunk is the size of each allocation of reserve.
const reserveChunk = 8 << 20

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
