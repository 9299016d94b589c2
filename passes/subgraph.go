package passes

import (
	"fmt"

	"github.com/onnxcost/onnxcost/ir"
)

// runBodies applies the selected passes to every If/Loop/Scan body (any
// graph held in a node attribute) of g, depth first, each to its own
// fixpoint, before g itself: a body is a graph like any other, and the
// rewrites only read and replace nodes of the graph they are given (a
// value a body captures from an outer graph lists the body's readers
// among its consumers, so no outer fusion can swallow it, and the body's
// fusions never delete it: ReplaceNodes removes only outputs of the nodes
// it replaces). With Check, the verifier runs on the outermost graph after
// every pass that changed a body, which checks the body in the scope of
// the values it captures (a body alone would read undefined tensors).
// It returns whether every body converged.
func runBodies(g *ir.Graph, opt Options, st *Stats) (bool, error) {
	converged := true
	sub := opt
	sub.DumpTo = nil // dumps show the main graph only
	if sub.verifyRoot == nil {
		sub.verifyRoot = g
	}
	for _, n := range g.Nodes {
		for _, body := range n.Subgraphs() {
			bst, err := Run(body, sub)
			if err != nil {
				return false, fmt.Errorf("in %s %q body %q: %w", n.OpType, n.Name, body.Name, err)
			}
			for name, k := range bst.Changed {
				st.Changed[name] += k
			}
			converged = converged && bst.Converged
		}
	}
	return converged, nil
}
