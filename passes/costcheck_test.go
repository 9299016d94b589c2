package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// analyzeAt costs g (built by b) on the A100 at dtype ("" for the
// model's own), failing the test on error: the before/after comparisons
// of the fusion tests.
func analyzeAt(t *testing.T, b *builder, g *ir.Graph, dtype string) *report.Report {
	t.Helper()
	r, err := cost.Analyze(g, b.M, a100(t), cost.Options{DType: dtype})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// expectNoneOf fails for every default-domain node of one of ops left in g.
func expectNoneOf(t *testing.T, g *ir.Graph, ops ...string) {
	t.Helper()
	for _, n := range g.Nodes {
		for _, op := range ops {
			if isOp(n, op) {
				t.Errorf("%s %s left", n.OpType, n.Name)
			}
		}
	}
}
