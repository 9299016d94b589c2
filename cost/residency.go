package cost

import (
	"container/list"

	"github.com/onnxcost/onnxcost/ir"
)

// l2Residency follows which tensors are in the GPU's L2 cache as a plan's
// kernels run in order, so that each kernel's DRAM traffic is what the
// data's history implies, not what its own size suggests. A tensor is in
// L2 only if a kernel read or wrote it recently enough that the bytes
// moved since have not pushed it out: the cache is modelled as an LRU
// over the L2's capacity whose lines are tensors, each with the bytes of
// it still resident. Weights, graph inputs (KV caches, prompts) and
// constants start outside it, so their first read is from DRAM whatever
// their size; a producer's output is in L2 for its consumer as far as it
// fits and nothing in between pushed it out.
//
// Writes allocate in L2, so a consumer reads its producer's output from
// there, and every byte written reaches DRAM once: the L2 writes a dirty
// line back when it is evicted, and nothing tells it a tensor is dead.
// That write-back is charged to the kernel that wrote the bytes, not to
// whichever later kernel's traffic happens to evict them. Charged to the
// evicting kernel (what the DRAM interface sees), the same bytes cost
// time where that kernel is memory-bound and nothing where it is not, and
// which kernel evicts them shifts with the batch and the cache length:
// GPT-2's decode step got 0.35% cheaper from batch 64 to 128 on an RTX
// 4090 (fp32, eager: 28 MB of dirty activations left for the lm_head's
// weight stream at 64, 6 MB at 128), 28 of 1,080 decode sweeps (two
// decoders and a fixture × 10 GPUs × fp32/fp16 × three runtimes × batch
// 1-256) had a step that got cheaper as its KV cache grew, and the eager
// totals of the physics suite fell with batch by up to 0.13%. Charged to
// the writer, a kernel's DRAM traffic is its own: the cold share of its
// reads and its writes. Our H100 whole models (cmd/onnxcost
// TestMeasuredEndToEndH100) moved from 9.04% to 8.89% median |error|
// (graph replays 8.4% → 8.3%). What a kernel reads becomes resident as
// far as it read it: a Gather of a few rows of an embedding table leaves
// those rows, not the table.
//
// Graph outputs are the caller's buffers and are written through to DRAM:
// the write is DRAM traffic, and a kernel of the graph that reads one
// reads it from DRAM. That is conservative for a consumer that runs right
// after the producer, but it is what keeps a decode step's KV cache (read
// as past.*, copied out as present.*, then read by attention) priced the
// same per sequence at every batch: crediting L2 with the copy made a
// sequence cheaper while the cache of one layer fit, so small models
// whose cache outweighs their weights lost throughput as batch grew past
// that point.
//
// Residency is partial: of a tensor larger than the capacity the last
// capacity's worth stays, and eviction trims the least recently used
// tensor byte by byte. But what stays is the tensor's tail, and a reader
// starts at its head: what a kernel finds is what it reaches before its
// own new lines push it out (reachable), which for a tensor larger than
// the cache, read right after it was written, is nothing. Our H100 whole
// models (cmd/onnxcost TestMeasuredEndToEndH100) had their memory-bound
// kernels priced 30% too fast as a class while the tail was credited in
// full (a least-squares split of the kernel sums by class: BN, ReLU,
// Add, Concat ×1.30, convolutions ×0.96–1.13); with the reach rule and
// the capacity of one partition (below) ×1.07, and the graph rows' median
// |error| went 12.0% → 8.4%. A graph input (KV cache) is cold anyway, so
// a decode step's throughput does not fall as batch grows (internal/
// physics).
//
// The capacity is hwdb.GPU.L2ReuseBytes: on GA100 and GH100 each of the
// two L2 partitions caches data for the SMs connected to it, so a tensor
// written and read by all SMs is held in both and the L2 keeps half as
// much of it.
type l2Residency struct {
	capacity float64
	used     float64
	lru      *list.List // of *l2Line, most recent at the front
	lines    map[*ir.Value]*list.Element
	// through holds the graph outputs, written through to DRAM.
	through map[*ir.Value]bool
	// alias maps a view's output (Reshape, Squeeze, a no-op Identity) to
	// the tensor whose bytes it is.
	alias map[*ir.Value]*ir.Value
	// readers counts, for each activation of the graph (a tensor a node
	// of it writes), the kernels yet to read it, views' readers charged
	// to the tensor they view; nil when dead activations are not
	// reclaimed (a training step keeps them for its backward pass).
	readers map[*ir.Value]int
}

