// Package prefault maps in, one system call at a time, memory that a short
// command would otherwise fault in page by page: the executable's code and
// the Go heap's first chunks.
//
// On the 2-core paravirtualised VM the project is measured on, a page
// fault costs 13–16 µs (writing one byte to each of 1,024 fresh pages:
// 14–17 ms), while madvise(MADV_POPULATE_WRITE) maps the same 1,024 pages
// in about 1 ms, and MADV_POPULATE_READ maps the 8.7 MB of code in 0.3 ms.
// A DenseNet-121 `report` took ~1,250 faults, half of them on heap pages
// and a fifth on the executable; with this package ~500–650 faults
// remain, and the command takes 29.3 ms instead of 34.7 (perf stat -r 50,
// alternating, three rounds; see the README's scale section). Big graphs
// are left to hugeheap, which gives their heap huge pages.
//
// Populating changes no memory's contents: the heap's pages are the zero
// pages the first write would have faulted in, the executable's those the
// first read would have. It costs up to 4 MiB more resident heap (12 MiB
// after Heap). Off Linux, and on kernels before 5.14 (no MADV_POPULATE_*),
// it does nothing.
package prefault

// Heap maps in the heap chunks the runtime has added since the process
// started (at most 12 MiB): call it once a small model is read, before
// the passes and the cost model allocate. Not for a big graph, whose heap
// hugeheap reserved: populating would fault all of that reservation in.
func Heap() { heap() }
