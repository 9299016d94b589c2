package train

import (
	"math"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// twoConvs: x[2,3,8,8] -> Conv(w1[4,3,3,3]) -> y1[2,4,6,6] -> Conv(w2[5,4,3,3]) -> y2[2,5,4,4].
func twoConvs(t *testing.T) *builder {
	b := newBuilder(t)
	x := b.Input("x", 2, 3, 8, 8)
	w1, w2 := b.Weight("w1", 4, 3, 3, 3), b.Weight("w2", 5, 4, 3, 3)
	y1, y2 := b.Val("y1", ir.Float32, 2, 4, 6, 6), b.Val("y2", ir.Float32, 2, 5, 4, 4)
	b.Node("Conv", []*ir.Value{x, w1}, []*ir.Value{y1})
	b.Node("Conv", []*ir.Value{y1, w2}, []*ir.Value{y2})
	b.G.AddOutput(y2)
	return b
}

// TestConvBackwardIsTwiceForward: a convolution's backward is a data
// gradient and a weight gradient of the forward's MACs each, so 2× the
// forward FLOPs; the first layer, whose input (the image) needs no
// gradient, computes only the weight gradient: 1×.
func TestConvBackwardIsTwiceForward(t *testing.T) {
	r := twoConvs(t).analyze(cost.Options{Train: &Options{}})
	first, second := r.Nodes[0], r.Nodes[1]
	if first.Backward == nil || second.Backward == nil {
		t.Fatal("no backward on a Conv")
	}
	// Forward MACs: N·K·P·Q·C·R·S.
	mac1, mac2 := float64(2*4*6*6*3*3*3), float64(2*5*4*4*4*3*3)
	if !near(first.MACs, mac1) || !near(second.MACs, mac2) {
		t.Fatalf("forward macs %v %v, want %v %v", first.MACs, second.MACs, mac1, mac2)
	}
	if !near(first.Backward.FLOPs, 2*mac1) {
		t.Errorf("first conv backward flops %v, want wgrad only = 2*macs = %v", first.Backward.FLOPs, 2*mac1)
	}
	if first.Backward.Kernels != "wgrad" {
		t.Errorf("first conv kernels %q, want wgrad", first.Backward.Kernels)
	}
	if !near(second.Backward.FLOPs, 4*mac2) {
		t.Errorf("second conv backward flops %v, want dgrad+wgrad = 4*macs = %v", second.Backward.FLOPs, 4*mac2)
	}
	if second.Backward.TimeS <= 0 {
		t.Error("backward not timed")
	}
	tr := r.Totals.Train
	if tr == nil || !near(r.Totals.TimeS, tr.StepTimeS) || !near(tr.StepTimeS, tr.ForwardTimeS+tr.BackwardTimeS+tr.OptimizerTimeS+tr.HostWaitS) {
		t.Fatalf("step time is not forward+backward+optimizer: %+v", tr)
	}
}

// TestGemmBackward: Y = X·W1·W2 with X an input: the first MatMul computes
// only dW1 (2·MACs), the second dH and dW2 (4·MACs).
func TestGemmBackward(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 16)
	w1, w2 := b.Weight("w1", 16, 32), b.Weight("w2", 32, 10)
	h, y := b.Val("h", ir.Float32, 8, 32), b.Val("y", ir.Float32, 8, 10)
	b.Node("MatMul", []*ir.Value{x, w1}, []*ir.Value{h})
	b.Node("MatMul", []*ir.Value{h, w2}, []*ir.Value{y})
	b.G.AddOutput(y)
	r := b.analyze(cost.Options{Train: &Options{Optimizer: "sgd"}})
	if got, want := r.Nodes[0].Backward.FLOPs, 2.0*8*16*32; !near(got, want) {
		t.Errorf("first MatMul backward %v, want %v", got, want)
	}
	if got, want := r.Nodes[1].Backward.FLOPs, 4.0*8*32*10; !near(got, want) {
		t.Errorf("second MatMul backward %v, want %v", got, want)
	}
	// SGD: 2 FLOPs per parameter.
	if got, want := r.Totals.Train.OptimizerFLOPs, 2.0*(16*32+32*10); !near(got, want) {
		t.Errorf("sgd flops %v, want %v", got, want)
	}
}

// TestOptimizerState: Adam keeps two fp32 tensors per parameter, momentum
// one, SGD none; under mixed precision the fp32 parameters are the
// master copy, autocast's fp16 copies are the weights, and the gradients
// stay fp32 (their parameters' dtype: train/memory_amp.go).
func TestOptimizerState(t *testing.T) {
	params := float64(4*3*3*3 + 5*4*3*3)
	for _, c := range []struct {
		opt    string
		states float64
	}{{"sgd", 0}, {"momentum", 1}, {"adam", 2}, {"adamw", 2}, {"lamb", 2}} {
		m := twoConvs(t).analyze(cost.Options{Train: &Options{Optimizer: c.opt}}).Totals.Train.Memory
		if !near(m.OptimizerStateBytes, c.states*4*params) {
			t.Errorf("%s state %v bytes, want %v fp32 tensors = %v", c.opt, m.OptimizerStateBytes, c.states, c.states*4*params)
		}
		if !near(m.WeightsBytes, 4*params) || !near(m.GradientsBytes, 4*params) || m.MasterWeightsBytes != 0 {
			t.Errorf("%s fp32 weights/grads/master %v %v %v", c.opt, m.WeightsBytes, m.GradientsBytes, m.MasterWeightsBytes)
		}
	}
	m := twoConvs(t).analyze(cost.Options{DType: "fp16", Train: &Options{}}).Totals.Train
	if !m.MixedPrecision || !near(m.Memory.WeightsBytes, 2*params) || !near(m.Memory.MasterWeightsBytes, 4*params) ||
		!near(m.Memory.OptimizerStateBytes, 8*params) || !near(m.Memory.GradientsBytes, 4*params) {
		t.Errorf("mixed precision memory %+v", m.Memory)
	}
}

