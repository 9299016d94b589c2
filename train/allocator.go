package train

import (
	"math"

	"github.com/onnxcost/onnxcost/internal/bestfit"
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

// cachingAllocator is the simulated allocator: its segments and blocks
// are bestfit's (pool 0 small, 1 large), its rounding, segment sizes,
// split rule and release under pressure PyTorch's.
type cachingAllocator struct {
	heap bestfit.Heap
	peak float64
	// limit is the device memory the reserve may take (what CUDA reports
	// as the GPU's total, less the CUDA context); 0 is none.
	limit float64
	// full records that a cudaMalloc would have failed: the reserve met
	// the limit and cached segments were released to go on.
	full bool
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

// reserved is the bytes the allocator holds from the driver.
func (c *cachingAllocator) reserved() float64 { return c.heap.Reserved() }

// malloc serves a request of bytes (> 0) and returns its block.
func (c *cachingAllocator) malloc(bytes float64) *bestfit.Block {
	size := allocRound(bytes)
	pool := allocPool(size)
	b := c.heap.BestFit(pool, size)
	if b == nil {
		seg := allocSegmentSize(size)
		if c.limit > 0 && c.heap.Reserved()+seg > c.limit {
			// As the allocator does before it retries a cudaMalloc that
			// ran out of memory: every wholly free segment goes back.
			c.full = true
			c.heap.ReleaseEmpty()
		}
		b = c.heap.Grow(pool, seg)
		c.peak = max(c.peak, c.heap.Reserved())
	}
	rest := b.Size - size
	c.heap.Take(b, size, (pool == 0 && rest >= allocMinBlock) || (pool == 1 && rest > allocSmallSize))
	return b
}

// release frees a block, merging it with free neighbours.
func (c *cachingAllocator) release(b *bestfit.Block) { c.heap.Release(b) }

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
	blocks := make([]*bestfit.Block, len(allocs))
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
