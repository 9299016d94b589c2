package cost

import (
	"fmt"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// captureRefusal is why a runtime that captures its session in a CUDA
// graph (hwdb.Runtime.CUDAGraph: onnxruntime's enable_cuda_graph) would
// refuse to build one for g, nil when it would not. onnxruntime's session
// creation fails on a control-flow node (a captured graph has one path)
// and, on the CUDA provider, on any memcpy node, which it takes as the
// sign of a compute node placed on the CPU: here the session's uploads
// and downloads (ir.Session, set under the onnxruntime plan). Shape
// nodes on the CPU are allowed: they ran at capture.
func captureRefusal(g *ir.Graph) error {
	var flow []string
	for _, n := range g.Nodes {
		if n.Domain == "" && (n.OpType == "If" || n.OpType == "Loop" || n.OpType == "Scan") {
			flow = append(flow, n.OpType+" "+n.Name)
		}
	}
	if len(flow) > 0 {
		return fmt.Errorf("the runtime captures the session in a CUDA graph, which onnxruntime refuses for a model with control flow (%s)", namedCount(flow, "node"))
	}
	s := g.Session
	if s == nil {
		return nil
	}
	var copies []string
	for _, n := range g.Nodes {
		for _, v := range s.Uploads[n] {
			copies = append(copies, fmt.Sprintf("%s to the GPU for %s", v.Name, n.Name))
		}
		for _, v := range s.Downloads[n] {
			copies = append(copies, fmt.Sprintf("%s to the host for %s", v.Name, n.Name))
		}
	}
	if len(copies) > 0 {
		return fmt.Errorf("the runtime captures the session in a CUDA graph, which onnxruntime refuses when it copies between host and device inside a call (%s: shape arithmetic of a dim symbolic in the file; a static export or free dimension overrides fold it)", namedCount(copies, "copy"))
	}
	return nil
}

// namedCount says how many names there are, of what, and the first of them:
// "1 node: Loop /Loop", "12 copies, the first: v to the GPU for n".
func namedCount(names []string, what string) string {
	if len(names) == 1 {
		return fmt.Sprintf("1 %s: %s", what, names[0])
	}
	plural := what + "s"
	if strings.HasSuffix(what, "y") {
		plural = strings.TrimSuffix(what, "y") + "ies"
	}
	return fmt.Sprintf("%d %s, the first: %s", len(names), plural, names[0])
}