// TestTrainMemoryTimeline: the forward keeps what backward reads; backward
// frees it as it passes, so after the last backward only the persistent
// state and the parameter gradients are live.
func TestTrainMemoryTimeline(t *testing.T) {
	b := twoConvs(t)
	st := trainOn(t, b, Options{})
	m := st.tr.Memory
	params := float64(4*3*3*3 + 5*4*3*3)
	x, y1, y2 := 4.0*2*3*8*8, 4.0*2*4*6*6, 4.0*2*5*4*4
	persistent := 4*params + 8*params // weights + Adam state
	// Retained for backward: x (conv1's wgrad), y1 (conv2's wgrad), y2 (the
	// loss), and the assumed cross-entropy's log_softmax output lsm, y2's
	// size (memory.go lossTensors).
	lsm := y2
	if !near(m.ActivationsBytes, x+y1+y2+lsm) {
		t.Errorf("activations %v, want x+y1+y2+lsm = %v", m.ActivationsBytes, x+y1+y2+lsm)
	}
	tl := st.timeline
	n := len(b.G.Nodes)
	if len(tl) != 2*n+1 {
		t.Fatalf("timeline of %d steps, want %d", len(tl), 2*n+1)
	}
	// End of forward: everything retained is live.
	if !near(tl[n-1], persistent+x+y1+y2+lsm) {
		t.Errorf("end of forward live %v, want %v", tl[n-1], persistent+x+y1+y2+lsm)
	}
	// Backward of conv2 (t = n, with the loss's backward: lsm and the
	// two gradients it writes): dY2, dY1, dW2 written; y2 still read.
	if want := persistent + x + y1 + y2 + 3*lsm + y2 + y1 + 4*5*4*3*3; !near(tl[n], want) {
		t.Errorf("conv2 backward live %v, want %v", tl[n], want)
	}
	// Backward of conv1 (t = 2n-1): y1 and y2 freed with conv2's
	// backward; x, dY1, dW2, dW1 live.
	if want := persistent + x + y1 + 4*params; !near(tl[2*n-1], want) {
		t.Errorf("conv1 backward live %v, want %v", tl[2*n-1], want)
	}
	// Optimizer: activations all freed but the batch x the loop holds;
	// Adam's foreach update adds its fp32 sqrt(v) temporary (memory.go).
	if want := persistent + 4*params + x + 4*params; !near(tl[2*n], want) {
		t.Errorf("optimizer step live %v, want persistent + gradients + x + Adam's temporary = %v", tl[2*n], want)
	}
	if !near(m.TensorPeakBytes, tl[n]) || m.PeakPhase != "backward" {
		t.Errorf("peak %v (%s), want %v in backward", m.TensorPeakBytes, m.PeakPhase, tl[n])
	}
	// Allocator view: every tensor here is under 1 MiB, so they share one
	// 2 MiB small-pool segment; the 20 MiB PyTorch workspace takes a
	// large segment of its own. nvidia-smi adds the 300 MiB context.
	if want := float64(2<<20 + 20<<20); m.WorkspaceBytes != 20<<20 || m.AllocatorReservedBytes != want {
		t.Errorf("reserved %v (workspace %v), want one small segment + the workspace = %v", m.AllocatorReservedBytes, m.WorkspaceBytes, want)
	}
	if m.RuntimeBytes != 300<<20 || m.NvidiaSMIBytes != m.AllocatorReservedBytes+m.RuntimeBytes || m.PeakBytes != m.NvidiaSMIBytes {
		t.Errorf("nvidia-smi %v (peak %v), want reserve + context %v", m.NvidiaSMIBytes, m.PeakBytes, m.RuntimeBytes)
	}
}

// TestNoTrainNoTrainFields: without Train nothing training-related appears.
func TestNoTrainNoTrainFields(t *testing.T) {
	r := twoConvs(t).analyze(cost.Options{})
	if r.Totals.Train != nil || r.Nodes[0].Backward != nil {
		t.Error("training fields without Train")
	}
}

// TestUnknownOptimizer errors.
func TestUnknownOptimizer(t *testing.T) {
	b := twoConvs(t)
	if _, err := cost.Analyze(b.G, b.M, costtest.GPU(), cost.Options{Train: &Options{Optimizer: "rmsprop"}}); err == nil {
		t.Error("rmsprop accepted")
	}
}