type l2Line struct {
	v     *ir.Value
	bytes float64
}

func newL2Residency(capacity float64, g *ir.Graph) *l2Residency {
	r := &l2Residency{capacity: capacity, lru: list.New(),
		lines: map[*ir.Value]*list.Element{}, alias: map[*ir.Value]*ir.Value{},
		through: map[*ir.Value]bool{}}
	for _, v := range g.Outputs {
		if v != nil {
			r.through[v] = true
		}
	}
	return r
}

// A runtime hands a dead activation's memory to the next tensor it
// allocates (PyTorch's caching allocator, a CUDA graph's private pool,
// TensorRT's and onnxruntime's memory planners), so the lines it held
// in L2 are overwritten by that tensor's writes instead of pushing out
// older data: a call's activations take about as many lines as are live
// at once, not as many as it writes in all. Modelled by dropping a
// tensor's line once its last reader has run (its write-back was
// charged to its writer). Without it a small LLaMA at batch 8 (fp16,
// 2.8 MB of weights in its layers) wrote 24 MB of activations a call
// through the H200's 26 MB of reuse capacity, so a call repeated back
// to back found none of its weights in L2, and its 15 projections kept
// their cold fill: 5.9-6.6 µs each against 2.5-3.8 in our Kineto trace
// of such a call (calib/profile/testdata/kineto_h200); reclaimed, they
// are priced 2.6 µs. Weights, graph inputs and outputs are never
// reclaimed, so the cold first call the physics suite checks reads
// every weight from DRAM as before.
//
// countReaders starts a call: every activation's readers in g.
func (r *l2Residency) countReaders(g *ir.Graph) {
	r.readers = map[*ir.Value]int{}
	for _, n := range g.Nodes {
		if n == nil {
			continue
		}
		for _, v := range n.Inputs {
			if v != nil && v.Producer != nil && !r.through[v] {
				r.readers[v]++
			}
		}
	}
}

// read records one kernel's read of v and reclaims the line of the
// tensor it views once nothing is left to read it. A tensor not counted
// (a subgraph's, a graph output) is never reclaimed.
func (r *l2Residency) read(v *ir.Value) {
	if r.readers == nil || v == nil {
		return
	}
	root := r.root(v)
	left, ok := r.readers[root]
	if !ok {
		return
	}
	if left--; left > 0 {
		r.readers[root] = left
		return
	}
	delete(r.readers, root)
	r.drop(root)
}

// root is the tensor whose bytes v names.
func (r *l2Residency) root(v *ir.Value) *ir.Value {
	for range 64 { // alias chains are short; the bound guards a cycle
		a, ok := r.alias[v]
		if !ok {
			return v
		}
		v = a
	}
	return v
}

// view records that the outputs of a kernel-less node alias its first
// input (a view shares the bytes it reshapes).
func (r *l2Residency) view(n *ir.Node) {
	in := n.In(0)
	if in == nil {
		return
	}
	src := r.root(in)
	for _, o := range n.Outputs {
		if o != nil && o != src {
			r.alias[o] = src
			if c, ok := r.readers[o]; ok {
				// The view's readers read src; the view itself read it.
				if _, counted := r.readers[src]; counted {
					r.readers[src] += c
				}
				delete(r.readers, o)
			}
		}
	}
	r.read(in)
}

