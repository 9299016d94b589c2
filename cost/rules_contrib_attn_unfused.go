package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's DecoderAttention and LongformerAttention
// (ir/ops_contrib_attn_unfused.go), priced as their CUDA kernels run
// them (decoder_attention.cc and _impl.cu, longformer_attention.cc and
// _impl.cu): projection GEMMs through cuBLAS, then attention in several
// kernels whose scores go through DRAM. Each node is two priced kernels:
// the projections (its own, a GEMM) and the attention (its Trailer, a
// batched GEMM view of Q·Kᵀ carrying both GEMMs' work, the softmax and the
// layout kernels, with their launches), both at the node's float type.
//
// Both kernels copy a count to the host and wait for it before they can
// size their work (DecoderAttention its four flags, LongformerAttention
// the global-token count): a stall of the host the model does not price,
// and the reason neither can be captured in a CUDA graph; the note says
// so.

func init() {
	RegisterRule(msDomain, "DecoderAttention", decoderAttentionRule)
	RegisterRule(msDomain, "LongformerAttention", longformerAttentionRule)
	RegisterRule(msDomain, "QOrderedLongformerAttention", qorderedLongformerRule)
}

// unfusedScores adds to att the arithmetic and traffic of an attention
// whose elems scores (over rows softmax rows, head size d) are written by
// Q·Kᵀ, read and written by the softmax and read by P·V, each element eb
// bytes:
//
//	macs  = elems·2d                  (Q·Kᵀ, then P·V)
//	flops = 2·macs + softmax (4 per score + 1 per row, 1 exp per score)
//	bytes = 4·elems·eb
func unfusedScores(att *NodeEstimate, elems, rows, d, eb float64) {
	att.MACs += elems * 2 * d
	att.FLOPs += perf.FMAFLOPs * elems * 2 * d
	sm := normOps["Softmax"]
	att.FLOPs += sm.inFLOPs*elems + sm.rowFLOPs*rows
	att.Transcendentals += sm.inTrans*elems + sm.rowTrans*rows
	att.BytesWritten += 2 * elems * eb
	att.BytesRead += 2 * elems * eb
}

// biasedGEMM adds a cuBLAS projection of rows × in × out whose bias is
// broadcast by a GEMM of inner size 1 into the output, which the
// projection then accumulates into (beta 1): two launches, the output
// written twice and read once, one flop per output for the bias.
func biasedGEMM(e *NodeEstimate, rows, in, out, eb float64) {
	e.MACs += rows * in * out
	e.FLOPs += perf.FMAFLOPs*rows*in*out + rows*out
	e.BytesWritten += 2 * rows * out * eb
	e.BytesRead += rows * out * eb
	e.Launches += 2
}

// gemmView sets e's GEMM view to the larger of its projections.
func gemmView(e *NodeEstimate, m, n, k float64) {
	if m*n*k > float64(e.M)*float64(e.N)*float64(e.K) {
		e.M, e.N, e.K, e.Batch = clampInt(m), clampInt(n), clampInt(k), 1
	}
}

