package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/models"
)

// TestResNetWithBatchNormFullyFused runs every pass on the zoo's ResNet-50,
// which keeps BatchNormalization after every conv (torch's own export
// folds them, so the fixture cannot show this): every Conv+BN(+Relu) and
// Add+Relu chain must end inside a fused conv, and the launches must
// fall below half.
func TestResNetWithBatchNormFullyFused(t *testing.T) {
	m, err := models.ResNet(models.ResNetConfig{Depth: 50})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	count := func(op string) int {
		k := 0
		for _, n := range g.Nodes {
			if n.OpType == op && n.Domain == "" {
				k++
			}
		}
		return k
	}
	kernels := func() int {
		k := 0
		for _, n := range g.Nodes {
			if n.OpType != "Constant" && n.OpType != "Flatten" && n.OpType != "Reshape" {
				k++
			}
		}
		return k
	}
	convs, bns, before := count("Conv"), count("BatchNormalization"), kernels()
	if convs != 53 || bns != 53 { // 1 stem + 16 blocks × 3 + 4 downsample convs, each with a BN
		t.Fatalf("zoo ResNet-50 has %d convs and %d BNs, want 53 each", convs, bns)
	}
	st, err := Run(g, Options{Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Converged {
		t.Errorf("passes did not converge: %+v", st)
	}
	if err := ir.VerifyInferred(g); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"BatchNormalization", "Relu", "Add"} {
		if k := count(op); k != 0 {
			t.Errorf("%d %s nodes left unfused", k, op)
		}
	}
	if after := kernels(); 2*after >= before {
		t.Errorf("kernels %d → %d: want fewer than half", before, after)
	}
}

// TestLlamaRMSNormOneKernel: every RMSNorm of the zoo's LLaMA decoder (two
// per layer and the final one) becomes one RMSNormalization, with no
// Pow, ReduceMean or Sqrt kernel left, and each rotary embedding (Q and K
// of every layer) one Rotary, with no Neg, Slice or Concat left.
func TestLlamaRMSNormOneKernel(t *testing.T) {
	const layers = 3
	m, err := models.Llama(models.LlamaConfig{Vocab: 100, DModel: 32, Heads: 4, KVHeads: 2, Layers: layers, FF: 64, Seq: 8})
	if err != nil {
		t.Fatal(err)
	}
	g := m.Graph
	if _, err := Run(g, Options{Check: true}); err != nil {
		t.Fatal(err)
	}
	if err := ir.VerifyInferred(g); err != nil {
		t.Fatal(err)
	}
	if n := len(fusedNodes(g, ir.OpFusedRMSNorm)); n != 2*layers+1 {
		t.Errorf("%d RMSNormalization nodes, want %d", n, 2*layers+1)
	}
	if n := len(fusedNodes(g, ir.OpFusedRotary)); n != 2*layers {
		t.Errorf("%d Rotary nodes, want %d", n, 2*layers)
	}
	for _, n := range g.Nodes {
		if isOp(n, "Pow") || isOp(n, "ReduceMean") || isOp(n, "Sqrt") || isOp(n, "Neg") || isOp(n, "Slice") || isOp(n, "Concat") {
			t.Errorf("%s %s left unfused", n.OpType, n.Name)
		}
	}
}