// TestCheckpointSqrt: recomputation keeps fewer activations, lowers the
// peak and pays the checkpointed segments' forward again.
func TestCheckpointSqrt(t *testing.T) {
	chain := func() *builder {
		b := newBuilder(t)
		x := b.Input("x", 4096, 256)
		for i := 0; i < 16; i++ {
			w := b.Weight("w"+itoa(i), 256, 256)
			y := b.Val("h"+itoa(i), ir.Float32, 4096, 256)
			b.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{y})
			x = y
		}
		b.G.AddOutput(x)
		return b
	}
	none := chain().analyze(cost.Options{Train: &Options{}}).Totals.Train
	sq := chain().analyze(cost.Options{Train: &Options{Checkpoint: "sqrt"}}).Totals.Train
	if sq.Checkpoint != "sqrt" || none.Checkpoint != "none" {
		t.Fatalf("modes %q %q", none.Checkpoint, sq.Checkpoint)
	}
	if !(sq.Memory.ActivationsBytes < none.Memory.ActivationsBytes) || !(sq.Memory.TensorPeakBytes < none.Memory.TensorPeakBytes) {
		t.Errorf("sqrt kept %v (peak %v), none %v (peak %v)", sq.Memory.ActivationsBytes, sq.Memory.TensorPeakBytes,
			none.Memory.ActivationsBytes, none.Memory.TensorPeakBytes)
	}
	// 16 nodes: segments of 4; the first three re-run (12 of 16 MatMuls).
	if !(sq.RecomputeTimeS > 0.6*none.ForwardTimeS && sq.RecomputeTimeS < 0.85*none.ForwardTimeS) {
		t.Errorf("recompute %v of forward %v, want ~12/16", sq.RecomputeTimeS, none.ForwardTimeS)
	}
	if !near(sq.StepTimeS, sq.ForwardTimeS+sq.RecomputeTimeS+sq.BackwardTimeS+sq.OptimizerTimeS+sq.HostWaitS) {
		t.Errorf("step %v is not the sum of its parts", sq.StepTimeS)
	}
}

// TestMissingBackwardReported: a differentiable op with no backward model
// on the gradient path is named in a warning and a note, not silently
// zero; the loss head assumed for a graph without one is noted.
func TestMissingBackwardReported(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 1, 1, 4, 4)
	w := b.Weight("w", 1, 1, 4, 4)
	grid := b.Input("grid", 1, 4, 4, 2)
	h, y := b.Val("h", ir.Float32, 1, 1, 4, 4), b.Val("y", ir.Float32, 1, 1, 4, 4)
	b.Node("Mul", []*ir.Value{x, w}, []*ir.Value{h})
	b.Node("GridSample", []*ir.Value{h, grid}, []*ir.Value{y})
	b.G.AddOutput(y)
	r := b.analyze(cost.Options{Train: &Options{}})
	found := false
	for _, w := range r.Warnings {
		found = found || (strings.Contains(w, "no backward model for GridSample (1)"))
	}
	if !found {
		t.Errorf("GridSample's missing backward not warned: %q", r.Warnings)
	}
	notes := strings.Join(r.Totals.Train.Notes, "\n")
	if !strings.Contains(notes, "GridSample") || !strings.Contains(notes, "cross-entropy loss on output \"y\" is assumed") {
		t.Errorf("notes %q", notes)
	}
	// The Mul before it still has its weight gradient.
	if r.Nodes[0].Backward == nil || r.Nodes[0].Backward.FLOPs != 2*16 {
		t.Errorf("Mul backward %+v, want dW = dY*x: 2 flops per element", r.Nodes[0].Backward)
	}
}

// TestDropoutTraining: an inference Dropout (a view) becomes a mask kernel
// in the training forward and keeps a one-byte mask for its backward.
func TestDropoutTraining(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 16)
	w := b.Weight("w", 16, 32)
	h, y := b.Val("h", ir.Float32, 8, 32), b.Val("y", ir.Float32, 8, 32)
	b.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{h})
	b.Node("Dropout", []*ir.Value{h}, []*ir.Value{y})
	b.G.AddOutput(y)
	r := b.analyze(cost.Options{Train: &Options{}})
	d := r.Nodes[1]
	if d.TimeS != 0 || d.Backward == nil || d.Backward.ForwardExtraS <= 0 || d.Backward.SavedBytes != 8*32 {
		t.Errorf("dropout %+v backward %+v", d, d.Backward)
	}
}

