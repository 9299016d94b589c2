package train

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Training memory over one step's timeline. With n nodes, time t = i is
// node i's forward and t = 2n-1-i its backward (backward runs in reverse
// topological order), then the optimizer step. Live at any time:
//
//   - persistent: weights at the compute dtype, fp32 master copies under
//     mixed precision, optimizer state (optimizer.go);
//   - activations: a forward tensor lives from its producer until its last
//     forward reader, or, when a backward reads it (backwardPlan.Saved),
//     until the earliest-in-forward such node's backward has run: backward
//     frees what it consumed. Views share their source's buffer;
//   - saved extras (masks, pool indices, RNN reserve): node i's forward to
//     its backward;
//   - activation gradients: from the backward of the value's last reader
//     (the first to produce its gradient) to its producer's backward;
//   - parameter gradients: from the backward of the parameter's last reader
//     to the optimizer step; under gradient accumulation the accumulated
//     buffer for the whole step, plus the new gradient at that backward.
//
// The peak of live tensors is the first of three views; the second replays
// the timeline through PyTorch's caching allocator (allocator.go), whose
// reserve adds rounding and fragmentation and holds the library workspace
// (hwdb/runtimes.yaml's workspace_mib); the third, the device peak
// nvidia-smi shows, adds the runtime profile's CUDA context.

// memory prices the step's memory for one GPU holding share(v) of each
// parameter v (nil: all of it), and keeps its timeline in s.timeline.
func (s *step) memory(share func(*ir.Value) float64) (report.TrainMemory, error) {
	if share == nil {
		share = func(*ir.Value) float64 { return 1 }
	}
	n := len(s.g.Nodes)
	mm := &memoryModel{step: s, share: share, c: s.f.Sizer(), n: n, T: 2 * n,
		delta: make([]float64, 2*n+2), idx: make(map[*ir.Node]int, n)}
	for i, nd := range s.g.Nodes {
		mm.idx[nd] = i
	}
	mm.persistentState()
	mm.activations()
	mm.gradients()
	mm.peak()
	return mm.views()
}

// memoryModel is one memory timeline under construction.
type memoryModel struct {
	*step
	share func(*ir.Value) float64
	c     *cost.RuleCtx
	m     report.TrainMemory
	// n is the node count, T = 2n the optimizer step's time; delta[t] is
	// the change of live bytes at t and allocs every tensor in the order
	// the allocator replays them.
	n, T   int
	delta  []float64
	allocs []memAlloc
	// persistAllocs exist before the step, lazyAllocs from the first
	// optimizer update on; persistent is their total.
	persistAllocs, lazyAllocs []float64
	persistent                float64
	idx                       map[*ir.Node]int
}

// span makes bytes live from time from to time to, both included.
func (mm *memoryModel) span(bytes float64, from, to int) {
	if bytes <= 0 || to < from {
		return
	}
	from = max(from, 0)
	to = min(to, mm.T)
	mm.delta[from] += bytes
	mm.delta[to+1] -= bytes
	mm.allocs = append(mm.allocs, memAlloc{bytes: bytes, from: from, to: to})
}

// bwAt is the time of node i's backward.
func (mm *memoryModel) bwAt(i int) int { return mm.T - 1 - i }

// persistentState adds, tensor by tensor for the allocator view, weights
// and master copies from the start and the optimizer state created by
// the first update.
func (mm *memoryModel) persistentState() {
	m, c, o := &mm.m, mm.c, mm.opt
	for _, v := range mm.trainable {
		ne, wb := mm.share(v)*c.Numel(v), mm.share(v)*c.Bytes(v)
		m.WeightsBytes += wb
		mm.persistAllocs = append(mm.persistAllocs, wb)
		if mm.mixed {
			m.MasterWeightsBytes += 4 * ne
			mm.persistAllocs = append(mm.persistAllocs, 4*ne)
		}
		st := o.stateElems(v, ne)
		m.OptimizerStateBytes += 4 * st
		if k := int(o.states); !o.factored && k > 0 {
			for j := 0; j < k; j++ {
				mm.lazyAllocs = append(mm.lazyAllocs, 4*st/float64(k))
			}
		} else if st > 0 {
			mm.lazyAllocs = append(mm.lazyAllocs, 4*st)
		}
	}
	if mm.o.DataParallel > 1 {
		// DDP's buckets: a flat copy of the gradients in buffers of up
		// to 25 MiB, for the run.
		for _, v := range mm.trainable {
			m.DDPBucketBytes += mm.share(v) * c.Bytes(v)
		}
		for rest := m.DDPBucketBytes; rest > 0; rest -= ddpBucketBytes {
			mm.persistAllocs = append(mm.persistAllocs, min(rest, ddpBucketBytes))
		}
	}
	mm.persistent = m.WeightsBytes + m.MasterWeightsBytes + m.OptimizerStateBytes + m.DDPBucketBytes
}

