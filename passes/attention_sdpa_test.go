package passes

import (
	"math"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// buildSDPA builds attention as torch.onnx exports a call of
// F.scaled_dot_product_attention with a float mask: Transpose(K), √scale
// Muls on Q and Kᵀ, MatMul, Add(mask), Softmax, MatMul(V).
func buildSDPA(b *builder) {
	q := b.input("q", attnB, attnH, attnL, attnD)
	k := b.input("k", attnB, attnH, attnL, attnD)
	v := b.input("v", attnB, attnH, attnL, attnD)
	mask := b.input("mask", attnB, 1, 1, attnL)
	c := math.Sqrt(1 / math.Sqrt(attnD))
	kt := b.op("Transpose", []*ir.Attribute{ir.IntsAttr("perm", 0, 1, 3, 2)}, k)
	s := b.op("MatMul", nil, b.op("Mul", nil, q, b.scalar("sq", c)), b.op("Mul", nil, kt, b.scalar("sk", c)))
	p := b.op("Softmax", []*ir.Attribute{ir.IntAttr("axis", -1)}, b.op("Add", nil, s, mask))
	b.output(b.op("MatMul", nil, p, v))
}

// TestFuseAttentionSDPA checks that the eager plan's pass fuses an SDPA
// export whole (the two scale Muls and Kᵀ's Transpose included, the
// numbers unchanged) and leaves a hand-written attention block alone,
// and that the general pass takes the SDPA export whole too.
func TestFuseAttentionSDPA(t *testing.T) {
	for _, pass := range []string{"fuse-attention-sdpa", "fuse-attention"} {
		b := newBuilder(t)
		buildSDPA(b)
		g := b.infer()
		checkPreserves(t, g, pass)
		if got := ops(g); got != "onnxcost.FusedAttention" {
			t.Errorf("%s on an SDPA export: ops %q, want one FusedAttention", pass, got)
		}
	}
	b := newBuilder(t)
	buildAttention(b, attnOpts{})
	g := b.infer()
	before := ops(g)
	if _, err := Run(g, Options{Only: []string{"fuse-attention-sdpa"}}); err != nil {
		t.Fatal(err)
	}
	if got := ops(g); got != before {
		t.Errorf("fuse-attention-sdpa changed a hand-written attention: %q -> %q", before, got)
	}
}