// residualBlocks: a stem MatMul, three residual blocks named as torch.onnx
// names a ModuleList's children (/layers/layers.k/...: MatMul, Relu,
// MatMul, Add) and a head MatMul; every tensor is [1024, 128] fp32, so activations outweigh the weights.
func residualBlocks(t *testing.T) *builder {
	b := newBuilder(t)
	named := func(name, op string, ins []*ir.Value, out *ir.Value) {
		b.Node(op, ins, []*ir.Value{out}).Name = name
	}
	x := b.Input("x", 1024, 128)
	h := b.Val("h0", ir.Float32, 1024, 128)
	named("/stem/MatMul", "MatMul", []*ir.Value{x, b.Weight("ws", 128, 128)}, h)
	for k := 0; k < 3; k++ {
		p := "/layers/layers." + itoa(k) + "/"
		a, r := b.Val("a"+itoa(k), ir.Float32, 1024, 128), b.Val("r"+itoa(k), ir.Float32, 1024, 128)
		c, o := b.Val("c"+itoa(k), ir.Float32, 1024, 128), b.Val("h"+itoa(k+1), ir.Float32, 1024, 128)
		named(p+"fc1/MatMul", "MatMul", []*ir.Value{h, b.Weight("w1_"+itoa(k), 128, 128)}, a)
		named(p+"act/Relu", "Relu", []*ir.Value{a}, r)
		named(p+"fc2/MatMul", "MatMul", []*ir.Value{r, b.Weight("w2_"+itoa(k), 128, 128)}, c)
		named(p+"Add", "Add", []*ir.Value{c, h}, o)
		h = o
	}
	y := b.Val("y", ir.Float32, 1024, 128)
	named("/head/MatMul", "MatMul", []*ir.Value{h, b.Weight("wh", 128, 128)}, y)
	b.G.AddOutput(y)
	return b
}

// TestCheckpointBlocks: with --checkpoint blocks each numbered module
// (/layers/layers.k) re-runs its forward in backward, so the recompute
// time is the sum of the blocks' forward times (stem and head excluded),
// and the forward keeps only the block boundaries: each block's one
// internal tensor its backward reads (the Relu output, which the ReLU's
// and fc2's backward read) is dropped, 3 × 1024·128·4 bytes.
func TestCheckpointBlocks(t *testing.T) {
	none := residualBlocks(t).analyze(cost.Options{Train: &Options{}})
	r := residualBlocks(t).analyze(cost.Options{Train: &Options{Checkpoint: "blocks"}})
	tr, tn := r.Totals.Train, none.Totals.Train
	if tr.Checkpoint != "blocks" {
		t.Fatalf("checkpoint %q", tr.Checkpoint)
	}
	var want float64
	for _, n := range r.Nodes {
		if strings.HasPrefix(n.Name, "/layers/layers.") {
			want += n.TimeS
		}
	}
	if want <= 0 || !near(tr.RecomputeTimeS, want) {
		t.Errorf("recompute %v, want the blocks' forward %v", tr.RecomputeTimeS, want)
	}
	if !near(tr.StepTimeS, tr.ForwardTimeS+tr.RecomputeTimeS+tr.BackwardTimeS+tr.OptimizerTimeS+tr.HostWaitS) || !near(tr.ForwardTimeS, tn.ForwardTimeS) {
		t.Errorf("step %v is not forward %v + recompute + backward + optimizer", tr.StepTimeS, tr.ForwardTimeS)
	}
	if got, want := tn.Memory.ActivationsBytes-tr.Memory.ActivationsBytes, 3*1024*128*4.0; !near(got, want) {
		t.Errorf("blocks keep %v bytes fewer than none, want the three Relu outputs = %v", got, want)
	}
	if !(tr.Memory.TensorPeakBytes < tn.Memory.TensorPeakBytes) {
		t.Errorf("peak %v not below none's %v", tr.Memory.TensorPeakBytes, tn.Memory.TensorPeakBytes)
	}
	if !strings.Contains(strings.Join(tr.Notes, "\n"), "3 blocks found from the exporter's module scopes at depth 2") {
		t.Errorf("notes %q", tr.Notes)
	}
}

// TestBlockScopes: ResNet's and GPT-2's numbered modules are blocks; a
// VGG's numbered layers (one node each) and unscoped names are not.
func TestBlockScopes(t *testing.T) {
	nodes := func(names ...string) []*ir.Node {
		out := make([]*ir.Node, len(names))
		for i, n := range names {
			out[i] = &ir.Node{Name: n}
		}
		return out
	}
	for _, c := range []struct {
		names []string
		want  []string
		depth int
	}{
		{[]string{"/conv1/Conv", "/layer1/layer1.0/conv1/Conv", "/layer1/layer1.0/Add", "/layer1/layer1.1/conv1/Conv", "/layer1/layer1.1/Add", "/fc/Gemm"},
			[]string{"", "/layer1/layer1.0", "/layer1/layer1.0", "/layer1/layer1.1", "/layer1/layer1.1", ""}, 2},
		{[]string{"/wte/Gather", "/h.0/ln_1/Add", "/h.0/attn/MatMul", "/h.1/ln_1/Add", "/h.1/attn/MatMul"},
			[]string{"", "/h.0", "/h.0", "/h.1", "/h.1"}, 1},
		{[]string{"/features/features.0/Conv", "/features/features.1/Relu", "/features/features.2/Conv", "/classifier/classifier.0/Gemm"},
			[]string{"", "", "", ""}, 0},
		{[]string{"Conv_0", "Relu_1", "Conv_2"}, []string{"", "", ""}, 0},
	} {
		got, d := blockScopes(nodes(c.names...))
		if d != c.depth || strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("%v: got %q at depth %d, want %q at %d", c.names, got, d, c.want, c.depth)
		}
	}
}