// decoderAttentionRule: DecoderAttention over query [S, B, D] in H heads
// of d = D/H, attending L keys (ir.DecoderAttentionModeOf says which):
//
//	projections: Q over S·B rows; K|V over the rows the mode projects
//	             (S for self attention, key's length for cross attention,
//	             none when cross attention reads the caches), each with
//	             its bias GEMM
//	attention:   Q transposed; K|V transposed (and concatenated after the
//	             caches for cached self attention); the new caches copied
//	             out; Q·Kᵀ, softmax (with key_padding_mask), P·V over
//	             B·H·S·L scores; the context transposed to [S, B, D]
//
// With a flag that decides the work not a constant the node is one
// kernel of its boundary traffic, marked approximate by its symbolic
// cache length.
func decoderAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h := float64(n.AttrInt("num_heads", 0))
	q, ok := c.Dims(n.In(0))
	mode := ir.DecoderAttentionModeOf(n)
	if !ok || len(q) != 3 || h <= 0 || !mode.Known {
		return kernel(n, c, perf.ClassAttention), nil
	}
	s, b, hid := q[0], q[1], q[2]
	d := hid / h
	eb := c.elemBytes(n.In(0))
	rows, kv := s, s // K|V rows projected; keys attended
	switch mode.Keys() {
	case ir.KeysKey:
		if k, ok := c.Dim(n.In(1), 0); ok {
			rows, kv = k, k
		}
	case ir.KeysCache:
		rows = 0
		kv, _ = c.Dim(n.In(6), 2)
	case ir.KeysCacheAndQuery:
		cacheLen, _ := c.Dim(n.In(6), 2)
		kv = cacheLen + s
	}

	proj := NodeEstimate{Class: perf.ClassGEMM}
	c.Read(n, &proj, 0, 2, 4)
	biasedGEMM(&proj, s*b, hid, hid, eb)
	gemmView(&proj, s*b, hid, hid)
	if rows > 0 {
		c.Read(n, &proj, 3)
		if mode.Cross {
			c.Read(n, &proj, 1)
		} else {
			proj.BytesRead += c.Bytes(n.In(0))
		}
		biasedGEMM(&proj, rows*b, hid, 2*hid, eb)
		gemmView(&proj, rows*b, 2*hid, hid)
	}

	att := NodeEstimate{Class: perf.ClassGEMM, Launches: 5} // Q and context transposes, Q·Kᵀ, softmax, P·V
	qb, kvb, newKV := s*b*hid*eb, rows*b*2*hid*eb, kv*b*2*hid*eb
	att.BytesRead += 2 * qb // transposes of Q and of the context
	att.BytesWritten += qb
	if rows > 0 {
		att.BytesRead += kvb
		att.BytesWritten += kvb
		att.Launches++
	}
	if mode.Cached && !mode.Cross {
		c.Read(n, &att, 6, 7)
		att.BytesRead += kvb
		att.BytesWritten += newKV
		att.Launches += 2
	} else if mode.Cached {
		c.Read(n, &att, 6, 7)
	}
	if n.Out(1) != nil || n.Out(2) != nil {
		att.BytesRead += newKV
		writeOutputs(n, c, &att, 1, 2)
		att.Launches += 2
	}
	att.BytesRead += qb + newKV // Q·Kᵀ reads Q and K, P·V reads V
	att.BytesWritten += qb      // the context, before its transpose
	if n.In(5) != nil {
		c.Read(n, &att, 5)
	}
	unfusedScores(&att, b*h*s*kv, b*h*s, d, eb)
	writeOutputs(n, c, &att, 0)
	att.M, att.N, att.K, att.Batch = clampInt(s), clampInt(kv), clampInt(d), clampInt(b*h)

	e := proj.withTrailer(att)
	e.Note = fmt.Sprintf("projection GEMMs (bias by GEMM), then unfused attention over %.0f keys: the B·H·S·L scores written to DRAM and read back by softmax and P·V; "+
		"the flags are copied to the host and waited for before the first GEMM (not priced)", kv)
	return e, nil
}

// longformerAttentionRule: LongformerAttention over input [B, S, D] in H
// heads of d = D/H, a window of W keys on each side and G global tokens
// (the most any sequence has: counted in the global input when it is a
// constant, else 1, the classification token Longformer's models mark).
// onnxruntime's compact-memory kernels (the default) compute each block
// of W queries against its own and its two neighbouring blocks of keys:
//
//	scores      = B·H·((3S − 2W)·W + 2·S·G)   (local blocks; the local
//	              queries' scores against the global keys and the global
//	              queries' against all keys)
//	projections = the Q|K|V GEMM over B·S rows; with a global token the
//	              global Q|K|V GEMM too (stacked [3, D, D] weights: three
//	              GEMMs each, the global Q over the G tokens only)
//
// then bias-add transposes of both, and Q·Kᵀ, softmax and P·V over the
// scores in DRAM (three local and two global GEMMs each way). With more
// global tokens than W, or S = 2W, onnxruntime falls back to full S × S
// scores.
func longformerAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	return longformerRule(n, c, []int{0, 1, 2, 3, 4, 5, 6}, false)
}

// qorderedLongformerRule: QOrderedLongformerAttention is
// LongformerAttention (slots ir.QOrderedLongformerSlots) whose Q|K|V
// projections are int8 cublasLt GEMMs with the bias in their epilogue,
// each followed by a kernel that dequantizes its output to fp16 rows (2
// flops an element), whose attention runs in fp16 (the node's Trailer,
// FloatDType fp16), and whose fp16 output is quantized to int8 by one more
// kernel (3 flops an element); its scales are read.
func qorderedLongformerRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := longformerRule(n, c, ir.QOrderedLongformerSlots, true)
	if err == nil {
		c.Read(n, &e, 1, 3, 5, 6, 9, 11, 13)
	}
	return e, err
}

