package ir

// Shape rule of ONNX Attention (opset 23): softmax(Q·Kᵀ·scale + mask)·V
// with optional KV cache. Q, K, V are either 4-D [B, heads, seq, head] or
// 3-D [B, seq, heads·head], the head counts then coming from q_num_heads
// and kv_num_heads.

func init() {
	Register(&OpSchema{Name: "RotaryEmbedding", Family: FamilyElementwise, Since: 23, MinIn: 3, MaxIn: 4, MinOut: 1, MaxOut: 1,
		Infer: inferRotaryEmbedding, Doc: "Y like X: [B,H,S,head] or [B,S,H·head] (num_heads required)"})
	Register(&OpSchema{Name: "Attention", Family: FamilyAttention, Since: 23, MinIn: 3, MaxIn: 7, MinOut: 1, MaxOut: 4,
		Infer: inferAttention,
		Doc:   "Y [B,Hq,Lq,dv] (4-D) or [B,Lq,Hq·dv] (3-D); present_key/value [B,Hkv,past+Lk,d]; qk_matmul_output [B,Hq,Lq,past+Lk]"})
}

func inferAttention(c *InferCtx) error {
	q, k, v := c.InShape(0), c.InShape(1), c.InShape(2)
	dt := c.InType(0)
	if !q.Ranked || !k.Ranked || !v.Ranked {
		for i := range c.Node.Outputs {
			if err := c.SetOut(i, dt, Unranked()); err != nil {
				return err
			}
		}
		return nil
	}
	if q.Rank() != k.Rank() || q.Rank() != v.Rank() || (q.Rank() != 3 && q.Rank() != 4) {
		return c.Errorf("Q, K and V have ranks %d, %d, %d; want all 3 or all 4", q.Rank(), k.Rank(), v.Rank())
	}
	var batch, hq, hkv, lq, lk, dk, dv Dim
	if q.Rank() == 4 {
		batch, hq, lq, dk = q.Dims[0], q.Dims[1], q.Dims[2], q.Dims[3]
		hkv, lk, dv = k.Dims[1], k.Dims[2], v.Dims[3]
	} else {
		nq, nkv := c.AttrInt("q_num_heads", 0), c.AttrInt("kv_num_heads", 0)
		if nq <= 0 || nkv <= 0 {
			return c.Errorf("3-D inputs need positive q_num_heads and kv_num_heads, have %d and %d", nq, nkv)
		}
		batch, lq, lk = q.Dims[0], q.Dims[1], k.Dims[1]
		hq, hkv = D(nq), D(nkv)
		for i, w := range []Dim{q.Dims[2], k.Dims[2], v.Dims[2]} {
			if h := []int64{nq, nkv, nkv}[i]; w.IsKnown() && w.Value%h != 0 {
				return c.Errorf("hidden size %d of input %d is not a multiple of its %d heads", w.Value, i, h)
			}
		}
		dk, dv = DivDim(k.Dims[2], D(nkv), false), DivDim(v.Dims[2], D(nkv), false)
	}
	var y Shape
	if q.Rank() == 4 {
		y = RankedShape(batch, hq, lq, dv)
	} else {
		hv, _ := MulDim(hq, dv)
		y = RankedShape(batch, lq, hv)
	}
	if err := c.SetOut(0, dt, y); err != nil {
		return err
	}
	// With a cache (past_key, input 4, [B, Hkv, past, d]) the keys seen
	// are past+Lk.
	total := lk
	if pk := c.InShape(4); c.In(4) != nil && pk.Ranked && pk.Rank() == 4 {
		total = AddDim(pk.Dims[2], lk)
	}
	extra := []Shape{
		RankedShape(batch, hkv, total, dk),
		RankedShape(batch, hkv, total, dv),
		RankedShape(batch, hq, lq, total),
	}
	for i, s := range extra {
		if c.Out(i+1) != nil {
			if err := c.SetOut(i+1, dt, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// inferRotaryEmbedding: RoPE rotates pairs of channels in place, so Y has
// X's type and shape. X is 4-D [B, heads, S, head] or 3-D [B, S, hidden],
// which needs num_heads to find the head size.
func inferRotaryEmbedding(c *InferCtx) error {
	x := c.InShape(0)
	if x.Ranked {
		switch r := x.Rank(); {
		case r == 3 && c.AttrInt("num_heads", 0) <= 0:
			return c.Errorf("3-D input needs a positive num_heads")
		case r != 3 && r != 4:
			return c.Errorf("input of rank %d, want 3 or 4", r)
		}
	}
	if rot := c.AttrInt("rotary_embedding_dim", 0); rot < 0 || rot%2 != 0 {
		return c.Errorf("rotary_embedding_dim %d must be even and not negative", rot)
	}
	return c.PassThrough(0, 0)
}
