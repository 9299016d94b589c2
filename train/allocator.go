package train

import (
	"math"
	"sort"
)

// The PyTorch CUDA caching allocator, as training memory's second view
// (memory.go): what torch.cuda.max_memory_reserved() reports, the
// segments the allocator has taken from the driver, against the live
// tensors of the first view. The model follows
// c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x) and the PyTorch
// documentation ("CUDA semantics: memory management"; "Understanding
// CUDA memory usage"), with its default settings (no
// PYTORCH_CUDA_ALLOC_CONF, no expandable segments):
//
//   - every request is rounded up to a multiple of 512 B (kMinBlockSize);
//   - a request of at most 1 MiB (kSmallSize) is served from the small
//     pool, whose segments are 2 MiB (kSmallBuffer);
//   - a larger request is served from the large pool; a new segment for it
//     is 20 MiB (kLargeBuffer) when the request is under 10 MiB
//     (kMinLargeAlloc), else the request rounded up to 2 MiB (kRoundLarge);
//   - a request takes the smallest free block of its pool that is large
//     enough (best fit), split when the remainder is at least 512 B (small
//     pool) or more than 1 MiB (large pool); a remainder too small to split
//     stays inside the block, allocated but unused;
//   - a freed block merges with its free neighbours in the same segment;
//     segments are cached, not returned to the driver (no empty_cache),
//     except when a new segment would not fit in the device: then, as the
//     allocator does before it reports out-of-memory, every cached
//     segment that is wholly free is released and the request retried
//     (release_cached_blocks). The reserve's peak is what
//     max_memory_reserved reports; above the device's memory it is an
//     out-of-memory error.
//
// What it leaves out: several streams, the per-stream pools of CUDA
// graphs, and the allocations cuDNN and autograd make beyond the tensors
// the timeline tracks (convolution workspaces picked by cudnn.benchmark).
const (
	allocMinBlock      = 512
	allocSmallSize     = 1 << 20
	allocSmallBuffer   = 2 << 20
	allocMinLargeAlloc = 10 << 20
	allocLargeBuffer   = 20 << 20
	allocRoundLarge    = 2 << 20
)

// allocBlock is a piece of one segment.
type allocBlock struct {
	seg, pool  int // the pool is the segment's: 0 small, 1 large
	off, size  float64
	free       bool
	prev, next *allocBlock
}

// cachingAllocator is the simulated allocator.
type cachingAllocator struct {
	reserved, peak float64
	// limit is the device memory the reserve may take (what CUDA reports
	// as the GPU's total, less the CUDA context); 0 is none.
	limit float64
	// full records that a cudaMalloc would have failed: the reserve met
	// the limit and cached segments were released to go on.
	full bool
	segs int
	// freeBlocks per pool (0 small, 1 large), sorted by size, then
	// segment and offset, as the allocator's block sets are.
	freeBlocks [2][]*allocBlock
}

func allocRound(bytes float64) float64 {
	if bytes < allocMinBlock {
		return allocMinBlock
	}
	return math.Ceil(bytes/allocMinBlock) * allocMinBlock
}

func allocPool(size float64) int {
	if size <= allocSmallSize {
		return 0
	}
	return 1
}

func allocSegmentSize(size float64) float64 {
	switch {
	case size <= allocSmallSize:
		return allocSmallBuffer
	case size < allocMinLargeAlloc:
		return allocLargeBuffer
	}
	return math.Ceil(size/allocRoundLarge) * allocRoundLarge
}

func blockLess(a, b *allocBlock) bool {
	if a.size != b.size {
		return a.size < b.size
	}
	if a.seg != b.seg {
		return a.seg < b.seg
	}
	return a.off < b.off
}

func (c *cachingAllocator) insertFree(pool int, b *allocBlock) {
	l := c.freeBlocks[pool]
	i := sort.Search(len(l), func(i int) bool { return !blockLess(l[i], b) })
	l = append(l, nil)
	copy(l[i+1:], l[i:])
	l[i] = b
	c.freeBlocks[pool] = l
}

func (c *cachingAllocator) removeFree(pool int, b *allocBlock) {
	l := c.freeBlocks[pool]
	i := sort.Search(len(l), func(i int) bool { return !blockLess(l[i], b) })
	if i < len(l) && l[i] == b {
		c.freeBlocks[pool] = append(l[:i], l[i+1:]...)
	}
}