// longformerRule prices a Longformer attention whose input, weight,
// bias, mask, global_weight, global_bias and global inputs are at slots;
// quantized is QOrderedLongformerAttention's int8 form.
func longformerRule(n *ir.Node, c *RuleCtx, slots []int, quantized bool) (NodeEstimate, error) {
	in := func(i int) *ir.Value { return n.In(slots[i]) }
	read := func(e *NodeEstimate, idx ...int) {
		for _, i := range idx {
			c.readOne(in(i), e)
		}
	}
	h, w := float64(n.AttrInt("num_heads", 0)), float64(n.AttrInt("window", 0))
	x, ok := c.Dims(in(0))
	if !ok || len(x) != 3 || h <= 0 || w <= 0 {
		return kernel(n, c, perf.ClassAttention), nil
	}
	b, s, hid := x[0], x[1], x[2]
	d := hid / h
	eb := c.elemBytes(in(0))
	attEB := eb // the attention's element: fp16 in the int8 form
	if quantized {
		attEB = 2
	}
	g, counted := globalTokens(in(6))
	stacked := false
	if ws, ok := c.Dims(in(1)); ok && len(ws) == 3 {
		stacked = true
	}
	compact := g <= w && s != 2*w

	proj := NodeEstimate{Class: perf.ClassGEMM}
	gemm := func(rows, out float64, launches float64) {
		proj.MACs += rows * hid * out
		proj.FLOPs += perf.FMAFLOPs * rows * hid * out
		proj.BytesRead += rows * hid * eb
		proj.BytesWritten += rows * out * eb
		proj.Launches += launches
		gemmView(&proj, rows, out, hid)
	}
	read(&proj, 1)
	if stacked {
		for range 3 {
			gemm(b*s, hid, 1)
		}
	} else {
		gemm(b*s, 3*hid, 1)
	}
	// The global index: a kernel numbering positions, a partition of the
	// flagged ones per sequence, the count copied to the host.
	read(&proj, 6)
	proj.Launches += 1 + b
	if g > 0 {
		read(&proj, 4)
		switch {
		case stacked && compact:
			gemm(b*g, hid, 1)
			gemm(b*s, hid, 1)
			gemm(b*s, hid, 1)
		case stacked:
			for range 3 {
				gemm(b*s, hid, 1)
			}
		default:
			gemm(b*s, 3*hid, 1)
		}
	}

	// Before the attention, a kernel reads each projection's output and
	// writes it back as the attention reads it: the float form's
	// bias-add transpose (1 flop an element), the int8 form's dequantize
	// to fp16 rows (2; its bias was added in the GEMM's epilogue).
	att := NodeEstimate{Class: perf.ClassGEMM, Launches: 1 + 3 + 1 + 3}
	elems := b * s * 3 * hid
	prepare := func() {
		att.BytesRead += elems*eb + elems*attEB // the prepare kernel, then Q·Kᵀ and P·V (Q, K and V once)
		att.BytesWritten += elems * attEB
		if quantized {
			att.FLOPs += 2 * elems
			proj.FLOPs += elems
		} else {
			att.FLOPs += elems
		}
	}
	read(&att, 2, 3)
	prepare()
	local := max(3*s-2*w, 0) * w // an empty sequence has no blocks
	if !compact {
		local = s * s
		att.Launches -= 4 // one GEMM each way over the whole S × S
	}
	if g > 0 {
		read(&att, 5)
		prepare()
		att.Launches += 1 + 2 + 2
	}
	unfusedScores(&att, b*h*(local+2*s*g), b*h*(s+g), d, attEB)
	if quantized {
		// The fp16 output written, read back and quantized to int8.
		out := b * s * hid
		att.BytesWritten += out * attEB
		att.BytesRead += out * attEB
		att.FLOPs += 3 * out
		att.Launches++
		att.FloatDType = ir.Float16
	}
	writeOutputs(n, c, &att, 0)
	if compact {
		att.M, att.N, att.K, att.Batch = clampInt(w), clampInt(3*w), clampInt(d), clampInt(b*h*s/w)
	} else {
		att.M, att.N, att.K, att.Batch = clampInt(s), clampInt(s), clampInt(d), clampInt(b*h)
	}

	e := proj.withTrailer(att)
	how := "counted in its constant global mask"
	if !counted {
		how = "assumed: the global mask is an input (Longformer's classification token)"
	}
	layout := "compact band"
	if !compact {
		layout = "full S×S (more global tokens than the window, or S = 2W)"
	}
	e.Note = fmt.Sprintf("Q|K|V projection GEMMs, then unfused sliding-window attention (%s scores in DRAM) with %.0f global token(s), %s; "+
		"the global-token count is copied to the host and waited for (not priced)", layout, g, how)
	if quantized {
		e.Note = "int8 " + e.Note + "; the attention in fp16 between a dequantize and a quantize"
	}
	return e, nil
}

// globalTokens is the most global tokens any sequence of a
// LongformerAttention marks in its global input [B, S] (nonzero entries
// of a row), and whether they were counted (the input is a constant);
// else 1.
func globalTokens(v *ir.Value) (float64, bool) {
	if v == nil || v.Const == nil || !v.Const.HasData || !v.Shape.Ranked || v.Shape.Rank() != 2 || !v.Shape.Dims[1].IsKnown() {
		return 1, false
	}
	row := v.Shape.Dims[1].Value
	if row <= 0 || int64(len(v.Const.Ints))%row != 0 {
		return 1, false
	}
	most := 0
	for i := int64(0); i < int64(len(v.Const.Ints)); i += row {
		k := 0
		for _, f := range v.Const.Ints[i : i+row] {
			if f != 0 {
				k++
			}
		}
		most = max(most, k)
	}
	return float64(most), true
}
