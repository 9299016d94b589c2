package cost

import (
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// rotaryHeads builds LLaMA's query path at batch b: q [b,s,h,d]
// transposed to [b,h,s,d] (a view: only a pointwise op reads it), times a
// broadcast cos, plus k2, a contiguous [b,h,s,d] tensor (rotate_half's
// cat), then multiplied by kt [b,h,d,s]. With permuted set, the Add
// reads the transposed product; without, a second contiguous tensor.
func rotaryHeads(t *testing.T, batch int64, permuted bool) *builder {
	const s, h, d = 64, 8, 32
	b := newBuilder(t)
	cos := b.Input("cos", 1, 1, s, d)
	var heads *ir.Value
	if permuted {
		q := b.Input("q", batch, s, h, d)
		heads = b.Val("qt", ir.Float32, batch, h, s, d)
		b.Node("Transpose", []*ir.Value{q}, []*ir.Value{heads}, ir.IntsAttr("perm", 0, 2, 1, 3))
	} else {
		heads = b.Input("qt", batch, h, s, d)
	}
	m := b.Val("m", ir.Float32, batch, h, s, d)
	b.Node("Mul", []*ir.Value{heads, cos}, []*ir.Value{m})
	rot := b.Input("rot", batch, h, s, d)
	sum := b.Val("sum", ir.Float32, batch, h, s, d)
	b.Node("Add", []*ir.Value{m, rot}, []*ir.Value{sum})
	kt := b.Input("kt", batch, h, d, s)
	scores := b.Val("scores", ir.Float32, batch, h, s, s)
	b.Node("MatMul", []*ir.Value{sum, kt}, []*ir.Value{scores})
	b.G.AddOutput(scores)
	return b
}

// TestPermutedHeadsFlowThroughPointwiseOps: a permuted view's order
// reaches the ops after the one that read it. The Add of a permuted and
// a contiguous tensor runs the strided loop, and the batched matmul of
// the permuted sum copies it first, but for a batch of one, whose batch
// dims collapse; a plan that is not eager (TensorRT) has neither.
func TestPermutedHeadsFlowThroughPointwiseOps(t *testing.T) {
	price := func(batch int64, permuted bool, runtime string) (add, mm, launches float64, note string) {
		r := rotaryHeads(t, batch, permuted).analyze(Options{Runtime: testRuntime(t, runtime), Plan: "unfused"})
		a, m := nodeByOp(t, r, "Add"), nodeByOp(t, r, "MatMul")
		return a.TimeS - a.LaunchS, m.TimeS, m.Launches, m.Note
	}
	for _, batch := range []int64{1, 8} {
		addP, mmP, launchesP, noteP := price(batch, true, "graph")
		addC, mmC, launchesC, _ := price(batch, false, "graph")
		if !(addP > addC) {
			t.Errorf("batch %d: Add of a permuted and a contiguous tensor %.3g s, of two contiguous ones %.3g s; want the first slower (strided loop)", batch, addP, addC)
		}
		wantCopy := batch > 1
		if gotCopy := launchesP == launchesC+1 && strings.Contains(noteP, "copy torch.matmul makes"); gotCopy != wantCopy {
			t.Errorf("batch %d: matmul of the permuted sum has %g launches (contiguous %g), note %q; want a copy: %v", batch, launchesP, launchesC, noteP, wantCopy)
		}
		if wantCopy && !(mmP > mmC) {
			t.Errorf("batch %d: matmul with its copy %.3g s, without %.3g s; want more", batch, mmP, mmC)
		}
		addT, _, launchesT, _ := price(batch, true, "tensorrt")
		addTC, _, launchesTC, _ := price(batch, false, "tensorrt")
		if addT != addTC || launchesT != launchesTC {
			t.Errorf("batch %d, tensorrt: Add %.3g vs %.3g s, matmul launches %g vs %g; want the permuted graph priced as the contiguous one", batch, addT, addTC, launchesT, launchesTC)
		}
	}
}

// TestCastOfACastIsNoKernel: priced at fp16, a cast to fp32 converts,
// and a second cast to fp32 of its output runs nothing (PyTorch's .to()
// of an fp32 tensor returns it).
func TestCastOfACastIsNoKernel(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 8, 8, 64, 64)
	c1, c2 := b.Val("c1", ir.Float32, 8, 8, 64, 64), b.Val("c2", ir.Float32, 8, 8, 64, 64)
	b.Node("Cast", []*ir.Value{x}, []*ir.Value{c1}, ir.IntAttr("to", int64(ir.Float32)))
	b.Node("Cast", []*ir.Value{c1}, []*ir.Value{c2}, ir.IntAttr("to", int64(ir.Float32)))
	b.G.AddOutput(c2)
	r := b.analyze(Options{DType: "fp16", Runtime: testRuntime(t, "graph")})
	var launches []float64
	for _, n := range r.Nodes {
		launches = append(launches, n.Launches)
	}
	if len(launches) != 2 || launches[0] != 1 || launches[1] != 0 {
		t.Errorf("launches of the two casts at fp16 = %v, want [1 0]", launches)
	}
}

