package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Rules for onnxruntime's linear-attention hybrid ops
// (ir/ops_contrib_linear.go: Qwen3.5's Gated DeltaNet layers and the
// general LinearAttention).

func init() {
	RegisterRule(msDomain, "GatedAdd", gatedAddRule)
	RegisterRule(msDomain, "GatedRMSNorm", gatedRMSNormRule)
	RegisterRule(msDomain, "CausalConvWithState", causalConvRule)
	// The packed form: the same taps an output element, its offsets,
	// initial and final states and state updates read and written.
	RegisterRule(msDomain, "VarlenCausalConvWithState", causalConvRule)
	RegisterRule(msDomain, "GatedDeltaNet", gatedDeltaNetRule)
	RegisterRule(msDomain, "LinearAttention", linearAttentionRule)
	RegisterRule(msDomain, "LinearAttentionGate", linearAttentionGateRule)
}

// gatedAddRule: X + Y·gate, 2 FLOPs an element, one kernel.
func gatedAddRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	e.FLOPs = 2 * c.Numel(n.Out(0))
	return e, nil
}

// gatedRMSNormRule: one kernel over rows of C (scale's length): per
// element the square and sum (2), the normalizing and scale products (2),
// SiLU of the gate (Swish's count) and the product with it (1); per row
// the mean and epsilon (2) and an rsqrt.
func gatedRMSNormRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	out := c.Numel(n.Out(0))
	ch := c.Numel(n.In(1))
	if !(out > 0) || !(ch > 0) {
		return e, nil
	}
	rows := out / ch
	sw, swT, _ := OpCount("Swish")
	e.FLOPs = (5+sw)*out + 2*rows
	e.Transcendentals = swT*out + rows
	e.Rows, e.RowLen, e.RowPasses = clampInt(rows), clampInt(ch), 1
	e.RowInSample = true
	return e, nil
}

// causalConvRule: a depthwise convolution over the past state and the
// input, one kernel: per output element one multiply-accumulate a kernel
// tap, the bias (1) and SiLU when fused; input, weight, bias and past
// state read, output and present state written.
func causalConvRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	out := c.Numel(n.Out(0))
	w, ok := c.Dims(n.In(1))
	if !ok || len(w) < 3 || !(out > 0) {
		return e, nil
	}
	taps := prod(w[2:])
	e.MACs = out * taps
	e.FLOPs = perf.FMAFLOPs * e.MACs
	bias := 2
	if n.OpType == "VarlenCausalConvWithState" {
		bias = 3 // after cumulative_sequence_length
	}
	if n.In(bias) != nil {
		e.FLOPs += out
	}
	if act := n.AttrString("activation", "none"); act == "silu" || act == "swish" {
		f, t, _ := OpCount("Swish")
		e.FLOPs += f * out
		e.Transcendentals += t * out
	}
	return e, nil
}

// deltaNetChunk is the chunk width onnxruntime's prefill takes when the
// chunk_size attribute does not pin 32 (the attribute's default, 64).
const deltaNetChunk = 64

// recurrence is a linear-attention kernel's work a token under
// update_rule rule (linear, gated, delta, gated_delta) over states of
// dk × dv at hState heads, output at hOut heads, in chunks of chunk
// tokens of perSeq-token sequences:
//
//	update     k⊗v into each state: hState·dk·dv multiply-accumulates
//	retrieval  (delta rules) Sᵀk before the update: hState·dk·dv more
//	output     Sᵀq at each output head: hOut·dk·dv
//	prefill    each token meets its chunk's earlier tokens: hOut·(dk + dv)
//	           each
//	decay      (gated rules) the state scaled: hState·dk·dv flops
func recurrence(rule string, hState, hOut, dk, dv, perSeq, chunk float64) (macs, decay float64) {
	state := dk * dv
	macs = hState*state + hOut*state + max(min(perSeq, chunk)-1, 0)*hOut*(dk+dv)
	if rule == "delta" || rule == "gated_delta" {
		macs += hState * state
	}
	if rule == "gated" || rule == "gated_delta" {
		decay = hState * state
	}
	return macs, decay
}