// isAct reports whether v is an activation: a tensor the step computes.
func isAct(v *ir.Value) bool {
	return v != nil && !v.IsInitializer && v.Const == nil && v.Kind == ir.TensorValue
}

// root follows views back to the buffer they alias.
func root(v *ir.Value) *ir.Value {
	for k := 0; k < 64 && v != nil && v.Producer != nil; k++ {
		p := v.Producer
		if !ir.OpHas("", p.OpType, ir.Alias) || p.OpType == "Dropout" || p.In(0) == nil || !isAct(p.In(0)) {
			break
		}
		v = p.In(0)
	}
	return v
}

// actBuf is one activation buffer (views share their root's).
type actBuf struct {
	bytes      float64
	start, end int
	prod       int // producer's index; -1 for a graph input
}

// actBufs are the activation buffers by root, in first-seen order, with
// the recomputed lifetimes of checkpointed ones.
type actBufs struct {
	mm               *memoryModel
	bufs             map[*ir.Value]*actBuf
	order            []*ir.Value
	recEnd, recStart map[*ir.Value]int
	recBytes         map[*ir.Value]float64
}

// get is v's buffer, made on first sight.
func (ab *actBufs) get(v *ir.Value) *actBuf {
	r := root(v)
	b := ab.bufs[r]
	if b == nil {
		start, prod := 0, -1
		if p := r.Producer; p != nil {
			if i, ok := ab.mm.idx[p]; ok {
				start, prod = i, i
			}
		}
		b = &actBuf{bytes: ab.mm.c.Bytes(r), start: start, end: start, prod: prod}
		ab.bufs[r] = b
		ab.order = append(ab.order, r)
	}
	return b
}

// activations adds the forward tensors, kept to their last reader or the
// backward that reads them, and the saved extras.
func (mm *memoryModel) activations() {
	ab := &actBufs{mm: mm, bufs: map[*ir.Value]*actBuf{}, recEnd: map[*ir.Value]int{}, recStart: map[*ir.Value]int{}, recBytes: map[*ir.Value]float64{}}
	for _, v := range mm.g.Inputs {
		if isAct(v) {
			ab.get(v)
		}
	}
	for i, nd := range mm.g.Nodes {
		mm.nodeActivations(ab, i, nd)
	}
	for _, r := range ab.order {
		if e, ok := ab.recEnd[r]; ok {
			mm.span(ab.recBytes[r], ab.recStart[r], e)
		}
	}
	// The loss reads the outputs at the start of backward.
	for _, v := range mm.g.Outputs {
		if isAct(v) {
			b := ab.get(v)
			b.end = max(b.end, mm.n)
		}
	}
	for _, r := range ab.order {
		b := ab.bufs[r]
		mm.span(b.bytes, b.start, b.end)
		if b.end >= mm.n {
			mm.m.ActivationsBytes += b.bytes
		}
	}
}

// nodeActivations extends the buffers node i reads, and those its
// backward reads, to their last use, and adds its saved extras.
func (mm *memoryModel) nodeActivations(ab *actBufs, i int, nd *ir.Node) {
	ck := mm.ck
	for _, in := range nd.Inputs {
		if isAct(in) {
			b := ab.get(in)
			b.end = max(b.end, i)
		}
	}
	for _, out := range nd.Outputs {
		if isAct(out) {
			ab.get(out)
		}
	}
	for _, s := range mm.plans[i].Saved {
		if !isAct(s) {
			continue
		}
		b := ab.get(s)
		if b.prod >= 0 && ck.sameSegment(b.prod, i) {
			// Checkpointed: dropped after the forward, produced again
			// by the segment's recompute, kept to this backward.
			r := root(s)
			ab.recEnd[r] = max(ab.recEnd[r], mm.bwAt(i))
			ab.recBytes[r] = b.bytes
			ab.recStart[r] = mm.bwAt(ck.segEnd(i))
			continue
		}
		b.end = max(b.end, mm.bwAt(i))
	}
	if ck.recomputed(i) {
		mm.span(mm.plans[i].SavedExtra, mm.bwAt(ck.segEnd(i)), mm.bwAt(i))
	} else {
		mm.span(mm.plans[i].SavedExtra, i, mm.bwAt(i))
		mm.m.ActivationsBytes += mm.plans[i].SavedExtra
	}
}

