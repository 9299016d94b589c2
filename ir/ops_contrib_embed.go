package ir

// ONNX Runtime's fused BERT embedding (com.microsoft
// EmbedLayerNormalization, docs/ContribOperators.md of onnxruntime): the
// word, position and (optional) segment embedding lookups, their sum and
// a layer norm in one kernel, plus the mask's per-sequence length that
// the BERT Attention op takes as mask_index. The transformers optimizer
// writes it for every BERT-family encoder.

func init() {
	registerFresh(
		// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
		// position_embedding, segment_embedding?, gamma, beta, mask?,
		// position_ids?) -> output, mask_index?, embedding_sum?
		&OpSchema{Domain: "com.microsoft", Name: "EmbedLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 7, MaxIn: 9, MinOut: 1, MaxOut: 3,
			Check: checkEmbedLayerNorm, Infer: inferEmbedLayerNorm,
			Doc: "ONNX Runtime contrib op: output [B,S,hidden] typed like word_embedding; mask_index int32 [B]; embedding_sum like output"},
		// QEmbedLayerNormalization: the same first eight slots with 8-bit
		// tables, gamma and beta, then their scales (8-12) and zero points
		// (13-17); what onnxruntime's dynamic quantizer writes for it.
		&OpSchema{Domain: "com.microsoft", Name: "QEmbedLayerNormalization", Family: FamilyNorm, Since: 1, MinIn: 18, MaxIn: 18, MinOut: 1, MaxOut: 2,
			Check: checkQEmbedLayerNorm, Infer: inferQEmbedLayerNorm,
			Doc: "ONNX Runtime contrib op: EmbedLayerNormalization over 8-bit tables; output float32 [B,S,hidden], mask_index int32 [B]"},
	)
}

// Input slots of EmbedLayerNormalization.
const (
	embedIDs = iota
	embedSegmentIDs
	embedWord
	embedPosition
	embedSegment
	embedGamma
	embedBeta
	embedMask
	embedPositionIDs
)

// checkEmbedLayerNorm refuses what onnxruntime's kernel refuses
// (embed_layer_norm_helper.cc), where the shapes prove it: ids, segment
// ids and mask of rank 2 and one shape, embedding tables of rank 2 with
// one width, gamma and beta of that width. Symbolic dims never disagree.
func checkEmbedLayerNorm(c *InferCtx) error {
	ids := c.InShape(embedIDs)
	if ids.Ranked && ids.Rank() != 2 {
		return c.Errorf("input_ids has rank %d, want 2 [batch, sequence]", ids.Rank())
	}
	for _, s := range []struct {
		slot int
		name string
	}{{embedSegmentIDs, "segment_ids"}, {embedMask, "mask"}} {
		if !c.HasIn(s.slot) {
			continue
		}
		sh := c.InShape(s.slot)
		if !sh.Ranked {
			continue
		}
		if sh.Rank() != 2 {
			return c.Errorf("%s has rank %d, want 2 like input_ids", s.name, sh.Rank())
		}
		for i := range 2 {
			a, okA := knownDim(ids, i)
			b, okB := knownDim(sh, i)
			if okA && okB && a != b {
				return c.Errorf("%s is %s, input_ids %s: they must have one shape", s.name, sh, ids)
			}
		}
	}
	if p := c.InShape(embedPositionIDs); c.HasIn(embedPositionIDs) && p.Ranked {
		if p.Rank() != 2 {
			return c.Errorf("position_ids has rank %d, want 2 [batch or 1, sequence]", p.Rank())
		}
		a, okA := knownDim(ids, 1)
		b, okB := knownDim(p, 1)
		if okA && okB && a != b {
			return c.Errorf("position_ids cover %d positions, input_ids %d", b, a)
		}
	}
	var hidden int64 = -1
	tables := []struct {
		slot int
		name string
	}{{embedWord, "word_embedding"}, {embedPosition, "position_embedding"}, {embedSegment, "segment_embedding"}}
	for _, tb := range tables {
		if !c.HasIn(tb.slot) {
			continue
		}
		sh := c.InShape(tb.slot)
		if !sh.Ranked {
			continue
		}
		if sh.Rank() != 2 {
			return c.Errorf("%s has rank %d, want 2 [rows, hidden]", tb.name, sh.Rank())
		}
		w, ok := knownDim(sh, 1)
		if !ok {
			continue
		}
		if hidden >= 0 && w != hidden {
			return c.Errorf("%s is %d wide, the tables before it %d: all embeddings share the hidden size", tb.name, w, hidden)
		}
		hidden = w
	}
	for _, s := range []struct {
		slot int
		name string
	}{{embedGamma, "gamma"}, {embedBeta, "beta"}} {
		sh := c.InShape(s.slot)
		if !c.HasIn(s.slot) || !sh.Ranked {
			continue
		}
		if sh.Rank() != 1 {
			return c.Errorf("%s has rank %d, want 1 [hidden]", s.name, sh.Rank())
		}
		if w, ok := knownDim(sh, 0); ok && hidden >= 0 && w != hidden {
			return c.Errorf("%s has %d entries, the embeddings are %d wide", s.name, w, hidden)
		}
	}
	return nil
}