// TestRecomposedPointwiseOpsPayTheFirstLoad: under the eager plan a GELU,
// SiLU (QuickGelu) or rsqrt the plan recomposed runs TensorIterator's
// loop as a Neg does, and pays its first load; a repeated one-node
// graph and TensorRT's plan do not.
func TestRecomposedPointwiseOpsPayTheFirstLoad(t *testing.T) {
	ramps := func(runtime string) map[string]float64 {
		b := newBuilder(t)
		x := b.Input("x", 8, 64, 688)
		got := map[string]float64{}
		for _, op := range []string{ir.OpFusedGelu, ir.OpFusedQuickGelu, ir.OpFusedElementwise, "Neg"} {
			y := b.Val("y_"+op, ir.Float32, 8, 64, 688)
			n := b.Node(op, []*ir.Value{x}, []*ir.Value{y})
			switch op {
			case ir.OpFusedQuickGelu:
				n.Domain = ir.FusedDomain
				n.Attrs = append(n.Attrs, ir.FloatAttr("alpha", 1))
			case ir.OpFusedElementwise:
				n.Domain = ir.FusedDomain
				n.FusedFrom = []string{"Sqrt", "Div"}
			case ir.OpFusedGelu:
				n.Domain = ir.FusedDomain
			}
			b.G.AddOutput(y)
		}
		for _, n := range b.analyze(Options{Runtime: testRuntime(t, runtime), Plan: "unfused"}).Nodes {
			got[n.OpType] = n.RampS
		}
		return got
	}
	eager, trt := ramps("graph"), ramps("tensorrt")
	for _, op := range []string{ir.OpFusedGelu, ir.OpFusedQuickGelu, ir.OpFusedElementwise} {
		if eager[op] != eager["Neg"] {
			t.Errorf("graph: %s ramp %.3g s, a Neg's %.3g s; want the same (TensorIterator's first load)", op, eager[op], eager["Neg"])
		}
		if !(trt[op] < eager[op]) {
			t.Errorf("%s ramp %.3g s under tensorrt, %.3g s eager; want less", op, trt[op], eager[op])
		}
	}
}

// TestONNXGeluIsTheRecomposedKernel: an opset-20 Gelu node and the GELU
// recomposed from Div, Erf, Add and Muls are one ATen kernel under the
// eager plan, first load and transcendental chain included, so they are
// priced alike whichever form the exporter wrote.
func TestONNXGeluIsTheRecomposedKernel(t *testing.T) {
	for _, runtime := range []string{"graph", "pytorch", "tensorrt"} {
		b := newBuilder(t)
		times := map[string]float64{}
		for _, domain := range []string{"", ir.FusedDomain} {
			x := b.Input("x"+domain, 128, 3072) // each cold
			y := b.Val("y"+domain, ir.Float32, 128, 3072)
			n := b.Node("Gelu", []*ir.Value{x}, []*ir.Value{y})
			n.Domain, n.Name = domain, "gelu"+domain
			b.G.AddOutput(y)
		}
		for _, n := range b.analyze(Options{Runtime: testRuntime(t, runtime), Plan: "unfused"}).Nodes {
			times[n.Name] = n.TimeS
		}
		onnx, fused := times["gelu"], times["gelu"+ir.FusedDomain]
		if onnx <= 0 || onnx != fused {
			t.Errorf("%s: ONNX Gelu %.4g s, recomposed %.4g s; want the same kernel's price", runtime, onnx, fused)
		}
	}
}
