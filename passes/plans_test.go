package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// Every pass a plan names exists, and a plan that names a variant does
// not also name the full fusion it narrows (the two would race for the
// same anchors).
func TestPlansNameRealPasses(t *testing.T) {
	exclusive := map[string]string{"fuse-conv-act": "fuse-conv", "fold-conv-add": "fuse-conv", "fuse-attention-sdpa": "fuse-attention", "bn-pointwise": "fold-bn", "fuse-attention-ort": "fuse-attention", "fuse-qkv-ort": "fuse-qkv", "fuse-gemm-bias": "fuse-gemm", "fuse-gemm-bias-ort": "fuse-gemm-bias", "split-conv-bias": "fold-bn", "fuse-skip-layernorm-ort": "fuse-skip-layernorm", "fuse-gelu-ort": "fuse-gelu", "fuse-layernorm-ort": "fuse-layernorm", "fuse-rmsnorm-ort": "fuse-rmsnorm"}
	for _, p := range Plans() {
		for _, n := range p.Passes {
			if _, ok := Lookup(n); !ok {
				t.Errorf("plan %s names unknown pass %q", p.Name, n)
			}
			if other, ok := exclusive[n]; ok {
				for _, m := range p.Passes {
					if m == other {
						t.Errorf("plan %s runs both %s and %s", p.Name, n, other)
					}
				}
			}
		}
		if _, err := LookupPlan(p.Name); err != nil {
			t.Error(err)
		}
	}
	if _, err := LookupPlan("nope"); err == nil {
		t.Error("LookupPlan accepted an unknown plan")
	}
}

// The eager plan gives a convolution's bias its own kernel and leaves
// BatchNormalization and the activation alone; the numbers are unchanged.
func TestEagerPlanSplitsConvBias(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 3, 8, 8)
	conv := b.node("Conv", []*ir.Value{x, b.weight("w", 4, 3, 3, 3), b.weight("b", 4)}, 1, ir.IntsAttr("pads", 1, 1, 1, 1))
	bn := b.node("BatchNormalization", []*ir.Value{conv.Out(0), b.weight("s", 4), b.weight("bb", 4), b.weight("m", 4), b.positive("v", 4)}, 1)
	relu := b.node("Relu", []*ir.Value{bn.Out(0)}, 1)
	b.output(relu.Out(0))
	g := b.infer()
	p, err := LookupPlan("eager")
	if err != nil {
		t.Fatal(err)
	}
	checkPreservesExact(t, g, p.Passes...)
	if got, want := ops(g), "Conv Add BatchNormalization Relu"; got != want {
		t.Errorf("eager plan ops %q, want %q", got, want)
	}
	// ATen adds the bias in place (output.add_): the memory model gives
	// the Add no buffer of its own.
	for _, n := range g.Nodes {
		if got := n.InPlace(); got != (n.OpType == "Add") {
			t.Errorf("%s %s: in place %v", n.OpType, n.Name, got)
		}
	}
}