// malloc serves a request of bytes (> 0) and returns its block.
func (c *cachingAllocator) malloc(bytes float64) *allocBlock {
	size := allocRound(bytes)
	pool := allocPool(size)
	l := c.freeBlocks[pool]
	i := sort.Search(len(l), func(i int) bool { return l[i].size >= size })
	var b *allocBlock
	if i < len(l) {
		b = l[i]
		c.removeFree(pool, b)
	} else {
		seg := allocSegmentSize(size)
		if c.limit > 0 && c.reserved+seg > c.limit {
			c.full = true
			c.releaseCached()
		}
		c.reserved += seg
		c.peak = max(c.peak, c.reserved)
		b = &allocBlock{seg: c.segs, pool: pool, size: seg}
		c.segs++
	}
	b.free = false
	rest := b.size - size
	if (pool == 0 && rest >= allocMinBlock) || (pool == 1 && rest > allocSmallSize) {
		r := &allocBlock{seg: b.seg, pool: pool, off: b.off + size, size: rest, free: true, prev: b, next: b.next}
		if b.next != nil {
			b.next.prev = r
		}
		b.next = r
		b.size = size
		c.insertFree(pool, r)
	}
	return b
}

// release frees a block, merging it with free neighbours.
func (c *cachingAllocator) release(b *allocBlock) {
	pool := b.pool
	b.free = true
	if p := b.prev; p != nil && p.free {
		c.removeFree(pool, p)
		absorb(p, b)
		b = p
	}
	if n := b.next; n != nil && n.free {
		c.removeFree(pool, n)
		absorb(b, n)
	}
	c.insertFree(pool, b)
}

// releaseCached returns every wholly free segment to the driver, as the
// allocator does before retrying a cudaMalloc that ran out of memory.
func (c *cachingAllocator) releaseCached() {
	for pool, l := range c.freeBlocks {
		kept := l[:0]
		for _, b := range l {
			if b.prev == nil && b.next == nil {
				c.reserved -= b.size
				continue
			}
			kept = append(kept, b)
		}
		c.freeBlocks[pool] = kept
	}
}

// absorb merges block n, the one after b in its segment, into b.
func absorb(b, n *allocBlock) {
	b.size += n.size
	b.next = n.next
	if n.next != nil {
		n.next.prev = b
	}
}

// memAlloc is one tensor of the training timeline: live from step from to
// step to, both included (memory.go).
type memAlloc struct {
	bytes    float64
	from, to int
}

// allocatorReserve replays two training steps of a timeline of T+1
// steps through the caching allocator, on a device of limit bytes (0:
// unbounded), and returns the reserve's peak. The model's
// tensors (persist) and the library workspace are allocated first, as
// model.cuda() and the first GEMM do; the optimizer state (lazy) is
// created by the first step's update, as torch.optim creates it, after
// that step's activations were freed into the cache; the second step runs
// with it in place, which is the steady state a training loop reports.
// Within a step a tensor freed at t (to = t-1) is back in the cache
// before the allocations of t, and allocations at one step are made in
// the timeline's order. full reports that the device ran full (cached
// segments were released and the request retried) at some point.
func allocatorReserve(persist, lazy []float64, allocs []memAlloc, T int, limit float64) (peak float64, full bool) {
	c := cachingAllocator{limit: limit}
	for _, b := range persist {
		if b > 0 {
			c.malloc(b)
		}
	}
	startAt := make([][]int, T+1)
	freeAt := make([][]int, T+2)
	for i, a := range allocs {
		if a.bytes <= 0 || a.to < a.from || a.from < 0 || a.to > T {
			continue
		}
		startAt[a.from] = append(startAt[a.from], i)
		freeAt[a.to+1] = append(freeAt[a.to+1], i)
	}
	blocks := make([]*allocBlock, len(allocs))
	for step := 0; step < 2; step++ {
		for t := 0; t <= T; t++ {
			for _, i := range freeAt[t] {
				c.release(blocks[i])
			}
			for _, i := range startAt[t] {
				blocks[i] = c.malloc(allocs[i].bytes)
			}
			if step == 0 && t == T {
				for _, b := range lazy {
					if b > 0 {
						c.malloc(b)
					}
				}
			}
		}
		for _, i := range freeAt[T+1] {
			c.release(blocks[i])
		}
	}
	return c.peak, c.full
}
