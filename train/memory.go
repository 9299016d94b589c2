package train

import (
	"fmt"
	"slices"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Training memory over one step's timeline. With n nodes, time t = i is
// node i's forward and t = 2n-1-i its backward (backward runs in reverse
// topological order), then the optimizer step. Live at any time:
//
//   - persistent: weights at the compute dtype, or under mixed precision
//     the fp32 parameters (the master copy); optimizer state
//     (optimizer.go);
//   - under mixed precision, autocast's fp16 copy of each weight an fp16
//     op reads, from its first reader's forward to that reader's backward
//     (memory_amp.go);
//   - activations: a forward tensor lives from its producer until its last
//     forward reader, or, when a backward reads it (backwardPlan.Saved),
//     until the earliest-in-forward such node's backward has run: backward
//     frees what it consumed. Views and in-place activations share their
//     source's buffer; the batch the loop feeds lives the whole step.
//     Under autocast each tensor has the dtype autocast gives it and a
//     saved argument autocast cast is kept as that copy (memory_amp.go);
//   - saved extras (masks, pool indices, RNN reserve): node i's forward to
//     its backward;
//   - activation gradients, at their value's dtype: from the backward of
//     the value's last reader (the first to produce its gradient) to its
//     producer's backward;
//   - parameter gradients, at the parameter's dtype (fp32 under mixed
//     precision, with the fp16 gradient of autocast's copy at its
//     backward): from the backward of the parameter's last reader to the
//     optimizer step (zero_grad(set_to_none=True) frees them at the next
//     step); under gradient accumulation the accumulated buffer for the
//     whole step, plus the new gradient at that backward;
//   - the optimizer's temporaries at the step (optimizerTemps);
//   - cuDNN's NHWC copies of a convolution's NCHW operands, in the
//     workspace of its forward call and of each gradient call, while that
//     call runs (layoutCopies).
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
	if s.mixed {
		mm.amp = newMemAMP(s.g)
	}
	mm.inplaceActs()
	mm.persistentState()
	mm.weightCasts()
	mm.activations()
	mm.gradients()
	mm.lossTensors()
	mm.optimizerTemps()
	mm.layoutCopies()
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
	// amp is autocast's dtype per value under mixed precision (nil
	// without); castAt is the first fp16 reader of each parameter
	// autocast casts (memory_amp.go).
	amp    *memAMP
	castAt map[*ir.Value]int
	// inplace maps an in-place activation's output to its input.
	inplace map[*ir.Value]*ir.Value
	// layoutAt is the bytes of cuDNN layout copies live at each time.
	layoutAt []float64
}