// lastReader is the index of v's last consumer in the graph, -1 for none.
func (mm *memoryModel) lastReader(v *ir.Value) int {
	last := -1
	for _, u := range v.Consumers {
		if i, ok := mm.idx[u]; ok && i > last {
			last = i
		}
	}
	return last
}

// gradients adds the activation gradients, from their first producer's
// backward to their value's producer's, and the parameter gradients.
func (mm *memoryModel) gradients() {
	outputs := map[*ir.Value]bool{}
	for _, v := range mm.g.Outputs {
		outputs[v] = true
	}
	for _, nd := range mm.g.Nodes {
		for _, v := range nd.Outputs {
			if !mm.need[v] || !isAct(v) || root(v) != v {
				continue
			}
			from := -1
			if outputs[v] {
				from = mm.n
			}
			if l := mm.lastReader(v); l >= 0 {
				from = max(from, mm.bwAt(l))
			}
			if from < 0 {
				continue
			}
			mm.span(mm.c.Bytes(v), from, mm.bwAt(mm.idx[nd]))
		}
	}
	accumulating := mm.accum > 1
	for _, v := range mm.trainable {
		l := mm.lastReader(v)
		if l < 0 {
			continue
		}
		gb := mm.share(v) * mm.c.Bytes(v)
		mm.m.GradientsBytes += gb
		if accumulating {
			// The accumulated .grad lives across micro-batches (from the
			// first forward); each new gradient is a temporary added
			// into it by its producer's backward.
			mm.span(gb, 0, mm.T)
			mm.span(gb, mm.bwAt(l), mm.bwAt(l))
			continue
		}
		mm.span(gb, mm.bwAt(l), mm.T)
	}
}

// peak walks the timeline for the live tensors' peak and its phase.
func (mm *memoryModel) peak() {
	var live, peak float64
	peakT := 0
	mm.timeline = make([]float64, mm.T+1)
	for t := 0; t <= mm.T; t++ {
		live += mm.delta[t]
		mm.timeline[t] = mm.persistent + live
		if live > peak {
			peak, peakT = live, t
		}
	}
	switch {
	case peakT < mm.n:
		mm.m.PeakPhase = "forward"
	case peakT < mm.T:
		mm.m.PeakPhase = "backward"
	default:
		mm.m.PeakPhase = "optimizer"
	}
	mm.m.TensorPeakBytes = mm.persistent + peak
}

// views adds the allocator's and the device's views (report.TrainMemory):
// live tensors, the caching allocator's reserve (the library workspace is
// one of its allocations, made with the first GEMM), and what nvidia-smi
// shows: the reserve plus the CUDA context.
func (mm *memoryModel) views() (report.TrainMemory, error) {
	m := mm.m
	rt := mm.f.Runtime()
	if rt == nil {
		return m, fmt.Errorf("analyze: training memory: no runtime profile")
	}
	m.RuntimeBytes = rt.ContextBytes
	m.WorkspaceBytes = rt.WorkspaceBytes
	limit := 0.0
	if gpu := mm.f.GPU(); gpu.MemBytes > 0 {
		limit = max(gpu.MemBytes-m.RuntimeBytes, 1)
	}
	m.AllocatorReservedBytes = allocatorReserve(append(mm.persistAllocs, m.WorkspaceBytes), mm.lazyAllocs, mm.allocs, mm.T, limit)
	m.NvidiaSMIBytes = m.AllocatorReservedBytes + m.RuntimeBytes
	m.PeakBytes = m.NvidiaSMIBytes
	return m, nil
}
