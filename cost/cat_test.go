package cost

import (
	"fmt"
	"testing"

	"github.com/onnxcost/onnxcost/internal/costtest"
	"github.com/onnxcost/onnxcost/ir"
)

// TestEagerChannelsLastCat: a concatenation of convolution feature maps
// along their channels, under an eager runtime that runs the model
// channels_last, is held by its per-element index arithmetic (perf
// catElementCycles, 0.72 SM cycles an element), fp16 or fp32; under an
// NCHW runtime (the vectorized copy), TensorRT's plan, along another
// axis, or over tensors no convolution made (a transformer's 4-D keys),
// its bytes price it.
func TestEagerChannelsLastCat(t *testing.T) {
	b := newBuilder(t)
	x := b.Input("x", 128, 64, 28, 28)
	c1 := b.Val("c1", ir.Float32, 128, 64, 28, 28)
	c2 := b.Val("c2", ir.Float32, 128, 32, 28, 28)
	y := b.Val("y", ir.Float32, 128, 96, 28, 28)
	z := b.Val("z", ir.Float32, 128, 64, 56, 28)
	k := b.Input("k", 128, 32, 28, 28)
	kk := b.Val("kk", ir.Float32, 128, 64, 28, 28)
	b.Node("Conv", []*ir.Value{x, b.Weight("w1", 64, 64, 1, 1)}, []*ir.Value{c1})
	b.Node("Conv", []*ir.Value{c1, b.Weight("w2", 32, 64, 3, 3)}, []*ir.Value{c2}, ir.IntsAttr("pads", 1, 1, 1, 1))
	b.Node("Concat", []*ir.Value{c1, c2}, []*ir.Value{y}, ir.IntAttr("axis", 1))
	b.Node("Concat", []*ir.Value{c1, c1}, []*ir.Value{z}, ir.IntAttr("axis", 2))
	b.Node("Concat", []*ir.Value{k, k}, []*ir.Value{kk}, ir.IntAttr("axis", 1))
	for _, v := range []*ir.Value{y, z, kk} {
		b.G.AddOutput(v)
	}
	gpu := costtest.GPU()
	cycles := func(elems float64) float64 { return elems * 0.72 / (float64(gpu.SMs) * gpu.BoostClockMHz * 1e6) } // at boost
	for _, c := range []struct {
		runtime, dtype string
		held           bool
	}{{"graph-nhwc", "fp16", true}, {"pytorch-nhwc", "fp16", true}, {"graph-nhwc", "fp32", true}, {"graph", "fp16", false}, {"pytorch", "fp32", false}, {"tensorrt", "fp16", false}} {
		r := b.analyze(Options{Runtime: testRuntime(t, c.runtime), DType: c.dtype, Plan: "unfused"})
		for _, n := range r.Nodes {
			if n.OpType != "Concat" {
				continue
			}
			elems := map[string]float64{b.G.Nodes[2].Name: 128 * 96 * 28 * 28, b.G.Nodes[3].Name: 128 * 64 * 56 * 28, b.G.Nodes[4].Name: 128 * 64 * 28 * 28}[n.Name]
			want := c.held && n.Name == b.G.Nodes[2].Name
			if held := elems > 0 && n.ComputeS >= cycles(elems)*(1-1e-9); held != want {
				t.Errorf("%s %s %s: compute side %.3g s, the elements' index work %.3g s: held %v, want %v", c.runtime, c.dtype, n.Name, n.ComputeS, cycles(elems), held, want)
			}
		}
	}
}

// TestChannelsLastCatWalkIsBounded: the walk back from a cat's inputs to
// a convolution visits each value once, so nested concatenations of one
// map sixteen times over (16⁸ paths) are priced at once, as maps no
// convolution made.
func TestChannelsLastCatWalkIsBounded(t *testing.T) {
	b := newBuilder(t)
	v := b.Input("x", 1, 1, 2, 2)
	ch := int64(1)
	for i := range 9 {
		ch *= 16
		ins := make([]*ir.Value, 16)
		for j := range ins {
			ins[j] = v
		}
		out := b.Val(fmt.Sprintf("c%d", i), ir.Float32, 1, ch, 2, 2)
		b.Node("Concat", ins, []*ir.Value{out}, ir.IntAttr("axis", 1))
		v = out
	}
	b.G.AddOutput(v)
	r := b.analyze(Options{Runtime: testRuntime(t, "graph-nhwc"), DType: "fp16", Plan: "unfused"})
	gpu := costtest.GPU()
	last := r.Nodes[len(r.Nodes)-1]
	if idx := float64(ch*4) * 0.72 / (float64(gpu.SMs) * gpu.BoostClockMHz * 1e6); last.ComputeS >= idx {
		t.Errorf("%s: compute side %.3g s priced as a channels_last cat of feature maps (%.3g s); no convolution made them", last.Name, last.ComputeS, idx)
	}
}
