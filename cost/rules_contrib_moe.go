package cost

import (
	"fmt"
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/detmath"
	"github.com/onnxcost/onnxcost/ir"
)

func init() {
	RegisterRule(msDomain, "MoE", moeRule(moeInputs{
		weights: [3]int{2, 4, 6}, biases: [3]int{3, 5, 7}}))
	RegisterRule(msDomain, "QMoE", moeRule(moeInputs{
		weights: [3]int{2, 5, 8}, biases: [3]int{4, 7, 10}, extras: [][3]int{{3, 6, 9}, {11, 12, 13}}, packed: true}))
}

// moeInputs are the slots of fc1, fc2 and fc3's expert weights, biases
// and per-expert quantization tensors (QMoE's scales and zero points).
type moeInputs struct {
	weights, biases [3]int
	extras          [][3]int
	packed          bool // weights pack 8/expert_weight_bits values a byte
}

// moeRule: com.microsoft MoE and QMoE run, as onnxruntime's CUDA kernels
// (TensorRT-LLM's cutlass MoE) do, a gating kernel (softmax over the E
// experts' router scores, top k), a permutation copying each token's row
// once per chosen expert, a grouped GEMM over the experts for fc1 (and
// fc3, the gate of a gated FFN), an activation kernel when the FFN is
// gated (else the activation is fc1's epilogue), a grouped GEMM for fc2,
// and a finalize kernel summing each token's k rows by their routing
// weights. With T tokens, h hidden, i inter, N1 and N3 fc1's and fc3's
// widths (N1 = 2i for fused SwiGLU), r = T·k routed rows:
//
//	macs  = r·h·(N1 + N3) + r·i·h
//	flops = 2·macs + biases + the activation over r·i + softmax and top-k
//	        over T·E + 2·r·h (the weighted sum) [+ 2 a weight dequantized,
//	        QMoE, once per expert run]
//
// Experts touched: a token batch routes to A = E·(1 − (1 − k/E)^T)
// experts on average under uniform routing (k for one token, all of them
// for many); only their weights, biases, scales and zero points are read,
// which is what makes a decode step of a sparse model cheap. The
// intermediates (the permuted rows, fc1's output, the activation, fc2's
// rows) are written and read back at the output's float type. Each
// grouped GEMM's view is A products of r/A rows; fc1 with the routing
// and the activation is the node's kernel, fc2 with the finalize its
// Trailer, both at the node's float path (QMoE dequantizes in the GEMM,
// as MatMulNBits). The widths come from the weights' element counts, so
// both of onnxruntime's weight layouts ([E, N, h] and the older [E, h,
// N]) read the same.
func moeRule(in moeInputs) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		x, y := n.In(0), n.Out(0)
		hidden, ok1 := c.Dim(x, -1)
		experts, ok2 := c.Dim(n.In(1), -1)
		if !ok1 || !ok2 || !(hidden > 0) || !(experts > 0) {
			return kernel(n, c, perf.ClassGEMM), nil
		}
		tokens := c.Numel(x) / hidden
		k := min(max(float64(n.AttrInt("k", 1)), 1), experts)
		pack := 1.0
		if in.packed {
			pack = 8 / float64(max(n.AttrInt("expert_weight_bits", 4), 1))
		}
		width := func(slot int) float64 { return c.Numel(n.In(slot)) * pack / (experts * hidden) }
		n1, inter, n3 := width(in.weights[0]), width(in.weights[1]), width(in.weights[2])
		if !(n1 > 0) || !(inter > 0) || !(tokens > 0) {
			return kernel(n, c, perf.ClassGEMM), nil
		}
		act := n.AttrString("activation_type", "relu")
		gated := act == "swiglu" || n3 > 0
		rows := tokens * k
		active := experts * (1 - detmath.Pow(1-k/experts, tokens))
		share := active / experts
		eb := c.elemBytes(y)

		fc1 := NodeEstimate{Class: perf.ClassGEMM, Launches: 3} // gating, permutation, fc1 (+fc3)
		fc1.MACs = rows * hidden * (n1 + n3)
		fc1.FLOPs = perf.FMAFLOPs * fc1.MACs
		sm := normOps["Softmax"]
		fc1.FLOPs += sm.inFLOPs*tokens*experts + sm.rowFLOPs*tokens + tokens*experts*k
		fc1.Transcendentals = sm.inTrans*tokens*experts + sm.rowTrans*tokens
		af, at := moeActivation(act, n3 > 0)
		fc1.FLOPs += af * rows * inter
		fc1.Transcendentals += at * rows * inter
		c.Read(n, &fc1, 0, 1)
		fc1.BytesWritten += rows * hidden * eb // the permuted rows
		fc1.BytesRead += rows * hidden * eb
		fc1.BytesWritten += rows * (n1 + n3) * eb
		if gated {
			fc1.Launches++
			fc1.BytesRead += rows * (n1 + n3) * eb
			fc1.BytesWritten += rows * inter * eb
		}
		fc2 := NodeEstimate{Class: perf.ClassGEMM, Launches: 2} // fc2, finalize
		fc2.MACs = rows * inter * hidden
		fc2.FLOPs = perf.FMAFLOPs*fc2.MACs + 2*rows*hidden
		fc2.BytesRead += rows * inter * eb
		fc2.BytesWritten += rows * hidden * eb
		fc2.BytesRead += rows*hidden*eb + rows*4 // fc2's rows and their fp32 routing weights
		c.Write(n, &fc2)

		parts := [3]*NodeEstimate{&fc1, &fc2, &fc1}
		outs := [3]float64{n1, hidden, n3}
		for i, slot := range in.weights {
			e := parts[i]
			if b := n.In(in.biases[i]); b != nil {
				e.FLOPs += rows * outs[i]
			}
			for _, s := range append([]int{slot, in.biases[i]}, moeExtras(in.extras, i)...) {
				if v := n.In(s); v != nil {
					e.BytesRead += share * c.Bytes(v)
					c.param(v, e)
				}
			}
			if in.packed && n.In(slot) != nil {
				dq := dequantOps * active * hidden * outs[i]
				if i == 1 {
					dq = dequantOps * active * inter * hidden
				}
				e.DequantFLOPs += dq
				e.FLOPs += dq
			}
		}
		m, groups := float64(clampInt(math.Ceil(rows/active))), float64(clampInt(math.Round(max(active, 1))))
		fc1.M, fc1.N, fc1.K, fc1.Batch = clampInt(m), clampInt(n1+n3), clampInt(hidden), clampInt(groups)
		fc2.M, fc2.N, fc2.K, fc2.Batch = clampInt(m), clampInt(hidden), clampInt(inter), clampInt(groups)
		e := fc1.withTrailer(fc2)
		e.Note = moeNote(active, experts, k)
		return e, nil
	}
}

