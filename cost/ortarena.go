package cost

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/internal/bestfit"
)

// onnxruntime's device memory. Its CUDA provider allocates every
// activation from a BFC arena (core/framework/bfc_arena.cc; the CUDA
// plugin's arena_impl.cc is the same code) that takes memory from CUDA in
// regions and never gives it back (arena shrinkage is off unless a run
// option asks for it). With the default extend strategy, kNextPowerOfTwo,
// the first region is 1 MiB (initial_chunk_size_bytes) and each later one
// twice the last (max_power_of_two_extend_bytes caps the doubling at
// 1 GiB), or the next power-of-two multiple of the current size that
// holds a request larger than it. A request takes the smallest free chunk
// that holds it (best fit; ties by address), split when the rest is at
// least as large or 128 MiB (max_dead_bytes_per_chunk); a freed chunk
// merges with free neighbours in its region, never across regions.
//
// A session's first run of a shape allocates each tensor as its node runs
// and frees it after its last reader, unless the allocation plan gives it
// a dead buffer of its own size (ortPlanReuse); it also traces the allocations into a memory pattern (mem_pattern_
// planner.h: each tensor at the lowest offset with a gap that holds it,
// else past the highest end) whose peak every later run allocates as one
// block (execution_frame.cc: "pre-allocate the big chunk requested in
// memory pattern"), the graph outputs (kAllocateOutput) apart. So the
// arena a warmed-up session holds is the first run's regions plus what
// the second run's block added. Initializers are not in it: the session
// reserves them exactly (Reserve, a direct allocation).
//
// The simulation follows the plan's allocation order (memory.go's walk).
// It leaves out what onnxruntime's streams add (a chunk used on a stream
// merges only with chunks of that stream until the run releases it), so
// the first run fragments no more than a single-stream arena would, and
// the cuDNN workspaces the CUDA provider takes from the same arena: both
// would add to it.

// arena constants (bfc_arena.h ArenaConfig defaults).
const (
	arenaMinAlloc     = 256
	arenaInitialChunk = 1 << 20
	arenaMaxExtend    = 1 << 30
	arenaMaxDead      = 128 << 20
)

// arenaEvent is one allocation (free false) or free of buffer id during a
// run, in the order the runtime makes them. Outside marks a buffer the
// memory pattern leaves out: a graph input's device copy (made before the
// run's frame) and a graph output (kAllocateOutput).
type arenaEvent struct {
	id      int
	bytes   float64
	free    bool
	outside bool
	// input marks a graph input's buffer: the arena's under a runtime
	// that copies host inputs in, else the caller's (ortArenaReserve).
	input bool
}

// bfcArena is the simulated arena: its regions and chunks are bestfit's
// (one pool; a region's number stands for its address), its rounding,
// growth and split rule onnxruntime's.
type bfcArena struct {
	heap bestfit.Heap
	last float64 // the last region's size
	curr float64 // curr_region_allocation_bytes_
	// at maps a live allocation to its chunk.
	at map[int]*bestfit.Block
}

func newBFCArena() *bfcArena {
	return &bfcArena{curr: arenaInitialChunk, at: map[int]*bestfit.Block{}}
}

// rounded is bytes rounded up to the arena's 256-byte unit.
func arenaRounded(bytes float64) float64 {
	return math.Ceil(bytes/arenaMinAlloc) * arenaMinAlloc
}

// reserved is the bytes the arena holds: the sum of its regions.
func (a *bfcArena) reserved() float64 { return a.heap.Reserved() }

// alloc places allocation id of bytes, extending the arena when no free
// chunk holds it; the chunk is split when the rest is at least as large
// as the request or max_dead_bytes_per_chunk.
func (a *bfcArena) alloc(id int, bytes float64) {
	if bytes <= 0 {
		return
	}
	need := arenaRounded(bytes)
	ch := a.heap.BestFit(0, need)
	if ch == nil {
		a.extend(need)
		ch = a.heap.BestFit(0, need)
	}
	a.heap.Take(ch, need, ch.Size >= 2*need || ch.Size-need >= arenaMaxDead)
	a.at[id] = ch
}

// extend adds a region for a request of need bytes (BFCArena::Extend,
// kNextPowerOfTwo).
func (a *bfcArena) extend(need float64) {
	grew := false
	for need > a.curr {
		a.curr *= 2
		grew = true
	}
	a.heap.Grow(0, a.curr)
	a.last = a.curr
	if !grew {
		if a.curr < arenaMaxExtend/2 {
			a.curr *= 2
		} else {
			a.curr = arenaMaxExtend
		}
	}
}

// free releases allocation id and merges its chunk with free neighbours.
func (a *bfcArena) free(id int) {
	ch, ok := a.at[id]
	if !ok {
		return
	}
	delete(a.at, id)
	a.heap.Release(ch)
}

// freeAll releases every live allocation (the end of a run).
func (a *bfcArena) freeAll() {
	for _, id := range slices.Sorted(maps.Keys(a.at)) {
		a.free(id)
	}
}

