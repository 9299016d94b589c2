package ir

// Shape rules of the fused ops in FusedDomain (fused.go), so that a model
// written by `onnxcost optimize` reads back and costs without importing
// package passes. A fused op's output is what its parts compute: the parts'
// own shape rules run on detached nodes (InferDetached).

func init() {
	const d = FusedDomain
	Register(
		&OpSchema{Domain: d, Name: OpFusedConv, Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferFusedConv,
			Doc: "Conv + bias + residual + activation + pool in one kernel (passes/epilogue.go)"},
		&OpSchema{Domain: d, Name: OpWinogradConv, Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferFusedConv,
			Doc: "F(m×m,3×3) Winograd convolution with FusedConv's epilogue (passes/winograd.go)"},
		&OpSchema{Domain: d, Name: OpFusedGemm, Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 5, MinOut: 1, MaxOut: 1, Infer: inferFusedGemm,
			Doc: "Gemm/MatMul + bias + residual + activation + gating Mul in one kernel (passes/epilogue.go)"},
		&OpSchema{Domain: d, Name: OpFusedMatMul, Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferFusedMatMul,
			Doc: "MatMul with its operands' last-two-axis transposes and a scalar scale folded in, as onnxruntime's com.microsoft FusedMatMul (passes/matmulscale.go)"},
		&OpSchema{Domain: d, Name: OpGroupedGemm, Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: -1, MinOut: 1, MaxOut: -1, Infer: inferGroupedGemm,
			Doc: "GEMMs of one activation by several weights as one GEMM over the packed weights (passes/qkv.go)"},
		// Gelu, Softmax, LayerNormalization: y has x's shape.
		&OpSchema{Domain: d, Name: OpFusedGelu, Traits: Elementwise, Family: FamilyElementwise, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst,
			Doc: "a decomposed GELU recognised as one op (passes/decomp.go)"},
		&OpSchema{Domain: d, Name: OpFusedQuickGelu, Traits: Elementwise, Family: FamilyElementwise, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst,
			Doc: "x·sigmoid(alpha·x) (Sigmoid and Mul; alpha 1: SiLU) in one kernel, as onnxruntime's QuickGelu (passes/quickgelu.go)"},
		&OpSchema{Domain: d, Name: OpFusedSoftmax, Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst,
			Doc: "a decomposed softmax recognised as one op (passes/decomp.go)"},
		&OpSchema{Domain: d, Name: OpFusedLayerNorm, Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst,
			Doc: "a decomposed layer normalisation recognised as one op (passes/decomp.go)"},
		// RMSNormalization(x, gamma): y has x's shape.
		&OpSchema{Domain: d, Name: OpFusedRMSNorm, Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferLikeFirst,
			Doc: "a decomposed RMS normalisation (LLaMA's RMSNorm) recognised as one op (passes/rmsnorm.go)"},
		// Rotary(x, cos, sin): x*cos + rotate_half(x)*sin, the tables
		// broadcasting onto x.
		&OpSchema{Domain: d, Name: OpFusedRotary, Family: FamilyElementwise, Since: 1, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferBroadcastAll,
			Doc: "rotary position embedding written as rotate_half (Slice, Neg, Concat, Mul, Add) in one kernel (passes/rotary.go)"},
		// FusedElementwise: a chain of broadcasting ops, so the result has
		// the broadcast shape of every input.
		&OpSchema{Domain: d, Name: OpFusedElementwise, Traits: Elementwise, Family: FamilyElementwise, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferBroadcastAll,
			Doc: "a chain of elementwise ops in one kernel (passes/elementwise.go)"},
		// FusedAttention(Q, K, V, mask...): softmax(Q·Kᵀ)·V keeps Q's
		// leading dims and V's last (head) dim, whether the head split is
		// inside the node ([B,L,H·d]) or outside ([B,H,L,d]).
		&OpSchema{Domain: d, Name: OpFusedAttention, Family: FamilyAttention, Since: 1, MinIn: 3, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferFusedAttention,
			Doc: "softmax(Q·Kᵀ)·V in one kernel (passes/attention.go)"},
		&OpSchema{Domain: d, Name: OpSkipLayerNorm, Family: FamilyNorm, Since: 1, MinIn: 3, MaxIn: 5, MinOut: 1, MaxOut: 2, Infer: inferSkipLN,
			Doc: "residual Add + LayerNormalization in one kernel (passes/skipln.go)"},
	)
}

func inferFusedConv(c *InferCtx) error {
	convAttrs, poolAttrs := SplitPoolAttrs(c.Node)
	y, err := InferDetached(c, "Conv", []*Value{c.In(0), c.In(1)}, convAttrs)
	if err != nil {
		return err
	}
	if _, _, pool := EpilogueOf(c.Node); pool != "" {
		if y, err = InferDetached(c, pool, []*Value{y}, poolAttrs); err != nil {
			return err
		}
	}
	return c.SetOut(0, y.DType, y.Shape)
}

func inferFusedGemm(c *InferCtx) error {
	anchor := AnchorOf(c.Node)
	ins := []*Value{c.In(0), c.In(1)}
	if anchor == "Gemm" && c.In(2) != nil {
		ins = append(ins, c.In(2))
	}
	y, err := InferDetached(c, anchor, ins, c.Node.Attrs)
	if err != nil {
		return err
	}
	return c.SetOut(0, y.DType, y.Shape)
}

