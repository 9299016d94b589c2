package passes

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/internal/fuzzgraph"
	"github.com/onnxcost/onnxcost/ir"
)

// FuzzPasses runs the whole pass pipeline on graphs decoded from the fuzz
// bytes (internal/fuzzgraph: chains of Conv, BatchNorm, activations,
// pools, Gemm/MatMul, elementwise and layout ops). Properties: no panic;
// every pass leaves a graph that ir.Verify accepts (Options.Check; node
// names set by ir.NameNodes, whose filter the passes must keep complete);
// node compaction (ir.Graph.CompactNodes) changes nothing; the result is
// still fully typed (ir.VerifyInferred); and where the float64
// reference evaluator of refeval_test.go can run the graph, the outputs
// before and after the passes agree within 1e-4 relative.
func FuzzPasses(f *testing.F) {
	f.Add([]byte{})
	// Conv (4-D input) -> BatchNorm -> Relu: the fusion passes' main diet.
	f.Add([]byte{2, 0, 3, 6, 6, 0, 3, 0, 0, 1, 1, 1, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		checkPipeline(t, data, Options{Check: true}, "the passes")
		// Each runtime's plan runs its own variant passes (fold-conv-add,
		// fuse-attention-sdpa, bn-pointwise, ...), which the default
		// selection leaves out.
		for _, p := range Plans() {
			if opt, run := p.Options(Options{Check: true}); run && p.Passes != nil {
				checkPipeline(t, data, opt, "plan "+p.Name)
			}
		}
	})
}

// checkPipeline runs the passes opt selects on the graph data decodes to
// and checks FuzzPasses' properties; what names the selection in messages.
func checkPipeline(t *testing.T, data []byte, opt Options, what string) {
	t.Helper()
	m, ok := fuzzgraph.Build(data)
	if !ok {
		return
	}
	if _, err := ir.InferShapes(m, ir.InferOptions{}); err != nil {
		return
	}
	g := m.Graph
	// As the pipeline does: names unique, and the node-name filter
	// that passes must keep complete (Verify checks it).
	ir.NameNodes(g)
	var before []*tensor
	evalErr := fmt.Errorf("graph too large for the reference evaluator")
	inputs := randomInputs(g, 7)
	if smallValues(g) {
		before, evalErr = safeEvaluate(g, inputs)
	}
	changesNumbers := slices.Contains(opt.Only, "fold-pad-ort") && zeroPadIntoMaxPool(g)
	if _, err := Run(g, opt); err != nil {
		t.Fatalf("%s fail on an inferred graph: %v\n%s", what, err, ir.Dump(g))
	}
	// The plan's last step in the pipeline: what follows checks the
	// compacted graph.
	dump := ir.Dump(g)
	g.CompactNodes()
	if again := ir.Dump(g); again != dump {
		t.Fatalf("CompactNodes changed the graph:\n%s\nto\n%s", dump, again)
	}
	if err := ir.VerifyInferred(g); err != nil {
		t.Fatalf("graph not fully typed after %s: %v\n%s", what, err, ir.Dump(g))
	}
	if evalErr != nil || !finite(before) || changesNumbers {
		return // the evaluator lacks an op, the numbers overflowed, or the runtime modelled changes them
	}
	after, err := safeEvaluate(g, inputs)
	if err != nil && strings.Contains(err.Error(), "op not in the reference evaluator") {
		return // a fused op the evaluator does not model (FusedElementwise)
	}
	if err != nil {
		t.Fatalf("the reference evaluator ran the graph before %s but not after: %v\n%s", what, err, ir.Dump(g))
	}
	if len(after) != len(before) {
		t.Fatalf("%d outputs before %s, %d after", len(before), what, len(after))
	}
	for i := range before {
		if e := relErr(before[i], after[i]); !(e < 1e-4) {
			t.Fatalf("output %d: relative error %g after %s\n%s", i, e, what, ir.Dump(g))
		}
	}
}

// zeroPadIntoMaxPool reports whether g has a zero Pad that a MaxPool
// reads: onnxruntime's PadFusion, which fold-pad-ort models as it runs,
// folds it into the pool's pads, whose padding is −∞, so the runtime's
// numbers differ from the file's wherever a window's real values are all
// negative (microsoft/onnxruntime PR #18136; onnx/optimizer PR #318 fixes
// the same fold in onnxsim). The plan prices what onnxruntime runs, not
// an equivalent graph.
func zeroPadIntoMaxPool(g *ir.Graph) bool {
	for _, n := range g.Nodes {
		if x := n.In(0); isOp(n, "MaxPool") && x != nil && isOp(x.Producer, "Pad") {
			if _, ok := zeroSpatialPads(x.Producer); ok {
				return true
			}
		}
	}
	return false
}

// safeEvaluate is evaluate, with a panic of the test evaluator (an op it
// only partly implements) turned into an error.
func safeEvaluate(g *ir.Graph, inputs map[string]*tensor) (out []*tensor, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("reference evaluator: %v", r)
		}
	}()
	return evaluate(g, inputs)
}

// smallValues reports whether every value of g has a known shape of at
// most 2^16 elements, so that the reference evaluator (which allocates
// every tensor) stays small: a hostile pad can legally make a pooled
// output of billions of elements.
func smallValues(g *ir.Graph) bool {
	for _, v := range g.Values() {
		if v.Kind != ir.TensorValue {
			continue
		}
		n, ok := v.Shape.NumElements()
		if !ok || n > 1<<16 {
			return false
		}
	}
	return true
}

// finite reports whether every output value is finite and moderate, so
// that a relative comparison is meaningful.
func finite(ts []*tensor) bool {
	for _, t := range ts {
		for _, x := range t.data {
			if math.IsNaN(x) || math.Abs(x) > 1e6 {
				return false
			}
		}
	}
	return true
}
