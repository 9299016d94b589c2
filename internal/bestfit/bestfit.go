// Package bestfit is the block bookkeeping two allocator simulations
// share: PyTorch's CUDA caching allocator (train, training memory's
// reserve) and onnxruntime's BFC arena (cost, onnxruntime's device
// memory). Both take segments of device memory (PyTorch's segments,
// onnxruntime's regions), serve a request from the smallest free block
// that holds it, the lowest segment and offset first among equals,
// split off the rest when their rule says so, and merge a freed block
// with its free neighbours in its segment, never across segments. What
// differs stays with each: the rounding, the segment sizes and when a
// segment is taken, the split rule, PyTorch's two pools and its release
// of wholly free segments when the device runs full.
package bestfit

import "sort"

// Block is a piece of one segment: [Off, Off+Size), in use or free.
type Block struct {
	// Seg is the segment's number, in the order segments were taken
	// (standing for its address); Pool the pool it serves.
	Seg, Pool int
	Off, Size float64
	Free      bool
	// prev and next are the block's neighbours in its segment.
	prev, next *Block
}

// Heap is the simulated memory: its segments' blocks and, per pool, the
// free blocks in best-fit order.
type Heap struct {
	reserved float64
	segs     int
	// free[pool] is sorted by size, then segment, then offset.
	free [][]*Block
}

// Reserved is the bytes the heap holds: its segments' sizes.
func (h *Heap) Reserved() float64 { return h.reserved }

// Grow takes a new segment of size bytes for pool, one free block.
func (h *Heap) Grow(pool int, size float64) *Block {
	b := &Block{Seg: h.segs, Pool: pool, Size: size, Free: true}
	h.segs++
	h.reserved += size
	h.insert(b)
	return b
}

// BestFit is the smallest free block of pool that holds size bytes (the
// lowest segment, then offset, among equals); nil when there is none.
func (h *Heap) BestFit(pool int, size float64) *Block {
	l := h.pool(pool)
	i := sort.Search(len(l), func(i int) bool { return l[i].Size >= size })
	if i < len(l) {
		return l[i]
	}
	return nil
}

// Take puts free block b to use for size bytes; with split, the rest of
// b past size becomes a free block of its own, else it stays inside b,
// held but unused.
func (h *Heap) Take(b *Block, size float64, split bool) {
	h.remove(b)
	b.Free = false
	if !split {
		return
	}
	r := &Block{Seg: b.Seg, Pool: b.Pool, Off: b.Off + size, Size: b.Size - size, Free: true, prev: b, next: b.next}
	if b.next != nil {
		b.next.prev = r
	}
	b.next = r
	b.Size = size
	h.insert(r)
}

// Release frees block b and merges it with its free neighbours.
func (h *Heap) Release(b *Block) {
	b.Free = true
	if p := b.prev; p != nil && p.Free {
		h.remove(p)
		absorb(p, b)
		b = p
	}
	if n := b.next; n != nil && n.Free {
		h.remove(n)
		absorb(b, n)
	}
	h.insert(b)
}

// ReleaseEmpty gives back every segment that is wholly free.
func (h *Heap) ReleaseEmpty() {
	for pool, l := range h.free {
		kept := l[:0]
		for _, b := range l {
			if b.prev == nil && b.next == nil {
				h.reserved -= b.Size
				continue
			}
			kept = append(kept, b)
		}
		h.free[pool] = kept
	}
}

// absorb merges block n, the one after b in its segment, into b.
func absorb(b, n *Block) {
	b.Size += n.Size
	b.next = n.next
	if n.next != nil {
		n.next.prev = b
	}
}

func (h *Heap) pool(p int) []*Block {
	if p < len(h.free) {
		return h.free[p]
	}
	return nil
}

func less(a, b *Block) bool {
	if a.Size != b.Size {
		return a.Size < b.Size
	}
	if a.Seg != b.Seg {
		return a.Seg < b.Seg
	}
	return a.Off < b.Off
}

func (h *Heap) insert(b *Block) {
	for len(h.free) <= b.Pool {
		h.free = append(h.free, nil)
	}
	l := h.free[b.Pool]
	i := sort.Search(len(l), func(i int) bool { return !less(l[i], b) })
	l = append(l, nil)
	copy(l[i+1:], l[i:])
	l[i] = b
	h.free[b.Pool] = l
}

func (h *Heap) remove(b *Block) {
	l := h.pool(b.Pool)
	i := sort.Search(len(l), func(i int) bool { return !less(l[i], b) })
	if i < len(l) && l[i] == b {
		h.free[b.Pool] = append(l[:i], l[i+1:]...)
	}
}
