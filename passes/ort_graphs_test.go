package passes

import (
	"testing"

	"github.com/onnxcost/onnxcost/ir"

	"github.com/onnxcost/onnxcost/models"
)

// TestORTPlanAgainstORTGraphs holds the onnxruntime plan to the graphs
// onnxruntime itself ran for the same zoo models (docs/accuracy.md): each
// exported with random weights, run once in an onnxruntime 1.23.2 CPU
// session at level all with optimizedModelFilePath (onnxruntime-node),
// the saved graph's nodes counted without views. The plan's kernels must
// be onnxruntime's count less the one named difference: the mask Adds its
// CPU graph keeps that CUDA's BiasSoftmax, which the plan prices, takes.
// The constant subgraphs onnxruntime folds (the causal mask's Trilu, the
// rotary tables' Cos and Sin, a Gather of constant positions: 2 in GPT-2,
// 3 in LLaMA) the plan computes at build time too (fold-constants);
// without that pass the counts are 2 and 3 over. A change to the plan that moves a
// count must name what onnxruntime does differently.
func TestORTPlanAgainstORTGraphs(t *testing.T) {
	for _, c := range []struct {
		entry    string
		params   map[string]int64
		ort      int // onnxruntime's kernels
		maskAdds int // mask Adds its CPU graph keeps
	}{
		{"gpt2-small", map[string]int64{"layers": 2, "seq": 64}, 55, 2},
		{"llama-tiny", nil, 69, 2},
		{"transformer", map[string]int64{"layers": 2}, 32, 2},
	} {
		t.Run(c.entry, func(t *testing.T) {
			var e *models.Entry
			for _, z := range models.Zoo() {
				if z.Name == c.entry {
					e = &z
				}
			}
			if e == nil {
				t.Fatalf("no zoo entry %s", c.entry)
			}
			m, err := e.Build(c.params)
			if err != nil {
				t.Fatal(err)
			}
			runORTPlan(t, m.Graph)
			kernels := ortKernels(m.Graph)
			if want := c.ort - c.maskAdds; kernels != want {
				t.Errorf("onnxruntime plan: %d kernels, want onnxruntime's %d - %d mask Adds = %d (ops %s)", kernels, c.ort, c.maskAdds, want, ops(m.Graph))
			}
		})
	}
}

// TestORTPlanDynamicExports holds the onnxruntime plan on fixtures as
// exported (batch symbolic, bound to 1 here) to the graphs onnxruntime
// 1.23.2 built from them (CPU, level all, optimized graph saved, counted
// without views): BERT-base 301 kernels (213 with the batch fixed),
// GPT-style 149. Their attention reshapes to shapes computed from Shape,
// which its inference does not evaluate, so no MatMul+bias became a Gemm,
// no residual Add joined a SkipLayerNormalization, and GPT's MLP scale
// stayed apart from its projection (ORTSession). The named differences:
// the mask Adds its CPU graph keeps (CUDA's BiasSoftmax takes them), BERT's
// pooler Gemm+Tanh (a CPU-only fusion: one kernel more here), and the
// shape arithmetic it runs (Gather, Concat, Range of shape values; on the
// CUDA provider these run on the CPU) that the plan computes from the
// bound dims. BERT's position ids, sliced to the sequence length, and
// their embedding Gather run in both: onnxruntime cannot fold them with
// the batch symbolic (ir.Graph.Session's Known), so fold-constants leaves
// them.
func TestORTPlanDynamicExports(t *testing.T) {
	for _, c := range []struct {
		model                   string
		ort, maskAdds, cpuFused int
		shapeOps                int
	}{
		{"bert_base", 301, 12, 1, 1},
		{"gpt_small", 149, 4, 0, 22},
	} {
		t.Run(c.model, func(t *testing.T) {
			m, err := ir.ReadFile("../testdata/models/"+c.model+".onnx", ir.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			inferORTSession(t, m, ir.InferOptions{Bindings: map[string]int64{"batch": 1}})
			runORTPlan(t, m.Graph)
			kernels := ortKernels(m.Graph)
			if want := c.ort - c.maskAdds + c.cpuFused - c.shapeOps; kernels != want {
				t.Errorf("onnxruntime plan: %d kernels, want onnxruntime's %d - %d mask Adds + %d - %d shape ops = %d (ops %s)", kernels, c.ort, c.maskAdds, c.cpuFused, c.shapeOps, want, ops(m.Graph))
			}
		})
	}
}

// inferORTSession infers m with bound and records what onnxruntime knew of
// it when it built the graph (ORTSession), as the pipeline does for the
// onnxruntime plan.
func inferORTSession(t *testing.T, m *ir.Model, bound ir.InferOptions) {
	t.Helper()
	if _, err := ir.InferShapes(m, bound); err != nil {
		t.Fatal(err)
	}
	if err := ORTSession(m, bound); err != nil {
		t.Fatal(err)
	}
}

// runORTPlan runs the onnxruntime plan on g, checking the graph after
// each pass.
func runORTPlan(t *testing.T, g *ir.Graph) {
	t.Helper()
	p, err := LookupPlan("onnxruntime")
	if err != nil {
		t.Fatal(err)
	}
	opt, _ := p.Options(Options{Check: true})
	if _, err := Run(g, opt); err != nil {
		t.Fatal(err)
	}
}

// ortKernels counts g's kernels as onnxruntime's saved graphs were
// counted: views, Constants and nodes computed at build time aside.
func ortKernels(g *ir.Graph) int {
	kernels := 0
	for _, n := range g.Nodes {
		switch n.OpType {
		case "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Shape", "Constant":
		default:
			if !n.BuildTime() {
				kernels++
			}
		}
	}
	return kernels
}