// bytes is v's size as the step holds it: under autocast at the dtype
// autocast gives it, else at the compute dtype.
func (mm *memoryModel) bytes(v *ir.Value) float64 {
	if mm.amp == nil || !memIsFloat(v) {
		return mm.c.Bytes(v)
	}
	return mm.c.Numel(v) * mm.amp.of(v)
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
		if mm.mixed {
			// The fp32 parameters are the master weights; their fp16
			// copies are autocast's, made per forward (weightCasts).
			m.MasterWeightsBytes += 4 * ne
			mm.persistAllocs = append(mm.persistAllocs, 4*ne)
		} else {
			m.WeightsBytes += wb
			mm.persistAllocs = append(mm.persistAllocs, wb)
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
		// DDP's buckets: a flat copy of the gradients (their dtype: fp32
		// under autocast) in buffers of up to 25 MiB, for the run.
		for _, v := range mm.trainable {
			if mm.mixed {
				m.DDPBucketBytes += mm.share(v) * 4 * c.Numel(v)
				continue
			}
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
	return v != nil && !v.IsInitializer && v.Const == nil && v.Kind == ir.TensorValue && !paramView(v)
}

// paramView reports whether v is a transpose or view of an initializer:
// torch.onnx writes F.linear of a 3-D input, exported without constant
// folding, as MatMul(x, Transpose(W)), where PyTorch's W.t() is a view of
// the parameter that addmm reads with a transposed flag, allocating
// nothing (ViT-B/16 so exported: its weights counted again as
// activations, 110% over autograd's saved set, scripts/saved_tensors.py).
func paramView(v *ir.Value) bool {
	for k := 0; k < 8 && v != nil && v.Producer != nil; k++ {
		p := v.Producer
		if p.OpType != "Transpose" && !ir.OpHas("", p.OpType, ir.Alias) || p.In(0) == nil {
			return false
		}
		v = p.In(0)
		if v.IsInitializer {
			return true
		}
	}
	return false
}

// root follows views back to the buffer they alias. A Dropout of
// constant ratio 0 (cost.DropsNothing) is its input: Swin's attention
// dropout, exported as Dropout(p, 0, true), was a second copy of every
// attention matrix, 8% of Swin-T's activations (scripts/saved_tensors.py).
// So is a cast to the dtype its input has (noOpCast).
func (mm *memoryModel) root(v *ir.Value) *ir.Value {
	for k := 0; k < 64 && v != nil && v.Producer != nil; k++ {
		p := v.Producer
		if !(ir.OpHas("", p.OpType, ir.Alias) || torchViews[p.OpType] || mm.noOpCast(p)) || p.OpType == "Dropout" && !cost.DropsNothing(p) || p.In(0) == nil || !isAct(p.In(0)) {
			break
		}
		v = p.In(0)
	}
	return v
}

// noOpCast reports whether p is a Cast to the dtype (under autocast, the
// width) its input already has: PyTorch's .to() returns the tensor
// itself, so Hugging Face's RMSNorm, which calls .to(torch.float32) and
// .to(input_dtype) on an fp32 residual, keeps no copy (a small LLaMA
// written as modeling_llama: 5.1% over autograd's saved set while each
// was a buffer, scripts/saved_tensors.py).
func (mm *memoryModel) noOpCast(p *ir.Node) bool {
	if p.Domain != "" || p.OpType != "Cast" && p.OpType != "CastLike" || p.In(0) == nil || p.Out(0) == nil {
		return false
	}
	if mm.amp != nil {
		return mm.amp.of(p.In(0)) == mm.amp.of(p.Out(0))
	}
	return p.In(0).DType == p.Out(0).DType
}

// torchViews are ops ONNX writes as copies that PyTorch runs as views of
// their input: basic slicing, narrow, split and chunk allocate nothing,
// and a part autograd saves keeps the whole tensor it was cut from
// (ShuffleNetV2's chunk before each branch: 6.6% of its activations,
// scripts/saved_tensors.py).
var torchViews = map[string]bool{"Slice": true, "Split": true}

// memInplaceOps are the activations torchvision's CNNs construct with
// inplace=True (ReLU in ResNet, VGG, DenseNet) whose in-place backward
// reads the result (derivatives.yaml: relu_ and leaky_relu_ save
// result), so the input's buffer is the only one. ReLU6 (MobileNetV2's,
// exported as Clip) is not among them: hardtanh's formula reads self,
// and its in-place variant saves a copy of self made before it
// overwrites it (autograd's saved tensors of torchvision's MobileNetV2
// in training: HardtanhBackward0 holds a buffer of its own, 195 of the
// 628 MB saved at batch 8; PyTorch 1.13, scripts/saved_tensors.py), so
// ReLU6's input and output are two buffers, as if it were not in place.
var memInplaceOps = map[string]bool{"Relu": true, "LeakyRelu": true}

// inplaceActs marks the outputs of such activations that can overwrite
// their input: it has no other reader, is no graph output, and its
// producer's backward does not read it (BatchNorm saves its input, a
// residual add nothing). Without inplace=True the saved set is the same
// (ReLU saves its output, and the input is freed).
func (mm *memoryModel) inplaceActs() {
	mm.inplace = map[*ir.Value]*ir.Value{}
	outputs := map[*ir.Value]bool{}
	for _, v := range mm.g.Outputs {
		outputs[v] = true
	}
	for _, nd := range mm.g.Nodes {
		in, out := nd.In(0), nd.Out(0)
		if nd.OpType == "Add" {
			in = convBiasInput(nd)
		} else if !memInplaceOps[nd.OpType] {
			continue
		}
		if !isAct(in) || out == nil || len(in.Consumers) != 1 || outputs[in] || in.Producer == nil {
			continue
		}
		j, ok := mm.idx[in.Producer]
		if !ok || slices.Contains(mm.plans[j].Saved, in) {
			continue
		}
		mm.inplace[out] = in
	}
}

// convBiasInput is the convolution output a bias Add reads, when nd is
// the eager plan's separate bias add: PyTorch adds a convolution's bias
// into its output in place (aten/src/ATen/native/Convolution.cpp:
// output.add_(reshape_bias(input.dim(), bias))), so the two are one
// buffer. nil otherwise.
func convBiasInput(nd *ir.Node) *ir.Value {
	if len(nd.Inputs) != 2 {
		return nil
	}
	for j, in := range nd.Inputs {
		other := nd.In(1 - j)
		if isAct(in) && in.Producer != nil && (in.Producer.OpType == "Conv" || in.Producer.OpType == "ConvTranspose") && other != nil && other.IsInitializer {
			return in
		}
	}
	return nil
}

// bufRoot follows views and in-place activations back to the buffer
// they share.
func (mm *memoryModel) bufRoot(v *ir.Value) *ir.Value {
	for k := 0; k < 64; k++ {
		r := mm.root(v)
		in, ok := mm.inplace[r]
		if !ok {
			return r
		}
		v = in
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
	r := ab.mm.bufRoot(v)
	b := ab.bufs[r]
	if b == nil {
		start, prod := 0, -1
		if p := r.Producer; p != nil {
			if i, ok := ab.mm.idx[p]; ok {
				start, prod = i, i
			}
		}
		b = &actBuf{bytes: ab.mm.bytes(r), start: start, end: start, prod: prod}
		ab.bufs[r] = b
		ab.order = append(ab.order, r)
	}
	return b
}

// activations adds the forward tensors, kept to their last reader or the
// backward that reads them, and the saved extras.
func (mm *memoryModel) activations() {
	ab := &actBufs{mm: mm, bufs: map[*ir.Value]*actBuf{}, recEnd: map[*ir.Value]int{}, recStart: map[*ir.Value]int{}, recBytes: map[*ir.Value]float64{}}
	// The batch the training loop feeds is its tensor, held across the
	// whole step (fp32 under autocast, which casts it where an fp16 op
	// reads it).
	for _, v := range mm.g.Inputs {
		if isAct(v) {
			ab.get(v).end = mm.T
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
	casts := mm.autocastInputs(i, nd)
	for _, s := range mm.plans[i].Saved {
		if !isAct(s) {
			continue
		}
		if cb, ok := casts[s]; ok {
			// Autograd saves autocast's copy, not the original.
			mm.keepSaved(cb, i)
			delete(casts, s)
			continue
		}
		b := ab.get(s)
		if b.prod >= 0 && ck.sameSegment(b.prod, i) {
			// Checkpointed: dropped after the forward, produced again
			// by the segment's recompute, kept to this backward.
			r := mm.bufRoot(s)
			ab.recEnd[r] = max(ab.recEnd[r], mm.bwAt(i))
			ab.recBytes[r] = b.bytes
			ab.recStart[r] = mm.bwAt(ck.segEnd(i))
			continue
		}
		b.end = max(b.end, mm.bwAt(i))
	}
	for _, cb := range casts {
		mm.span(cb, i, i) // a copy only the forward kernel reads
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
	type life struct{ from, to int }
	lives := map[*ir.Value]*life{}
	var owners []*ir.Value
	for _, nd := range mm.g.Nodes {
		for _, v := range nd.Outputs {
			if !mm.need[v] || !isAct(v) || mm.root(v) != v {
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
			o := mm.gradOwner(v)
			if lv := lives[o]; lv != nil {
				lv.from, lv.to = min(lv.from, from), max(lv.to, mm.bwAt(mm.idx[nd]))
				continue
			}
			lives[o] = &life{from, mm.bwAt(mm.idx[nd])}
			owners = append(owners, o)
		}
	}
	for _, o := range owners {
		mm.span(mm.bytes(o), lives[o].from, lives[o].to)
	}
	accumulating := mm.accum > 1
	for _, v := range mm.trainable {
		l := mm.lastReader(v)
		if l < 0 {
			continue
		}
		gb := mm.share(v) * mm.c.Bytes(v)
		if mm.mixed {
			// .grad has its parameter's dtype (fp32); the fp16 gradient
			// of autocast's copy exists until its cast back.
			gb = mm.share(v) * 4 * mm.c.Numel(v)
			if at, ok := mm.castAt[v]; ok {
				mm.span(gb/2, mm.bwAt(at), mm.bwAt(at))
			}
		}
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

// gradOwner is the value whose gradient buffer v's gradient is: an
// addition's backward hands its incoming gradient on to a same-shaped
// input unchanged (derivatives.yaml: add's self: grad; sub's self: grad),
// so when that addition is v's only reader, v's gradient is its output's
// tensor (the bias add PyTorch makes inside a convolution, a residual
// branch's last BatchNorm). A dtype change between them is a cast the
// engine makes (a new tensor), so it stops there.
func (mm *memoryModel) gradOwner(v *ir.Value) *ir.Value {
	for k := 0; k < 64; k++ {
		if len(v.Consumers) != 1 {
			return v
		}
		c := v.Consumers[0]
		out := c.Out(0)
		if _, ok := mm.idx[c]; !ok || out == nil || !isAct(out) || mm.root(out) != out || mm.bytes(out) != mm.bytes(v) {
			return v
		}
		if !(c.OpType == "Add" || (c.OpType == "Sub" && c.In(0) == v && c.In(1) != v)) {
			return v
		}
		v = out
	}
	return v
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
	mm.m.LayoutCopyBytes = mm.layoutAt[peakT]
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
	// The allocator may take what CUDA reports as the device's total
	// (hwdb cuda_mem_gib: the nominal size less the driver's reserve)
	// less the context.
	limit := 0.0
	if gpu := mm.f.GPU(); gpu.MemBytes > 0 {
		limit = max(gpu.CUDAMem()-m.RuntimeBytes, 1)
	}
	reserve, full := allocatorReserve(append(mm.persistAllocs, m.WorkspaceBytes), mm.lazyAllocs, mm.allocs, mm.T, limit)
	if full && reserve <= limit {
		// The step ran only because the allocator, its cudaMalloc failing,
		// released cached segments and retried: the reserve had filled
		// the device (to within the one segment that did not fit, which
		// is as far as the simulation can place it), and that is what
		// nvidia-smi shows. Taking the limit keeps the peak from falling
		// as the batch grows into it: a larger batch releases sooner and
		// would otherwise read lower.
		reserve = limit
	}
	m.AllocatorReservedBytes = reserve
	m.NvidiaSMIBytes = m.AllocatorReservedBytes + m.RuntimeBytes
	m.PeakBytes = m.NvidiaSMIBytes
	return m, nil
}

// layoutCopies adds the workspace cuDNN holds, while a convolution's call
// runs, for the NHWC copies of the NCHW operands its tensor-core kernel
// reads and writes (backwardPlan.LayoutCopyBytes): the transposes the
// time model charges around the call (cost.layoutTransposes for the
// forward, convRule.backward for each gradient) write into it, and
// PyTorch allocates the workspace from its caching allocator, so
// max_memory_allocated counts it. A call's set is as large as the
// activations it transposes, so at a large batch it rivals the gradients
// live beside it: VGG-16 under autocast at batch 512 copies 6.6 GB in a
// gradient call of a 224×224 layer and 0.83 GB in one of a 28×28 layer,
// where its training peak falls.
// PyTorch's cuDNN v8 path, should a workspace allocation fail, tries the
// next algorithm (a slower one, maybe without the copies), so a peak
// over memory through them alone would run slower rather than fail; the
// peak here is the default algorithm's.
func (mm *memoryModel) layoutCopies() {
	mm.layoutAt = make([]float64, mm.T+1)
	for i := range mm.g.Nodes {
		ws := mm.plans[i].LayoutCopyBytes
		if !(ws > 0) {
			continue
		}
		for _, t := range []int{i, mm.bwAt(i)} {
			mm.span(ws, t, t)
			mm.layoutAt[t] += ws
		}
	}
}

// optimizerTemps adds what the update allocates beside its state while
// the gradients are still held (zero_grad(set_to_none=True) frees them at
// the next step): PyTorch's multi-tensor Adam and AdamW (the default
// foreach path, torch/optim/adam.py _multi_tensor_adam) take
// exp_avg_sq_sqrt = torch._foreach_sqrt(exp_avg_sqs), an fp32 temporary
// the size of every parameter, before the update divides by it. SGD with
// momentum updates in place (torch/optim/sgd.py _multi_tensor_sgd, no
// weight decay).
func (mm *memoryModel) optimizerTemps() {
	if mm.opt.name != "adam" && mm.opt.name != "adamw" {
		return
	}
	// One fp32 tensor per parameter (_foreach_sqrt returns a list).
	for _, v := range mm.trainable {
		mm.span(4*mm.share(v)*mm.c.Numel(v), mm.T, mm.T)
	}
}

// lossTensors adds what the assumed cross-entropy head holds (train.go
// lossHead; a graph with its own loss op has its own backward plan):
// F.cross_entropy is log_softmax then nll_loss (torch/nn/functional.py),
// and log_softmax keeps its output for its backward (derivatives.yaml:
// _log_softmax_backward_data(grad, result, ...)). Under autocast both
// run in fp32 (cross_entropy is on its float32 list): the logits are cast
// up first. The backward writes nll_loss's dense gradient of the
// log-probabilities and log_softmax's gradient of the logits, both at
// that dtype, while the saved output is still held; the logits'
// gradient at their own dtype is gradients'. For 1,000 ImageNet classes
// this is noise; for a language model's vocabulary-wide logits it is
// several times the logits.
func (mm *memoryModel) lossTensors() {
	if hasLoss(mm.g) {
		return
	}
	y := firstFloatOutput(mm.g)
	if y == nil || !isAct(y) || mm.n == 0 {
		return
	}
	ne, w := mm.c.Numel(y), mm.c.ElemBytes(y)
	if mm.amp != nil {
		w = 4
		if mm.amp.of(y) != w {
			mm.span(w*ne, mm.n-1, mm.n-1) // the fp32 copy log_softmax reads
		}
	}
	mm.span(w*ne, mm.n-1, mm.n)
	mm.m.ActivationsBytes += w * ne
	mm.span(2*w*ne, mm.n, mm.n)
}
