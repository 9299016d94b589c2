package ir

// The com.microsoft ops onnxruntime's transformers optimizer writes into
// a Stable Diffusion UNet or VAE it optimizes for CUDA (and Olive's
// diffusion examples ship): channels-last GroupNorm and SkipGroupNorm
// (with an optional SiLU), NhwcConv between its own transposes,
// BiasSplitGelu (the GEGLU of a transformer block's feed-forward) and
// BiasAdd. Shapes follow docs/ContribOperators.md and
// python/tools/transformers/fusion_nhwc_conv.py of onnxruntime.

func init() {
	ms := "com.microsoft"
	Register(
		// GroupNorm(X, gamma, beta)
		&OpSchema{Domain: ms, Name: "GroupNorm", Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferMSGroupNorm, Doc: "ONNX Runtime contrib op: group normalization (and SiLU when activation=1) of X, NHWC unless channels_last=0; Y like X"},
		// SkipGroupNorm(X, gamma, beta, skip, bias?) -> Y, S?
		&OpSchema{Domain: ms, Name: "SkipGroupNorm", Family: FamilyNorm, Since: 1, MinIn: 4, MaxIn: 5, MinOut: 1, MaxOut: 2,
			Infer: inferMSGroupNorm, Doc: "ONNX Runtime contrib op: S = X + skip + bias, Y = GroupNorm(S); Y and S like X"},
		// NhwcConv(X, W, B?): X, W and Y channels-last.
		&OpSchema{Domain: ms, Name: "NhwcConv", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferNhwcConv, Doc: "ONNX Runtime contrib op: Conv over NHWC X with an NHWC weight [M, kH, kW, C/group]; Y NHWC"},
		// NhwcFusedConv(X, W, B?, Z?): activation(Conv(X, W, B) + Z) over
		// NHWC X and Z, W in Conv's [M, C/group, kH, kW].
		&OpSchema{Domain: ms, Name: "NhwcFusedConv", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1,
			Infer: inferNhwcFusedConv, Doc: "ONNX Runtime contrib op: activation(Conv(X, W, B) + Z) over NHWC X, W in Conv's layout; Y NHWC"},
		// BiasSplitGelu(X [N, S, D], bias [D]) -> [N, S, D/2]
		&OpSchema{Domain: ms, Name: "BiasSplitGelu", Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferBiasSplitGelu, Doc: "ONNX Runtime contrib op: (X + bias) split in halves on the last axis, left · Gelu(right); Y [N, S, D/2]"},
		// BiasAdd(X [N, S, C], bias [C], skip [N, S, C])
		&OpSchema{Domain: ms, Name: "BiasAdd", Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1,
			Infer: inferBiasAdd, Doc: "ONNX Runtime contrib op: X + bias + skip; Y like X"},
	)
}

// msGroupNormChannels is the channel axis of a GroupNorm's X of rank r.
func msGroupNormChannels(c *InferCtx, r int) int {
	if c.AttrInt("channels_last", 1) != 0 {
		return r - 1
	}
	return 1
}

// inferMSGroupNorm (GroupNorm, SkipGroupNorm) refuses a missing or
// non-positive groups, channels it does not divide, and gamma or beta
// not of the channels' length; Y (and SkipGroupNorm's S) are like X.
func inferMSGroupNorm(c *InferCtx) error {
	g := c.AttrInt("groups", 0)
	if g < 1 {
		return c.Errorf("needs a positive groups attribute, has %d", g)
	}
	if a := c.AttrInt("activation", 0); a != 0 && a != 1 {
		return c.Errorf("activation %d, want 0 (none) or 1 (SiLU)", a)
	}
	x := c.InShape(0)
	if x.Ranked {
		if x.Rank() < 3 {
			return c.Errorf("input has rank %d, want 4 [N, H, W, C] (or NCHW with channels_last=0)", x.Rank())
		}
		if ch, ok := knownDim(x, msGroupNormChannels(c, x.Rank())); ok {
			if ch%g != 0 {
				return c.Errorf("input has %d channels, not divisible by groups %d", ch, g)
			}
			for i, name := range []string{"gamma", "beta"} {
				if l, ok := knownDim(c.InShape(1+i), 0); ok && c.InShape(1+i).Rank() == 1 && l != ch {
					return c.Errorf("%s has %d entries for %d channels", name, l, ch)
				}
			}
		}
	}
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	return c.PassThrough(1, 0)
}

// inferNhwcConv refuses X channels that are not W's C/group times group,
// runs Conv on X and W seen channels-first (W's [M, kH, kW, C/group] as
// [M, C/group, kH, kW]) and gives Y channels-last.
func inferNhwcConv(c *InferCtx) error {
	x, ws := c.InShape(0), c.InShape(1)
	if x.Ranked && ws.Ranked && x.Rank() >= 3 && ws.Rank() >= 3 {
		ch, ok1 := knownDim(x, x.Rank()-1)
		per, ok2 := knownDim(ws, ws.Rank()-1)
		if g := c.AttrInt("group", 1); ok1 && ok2 && ch != per*g {
			return c.Errorf("input has %d channels, the weight %d per group × %d groups", ch, per, g)
		}
	}
	// The weight [M, kH, kW, C/group] is laid out as an NHWC activation.
	return channelsLastConv(c, toChannelsFirst(c.In(1)))
}

// channelsLastConv is Conv's rule over X (input 0) seen channels-first,
// the weight w in Conv's layout and the bias (input 2), the output
// channels-last again.
func channelsLastConv(c *InferCtx, w *Value) error {
	ins := []*Value{toChannelsFirst(c.In(0)), w}
	if c.HasIn(2) {
		ins = append(ins, c.In(2))
	}
	y, err := InferDetached(c, "Conv", ins, c.Node.Attrs)
	if err != nil {
		return err
	}
	return c.SetOut(0, y.DType, fromChannelsFirst(y.Shape))
}

// inferNhwcFusedConv: its weight is already in Conv's layout.
func inferNhwcFusedConv(c *InferCtx) error { return channelsLastConv(c, c.In(1)) }

// inferBiasSplitGelu: X [N, S, D] with an even D and bias [D] give
// [N, S, D/2].
func inferBiasSplitGelu(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if x.Rank() != 3 {
		return c.Errorf("input has rank %d, want 3 [N, S, D]", x.Rank())
	}
	d := x.Dims[2]
	if d.IsKnown() && d.Value%2 != 0 {
		return c.Errorf("hidden dimension %d is odd: it splits in two halves", d.Value)
	}
	if b, ok := knownDim(c.InShape(1), 0); ok && d.IsKnown() && b != d.Value {
		return c.Errorf("bias has %d entries for a hidden dimension of %d", b, d.Value)
	}
	return c.SetOut(0, c.InType(0), RankedShape(x.Dims[0], x.Dims[1], DivDim(d, D(2), false)))
}

// inferBiasAdd: X, bias [C] and skip (X's shape) give Y like X.
func inferBiasAdd(c *InferCtx) error {
	x, skip := c.InShape(0), c.InShape(2)
	if x.Ranked && x.Rank() != 3 {
		return c.Errorf("input has rank %d, want 3 [N, S, C]", x.Rank())
	}
	if x.Ranked && skip.Ranked && x.IsKnown() && skip.IsKnown() && !x.Equal(skip) {
		return c.Errorf("skip is %s, input %s: they must have one shape", skip, x)
	}
	return c.PassThrough(0, 0)
}