// TestGradAccum: K micro-batches per optimizer step run forward and
// backward K times, add K−1 new gradients into .grad (one FLOP per
// parameter element each time) and step the optimizer once; memory is one
// micro-batch's with the gradient buffer held from the first forward, so
// the end-of-forward live bytes grow by exactly the parameter gradients.
func TestGradAccum(t *testing.T) {
	b1, b4 := twoConvs(t), twoConvs(t)
	a1, a4 := trainOn(t, b1, Options{}), trainOn(t, b4, Options{GradAccum: 4})
	one, four := a1.tr, a4.tr
	if four.GradAccum != 4 || one.GradAccum != 1 || one.AccumulateTimeS != 0 {
		t.Fatalf("grad_accum %d/%d, accumulate %v", one.GradAccum, four.GradAccum, one.AccumulateTimeS)
	}
	if four.AccumulateTimeS <= 0 {
		t.Error("no time for the gradient adds")
	}
	micro := four.ForwardTimeS + four.RecomputeTimeS + four.BackwardTimeS
	if !near(four.StepTimeS, 4*micro+four.AccumulateTimeS+four.OptimizerTimeS+four.HostWaitS) || !near(four.OptimizerTimeS, one.OptimizerTimeS) || !near(micro, one.ForwardTimeS+one.BackwardTimeS) {
		t.Errorf("step %v, want 4 × %v + %v + optimizer %v once", four.StepTimeS, micro, four.AccumulateTimeS, four.OptimizerTimeS)
	}
	params := float64(4*3*3*3 + 5*4*3*3)
	n := len(b1.G.Nodes)
	// End of forward (t = n-1): the accumulated gradients are live too.
	if got := a4.timeline[n-1] - a1.timeline[n-1]; !near(got, 4*params) {
		t.Errorf("end-of-forward live grows by %v, want the fp32 gradients %v", got, 4*params)
	}
	// Optimizer: the same live set (persistent + gradients).
	if !near(a4.timeline[2*n], a1.timeline[2*n]) {
		t.Errorf("optimizer live %v vs %v", a4.timeline[2*n], a1.timeline[2*n])
	}
	if !(four.Memory.TensorPeakBytes >= one.Memory.TensorPeakBytes) || four.Memory.GradientsBytes != one.Memory.GradientsBytes {
		t.Errorf("peak %v below one micro-batch's %v", four.Memory.TensorPeakBytes, one.Memory.TensorPeakBytes)
	}
}

// captured is a training request that keeps the priced step, for tests
// that read its memory timeline.
type captured struct {
	Options
	s *step
}

func (c *captured) Step(f *cost.Forward) error {
	s, err := c.price(f)
	c.s = s
	return err
}

// trainOn prices training of b on the rule-test GPU under o and returns
// the step with its timeline.
func trainOn(t *testing.T, b *builder, o Options) *step {
	t.Helper()
	c := &captured{Options: o}
	if _, err := cost.Analyze(b.G, b.M, costtest.GPU(), cost.Options{Train: c}); err != nil {
		t.Fatal(err)
	}
	return c.s
}

// TestCachingAllocator states the allocator model's arithmetic
// (allocator.go): 512 B rounding, 2 MiB small segments, 20 MiB
// segments for large requests under 10 MiB, 2 MiB rounding above, best-fit
// reuse of freed blocks with splitting and merging, and a reserve that
// never shrinks.
func TestCachingAllocator(t *testing.T) {
	const MiB = 1 << 20
	var c cachingAllocator
	a := c.malloc(100) // small: a 2 MiB segment, a 512 B block
	if a.Size != 512 || c.reserved() != 2*MiB {
		t.Fatalf("100 B: block %v, reserved %v", a.Size, c.reserved())
	}
	c.malloc(MiB) // small pool still (≤ 1 MiB): fits the first segment's rest
	if c.reserved() != 2*MiB {
		t.Errorf("1 MiB in the small segment's rest: reserved %v", c.reserved())
	}
	b := c.malloc(3 * MiB) // large, under 10 MiB: a 20 MiB segment
	if c.reserved() != 22*MiB || b.Size != 3*MiB {
		t.Errorf("3 MiB: reserved %v, block %v", c.reserved(), b.Size)
	}
	d := c.malloc(11*MiB + 1) // best fit: the segment's free 17 MiB, rounded to 512 B
	if c.reserved() != 22*MiB || d.Size != 11*MiB+512 || d.Seg != b.Seg {
		t.Errorf("11 MiB+1: reserved %v, block %v", c.reserved(), d.Size)
	}
	e := c.malloc(12 * MiB) // 6 MiB-512 free is too small: a new 12 MiB segment (≥ 10 MiB, 2 MiB multiple)
	if c.reserved() != 34*MiB || e.Seg == b.Seg {
		t.Errorf("12 MiB: reserved %v", c.reserved())
	}
	c.release(b)
	c.release(d) // the 20 MiB segment is whole again (merged)
	f := c.malloc(19 * MiB)
	if c.reserved() != 34*MiB || f.Seg != b.Seg {
		t.Errorf("19 MiB after freeing 3 + 11 MiB: reserved %v, segment %d (want %d)", c.reserved(), f.Seg, b.Seg)
	}
	c.release(e)
	c.release(f)
	c.release(a)
	if c.reserved() != 34*MiB {
		t.Errorf("frees returned memory: %v", c.reserved())
	}
	// Fragmentation: 12 + 20 MiB are cached and free, yet 25 MiB needs
	// a segment of its own (rounded up to 26 MiB); its 1 MiB rest is not
	// split off (the large pool splits only above 1 MiB).
	g := c.malloc(25 * MiB)
	if c.reserved() != 34*MiB+26*MiB || g.Size != 26*MiB {
		t.Errorf("25 MiB: reserved %v", c.reserved())
	}
}