// gatedDeltaNetRule: the recurrence S_t = exp(g_t)·S_{t−1} + k_t·(β_t(v_t
// − exp(g_t)·S_{t−1}ᵀk_t))ᵀ, o_t = S_tᵀq_t per value head over a
// [head_size_qk × head_size_v] state, as one kernel, its terms as
// update_rule keeps them (recurrence; gated_delta, the default, keeps
// all: 3·dk·dv multiply-accumulates a token and value head and the
// decay). The state is read and written once a call in float32, with q,
// k, v and the gates.
func gatedDeltaNetRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassAttention)
	d, ok := ir.ReadDeltaNetDims(n)
	tokens, ok1 := knownF(d.Tokens)
	hv, ok2 := knownF(d.HeadsV)
	dk, ok3 := knownF(d.SizeQK)
	dv, ok4 := knownF(d.SizeV)
	if !ok || !ok1 || !ok2 || !ok3 || !ok4 || !(tokens > 0) {
		return e, nil
	}
	seqs, known := knownF(d.Batch)
	if !known || !(seqs > 0) {
		seqs = 1
	}
	perSeq := tokens / seqs
	chunk := float64(deltaNetChunk)
	if n.AttrInt("chunk_size", 64) == 32 {
		chunk = 32
	}
	macsPerToken, decay := recurrence(n.AttrString("update_rule", "gated_delta"), hv, hv, dk, dv, perSeq, chunk)
	e.MACs = tokens * macsPerToken
	e.FLOPs = perf.FMAFLOPs*e.MACs + tokens*decay
	if hqk, ok := knownF(d.HeadsQK); ok && n.AttrInt("qk_l2_norm", 0) == 1 {
		e.FLOPs += 2 * 3 * tokens * hqk * dk // q and k: square, sum, scale
		e.Transcendentals += 2 * tokens * hqk
	}
	if n.AttrString("gate_activation", "none") == "qwen" {
		// −exp(a_log)·Softplus(decay + dt_bias): an add, softplus's
		// exp, add and log, exp(a_log), the product and its sign.
		e.FLOPs += 6 * tokens * hv
		e.Transcendentals += 3 * tokens * hv
	}
	if n.AttrString("beta_activation", "none") == "sigmoid" {
		f, tr, _ := OpCount("Sigmoid")
		e.FLOPs += f * tokens * hv
		e.Transcendentals += tr * tokens * hv
	}
	e.M, e.N = clampInt(perSeq), clampInt(dv)
	e.K, e.Batch = clampInt(macsPerToken/hv/dv), clampInt(seqs*hv)
	return e, nil
}

// linearAttentionRule: LinearAttention's recurrence (recurrence: update
// and retrieval per KV head, output per max(Hq, Hkv) heads, the decay,
// the prefill's chunk terms, chunk_size or 64 wide) plus the output's
// scale, 1 flop an element, in one kernel. The state is read
// (past_state) and written (present_state) once a call, Q, K, V and the
// gates read, the output written.
func linearAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassAttention)
	d, ok := ir.ReadLinearAttentionDims(n)
	if !ok || d.Batch < 1 || d.Tokens < 1 {
		return e, nil
	}
	hout := float64(max(d.HeadsQ, d.HeadsKV))
	dv := float64(d.SizeV)
	chunk := n.AttrInt("chunk_size", 0)
	if chunk < 1 {
		chunk = deltaNetChunk
	}
	perToken, decay := recurrence(n.AttrString("update_rule", "gated_delta"), float64(d.HeadsKV), hout,
		float64(d.SizeK), dv, float64(d.Tokens), float64(chunk))
	tokens := float64(d.Batch * d.Tokens)
	e.MACs = tokens * perToken
	e.FLOPs = perf.FMAFLOPs*e.MACs + tokens*hout*dv + tokens*decay
	if decay > 0 {
		e.Transcendentals += tokens * float64(d.HeadsKV) // exp of the log-space decay
	}
	e.M, e.N = clampInt(float64(d.Tokens)), clampInt(dv)
	e.K, e.Batch = clampInt(perToken/hout/dv), clampInt(float64(d.Batch)*hout)
	return e, nil
}

// linearAttentionGateRule: one kernel over a's elements: the bias add,
// Softplus and the scale (Softplus's count and 2), and with b a Sigmoid
// each of its elements.
func linearAttentionGateRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	sp, spT, _ := OpCount("Softplus")
	a := c.Numel(n.In(0))
	e.FLOPs, e.Transcendentals = (sp+2)*a, spT*a
	if n.In(3) != nil && n.Out(1) != nil {
		sg, sgT, _ := OpCount("Sigmoid")
		b := c.Numel(n.In(3))
		e.FLOPs += sg * b
		e.Transcendentals += sgT * b
	}
	return e, nil
}

// knownF is a dim's value when known.
func knownF(d ir.Dim) (float64, bool) {
	if !d.IsKnown() {
		return 0, false
	}
	return float64(d.Value), true
}
