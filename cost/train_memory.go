package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Training memory over one step's timeline. With n nodes, time t = i is
// node i's forward and t = 2n-1-i its backward (backward runs in reverse
// topological order), then the optimizer step. Live at any time:
//
//   - persistent: weights at the compute dtype, fp32 master copies under
//     mixed precision, optimizer state (train_optimizer.go);
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
// the timeline through PyTorch's caching allocator (train_allocator.go),
// whose reserve adds rounding and fragmentation and holds the library
// workspace (hwdb/runtimes.yaml's workspace_mib); the third, the device
// peak nvidia-smi shows, adds the runtime profile's CUDA context.
func (a *analyzer) trainMemory(g *ir.Graph, plans []backwardPlan, params []*ir.Value, need map[*ir.Value]bool, o optimizer, mixed bool, ck checkpointing, accumulating bool, share func(*ir.Value) float64) (report.TrainMemory, error) {
	var m report.TrainMemory
	c := &RuleCtx{DType: a.dtype, unknown: true}
	if share == nil {
		share = func(*ir.Value) float64 { return 1 }
	}
	n := len(g.Nodes)
	T := 2 * n
	delta := make([]float64, T+2)
	var allocs []memAlloc
	span := func(bytes float64, from, to int) {
		if bytes <= 0 || to < from {
			return
		}
		from = max(from, 0)
		to = min(to, T)
		delta[from] += bytes
		delta[to+1] -= bytes
		allocs = append(allocs, memAlloc{bytes: bytes, from: from, to: to})
	}
	bwAt := func(i int) int { return T - 1 - i }

	// Persistent state, tensor by tensor for the allocator view: weights
	// and master copies from the start, the optimizer state created by
	// the first update.
	var persistAllocs, lazyAllocs []float64
	for _, v := range params {
		ne, wb := share(v)*c.Numel(v), share(v)*c.Bytes(v)
		m.WeightsBytes += wb
		persistAllocs = append(persistAllocs, wb)
		if mixed {
			m.MasterWeightsBytes += 4 * ne
			persistAllocs = append(persistAllocs, 4*ne)
		}
		st := o.stateElems(v, ne)
		m.OptimizerStateBytes += 4 * st
		if k := int(o.states); !o.factored && k > 0 {
			for j := 0; j < k; j++ {
				lazyAllocs = append(lazyAllocs, 4*st/float64(k))
			}
		} else if st > 0 {
			lazyAllocs = append(lazyAllocs, 4*st)
		}
	}
	if a.opt.Train != nil && a.opt.Train.DataParallel > 1 {
		// DDP's buckets: a flat copy of the gradients in buffers of up
		// to 25 MiB, for the run.
		for _, v := range params {
			m.DDPBucketBytes += share(v) * c.Bytes(v)
		}
		for rest := m.DDPBucketBytes; rest > 0; rest -= ddpBucketBytes {
			persistAllocs = append(persistAllocs, min(rest, ddpBucketBytes))
		}
	}
	persistent := m.WeightsBytes + m.MasterWeightsBytes + m.OptimizerStateBytes + m.DDPBucketBytes

	idx := make(map[*ir.Node]int, n)
	for i, nd := range g.Nodes {
		idx[nd] = i
	}
	isAct := func(v *ir.Value) bool {
		return v != nil && !v.IsInitializer && v.Const == nil && v.Kind == ir.TensorValue
	}
	// root follows views back to the buffer they alias.
	root := func(v *ir.Value) *ir.Value {
		for k := 0; k < 64 && v != nil && v.Producer != nil; k++ {
			p := v.Producer
			if !aliases(p) || p.OpType == "Dropout" || p.In(0) == nil || !isAct(p.In(0)) {
				break
			}
			v = p.In(0)
		}
		return v
	}
	type buf struct {
		bytes      float64
		start, end int
		prod       int // producer's index; -1 for a graph input
	}
	recEnd, recStart := map[*ir.Value]int{}, map[*ir.Value]int{}
	recBytes := map[*ir.Value]float64{}
	bufs := map[*ir.Value]*buf{}
	var order []*ir.Value
	get := func(v *ir.Value) *buf {
		r := root(v)
		b := bufs[r]
		if b == nil {
			start, prod := 0, -1
			if p := r.Producer; p != nil {
				if i, ok := idx[p]; ok {
					start, prod = i, i
				}
			}
			b = &buf{bytes: c.Bytes(r), start: start, end: start, prod: prod}
			bufs[r] = b
			order = append(order, r)
		}
		return b
	}
	for _, v := range g.Inputs {
		if isAct(v) {
			get(v)
		}
	}
	for i, nd := range g.Nodes {
		for _, in := range nd.Inputs {
			if isAct(in) {
				b := get(in)
				b.end = max(b.end, i)
			}
		}
		for _, out := range nd.Outputs {
			if isAct(out) {
				get(out)
			}
		}
		for _, s := range plans[i].Saved {
			if !isAct(s) {
				continue
			}
			b := get(s)
			if b.prod >= 0 && ck.sameSegment(b.prod, i) {
				// Checkpointed: dropped after the forward, produced again
				// by the segment's recompute, kept to this backward.
				r := root(s)
				recEnd[r] = max(recEnd[r], bwAt(i))
				recBytes[r] = b.bytes
				recStart[r] = bwAt(ck.segEnd(i))
				continue
			}
			b.end = max(b.end, bwAt(i))
		}
		if ck.recomputed(i) {
			span(plans[i].SavedExtra, bwAt(ck.segEnd(i)), bwAt(i))
		} else {
			span(plans[i].SavedExtra, i, bwAt(i))
			m.ActivationsBytes += plans[i].SavedExtra
		}
	}
	for _, r := range order {
		if e, ok := recEnd[r]; ok {
			span(recBytes[r], recStart[r], e)
		}
	}
	// The loss reads the outputs at the start of backward.
	for _, v := range g.Outputs {
		if isAct(v) {
			b := get(v)
			b.end = max(b.end, n)
		}
	}
	for _, r := range order {
		b := bufs[r]
		span(b.bytes, b.start, b.end)
		if b.end >= n {
			m.ActivationsBytes += b.bytes
		}
	}

	// Gradients.
	lastReader := func(v *ir.Value) int {
		last := -1
		for _, u := range v.Consumers {
			if i, ok := idx[u]; ok && i > last {
				last = i
			}
		}
		return last
	}
	outputs := map[*ir.Value]bool{}
	for _, v := range g.Outputs {
		outputs[v] = true
	}
	for _, nd := range g.Nodes {
		for _, v := range nd.Outputs {
			if !need[v] || !isAct(v) || root(v) != v {
				continue
			}
			from := -1
			if outputs[v] {
				from = n
			}
			if l := lastReader(v); l >= 0 {
				from = max(from, bwAt(l))
			}
			if from < 0 {
				continue
			}
			span(c.Bytes(v), from, bwAt(idx[nd]))
		}
	}
	for _, v := range params {
		l := lastReader(v)
		if l < 0 {
			continue
		}
		gb := share(v) * c.Bytes(v)
		m.GradientsBytes += gb
		if accumulating {
			// The accumulated .grad lives across micro-batches (from the
			// first forward); each new gradient is a temporary added
			// into it by its producer's backward.
			span(gb, 0, T)
			span(gb, bwAt(l), bwAt(l))
			continue
		}
		span(gb, bwAt(l), T)
	}

	// Peak over the timeline.
	var live, peak float64
	peakT := 0
	a.trainTimeline = make([]float64, T+1)
	for t := 0; t <= T; t++ {
		live += delta[t]
		a.trainTimeline[t] = persistent + live
		if live > peak {
			peak, peakT = live, t
		}
	}
	switch {
	case peakT < n:
		m.PeakPhase = "forward"
	case peakT < T:
		m.PeakPhase = "backward"
	default:
		m.PeakPhase = "optimizer"
	}
	m.TensorPeakBytes = persistent + peak

	rt := a.runtime
	if rt == nil {
		return m, fmt.Errorf("analyze: training memory: no runtime profile")
	}
	m.RuntimeBytes = rt.ContextBytes
	m.WorkspaceBytes = rt.WorkspaceBytes
	// The three views (report.TrainMemory): live tensors, the caching
	// allocator's reserve (the library workspace is one of its
	// allocations, made with the first GEMM), and what nvidia-smi shows:
	// the reserve plus the CUDA context.
	limit := 0.0
	if a.gpu.MemBytes > 0 {
		limit = max(a.gpu.MemBytes-m.RuntimeBytes, 1)
	}
	m.AllocatorReservedBytes = allocatorReserve(append(persistAllocs, m.WorkspaceBytes), lazyAllocs, allocs, T, limit)
	m.NvidiaSMIBytes = m.AllocatorReservedBytes + m.RuntimeBytes
	m.PeakBytes = m.NvidiaSMIBytes
	return m, nil
}
