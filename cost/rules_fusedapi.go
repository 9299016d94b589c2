package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Fused-op costing. A fused node (domain "onnxcost", written by a pass,
// FusedFrom naming the nodes it replaced) runs as one kernel:
//
//   - its arithmetic is the sum of its parts' (MACs, FLOPs, executed MACs
//     and FLOPs, transcendentals);
//   - its traffic is only what crosses its boundary: its own inputs read
//     once and its own outputs written once (the intermediates stay in
//     registers or shared memory);
//   - it costs one launch;
//   - its class and GEMM view are those of its first GEMM-like part (the
//     anchor), else of its first part.
//
// A fused rule (cost/rules_fused.go) builds its parts either as phantom
// nodes costed with ctx.Estimate (ir.Node values that are in no graph, with
// Inputs/Outputs carrying shapes: e.g. the Conv part of FusedConv reads the
// fused node's own x, w, b and writes a value with the conv output's shape)
// or with ElementwisePart for an activation over a tensor, then returns
// FusedEstimate(n, ctx, parts...):
//
//	func init() { RegisterRule(ir.FusedDomain, ir.OpFusedConv, fusedConvRule) }
//	func fusedConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
//		conv, err := c.Estimate(&ir.Node{OpType: "Conv", Inputs: n.Inputs, Outputs: []*ir.Value{convOut}, Attrs: n.Attrs})
//		if err != nil { return NodeEstimate{}, err }
//		act, _ := ElementwisePart(c, n.AttrString(ir.KeyActivation, ""), convOut)
//		return FusedEstimate(n, c, conv, act), nil
//	}

// FusedEstimate combines parts into the estimate of the fused node n.
func FusedEstimate(n *ir.Node, c *RuleCtx, parts ...NodeEstimate) NodeEstimate {
	e := NodeEstimate{Launches: 1}
	for _, p := range parts {
		p.fillExecuted()
		e.MACs += p.MACs
		e.FLOPs += p.FLOPs
		e.ExecutedMACs += p.ExecutedMACs
		e.ExecutedFLOPs += p.ExecutedFLOPs
		e.Transcendentals += p.Transcendentals
	}
	for _, p := range parts {
		if p.Class.GEMMLike() {
			e.Class, e.M, e.N, e.K, e.Batch, e.Steps, e.InputK = p.Class, p.M, p.N, p.K, p.Batch, p.Steps, p.InputK
			e.WinogradFused, e.Decode = p.WinogradFused, p.Decode
			break
		}
	}
	if e.Class == "" && len(parts) > 0 {
		e.Class = parts[0].Class
	}
	if e.Class == "" {
		e.Class = perf.ClassElementwise
	}
	// Boundary traffic. Parameters: the fused node's initializer inputs,
	// whether or not a part already recorded them in c.
	// A value read through several inputs (a packed Q|K|V attention
	// input) is loaded once.
	seen := map[*ir.Value]bool{}
	for _, in := range n.Inputs {
		if in == nil || seen[in] {
			continue
		}
		seen[in] = true
		e.BytesRead += c.Bytes(in)
		if in.IsInitializer {
			e.Params += c.Numel(in)
			c.param(in, &NodeEstimate{})
		}
	}
	c.Write(n, &e)
	return e
}

// ElementwisePart is the arithmetic of elementwise op applied over v's
// elements (an activation inside a fused kernel), from the opCounts
// table; ok is false for an op not in the table (empty op: a zero part).
func ElementwisePart(c *RuleCtx, op string, v *ir.Value) (NodeEstimate, bool) {
	if op == "" {
		return NodeEstimate{}, true
	}
	cnt, ok := opCounts[op]
	if !ok {
		c.Warnf("fused activation %q has no per-element count; not counted", op)
		return NodeEstimate{}, false
	}
	elems := c.Numel(v)
	return NodeEstimate{Counts: report.Counts{FLOPs: cnt.flops * elems, Transcendentals: cnt.trans * elems}, Class: perf.ClassElementwise}, true
}
