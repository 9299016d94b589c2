package models

import "github.com/onnxcost/onnxcost/ir"

// ScaleLayers is how many decoder blocks ScaleLlama stacks: 78 nodes each
// make 112,041 nodes, the size of the large LLM exports the scale
// benchmarks are about.
const ScaleLayers = 1436

// ScaleLlama builds the graph the ir and command-line scale benchmarks
// read, infer and cost: llama-tiny (small widths, so it builds in well
// under a second) at batch 1 with ScaleLayers blocks.
// scripts/bench_vs_onnx.sh writes the same model (zoo llama-tiny,
// layers=1436) to compare with python onnx.
func ScaleLlama() (*ir.Model, error) {
	c := LlamaTiny
	c.Layers, c.Batch = ScaleLayers, 1
	return Llama(c)
}