// patternPeak is the peak of onnxruntime's memory pattern for a run's
// allocations, graph outputs left out (MemPatternPlanner: each block at
// the lowest offset whose gap holds it with the least waste, else after
// the highest end in use; sizes in 256-byte units).
func patternPeak(events []arenaEvent) float64 {
	type block struct {
		id        int
		off, size float64
	}
	var live []block // by offset
	peak := 0.0
	for _, e := range events {
		if e.outside {
			continue
		}
		if e.free {
			live = slices.DeleteFunc(live, func(b block) bool { return b.id == e.id })
			continue
		}
		size := arenaRounded(e.bytes)
		if size <= 0 {
			continue
		}
		cur, best, waste := 0.0, -1.0, math.Inf(1)
		for _, b := range live {
			if b.off >= cur {
				if gap := b.off - cur; gap >= size && gap-size < waste {
					best, waste = cur, gap-size
				}
			}
			cur = max(cur, b.off+b.size)
		}
		if best < 0 {
			best = cur
		}
		nb := block{id: e.id, off: best, size: size}
		i, _ := slices.BinarySearchFunc(live, nb, func(x, y block) int { return cmp.Compare(x.off, y.off) })
		live = slices.Insert(live, i, nb)
		peak = max(peak, best+size)
	}
	return peak
}

// ortPlanReuse rewrites a run's allocations as onnxruntime's allocation
// planner has them (allocation_planner.cc FindReusableTensor): a
// tensor takes the buffer of one already dead whose size is its own (the
// most recently freed first), so the arena sees neither that buffer's
// free nor the new tensor's allocation, and the buffer is freed after its
// last holder's last use. Graph inputs and outputs (outside) are never
// given or taken.
func ortPlanReuse(events []arenaEvent) []arenaEvent {
	type freed struct {
		buf, at int // the buffer, the index of its free event
	}
	holder := map[int]int{} // a tensor -> the buffer it holds
	skip := make([]bool, len(events))
	free := map[float64][]freed{} // by size, most recently freed last
	for i, e := range events {
		if e.outside {
			continue
		}
		if e.free {
			buf, ok := holder[e.id]
			if !ok {
				buf = e.id
			}
			free[e.bytes] = append(free[e.bytes], freed{buf, i})
			continue
		}
		holder[e.id] = e.id
		if fs := free[e.bytes]; len(fs) > 0 {
			f := fs[len(fs)-1]
			free[e.bytes] = fs[:len(fs)-1]
			holder[e.id] = f.buf
			skip[f.at], skip[i] = true, true
		}
	}
	out := make([]arenaEvent, 0, len(events))
	for i, e := range events {
		if skip[i] {
			continue
		}
		if h, ok := holder[e.id]; ok && !e.outside {
			e.id = h
		}
		out = append(out, e)
	}
	return out
}

// ortArenaReserve is the arena a session holds after its first two runs
// of events: the first allocating tensor by tensor, the second the
// graph inputs' copies, the memory pattern's block and the graph outputs
// (a third run asks for the same and finds them free). The graph inputs
// are the arena's when inputsInArena (a runtime that copies host inputs
// in), else the caller's buffers, whose bytes are bound.
func ortArenaReserve(events []arenaEvent, inputsInArena bool) (reserve, pattern, bound float64) {
	if !inputsInArena {
		events = slices.DeleteFunc(slices.Clone(events), func(e arenaEvent) bool {
			if e.input && !e.free {
				bound += e.bytes
			}
			return e.input
		})
	}
	events = ortPlanReuse(events)
	a := newBFCArena()
	for _, e := range events {
		if e.free {
			a.free(e.id)
		} else {
			a.alloc(e.id, e.bytes)
		}
	}
	a.freeAll()
	pattern = patternPeak(events)
	const patternID = -1
	placed := false
	for _, e := range events {
		if !e.outside && !placed {
			a.alloc(patternID, pattern)
			placed = true
		}
		if e.outside && !e.free {
			a.alloc(e.id, e.bytes)
		}
	}
	if !placed {
		a.alloc(patternID, pattern)
	}
	a.freeAll()
	return a.reserved(), pattern, bound
}

// tracesArena reports whether a prices device memory as onnxruntime's
// arena holds it: an inference call on one GPU under a runtime with
// hwdb bfc_arena (a training step's and a tensor-parallel split's memory
// are priced their own ways).
func (a *analyzer) tracesArena() bool {
	return a.gpu != nil && a.runtime != nil && a.runtime.BFCArena > 0 && a.opt.Train == nil && a.opt.GPUs <= 1
}

// applyArena sets rep's device memory to what onnxruntime holds after
// two runs: the weights (reserved exactly), the arena's regions and the
// runtime's floor.
func (a *analyzer) applyArena(rep *report.Report) {
	ri := rep.Runtime
	if ri == nil {
		return
	}
	reserve, pattern, bound := ortArenaReserve(a.arenaEvents, a.runtime.HostIO > 0)
	t := &rep.Totals
	ri.ArenaReservedBytes, ri.MemoryPatternBytes = reserve, pattern
	// Bound inputs are the caller's buffers, beside the arena.
	ri.DeviceMemoryBytes = t.ParamBytes + max(reserve+bound, t.PeakActivationBytes) + ri.MemoryFloorBytes
	inputs := "the inputs' copies are in the arena"
	if bound > 0 {
		inputs = fmt.Sprintf("+ the bound inputs %.4g MB", bound/1e6)
	}
	ri.Notes = append(ri.Notes, fmt.Sprintf("device memory %.4g MB: weights %.4g MB (reserved exactly) + the BFC arena's regions %.4g MB (they double from 1 MiB and are kept: the first run's tensors, %.4g MB at their peak, then the memory pattern's %.4g MB block later runs take) %s + the floor %.4g MB; arena_extend_strategy kSameAsRequested holds the arena nearer the tensors' peak, and under memory pressure the arena takes less (fits is judged on the tensors)",
		ri.DeviceMemoryBytes/1e6, t.ParamBytes/1e6, reserve/1e6, t.PeakActivationBytes/1e6, pattern/1e6, inputs, ri.MemoryFloorBytes/1e6))
}
