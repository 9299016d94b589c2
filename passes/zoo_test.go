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