// resident is the bytes of v now in L2.
func (r *l2Residency) resident(v *ir.Value) float64 {
	if e, ok := r.lines[r.root(v)]; ok {
		return e.Value.(*l2Line).bytes
	}
	return 0
}

// tensorIO is one input or output of a kernel: the tensor and its size
// as costed.
type tensorIO struct {
	v     *ir.Value
	bytes float64
}

// access runs one kernel that reads bytesRead from ins and writes
// bytesWritten to outs, and returns the bytes it moves over DRAM: the
// share of its reads it did not find in L2 (reachable) and all of its
// writes (each written back once, charged to its writer; see the type).
// The kernel's reads are attributed to its inputs in proportion to their
// sizes (the rules count bytes at the kernel boundary, not per input),
// and so are its writes to its outputs. warm is the share of its coldest
// sized input that it finds in L2 (0 when none is sized, read as cold): a
// GEMM's pipeline fill waits for a tile of every operand
// (perf.Kernel.OperandsWarm).
func (r *l2Residency) access(ins, outs []tensorIO, bytesRead, bytesWritten float64) (dram, warm float64) {
	var size, cold float64
	hits := r.reachable(ins, outs)
	warm = 1
	for i, in := range ins {
		size += in.bytes
		cold += in.bytes - hits[i]
		if in.bytes > 0 {
			warm = min(warm, hits[i]/in.bytes)
		}
	}
	dram = bytesRead // reads of nothing sized: assume cold
	if !(size > 0) {
		warm = 0
	}
	if size > 0 {
		dram = bytesRead * cold / size
		for _, in := range ins {
			r.touch(in.v, min(bytesRead*in.bytes/size, in.bytes), false)
		}
	}
	var outSize float64
	for _, o := range outs {
		outSize += o.bytes
	}
	for _, o := range outs {
		if r.through[o.v] {
			r.drop(o.v)
			continue
		}
		// Of an output larger than L2 only the tail stays; outputs of
		// no known size keep nothing.
		if outSize > 0 {
			r.touch(o.v, bytesWritten*o.bytes/outSize, true)
		}
	}
	r.evict()
	for _, in := range ins {
		r.read(in.v)
	}
	return dram + bytesWritten, warm
}

// reachable is, for each of a kernel's inputs, the bytes it finds in L2:
// the resident bytes it reaches before its own traffic evicts them. A
// tensor's resident part is its most recently written tail (a producer
// writes in order, and of a tensor larger than the cache only the tail
// stays), while the kernel reads from the head: the misses on the head and
// the kernel's other new lines (its other inputs' misses, its writes) push
// out the least recently used lines first, the cache's older tensors and
// then, once those are gone, the resident tail itself, oldest first, which
// is where the reader is about to arrive. From then on every read misses
// and evicts the next line it wanted (LRU's streaming thrash): a tensor
// larger than the cache, read right after it was written, finds nothing,
// not the cache's worth the tail suggests. Per byte of the input read the
// kernel brings k bytes of other new lines; the head costs (1+k) per byte
// and the resident part k−1 per byte against the room F that lines older
// than the input leave.
func (r *l2Residency) reachable(ins, outs []tensorIO) []float64 {
	hits := make([]float64, len(ins))
	var cold, written float64
	for i, in := range ins {
		hits[i] = min(r.resident(in.v), in.bytes)
		cold += in.bytes - hits[i]
	}
	for _, o := range outs {
		written += o.bytes
	}
	for i, in := range ins {
		res := hits[i]
		if res <= 0 || in.bytes <= 0 {
			continue
		}
		head := in.bytes - res
		k := (cold - head + written) / in.bytes
		room := r.olderThan(in.v) + max(r.capacity-r.used, 0) - head*(1+k)
		switch {
		case room < 0:
			hits[i] = 0
		case k > 1:
			hits[i] = min(res, room/(k-1))
		}
	}
	return hits
}