// moeExtras are part i's quantization tensors' slots (QMoE's scale and
// zero point of fc1, fc2 or fc3).
func moeExtras(extras [][3]int, i int) []int {
	s := make([]int, 0, len(extras))
	for _, ex := range extras {
		s = append(s, ex[i])
	}
	return s
}

// moeActivation is the FLOPs and transcendentals of the FFN's activation
// per inter element: SwiGLU's clamp-free G·sigmoid(αG)·(L+β) (α, the
// sigmoid, two multiplies and an add; its L is fc3's output when fc1 is
// not fused), else the named activation, times fc3's gate when there is
// one.
func moeActivation(act string, gate bool) (flops, trans float64) {
	switch act {
	case "swiglu":
		s, st, _ := OpCount("Sigmoid")
		return s + 4, st
	case "identity":
		flops, trans = 0, 0
	case "silu":
		flops, trans, _ = OpCount("Swish")
	case "gelu":
		flops, trans, _ = OpCount("Gelu")
	default:
		flops, trans, _ = OpCount("Relu")
	}
	if gate {
		flops++ // times fc3's gate
	}
	return flops, trans
}

// moeNote says how many experts' weights the estimate reads.
func moeNote(active, experts, k float64) string {
	return fmt.Sprintf("routing, fc1 grouped GEMM and activation, then fc2 grouped GEMM and the weighted sum; "+
		"%.3g of %g experts' weights read (top-%g routing, uniform)", active, experts, k)
}
