package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's vision contrib ops (ir/ops_contrib_vision.go):
//
//	MaxpoolWithMask               MaxPool's window, a compare and a mask
//	                              test a tap; X and the mask read
//	ConvTransposeWithDynamicPads  ConvTranspose's count over (X, W, B)
//	CropAndResize                 a bilinear sample (4 taps, 7 flops) or
//	                              the nearest element an output; at most
//	                              the taps' elements of X read, not the map
//	CDist                         the GEMM of A's rows against B's (M·K·N
//	                              MACs) and the rows' squared norms
//	                              ((M + K)·N), 2 adds an output (−2ab + |a|²
//	                              + |b|²) and a sqrt for euclidean

func init() {
	RegisterRule(msDomain, "MaxpoolWithMask", poolRule(2, 0, 0))
	RegisterRule(msDomain, "ConvTransposeWithDynamicPads", convTransposeDynamicPadsRule)
	RegisterRule(msDomain, "CropAndResize", cropAndResizeRule)
	RegisterRule(msDomain, "CDist", cdistRule)
}

func convTransposeDynamicPadsRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	probe := &ir.Node{Name: n.Name, OpType: "ConvTranspose", Inputs: []*ir.Value{n.In(0), n.In(1), n.In(3)}, Outputs: n.Outputs, Attrs: n.Attrs}
	e, err := convTransposeRule(probe, c)
	if err == nil {
		c.Read(n, &e, 2)
	}
	return e, err
}

func cropAndResizeRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 1}
	out := c.Numel(n.Out(0))
	taps := 4.0
	if n.AttrString("mode", "bilinear") == "nearest" {
		taps = 1
	} else {
		e.FLOPs = 7 * out
	}
	if x := n.In(0); x != nil {
		e.BytesRead += min(c.Bytes(x), taps*out*c.elemBytes(x))
		c.param(x, &e)
	}
	c.Read(n, &e, 1, 2, 3)
	c.Write(n, &e)
	return e, nil
}

func cdistRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassGEMM)
	a, ok1 := c.Dims(n.In(0))
	b, ok2 := c.Dims(n.In(1))
	if !ok1 || !ok2 || len(a) != 2 || len(b) != 2 {
		return e, nil
	}
	m, k, w := a[0], b[0], a[1]
	e.MACs = m*k*w + (m+k)*w
	e.FLOPs = perf.FMAFLOPs*e.MACs + 2*m*k
	if n.AttrString("metric", "sqeuclidean") == "euclidean" {
		e.Transcendentals = m * k
	}
	e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(k), clampInt(w), 1
	return e, nil
}