// olderThan is the bytes of the lines less recently used than v's.
func (r *l2Residency) olderThan(v *ir.Value) float64 {
	e, ok := r.lines[r.root(v)]
	if !ok {
		return 0
	}
	var b float64
	for o := e.Next(); o != nil; o = o.Next() {
		b += o.Value.(*l2Line).bytes
	}
	return b
}

// touch makes v the most recently used line with bytes resident (at
// most the capacity: the tail of a larger tensor). A read keeps what was
// already resident if that was more; a write replaces the line.
func (r *l2Residency) touch(v *ir.Value, bytes float64, write bool) {
	if v == nil || bytes <= 0 {
		return
	}
	v = r.root(v)
	bytes = min(bytes, r.capacity)
	if e, ok := r.lines[v]; ok {
		l := e.Value.(*l2Line)
		if write || bytes > l.bytes {
			r.used += bytes - l.bytes
			l.bytes = bytes
		}
		r.lru.MoveToFront(e)
		return
	}
	r.lines[v] = r.lru.PushFront(&l2Line{v: v, bytes: bytes})
	r.used += bytes
}

// drop forgets v's line (a graph output, written through to DRAM).
func (r *l2Residency) drop(v *ir.Value) {
	v = r.root(v)
	if e, ok := r.lines[v]; ok {
		r.used -= e.Value.(*l2Line).bytes
		r.lru.Remove(e)
		delete(r.lines, v)
	}
}

// evict trims least recently used lines until the resident bytes fit the
// capacity. Their write-back was charged to their writers (access).
func (r *l2Residency) evict() {
	for r.used > r.capacity {
		e := r.lru.Back()
		if e == nil {
			r.used = 0
			break
		}
		l := e.Value.(*l2Line)
		cut := min(r.used-r.capacity, l.bytes)
		r.used -= cut
		if l.bytes -= cut; l.bytes <= 0 {
			r.lru.Remove(e)
			delete(r.lines, l.v)
		}
	}
}

// dramBytes runs node n's kernel through the analyzer's L2 residency and
// returns its DRAM traffic and how warm its coldest input is (access).
func (a *analyzer) dramBytes(n *ir.Node, est NodeEstimate) (dram, warm float64) {
	sizer := a.sizer(n)
	var buf [8]tensorIO
	ios := buf[:0]
	for _, v := range n.Inputs {
		if v != nil {
			ios = append(ios, tensorIO{v, sizer.Bytes(v)})
		}
	}
	nIn := len(ios)
	for _, v := range n.Outputs {
		if v != nil {
			ios = append(ios, tensorIO{v, sizer.Bytes(v)})
		}
	}
	return a.l2.access(ios[:nIn], ios[nIn:], est.BytesRead, est.BytesWritten)
}

// ReadAfterWrite is the DRAM traffic and the coldest input's warm share
// (l2Residency.access) of a kernel that reads bytesRead from inputs of
// the given sizes and writes bytesWritten, run right after kernels that
// wrote the inputs marked justWritten (in order, the last marked the
// most recent), on an L2 of reuse capacity capacity
// (hwdb.GPU.L2ReuseBytes) whose other lines hold older data: what the
// residency model charges such a kernel inside a plan. It prices a
// kernel that was timed inside a model's block (Vidur's profiles time
// each op where the block runs it, after the op that wrote its input)
// as a plan runs it, where a kernel timed alone reads cold operands.
func ReadAfterWrite(capacity float64, ins []float64, justWritten []bool, bytesRead, bytesWritten float64) (dram, warm float64) {
	r := newL2Residency(capacity, ir.NewGraph("read-after-write"))
	r.touch(&ir.Value{Name: "older"}, capacity, false)
	ios := make([]tensorIO, len(ins))
	for i, b := range ins {
		ios[i] = tensorIO{&ir.Value{Name: "in"}, b}
		if i < len(justWritten) && justWritten[i] {
			r.touch(ios[i].v, b, true)
			r.evict()
		}
	}
	return r.access(ios, []tensorIO{{&ir.Value{Name: "out"}, bytesWritten}}, bytesRead, bytesWritten)
}