// TestTrainHostDispatch: under PyTorch eager (the training default) the
// host issues every kernel of the step, 8 µs each (hwdb/runtimes.yaml);
// the step is at least the per-call cost plus the issue of the forward,
// loss, backward and optimizer launches, and at least the device's time
// plus the first issue; the device's wait is what exceeds its own time. A CUDA
// graph replay of the step (no dispatch) leaves the device sum.
func TestTrainHostDispatch(t *testing.T) {
	r := twoConvs(t).analyze(cost.Options{Train: &Options{}})
	tr := r.Totals.Train
	if r.Runtime == nil || r.Runtime.Name != "pytorch" {
		t.Fatalf("training runtime %+v, want pytorch by default", r.Runtime)
	}
	launches := r.Totals.Launches + 2 + tr.OptimizerLaunches // forward, loss head, optimizer
	for _, n := range r.Nodes {
		if n.Backward != nil {
			launches += n.Backward.Launches
		}
	}
	// The host issues the step's dispatch sequence: every launch once,
	// each backward entry its gradient edges at autograd_s and its
	// kernels at dispatch_s.
	var seqLaunches, hostS float64
	rt := r.Runtime
	prof, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range tr.Dispatch {
		seqLaunches += e.Launches
		hostS += e.HostS
		if e.Phase == "backward" && e.Node >= 0 && e.HostS < (e.Launches*rt.DispatchS+prof.AutogradS)*(1-1e-12) {
			t.Errorf("backward entry %q: host %v below one gradient edge and %v launches", e.Name, e.HostS, e.Launches)
		}
	}
	if seqLaunches != launches {
		t.Errorf("dispatch sequence issues %v launches, the report counts %v", seqLaunches, launches)
	}
	device := tr.ForwardTimeS + tr.BackwardTimeS + tr.OptimizerTimeS
	issue := rt.CallS + hostS
	// The pipeline: the step is at least the host's issue and at least
	// the device's time plus the first kernel's issue, at most the two in
	// series.
	lo := max(issue, device+rt.DispatchS)
	if !(tr.StepTimeS >= lo*(1-1e-12)) || !(tr.StepTimeS <= device+issue) || !near(tr.HostWaitS, tr.StepTimeS-device) {
		t.Errorf("step %v, host wait %v: want within [max(call + host issue = %v, device %v + one dispatch), their sum]", tr.StepTimeS, tr.HostWaitS, issue, device)
	}
	if !near(rt.HostS, issue) || !near(rt.DeviceS, device) {
		t.Errorf("runtime host %v device %v, want %v %v", rt.HostS, rt.DeviceS, issue, device)
	}
	b := twoConvs(t)
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	g := b.analyze(cost.Options{Runtime: graph, Train: &Options{}}).Totals.Train
	if g.HostWaitS != 0 || !near(g.StepTimeS, g.ForwardTimeS+g.BackwardTimeS+g.OptimizerTimeS) {
		t.Errorf("graph replay: step %v, wait %v", g.StepTimeS, g.HostWaitS)
	}
}

// TestDataParallel: DDP over n = 4 GPUs all-reduces every fp32 gradient
// once per step in 25 MiB buckets, a ring of 2·(n−1)/n · bytes / PeerBW
// plus a fixed latency each; the part not hidden behind the backward
// (at least the last bucket) is added to the step; DDP's buckets hold a
// copy of the gradients for the run. Without a link bandwidth it errors.
func TestDataParallel(t *testing.T) {
	chain := func() *builder {
		b := newBuilder(t)
		x := b.Input("x", 64, 2048)
		for i := 0; i < 4; i++ {
			w, y := b.Weight("w"+itoa(i), 2048, 2048), b.Val("h"+itoa(i), ir.Float32, 64, 2048)
			b.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{y})
			x = y
		}
		b.G.AddOutput(x)
		return b
	}
	gpu := costtest.GPU()
	gpu.PCIeBW = 25e9
	run := func(o Options) *report.Train {
		b := chain()
		r, err := cost.Analyze(b.G, b.M, gpu, cost.Options{Train: &o})
		if err != nil {
			t.Fatal(err)
		}
		return r.Totals.Train
	}
	one, dp := run(Options{}), run(Options{DataParallel: 4})
	grads := 4 * 2048 * 2048 * 4.0 // 64 MiB: 3 buckets
	// No NVLink: the PCIe fit, one latency per bucket.
	ar := perf.AllReducePCIe
	busBW := ar.BusFraction(4) * 25e9
	comm := 2*3.0/4*grads/busBW + 3*ar.Latency(4)
	last := 2*3.0/4*float64(ddpBucketBytes)/busBW + ar.Latency(4)
	if dp.DataParallel != 4 || !near(dp.GradAllReduceS, comm) || !near(dp.GradAllReduceExposedS, math.Max(comm-last-dp.BackwardTimeS, 0)+last) {
		t.Errorf("all-reduce %v exposed %v, want %v and max(%v - last - backward %v, 0) + last %v", dp.GradAllReduceS, dp.GradAllReduceExposedS, comm, comm, dp.BackwardTimeS, last)
	}
	if !near(dp.StepTimeS-dp.HostWaitS, one.StepTimeS-one.HostWaitS+dp.GradAllReduceExposedS) {
		t.Errorf("step %v (wait %v), one GPU %v (wait %v) + exposed %v", dp.StepTimeS, dp.HostWaitS, one.StepTimeS, one.HostWaitS, dp.GradAllReduceExposedS)
	}
	if dp.Memory.DDPBucketBytes != grads || one.Memory.DDPBucketBytes != 0 || !near(dp.Memory.TensorPeakBytes-one.Memory.TensorPeakBytes, grads) {
		t.Errorf("buckets %v, peak %v vs %v: want the gradients %v more", dp.Memory.DDPBucketBytes, dp.Memory.TensorPeakBytes, one.Memory.TensorPeakBytes, grads)
	}
	gpu.PCIeBW = 0
	b := chain()
	if _, err := cost.Analyze(b.G, b.M, gpu, cost.Options{Train: &Options{DataParallel: 4}}); err == nil || !strings.Contains(err.Error(), "bandwidth") {
		t.Errorf("no link bandwidth: %v", err)
	}
}