// checkQEmbedLayerNorm refuses what checkEmbedLayerNorm refuses of the
// slots the two ops share.
func checkQEmbedLayerNorm(c *InferCtx) error {
	return c.withInputs(c.Node.Inputs[:embedPositionIDs], checkEmbedLayerNorm)
}

// inferQEmbedLayerNorm refuses tables, gamma or beta that are not 8-bit
// integers, then gives EmbedLayerNormalization's shapes over the shared
// slots, the output float32 (the kernel dequantizes as it gathers).
func inferQEmbedLayerNorm(c *InferCtx) error {
	names := []string{embedWord: "word_embedding_quant", embedPosition: "position_embedding_quant",
		embedSegment: "segment_embedding", embedGamma: "gamma_quant", embedBeta: "beta_quant"}
	for slot := embedWord; slot <= embedBeta; slot++ {
		if t := c.InType(slot); c.HasIn(slot) && t != Undefined && t != Int8 && t != Uint8 {
			return c.Errorf("%s is %s, want int8 or uint8", names[slot], t)
		}
	}
	return c.withInputs(c.Node.Inputs[:embedPositionIDs], func(v *InferCtx) error { return embedLayerNormShapes(v, Float32) })
}

// inferEmbedLayerNorm: output and embedding_sum are [B, S, hidden] typed
// like word_embedding; mask_index is [B] typed like input_ids (int32).
// hidden is the first known width of the word, position or segment
// table, gamma or beta.
func inferEmbedLayerNorm(c *InferCtx) error {
	dt := c.InType(embedWord)
	if dt == Undefined {
		dt = Float32
	}
	return embedLayerNormShapes(c, dt)
}

// embedLayerNormShapes is inferEmbedLayerNorm with the output dtype dt.
func embedLayerNormShapes(c *InferCtx, dt DType) error {
	idt := c.InType(embedIDs)
	if idt == Undefined {
		idt = Int32
	}
	ids := c.InShape(embedIDs)
	if !ids.Ranked {
		for i, t := range []DType{dt, idt, dt} {
			if err := c.SetOut(i, t, Unranked()); err != nil {
				return err
			}
		}
		return nil
	}
	hidden, found := Dim{}, false
	for _, src := range [][2]int{{embedWord, 1}, {embedPosition, 1}, {embedSegment, 1}, {embedGamma, 0}, {embedBeta, 0}} {
		if !c.HasIn(src[0]) {
			continue
		}
		if d, ok := knownDim(c.InShape(src[0]), src[1]); ok {
			hidden, found = D(d), true
			break
		}
	}
	if !found {
		if w := c.InShape(embedWord); w.Ranked && w.Rank() == 2 {
			hidden = w.Dims[1]
		} else {
			hidden = c.Fresh("hidden")
		}
	}
	out := RankedShape(ids.Dims[0], ids.Dims[1], hidden)
	if err := c.SetOut(0, dt, out); err != nil {
		return err
	}
	if idx := maskIndex(c, ids); idx != nil {
		if err := setIntConst(c, 1, idt, []int64{int64(len(idx))}, idx); err != nil {
			return err
		}
	} else if err := c.SetOut(1, idt, RankedShape(ids.Dims[0])); err != nil {
		return err
	}
	return c.SetOut(2, dt, out.Clone())
}

// maskIndex is mask_index's values when the mask's are known (given with
// --input-data): per sequence, the position of its first 0, or the
// sequence length when it has none, as onnxruntime's kernels compute it
// (a right-padded mask's count of ones). Nil when unknown.
func maskIndex(c *InferCtx, ids Shape) []int64 {
	m, ok := c.ConstInts(embedMask)
	if !ok || !ids.IsKnown() || ids.Rank() != 2 {
		return nil
	}
	b, s := ids.Dims[0].Value, ids.Dims[1].Value
	if s <= 0 || int64(len(m)) != b*s {
		return nil
	}
	idx := make([]int64, b)
	for i := range idx {
		idx[i] = s
		for j, v := range m[int64(i)*s : int64(i+1)*s] {
			if v == 0 {
				idx[i] = int64(j)
				break
			}
		}
	}
	return idx
}
