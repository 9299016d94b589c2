package ir

// ONNX Runtime's ops for linear-attention hybrids (Qwen3.5's Gated
// DeltaNet layers, Mamba's convolution; docs/ContribOperators.md):
// com.microsoft CausalConvWithState (a causal depthwise convolution that
// carries its last positions between calls), GatedDeltaNet (the
// recurrence over a per-head state, token-major), GatedRMSNorm (RMS norm
// times SiLU of a gate, per head), GatedAdd (X + Y·gate), and the
// general LinearAttention (linear, gated, delta and gated-delta rules over
// [B, T, H·d] rows) with its LinearAttentionGate.

func init() {
	ms := "com.microsoft"
	Register(
		// GatedAdd(X, Y, gate [..., 1]) -> X's shape
		&OpSchema{Domain: ms, Name: "GatedAdd", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferSameAsInput, Doc: "ONNX Runtime contrib op: X + Y·gate, gate broadcast over the last axis; output like X"},
		// GatedRMSNorm(X [..., H·C], scale [C], gate like X) -> X's shape
		&OpSchema{Domain: ms, Name: "GatedRMSNorm", Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferGatedRMSNorm, Doc: "ONNX Runtime contrib op: RMS norm over groups of C times SiLU(gate); output like X"},
		// CausalConvWithState(input, weight [C, 1, k...], bias?,
		// past_state?) -> output like input, present_state
		&OpSchema{Domain: ms, Name: "CausalConvWithState", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 2, MaxOut: 2,
			Infer: inferCausalConvWithState, Doc: "ONNX Runtime contrib op: causal depthwise convolution with a carry state; output like input"},
		// VarlenCausalConvWithState(input [T, C], weight [C, 1, k],
		// cumulative_sequence_length [B+1], bias?, initial_state [B, C,
		// (k−1)·dilation], capture_count?) -> output, final_state,
		// state_update?
		&OpSchema{Domain: ms, Name: "VarlenCausalConvWithState", Family: FamilyConv, Since: 1, MinIn: 5, MaxIn: 6, MinOut: 2, MaxOut: 3,
			Infer: inferVarlenCausalConv, Doc: "ONNX Runtime contrib op: CausalConvWithState over packed token-major sequences; output like input, final_state like initial_state, state_update [B, capacity, C]"},
		// GatedDeltaNet(query, key, value, cu_seqlens?, decay?, beta?,
		// initial_state?, a_log?, dt_bias?, capture_count?,
		// state_update_active?) -> output, final_state?, state_update?
		&OpSchema{Domain: ms, Name: "GatedDeltaNet", Family: FamilyAttention, Since: 1, MinIn: 3, MaxIn: 11, MinOut: 1, MaxOut: 3,
			Infer: inferGatedDeltaNet, Doc: "ONNX Runtime contrib op: gated delta-rule linear attention over a recurrent state (Qwen3.5)"},
		// LinearAttention(query [B,T,Hq·dk], key [B,T,Hkv·dk], value
		// [B,T,Hkv·dv], past_state?, decay?, beta?) -> output, present_state
		&OpSchema{Domain: ms, Name: "LinearAttention", Family: FamilyAttention, Since: 1, MinIn: 3, MaxIn: 6, MinOut: 2, MaxOut: 2,
			Infer: inferLinearAttention, Doc: "ONNX Runtime contrib op: linear, gated, delta or gated-delta recurrence; output [B,T,max(Hq,Hkv)·dv], state [B,Hkv,dk,dv] ([W,...] with state_window)"},
		// LinearAttentionGate(a, dt_bias, decay_scale, b?) -> decay, beta?
		&OpSchema{Domain: ms, Name: "LinearAttentionGate", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 4, MinOut: 1, MaxOut: 2,
			Infer: inferLinearAttentionGate, Doc: "ONNX Runtime contrib op: decay_scale·Softplus(a + dt_bias) and Sigmoid(b); outputs like a"},
	)
}

// LinearAttentionDims are a LinearAttention's sizes: batch, tokens a
// sequence, query and key/value heads, head sizes; ok is false when the
// shapes or attributes do not give them.
type LinearAttentionDims struct {
	Batch, Tokens, HeadsQ, HeadsKV, SizeK, SizeV int64
}

