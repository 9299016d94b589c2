package hugeheap

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestReserveAdvisesHeap checks the kernel's view: after Reserve, mappings
// carry the huge-page advice ("hg" in smaps' VmFlags), whatever the
// system's THP mode: at least the first chunk's aligned middle. (All of
// the reserved size only on a fresh heap: Reserve stops at a chunk the
// runtime had to clear, and under load, with collections timed
// otherwise, the test binary's heap sometimes hands out reused memory
// part way: 14 of 64 MiB once, running beside other packages' tests.)
func TestReserveAdvisesHeap(t *testing.T) {
	const n = 64 << 20
	if !wanted() {
		t.Skip("THP is not in madvise mode here, or overcommit is strict: Reserve does nothing")
	}
	before := advisedKB(t)
	Reserve(n)
	after := advisedKB(t)
	if want := int64(reserveChunk-2*hugePage) >> 10; after-before < want {
		t.Fatalf("huge-page advised memory grew by %d KiB after Reserve(%d MiB), want ≥ %d KiB",
			after-before, n>>20, want)
	}
	Reserve(n) // only the first call acts
	if again := advisedKB(t); again != after {
		t.Fatalf("second Reserve changed advised memory: %d → %d KiB", after, again)
	}
}

// advisedKB sums the sizes of this process's mappings flagged "hg".
func advisedKB(t *testing.T) int64 {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var total, size int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) >= 2 && fields[0] == "Size:":
			size, _ = strconv.ParseInt(fields[1], 10, 64)
		case len(fields) >= 1 && fields[0] == "VmFlags:":
			for _, fl := range fields[1:] {
				if fl == "hg" {
					total += size
				}
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return total
}