// TestCachingAllocatorOOMRetry: when a new segment would pass the device
// limit, the wholly free cached segments are released first (PyTorch's
// release_cached_blocks before its out-of-memory error), so the reserve
// stays within the device when the live blocks fit; a segment that still
// holds a live block is kept.
func TestCachingAllocatorOOMRetry(t *testing.T) {
	const MiB = 1 << 20
	c := cachingAllocator{limit: 40 * MiB}
	a := c.malloc(12 * MiB) // segment 0: 12 MiB
	c.malloc(3 * MiB)       // segment 1: 20 MiB, 3 live, 17 free
	c.release(a)
	if c.reserved() != 32*MiB {
		t.Fatalf("reserved %v", c.reserved())
	}
	c.malloc(18 * MiB) // no free block of 18 MiB; 32 + 18 > 40: segment 0 (wholly free) released, segment 1 kept
	if c.reserved() != 38*MiB || c.peak != 38*MiB {
		t.Errorf("after the retry: reserved %v, peak %v, want 20 + 18 MiB", c.reserved(), c.peak)
	}
	c.malloc(19 * MiB) // 38 + 20 > 40 and nothing wholly free: out of memory, the peak shows it
	if c.peak != 58*MiB {
		t.Errorf("peak %v, want 58 MiB past the 40 MiB device", c.peak)
	}
}

// TestTrainEnergy: under --train energy_j is the step's: above the
// forward's alone, avg power = energy / time, and linear in the
// micro-batch count (K forward+backward runs, K−1 gradient adds, one
// optimizer update): E(3) − E(1) = 2·(E(2) − E(1)). A CUDA graph replay,
// so no host wait enters.
func TestTrainEnergy(t *testing.T) {
	graph, err := hwdb.LookupRuntime("graph")
	if err != nil {
		t.Fatal(err)
	}
	inf := twoConvs(t).analyze(cost.Options{}).Totals
	e := func(k int) report.Totals {
		return twoConvs(t).analyze(cost.Options{Runtime: graph, Train: &Options{GradAccum: k}}).Totals
	}
	e1, e2, e3 := e(1), e(2), e(3)
	if !(e1.EnergyJ > inf.EnergyJ) || !near(e1.AvgPowerW, e1.EnergyJ/e1.TimeS) || !near(e1.EDPJS, e1.EnergyJ*e1.TimeS) {
		t.Errorf("step energy %v (inference %v), power %v, time %v", e1.EnergyJ, inf.EnergyJ, e1.AvgPowerW, e1.TimeS)
	}
	if d1, d2 := e2.EnergyJ-e1.EnergyJ, e3.EnergyJ-e1.EnergyJ; d1 <= 0 || math.Abs(d2-2*d1) > 1e-9*d2 {
		t.Errorf("energy not linear in K: E2-E1 %v, E3-E1 %v", d1, d2)
	}
}

// TestNilOptionsIsNoTraining: a nil *Options handed on as cost.Options.Train
// through Training is no training request, not a non-nil interface
// holding nil (which Analyze would take for one).
func TestNilOptionsIsNoTraining(t *testing.T) {
	var o *Options
	if tr := o.Training(); tr != nil {
		t.Fatalf("nil options: %#v, want a nil cost.Training", tr)
	}
	r := twoConvs(t).analyze(cost.Options{Train: o.Training()})
	if r.Totals.Train != nil {
		t.Error("a nil *Options priced a training step")
	}
}

