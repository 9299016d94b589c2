package ir

// ONNX Runtime's mixture-of-experts ops (com.microsoft MoE and QMoE,
// docs/ContribOperators.md and contrib_ops/cpu/moe/moe_helper.h of
// onnxruntime): what onnxruntime-genai's model builder writes for the
// expert FFNs of Mixtral- and Phi-MoE-style decoders, QMoE with 4- or
// 8-bit expert weights. The output has the input's type and shape; the
// checks refuse operands the kernel refuses, where the shapes prove it.

func init() {
	ms := "com.microsoft"
	Register(
		// MoE(input, router_probs, fc1_experts_weights, fc1_experts_bias?,
		// fc2_experts_weights, fc2_experts_bias?, fc3_experts_weights?,
		// fc3_experts_bias?)
		&OpSchema{Domain: ms, Name: "MoE", Family: FamilyGEMM, Since: 1, MinIn: 5, MaxIn: 8, MinOut: 1, MaxOut: 1,
			Check: checkMoE(moeSlots{fc1: 2, fc2: 4, fc3: 6}), Infer: inferMoE(false),
			Doc: "ONNX Runtime contrib op: top-k routed expert FFNs; output like input ([tokens, hidden] or [B, S, hidden])"},
		// QMoE(input, router_probs, fc1_experts_weights, fc1_scales,
		// fc1_experts_bias?, fc2_experts_weights, fc2_scales,
		// fc2_experts_bias?, fc3_experts_weights?, fc3_scales?,
		// fc3_experts_bias?, fc1/fc2/fc3 zero points?)
		&OpSchema{Domain: ms, Name: "QMoE", Family: FamilyGEMM, Since: 1, MinIn: 7, MaxIn: 14, MinOut: 1, MaxOut: 1,
			Check: checkMoE(moeSlots{fc1: 2, fc2: 5, fc3: 8}), Infer: inferMoE(true),
			Doc: "ONNX Runtime contrib op: MoE with 4- or 8-bit expert weights (expert_weight_bits) packed in uint8; output like input"},
	)
}

// moeSlots are the expert weights' input slots of MoE or QMoE.
type moeSlots struct{ fc1, fc2, fc3 int }

// checkMoE refuses an input not of rank 2 or 3, a router_probs not of
// rank 2 or with another token count than the input, expert weights not
// of rank 3 or with another expert count than the router's, and a k
// outside 1..experts.
func checkMoE(sl moeSlots) func(*InferCtx) error {
	return func(c *InferCtx) error {
		x, r := c.InShape(0), c.InShape(1)
		if x.Ranked && x.Rank() != 2 && x.Rank() != 3 {
			return c.Errorf("input has rank %d, want 2 [tokens, hidden] or 3 [batch, sequence, hidden]", x.Rank())
		}
		if r.Ranked && r.Rank() != 2 {
			return c.Errorf("router_probs has rank %d, want 2 [tokens, experts]", r.Rank())
		}
		if x.Ranked && r.Ranked {
			tokens, ok := x.Dims[0], true
			if x.Rank() == 3 {
				tokens, ok = MulDim(x.Dims[0], x.Dims[1])
			}
			if ok && tokens.IsKnown() && r.Dims[0].IsKnown() && tokens.Value != r.Dims[0].Value {
				return c.Errorf("router_probs has %d rows for %d tokens", r.Dims[0].Value, tokens.Value)
			}
		}
		experts, _ := knownDim(r, 1)
		k := c.AttrInt("k", 1)
		if k < 1 || (experts > 0 && k > experts) {
			return c.Errorf("k = %d, want 1 to the %d experts", k, experts)
		}
		for _, w := range []struct {
			slot int
			name string
		}{{sl.fc1, "fc1_experts_weights"}, {sl.fc2, "fc2_experts_weights"}, {sl.fc3, "fc3_experts_weights"}} {
			s := c.InShape(w.slot)
			if !c.HasIn(w.slot) || !s.Ranked {
				continue
			}
			if s.Rank() != 3 {
				return c.Errorf("%s has rank %d, want 3 [experts, ·, ·]", w.name, s.Rank())
			}
			if e, ok := knownDim(s, 0); ok && experts > 0 && e != experts {
				return c.Errorf("%s holds %d experts, router_probs scores %d", w.name, e, experts)
			}
		}
		return nil
	}
}

// inferMoE: the output is typed and shaped like the input, a float type;
// QMoE's expert weights are uint8 (packed 4- or 8-bit values).
func inferMoE(quantized bool) func(*InferCtx) error {
	return func(c *InferCtx) error {
		switch t := c.InType(0); t {
		case Float32, Float16, BFloat16, Undefined:
		default:
			return c.Errorf("input is %s, want float, float16 or bfloat16", t)
		}
		if quantized {
			if bits := c.AttrInt("expert_weight_bits", 4); bits != 4 && bits != 8 {
				return c.Errorf("expert_weight_bits %d, want 4 or 8", bits)
			}
			for _, slot := range []int{2, 5, 8} {
				if t := c.InType(slot); c.HasIn(slot) && t != Undefined && t != Uint8 {
					return c.Errorf("expert weights at input %d are %s, want uint8", slot, t)
				}
			}
		}
		return c.PassThrough(0, 0)
	}
}
