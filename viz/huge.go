package viz

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/report"
)

// HugeNodes is the model size, in nodes or in tensors the nodes write,
// above which the drawings degrade unless --full: a 2M-node chain took
// roofline 135 s and 4.3 GB for a 523 MB SVG, html over 300 s, and a
// 300,000-output Split html 78 s. The degraded drawings (the main plan
// only, its costliest points and rows, the graph's boxes capped) take
// seconds and show what a reader looks for.
const HugeNodes = 20_000

// Caps on a huge model's drawings.
const (
	HugePoints = 2_000 // roofline points
	HugeRows   = 2_000 // rows of the html node table
)

// ModelSize counts the nodes of the model a plan was made from (a fused
// node stands for the nodes it merged) and the tensors they write.
func ModelSize(r *report.Report) (nodes, outputs int) {
	for i := range r.Nodes {
		nodes += max(1, len(r.Nodes[i].FusedFrom))
		outputs += len(r.Nodes[i].Outputs)
	}
	return nodes, outputs
}

// IsHuge reports whether r's model is past HugeNodes.
func IsHuge(r *report.Report) bool {
	n, o := ModelSize(r)
	return n > HugeNodes || o > HugeNodes
}

// HugeNote says that a drawing of r's huge model was degraded, what it
// shows and how to get everything (force).
func HugeNote(r *report.Report, shows, force string) string {
	n, o := ModelSize(r)
	size := fmt.Sprintf("%d nodes", n)
	if o > HugeNodes {
		size = fmt.Sprintf("nodes writing %d tensors", o)
	}
	return fmt.Sprintf("the model has %s (over %d): %s; %s", size, HugeNodes, shows, force)
}