// ReadLinearAttentionDims reads n's sizes from its packed [B, T, H·d]
// query and value and its head counts.
func ReadLinearAttentionDims(n *Node) (LinearAttentionDims, bool) {
	hq, hkv := n.AttrInt("q_num_heads", 0), n.AttrInt("kv_num_heads", 0)
	q, v := n.In(0), n.In(2)
	if hq < 1 || hkv < 1 || q == nil || v == nil {
		return LinearAttentionDims{}, false
	}
	qd, ok1 := q.Shape.Ints()
	vd, ok2 := v.Shape.Ints()
	if !ok1 || !ok2 || len(qd) != 3 || len(vd) != 3 || qd[2]%hq != 0 || vd[2]%hkv != 0 {
		return LinearAttentionDims{}, false
	}
	return LinearAttentionDims{Batch: qd[0], Tokens: qd[1], HeadsQ: hq, HeadsKV: hkv, SizeK: qd[2] / hq, SizeV: vd[2] / hkv}, true
}

// linearUpdateInputs is what each update_rule needs besides Q, K, V:
// decay (slot 4) for the gated rules, beta (slot 5) for the delta ones.
var linearUpdateInputs = map[string][]int{"linear": nil, "gated": {4}, "delta": {5}, "gated_delta": {4, 5}}

// knownUpdateRule reports whether rule is one of the linear-attention
// recurrences (GatedDeltaNet's and LinearAttention's update_rule).
func knownUpdateRule(rule string) bool {
	_, ok := linearUpdateInputs[rule]
	return ok
}

func inferLinearAttention(c *InferCtx) error {
	hq, hkv := c.AttrInt("q_num_heads", 0), c.AttrInt("kv_num_heads", 0)
	if hq < 1 || hkv < 1 {
		return c.Errorf("q_num_heads %d and kv_num_heads %d, want both positive", hq, hkv)
	}
	rule := c.AttrString("update_rule", "gated_delta")
	needs := linearUpdateInputs[rule]
	if !knownUpdateRule(rule) {
		return c.Errorf("update_rule %q, want linear, gated, delta or gated_delta", rule)
	}
	for _, slot := range needs {
		if !c.HasIn(slot) {
			return c.Errorf("update_rule %q needs its %s input", rule, map[int]string{4: "decay", 5: "beta"}[slot])
		}
	}
	w := c.AttrInt("state_window", 0)
	if w < 0 || w > 8 {
		return c.Errorf("state_window %d, want 0 to 8", w)
	}
	q, k, v := c.InShape(0), c.InShape(1), c.InShape(2)
	for i, s := range []Shape{q, k, v} {
		if s.Ranked && s.Rank() != 3 {
			return c.Errorf("%s has rank %d, want 3 [batch, tokens, heads·head_size]", []string{"query", "key", "value"}[i], s.Rank())
		}
	}
	stateDT := c.InType(0)
	if c.HasIn(3) && c.InType(3) != Undefined {
		stateDT = c.InType(3)
	}
	if !q.Ranked || !v.Ranked {
		if err := c.SetOut(0, c.InType(0), Unranked()); err != nil {
			return err
		}
		return c.SetOut(1, stateDT, Unranked())
	}
	dk, err := headSize(c, "query", q.Dims[2], hq)
	if err != nil {
		return err
	}
	dv, err := headSize(c, "value", v.Dims[2], hkv)
	if err != nil {
		return err
	}
	if k.Ranked {
		if kw, ok := knownDim(k, 2); ok && dk.IsKnown() && kw != hkv*dk.Value {
			return c.Errorf("key width %d, want kv_num_heads·head_size = %d·%d", kw, hkv, dk.Value)
		}
	}
	width, _ := MulDim(D(max(hq, hkv)), dv)
	if err := c.SetOut(0, c.InType(0), RankedShape(q.Dims[0], q.Dims[1], width)); err != nil {
		return err
	}
	state := RankedShape(q.Dims[0], D(hkv), dk, dv)
	if w > 0 {
		state = RankedShape(D(w), q.Dims[0], D(hkv), dk, dv)
	}
	return c.SetOut(1, stateDT, state)
}

func inferLinearAttentionGate(c *InferCtx) error {
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	if c.Out(1) != nil && !c.HasIn(3) {
		return c.Errorf("the beta output needs input b")
	}
	return c.PassThrough(1, 3)
}

func inferGatedRMSNorm(c *InferCtx) error {
	x, scale := c.InShape(0), c.InShape(1)
	if scale.Ranked && scale.Rank() != 1 {
		return c.Errorf("scale has rank %d, want 1 [C]", scale.Rank())
	}
	if x.Ranked && x.Rank() > 0 && scale.Ranked {
		if last, ch := x.Dims[x.Rank()-1], scale.Dims[0]; last.IsKnown() && ch.IsKnown() && (ch.Value <= 0 || last.Value%ch.Value != 0) {
			return c.Errorf("X's last dim %d is not a multiple of scale's %d", last.Value, ch.Value)
		}
	}
	return c.PassThrough(0, 0)
}

