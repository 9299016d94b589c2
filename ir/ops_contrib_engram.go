package ir

// onnxruntime's ExpandDims (Unsqueeze of one axis given as an int32
// scalar input, as TensorFlow's expand_dims; onnxruntime's CPU kernel
// counts a negative axis from the end, rank + 1 + axis) and its Engram gate (com.microsoft EngramGate, 2026): the gate of
// a conditional-memory block over hyper-connections. key and query are
// [B, S, hc, H], value [B, S, H] shared by every hyper-connection; the
// gate sigmoid(sign(d)·sqrt(max(|d|, 1e-6))), d the dot product of the
// RMS-normalized key and query over H / sqrt(H), scales value. Shapes
// follow docs/ContribOperators.md.

func init() {
	Register(
		// ExpandDims(X, axis: int32 scalar) -> Y: Unsqueeze of one axis.
		&OpSchema{Domain: "com.microsoft", Name: "ExpandDims", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferExpandDims, Doc: "ONNX Runtime contrib op: X with a dimension of 1 inserted at axis (an int32 scalar); Unsqueeze"},
		// EngramGate(key, query, value, key_norm_scale, query_norm_scale, conv_norm_scale?) -> output, gated_value_normed?
		&OpSchema{Domain: "com.microsoft", Name: "EngramGate", Family: FamilyNorm, Since: 1, MinIn: 5, MaxIn: 6, MinOut: 1, MaxOut: 2,
			Infer: inferEngramGate, Doc: "ONNX Runtime contrib op: gate(RMSNorm(key)·RMSNorm(query)) · value over hyper-connections; outputs [B, S, hc, H]"},
	)
}

// inferEngramGate refuses key or query not of one rank-4 shape, value
// not key's [B, S, H], norm scales not [hc, H], and a normed output
// asked for without conv_norm_scale; both outputs are like key.
func inferEngramGate(c *InferCtx) error {
	if err := needFloat(c, 0, "key"); err != nil {
		return err
	}
	key, query, value := c.InShape(0), c.InShape(1), c.InShape(2)
	if key.Ranked && key.Rank() != 4 {
		return c.Errorf("key has rank %d, want 4 [batch, sequence, hc_mult, hidden]", key.Rank())
	}
	if key.IsKnown() && query.IsKnown() && !query.Equal(key) {
		return c.Errorf("query is %s, key %s: they must have one shape", query, key)
	}
	if key.IsKnown() && value.IsKnown() {
		want := RankedShape(key.Dims[0], key.Dims[1], key.Dims[3])
		if !value.Equal(want) {
			return c.Errorf("value is %s, want key's [batch, sequence, hidden] %s", value, want)
		}
	}
	for i, name := range []string{"key_norm_scale", "query_norm_scale", "conv_norm_scale"} {
		s := c.InShape(3 + i)
		if !c.HasIn(3+i) || !key.IsKnown() || !s.IsKnown() {
			continue
		}
		if want := RankedShape(key.Dims[2], key.Dims[3]); !s.Equal(want) {
			return c.Errorf("%s is %s, want [hc_mult, hidden] %s", name, s, want)
		}
	}
	if c.Out(1) != nil && !c.HasIn(5) {
		return c.Errorf("gated_value_normed needs conv_norm_scale (input 5)")
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	return c.PassThrough(1, 0)
}

// inferExpandDims refuses an axis that is not one integer and runs
// Unsqueeze (opset 13, axes as an input) over it.
func inferExpandDims(c *InferCtx) error {
	if a := c.InShape(1); a.Ranked && (a.Rank() > 1 || a.Rank() == 1 && a.Dims[0].IsKnown() && a.Dims[0].Value != 1) {
		return c.Errorf("axis is %s; it must be one integer", a)
	}
	if t := c.InType(1); t != Undefined && t.IsFloat() {
		return c.Errorf("axis is %s; it must be an integer", t)
	}
	return atOpset(13, inferUnsqueeze)(c)
}