// fusedOutDType is the recorded output dtype (KeyOutDTypes), or input 0's.
func fusedOutDType(c *InferCtx, i int) DType {
	if dts, ok := c.AttrInts(KeyOutDTypes); ok && i < len(dts) && DType(dts[i]).Valid() {
		return DType(dts[i])
	}
	return c.InType(0)
}

func inferLikeFirst(c *InferCtx) error {
	return c.SetOut(0, fusedOutDType(c, 0), c.InShape(0).Clone())
}

func inferBroadcastAll(c *InferCtx) error {
	var shapes []Shape
	for i := 0; i < c.NumIn(); i++ {
		if v := c.In(i); v != nil && v.Kind == TensorValue {
			shapes = append(shapes, v.Shape)
		}
	}
	s, err := BroadcastShapes(shapes...)
	if err != nil {
		return c.Errorf("%w", err)
	}
	return c.SetOut(0, fusedOutDType(c, 0), s)
}

func inferFusedAttention(c *InferCtx) error {
	q, v := c.InShape(0), c.InShape(2)
	if !q.Ranked || !v.Ranked || q.Rank() < 2 || v.Rank() < 1 {
		return c.SetOut(0, fusedOutDType(c, 0), Unranked())
	}
	out := q.Clone()
	dv := v.Dims[len(v.Dims)-1]
	if QKVPacked(c.Node) {
		if !dv.IsKnown() || dv.Value%3 != 0 {
			return c.Errorf("packed Q|K|V last axis %s is not a known multiple of 3", dv)
		}
		dv = D(dv.Value / 3)
	}
	qp, qu := AttentionLayout(c.Node, 0)
	vp, vu := AttentionLayout(c.Node, 2)
	op, _ := c.AttrInts(KeyOPerm)
	if c.Node.Attr(KeyNumHeads) == nil && (qp != nil || qu != nil || vp != nil || vu != nil || op != nil) {
		// Head layout given by perms: the result is [..., Lq, dv] in Q's
		// head layout, then transposed by o_perm.
		qh, ok1 := ToHeadLayout(q.Dims, qp, qu, D(1))
		vh, ok2 := ToHeadLayout(v.Dims, vp, vu, D(1))
		if !ok1 || !ok2 || len(qh) < 2 || len(vh) < 1 {
			return c.Errorf("head-layout perms do not fit Q %s and V %s", q, v)
		}
		oh := append([]Dim(nil), qh...)
		oh[len(oh)-1] = vh[len(vh)-1]
		if op != nil {
			var ok bool
			if oh, ok = ToHeadLayout(oh, op, nil, D(1)); !ok {
				return c.Errorf("o_perm %v does not fit the rank-%d output", op, len(oh))
			}
		}
		return c.SetOut(0, fusedOutDType(c, 0), RankedShape(oh...))
	}
	out.Dims[len(out.Dims)-1] = dv
	if o, ok := packedHeadsOut(c.Node, q, dv); ok {
		out = o
	}
	return c.SetOut(0, fusedOutDType(c, 0), out)
}

// packedHeadsOut is the output of a packed-layout FusedAttention
// (num_heads) whose o_perm does not undo q_perm (passes/attention_sink.go
// moves a Transpose into Q's layout only): Q's head view [a, b, H, d]
// permuted by q_perm gives the head layout [B, H, L, d]; the result
// [B, H, L, dv/H] permuted by o_perm, its last two axes merged, is the
// output. ok is false when the perms are absent or not 4-axis.
func packedHeadsOut(n *Node, q Shape, dv Dim) (Shape, bool) {
	h := n.AttrInt(KeyNumHeads, 0)
	qp, ok1 := n.AttrInts(KeyQPerm)
	op, ok2 := n.AttrInts(KeyOPerm)
	if h <= 0 || !ok1 || !ok2 || len(qp) != 4 || len(op) != 4 || q.Rank() != 3 || !dv.IsKnown() || dv.Value%h != 0 {
		return Shape{}, false
	}
	view := []Dim{q.Dims[0], q.Dims[1], D(h), D(dv.Value / h)}
	head, ok := ToHeadLayout(view, qp, nil, D(1))
	if !ok {
		return Shape{}, false
	}
	o, ok := ToHeadLayout(head, op, nil, D(1))
	if !ok || !o[2].Is(h) {
		return Shape{}, false
	}
	return RankedShape(o[0], o[1], D(h*(dv.Value/h))), true
}

// inferGroupedGemm: output i is X with its last axis replaced by Ni, the
// output width of weight i (input 1+2i, transposed when trans_b[i]).
func inferGroupedGemm(c *InferCtx) error {
	xs := c.InShape(0)
	if !xs.Ranked || xs.Rank() < 1 {
		return c.Errorf("input X must be ranked")
	}
	trans, _ := c.AttrInts(KeyTransB)
	for i := range c.Node.Outputs {
		ws := c.InShape(1 + 2*i)
		if !ws.Ranked || ws.Rank() != 2 {
			return c.Errorf("weight %d must be a ranked matrix", i)
		}
		col := ws.Dims[1]
		if i < len(trans) && trans[i] != 0 {
			col = ws.Dims[0]
		}
		s := xs.Clone()
		s.Dims[len(s.Dims)-1] = col
		if err := c.SetOut(i, c.InType(0), s); err != nil {
			return err
		}
	}
	return nil
}

// inferSkipLN: Y and Sum are like X.
func inferSkipLN(c *InferCtx) error {
	for i := range c.Node.Outputs {
		if err := c.PassThrough(i, 0); err != nil {
			return err
		}
	}
	return nil
}