// TestAutogradEdges: the engine's host work is priced per gradient edge
// (hwdb autograd_us): a Concat of k computed tensors hands on k
// gradients, so its backward entry carries k × autograd_s beside its
// kernels' dispatch.
func TestAutogradEdges(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 2, 3, 8, 8)
	var parts []*ir.Value
	for i := range 4 {
		y := b.Val("y"+itoa(i), ir.Float32, 2, 4, 6, 6)
		b.Node("Conv", []*ir.Value{x, b.Weight("w"+itoa(i), 4, 3, 3, 3)}, []*ir.Value{y})
		parts = append(parts, y)
	}
	cat := b.Val("cat", ir.Float32, 2, 16, 6, 6)
	b.Node("Concat", parts, []*ir.Value{cat}, ir.IntAttr("axis", 1))
	b.G.AddOutput(cat)
	r := b.analyze(cost.Options{Train: &Options{}})
	prof, err := hwdb.LookupRuntime("pytorch")
	if err != nil {
		t.Fatal(err)
	}
	seen := false
	for _, e := range r.Totals.Train.Dispatch {
		if e.Phase != "backward" || e.Node < 0 || r.Nodes[e.Node].OpType != "Concat" {
			continue
		}
		seen = true
		if want := 4*prof.AutogradS + e.Launches*r.Runtime.DispatchS; !near(e.HostS, want) {
			t.Errorf("Concat of 4 backward: host %v, want 4 edges and %v launches: %v", e.HostS, e.Launches, want)
		}
	}
	if !seen {
		t.Fatal("no backward entry for the Concat")
	}
}

// TestConcatBackwardViews: a Concat's backward hands its inputs views of
// dY (PyTorch's CatBackward0 launches nothing); a copy runs only for each
// input read once, cut along an inner axis, whose producer hands its
// gradient to a library call (the Convs here), and the input a second
// reader also reads still has its two gradients summed.
func TestConcatBackwardViews(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 2, 3, 8, 8)
	a, c, d := b.Val("a", ir.Float32, 2, 4, 6, 6), b.Val("c", ir.Float32, 2, 4, 6, 6), b.Val("d", ir.Float32, 2, 4, 6, 6)
	b.Node("Conv", []*ir.Value{x, b.Weight("w1", 4, 3, 3, 3)}, []*ir.Value{a})
	b.Node("Conv", []*ir.Value{x, b.Weight("w2", 4, 3, 3, 3)}, []*ir.Value{c})
	b.Node("Relu", []*ir.Value{c}, []*ir.Value{d})
	e := b.Val("e", ir.Float32, 2, 4, 6, 6)
	b.Node("Conv", []*ir.Value{x, b.Weight("w3", 4, 3, 3, 3)}, []*ir.Value{e})
	cat := b.Val("cat", ir.Float32, 2, 16, 6, 6)
	b.Node("Concat", []*ir.Value{a, c, d, e}, []*ir.Value{cat}, ir.IntAttr("axis", 1))
	b.G.AddOutput(cat)
	r := b.analyze(cost.Options{Train: &Options{}})
	seen := 0
	for _, n := range r.Nodes {
		switch {
		case n.OpType == "Concat":
			// a and e: read once, from a Conv: a copy each; c: read
			// twice (summed); d: from a Relu, which reads strides.
			seen++
			if n.Backward == nil || n.Backward.Launches != 2 {
				t.Errorf("Concat backward %+v, want two copies (a's and e's)", n.Backward)
			}
		case n.OpType == "Conv" && len(n.Outputs) > 0 && n.Outputs[0].Name == "c":
			seen++
			if n.Backward == nil || !strings.Contains(n.Backward.Kernels, "grad-sum") {
				t.Errorf("Conv writing c: backward %+v, want its two gradients summed", n.Backward)
			}
		}
	}
	if seen != 2 {
		t.Fatalf("found %d of the Concat and the Conv writing c", seen)
	}
}

// TestDropoutZeroRatio: Dropout(ratio 0, training_mode true), as
// torchvision's Swin exports its attention dropout, drops nothing: no
// kernel at inference (onnxruntime removes it; ATen's dropout returns its
// input when p is 0), and no mask kernel or saved mask in training.
func TestDropoutZeroRatio(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 16)
	w := b.Weight("w", 16, 32)
	h, y := b.Val("h", ir.Float32, 8, 32), b.Val("y", ir.Float32, 8, 32)
	ratio := b.Val("ratio", ir.Float32)
	ratio.Const = &ir.Tensor{DType: ir.Float32, Floats: []float64{0}, HasData: true}
	mode := b.Val("mode", ir.Bool)
	mode.Const = &ir.Tensor{DType: ir.Bool, Ints: []int64{1}, HasData: true}
	b.Node("MatMul", []*ir.Value{x, w}, []*ir.Value{h})
	b.Node("Dropout", []*ir.Value{h, ratio, mode}, []*ir.Value{y})
	b.G.AddOutput(y)
	inf := b.analyze(cost.Options{})
	if d := inf.Nodes[1]; d.Launches != 0 || d.TimeS != 0 {
		t.Errorf("inference dropout: %v launches, %g s; want a view", d.Launches, d.TimeS)
	}
	r := b.analyze(cost.Options{Train: &Options{}})
	if d := r.Nodes[1]; d.TimeS != 0 || (d.Backward != nil && (d.Backward.ForwardExtraS > 0 || d.Backward.SavedBytes > 0 || d.Backward.Launches > 0)) {
		t.Errorf("training dropout %+v backward %+v; want nothing run or kept", d, d.Backward)
	}
}