// CausalStateLength is the positions a CausalConvWithState carries: (k −
// 1)·dilation of its causal (last) kernel dim k; ok is false when the
// weight's shape does not say.
func CausalStateLength(n *Node) (int64, bool) {
	w := n.In(1)
	if w == nil || !w.Shape.Ranked || w.Shape.Rank() < 3 {
		return 0, false
	}
	k := w.Shape.Dims[w.Shape.Rank()-1]
	if !k.IsKnown() || k.Value < 1 {
		return 0, false
	}
	return (k.Value - 1) * max(n.AttrInt("dilation", 1), 1), true
}

func inferCausalConvWithState(c *InferCtx) error {
	x, w := c.InShape(0), c.InShape(1)
	ndim := c.AttrInt("ndim", 1)
	if ndim < 1 || ndim > 3 {
		return c.Errorf("ndim %d, want 1, 2 or 3", ndim)
	}
	last := c.AttrInt("channels_last", 0) == 1
	if last && ndim != 1 {
		return c.Errorf("channels_last needs ndim 1, not %d", ndim)
	}
	if w.Ranked && int64(w.Rank()) != ndim+2 {
		return c.Errorf("weight has rank %d, want %d [channels, 1, k...]", w.Rank(), ndim+2)
	}
	if c.AttrInt("dilation", 1) < 1 {
		return c.Errorf("dilation %d, want at least 1", c.AttrInt("dilation", 1))
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	if !x.Ranked || (!last && int64(x.Rank()) != ndim+2) || (last && x.Rank() < 3) {
		return c.SetOut(1, c.InType(0), Unranked())
	}
	stateLen := c.Fresh("state_length")
	if l, ok := CausalStateLength(c.Node); ok {
		stateLen = D(l)
	}
	var dims []Dim
	if last {
		// (batch, state_length, d_1, ..., d_n)
		dims = append([]Dim{x.Dims[0], stateLen}, x.Dims[2:]...)
	} else {
		// (batch, channels, spatial dims but the causal one, state_length)
		dims = append(append([]Dim(nil), x.Dims[:x.Rank()-1]...), stateLen)
	}
	if wnd := c.AttrInt("state_window", 0); wnd > 0 {
		dims = append([]Dim{D(wnd)}, dims...)
	}
	return c.SetOut(1, c.InType(0), Shape{Ranked: true, Dims: dims})
}

// DeltaNetDims are a GatedDeltaNet's sizes: tokens (all sequences'),
// batch (sequences; unknown without cu_seqlens or initial_state), heads
// of query/key and of value, and the head sizes.
type DeltaNetDims struct {
	Tokens, Batch                  Dim
	HeadsQK, HeadsV, SizeQK, SizeV Dim
}

// ReadDeltaNetDims reads n's sizes from its query, value and state
// shapes (rank 3 token-major, or rank 4 [batch, seq, heads, size]).
func ReadDeltaNetDims(n *Node) (DeltaNetDims, bool) {
	q, v := n.In(0), n.In(2)
	if q == nil || v == nil || !q.Shape.Ranked || !v.Shape.Ranked || q.Shape.Rank() != v.Shape.Rank() ||
		(q.Shape.Rank() != 3 && q.Shape.Rank() != 4) {
		return DeltaNetDims{}, false
	}
	r := q.Shape.Rank()
	d := DeltaNetDims{Tokens: q.Shape.Dims[0], Batch: S("?"), HeadsQK: q.Shape.Dims[r-2], SizeQK: q.Shape.Dims[r-1],
		HeadsV: v.Shape.Dims[r-2], SizeV: v.Shape.Dims[r-1]}
	if r == 4 {
		d.Batch = q.Shape.Dims[0]
		if t, ok := MulDim(q.Shape.Dims[0], q.Shape.Dims[1]); ok {
			d.Tokens = t
		}
	}
	if s := n.In(6); s != nil && s.Shape.Ranked && s.Shape.Rank() == 4 {
		d.Batch = s.Shape.Dims[0]
	} else if cu := n.In(3); cu != nil && cu.Shape.Ranked && cu.Shape.Rank() == 1 && cu.Shape.Dims[0].IsKnown() {
		d.Batch = D(cu.Shape.Dims[0].Value - 1)
	}
	return d, true
}

func inferGatedDeltaNet(c *InferCtx) error {
	q, k := c.InShape(0), c.InShape(1)
	d, ok := ReadDeltaNetDims(c.Node)
	if !ok {
		if q.Ranked && q.Rank() != 3 && q.Rank() != 4 {
			return c.Errorf("query has rank %d, want 3 [tokens, heads, head_size] or 4 [batch, seq, heads, head_size]", q.Rank())
		}
		for i := range c.Node.Outputs {
			dt := Float32 // the states
			if i == 0 {
				dt = c.InType(0)
			}
			if c.Out(i) != nil {
				if err := c.SetOut(i, dt, Unranked()); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if k.Ranked && k.Rank() == q.Rank() {
		if hk := k.Dims[k.Rank()-2]; hk.IsKnown() && d.HeadsQK.IsKnown() && hk.Value != d.HeadsQK.Value {
			return c.Errorf("key has %d heads, query %d: num_heads_q must equal num_heads_k", hk.Value, d.HeadsQK.Value)
		}
	}
	if d.HeadsQK.IsKnown() && d.HeadsV.IsKnown() && (d.HeadsQK.Value <= 0 || d.HeadsV.Value%d.HeadsQK.Value != 0) {
		return c.Errorf("value has %d heads, not a multiple of the query's %d", d.HeadsV.Value, d.HeadsQK.Value)
	}
	if rule := c.AttrString("update_rule", "gated_delta"); !knownUpdateRule(rule) {
		return c.Errorf("update_rule %q, want linear, gated, delta or gated_delta", rule)
	}
	heads := d.HeadsV
	if d.HeadsQK.IsKnown() && d.HeadsV.IsKnown() && d.HeadsQK.Value > d.HeadsV.Value {
		heads = d.HeadsQK
	}
	out := append(append([]Dim(nil), q.Dims[:q.Rank()-2]...), heads, d.SizeV)
	if err := c.SetOut(0, c.InType(0), Shape{Ranked: true, Dims: out}); err != nil {
		return err
	}
	if c.Out(1) != nil {
		if err := c.SetOut(1, Float32, Shape{Ranked: true, Dims: []Dim{d.Batch, d.HeadsV, d.SizeV, d.SizeQK}}); err != nil {
			return err
		}
	}
	if c.Out(2) != nil {
		width := c.Fresh("state_update")
		if cap := c.AttrInt("state_update_capacity", 0); d.HeadsV.IsKnown() && d.HeadsQK.IsKnown() && d.SizeQK.IsKnown() && d.SizeV.IsKnown() {
			width = D(cap * (d.HeadsV.Value + d.HeadsQK.Value*d.SizeQK.Value + d.HeadsV.Value*d.SizeV.Value))
		}
		return c.SetOut(2, Float32, Shape{Ranked: true, Dims: []Dim{d.Batch, width}})
	}
	return nil
}

// inferVarlenCausalConv refuses input not [T, C], a weight not [C, 1, k],
// an initial_state not [B, C, (k−1)·dilation] (B from
// cumulative_sequence_length), a state_update_capacity outside [0, 8],
// and capture_count given exactly when the capacity is 0.
func inferVarlenCausalConv(c *InferCtx) error {
	if err := needFloat(c, 0, "input"); err != nil {
		return err
	}
	capacity, dil := c.AttrInt("state_update_capacity", 0), c.AttrInt("dilation", 1)
	if capacity < 0 || capacity > 8 {
		return c.Errorf("state_update_capacity %d, want 0 to 8", capacity)
	}
	if dil < 1 {
		return c.Errorf("dilation %d, want at least 1", dil)
	}
	if (capacity > 0) != c.HasIn(5) {
		return c.Errorf("capture_count is needed exactly when state_update_capacity (%d) is positive", capacity)
	}
	x := c.InShape(0)
	if x.Ranked && x.Rank() != 2 {
		return c.Errorf("input has rank %d, want 2 [total_tokens, channels]", x.Rank())
	}
	// ch is the channels for the outputs, chWant the same for the checks
	// (Dim{}: any).
	ch, chWant := c.Fresh("channels"), Dim{}
	if x.Ranked {
		ch, chWant = x.Dims[1], x.Dims[1]
	} else if w := c.InShape(1); w.Ranked && w.Rank() == 3 {
		ch, chWant = w.Dims[0], w.Dims[0]
	}
	if err := checkDims(c, 1, "weight", chWant, D(1), Dim{}); err != nil {
		return err
	}
	if err := checkVector(c, 3, "bias", ch); err != nil {
		return err
	}
	b, err := packedBatch(c, 2)
	if err != nil {
		return err
	}
	stateLen := c.Fresh("state_length")
	if l, ok := CausalStateLength(c.Node); ok {
		stateLen = D(l)
	}
	if err := checkDims(c, 4, "initial_state", b, chWant, stateLen); err != nil {
		return err
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	final := RankedShape(b, ch, stateLen)
	if st := c.InShape(4); st.Ranked {
		final = st.Clone() // as checked, and more known where the others were not
	}
	if err := c.SetOut(1, c.InType(0), final); err != nil {
		return err
	}
	return c.SetOut(2, c.InType(0), RankedShape(final.Dims[0], D(capacity), ch))
}
