package bestfit

import "testing"

// TestHeap: the smallest free block that holds a request is taken, the
// lowest segment first among equals; a split leaves the rest free; a
// freed block merges with its free neighbours in its segment and never
// with another segment's; pools do not serve each other; ReleaseEmpty
// gives back only wholly free segments.
func TestHeap(t *testing.T) {
	var h Heap
	s0 := h.Grow(0, 100)
	s1 := h.Grow(0, 100)
	big := h.Grow(1, 400)
	if h.Reserved() != 600 || s0.Seg != 0 || s1.Seg != 1 || big.Seg != 2 {
		t.Fatalf("reserved %g, segments %d %d %d", h.Reserved(), s0.Seg, s1.Seg, big.Seg)
	}
	a := h.BestFit(0, 60)
	if a != s0 {
		t.Fatalf("best fit among equal blocks: segment %d, want the lowest", a.Seg)
	}
	h.Take(a, 60, true) // segment 0: [0,60) used, [60,100) free
	b := h.BestFit(0, 30)
	if b == nil || b.Seg != 0 || b.Off != 60 || b.Size != 40 {
		t.Fatalf("30 bytes: %+v, want segment 0's 40-byte rest (smaller than segment 1's 100)", b)
	}
	h.Take(b, 30, false) // held whole: no 10-byte block
	if c := h.BestFit(0, 10); c != s1 {
		t.Errorf("10 bytes after an unsplit take: %+v, want segment 1", c)
	}
	if h.BestFit(0, 150) != nil || h.BestFit(1, 150) != big {
		t.Error("a pool served another's request, or a 400-byte block was missed")
	}
	c := h.BestFit(0, 100)
	h.Take(c, 50, true) // segment 1: [0,50) used, [50,100) free
	h.Release(a)
	h.Release(b) // segment 0 whole again: one 100-byte block
	if d := h.BestFit(0, 100); d == nil || d.Seg != 0 || d.Off != 0 || d.Size != 100 {
		t.Errorf("after freeing segment 0's two blocks: %+v, want it whole", d)
	}
	h.ReleaseEmpty() // segment 0 and the large pool's segment go; segment 1 holds c
	if h.Reserved() != 100 {
		t.Errorf("after ReleaseEmpty: %g reserved, want segment 1's 100", h.Reserved())
	}
	if h.BestFit(1, 1) != nil || h.BestFit(0, 60) != nil {
		t.Error("a released segment still serves")
	}
	h.Release(c) // segment 1 whole, free
	if e := h.BestFit(0, 100); e == nil || e.Seg != 1 || e.Size != 100 {
		t.Errorf("segment 1 freed: %+v", e)
	}
}
