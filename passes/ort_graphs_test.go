package passes

import (
	"testing"

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
	p, err := LookupPlan("onnxruntime")
	if err != nil {
		t.Fatal(err)
	}
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
			opt, _ := p.Options(Options{Check: true})
			if _, err := Run(m.Graph, opt); err != nil {
				t.Fatal(err)
			}
			kernels := 0
			for _, n := range m.Graph.Nodes {
				if n.BuildTime() {
					continue
				}
				switch n.OpType {
				case "Reshape", "Unsqueeze", "Squeeze", "Flatten", "Identity", "Shape", "Constant":
				default:
					kernels++
				}
			}
			if want := c.ort - c.maskAdds; kernels != want {
				t.Errorf("onnxruntime plan: %d kernels, want onnxruntime's %d - %d mask Adds = %d (ops %s)", kernels, c.ort, c.maskAdds, want, ops(m.Graph))
			}
		})
	}
}
