// Package hugeheap asks Linux to back the Go heap with transparent huge
// pages (THP).
//
// Where THP is "madvise" (Debian's and Ubuntu's default) the kernel gives a
// 2 MiB page only to memory marked MADV_HUGEPAGE, and the Go runtime marks
// none of its heap. A large graph's heap is then faulted in 4 KiB at a
// time: reading the 112k-node graph of scripts/bench_vs_onnx.sh took ~24k
// page faults, each ~13 µs on the paravirtualised 2-core VM — about half of
// `onnxcost shapes`' 0.51 s. With Reserve ahead of the read, the same
// command takes ~2.4k faults and 0.33–0.35 s, and `report` 0.99 → 0.65 s,
// for 5 MB more peak RSS (perf stat -r 8, interleaved; see the README's
// scale section).
package hugeheap

import "sync"

var once sync.Once

// Reserve grows the heap by about n bytes in one piece, marks that range
// for huge pages and hands it back to the allocator, so that the heap's
// next n bytes are faulted in 2 MiB at a time. Only the first call acts;
// it costs one collection of a nearly empty heap (~1 ms), and the
// untouched part of the range stays virtual (the runtime's scavenger
// returns what the program does not reach). A no-op off Linux, and where
// it cannot help (see wanted).
func Reserve(n int64) {
	once.Do(func() { reserve(n) })
}
