package passes

import (
	"fmt"
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
// GPT-style 149, and 145 with the same graph imported at opset 17. Their
// attention reshapes to shapes computed from Shape, which its inference
// does not evaluate, so no MatMul+bias became a Gemm and no residual Add
// joined a SkipLayerNormalization; GPT's MLP scale stayed apart from its
// projection at opset 13, where ONNX's Reshape does not even take the
// rank from the target's length, and joined it at 17 (ORTSession). The named differences:
// the mask Adds its CPU graph keeps (CUDA's BiasSoftmax takes them), BERT's
// pooler Gemm+Tanh (a CPU-only fusion: one kernel more here), and the
// shape arithmetic of the symbolic batch (Gather, Concat of shape values),
// which the CUDA provider runs on the host: the plan keeps those nodes,
// marked host (ir.Session.Host), and counts them apart, so the plan's
// kernels and host nodes together are onnxruntime's nodes. GPT's position
// Range runs on the GPU (its CUDA kernel reads its limits on the host,
// so the fallback leaves it there): a kernel in both. BERT's position ids,
// sliced to the sequence length, and their embedding Gather run in both:
// onnxruntime cannot fold them with the batch symbolic (ir.Graph.Session's
// Known), so fold-constants leaves them.
func TestORTPlanDynamicExports(t *testing.T) {
	for _, c := range []struct {
		model                   string
		opset                   int64
		ort, maskAdds, cpuFused int
		hostOps                 int // the plan's host nodes, views aside
	}{
		{"bert_base", 0, 301, 12, 1, 1},
		{"gpt_small", 0, 149, 4, 0, 21},
		{"gpt_small", 17, 145, 4, 0, 21},
	} {
		name := c.model
		if c.opset > 0 {
			name += fmt.Sprintf("_opset%d", c.opset)
		}
		t.Run(name, func(t *testing.T) {
			m, err := ir.ReadFile("../testdata/models/"+c.model+".onnx", ir.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if c.opset > 0 {
				setOpset(m, c.opset)
			}
			inferORTSession(t, m, ir.InferOptions{Bindings: map[string]int64{"batch": 1}})
			runORTPlan(t, m.Graph)
			kernels, host := ortKernels(m.Graph), hostOps(m.Graph)
			if want := c.ort - c.maskAdds + c.cpuFused - c.hostOps; kernels != want || host != c.hostOps {
				t.Errorf("onnxruntime plan: %d kernels and %d host nodes, want onnxruntime's %d - %d mask Adds + %d - %d host nodes = %d and %d (ops %s)",
					kernels, host, c.ort, c.maskAdds, c.cpuFused, c.hostOps, want, c.hostOps, ops(m.Graph))
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
	return countNodes(g, func(n *ir.Node) bool { return !n.BuildTime() && !onHostTest(g, n) })
}

// hostOps counts the nodes of g the runtime computes on the host
// (ir.Session.Host), views aside, as ortKernels counts kernels.
func hostOps(g *ir.Graph) int {
	return countNodes(g, func(n *ir.Node) bool { return onHostTest(g, n) })
}

// countNodes counts the nodes of g that are not views or Constants and
// satisfy ok.
func countNodes(g *ir.Graph, ok func(*ir.Node) bool) int {
	kernels := 0
	for _, n := range g.Nodes {
		switch n.OpType {
		case "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Shape", "Constant":
		default:
			if ok(n) {
				kernels++
			}
		}
	}
	return kernels
}

// TestORTPlanViTDynamicBatch holds the onnxruntime plan on torchvision's
// ViT-B/16 as exported (batch symbolic, bound to 1) to what onnxruntime
// 1.23.2 built from it (CPU, level all, saved graph): the qkv projection
// cut in three by Slices whose bounds come of its input's Shape, which it
// cannot fold, so no Split (GatherSliceToSplitFusion reads constant
// bounds); each query's 1/8 Div and its Transposes taken into the scores'
// FusedMatMul (alpha 0.125: the query's shape, from a Reshape to a target
// of known length, has a rank it knows at opset 17), so no Div on data;
// 37 Transposes; and the class token's Expand to [batch, 1, 768], an
// identity only once the batch is bound. Before the session view followed
// ONNX's inference, the plan kept the 12 Divs apart; with it but without
// the bounds check, it made 12 Splits; it had dropped the Expand.
func TestORTPlanViTDynamicBatch(t *testing.T) {
	m, err := ir.Read(readMaybeGzip(t, "../testdata/saved/vit_b_16.onnx.gz"), ir.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	inferORTSession(t, m, ir.InferOptions{Bindings: map[string]int64{"batch": 1}})
	runORTPlan(t, m.Graph)
	count := map[string]int{}
	for _, n := range m.Graph.Nodes {
		if !onHostTest(m.Graph, n) {
			count[n.OpType]++
		}
	}
	for op, want := range map[string]int{"Slice": 36, "Split": 0, "Div": 0, "Transpose": 37, ir.OpFusedMatMul: 60, "Softmax": 12, "Expand": 1} {
		if count[op] != want {
			t.Errorf("%d %s, want onnxruntime's %d (ops %s)", count[op], op, want, ops(m.Graph))
		}
	}
}
