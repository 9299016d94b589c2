package cost

import (
	"fmt"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's com.microsoft attention family
// (ir/ops_contrib_attn.go), priced as its CUDA kernels run them: flash or
// memory-efficient attention, the scores never in DRAM.
//
// The arithmetic follows fusedAttentionRule (rules_fused_attn.go):
//
//	scores = B·H·Sq·Skv                  (H query heads; Skv keys attended)
//	macs   = scores·(d + dv)             (Q·Kᵀ, then P·V: 4·B·H·Sq·Skv·d flops at d = dv)
//	flops  = 2·macs + softmax (4 per score + 1 per row, 1 exp per score)
//	         [+ softcap: a divide and a multiply around a tanh per score]
//
// A causal mask is not discounted: like FusedAttention (whose mask is one
// of its parts) the kernel is counted over the whole Sq × Skv rectangle.
// A local window (local_window_size W) bounds the keys a query sees to
// W+1.
//
// Bytes: Q, and the new K and V at the key/value heads' width (grouped
// query attention reads kvH heads, not H), read once; of the past cache
// the rows attended, read once; the output written. The present cache:
// when it is the past's buffer (same shape: onnxruntime's
// past_present_share_buffer, updated in place, ir.InPlace) only the new
// rows are written; when it is a buffer of its own the whole of it is
// (onnxruntime copies the past into it).

func init() {
	RegisterRule(msDomain, "GroupQueryAttention", gqaRule)
	RegisterRule(msDomain, "MultiHeadAttention", mhaRule)
	RegisterRule(msDomain, "Attention", msAttentionRule)
	RegisterRule(msDomain, "QAttention", qAttentionRule)
	RegisterRule(msDomain, "SparseAttention", sparseAttentionRule)
	RegisterRule(msDomain, "DecoderMaskedMultiHeadAttention", decoderMaskedMHARule)
	// Attention's slots, one token: the projection GEMV and the attention
	// over the cache (a shared buffer read up to past_sequence_length).
	RegisterRule(msDomain, "DecoderMaskedSelfAttention", msAttentionRule)
	RegisterRule(msDomain, "RotaryEmbedding", msRotaryRule)
	// M-RoPE reads the cos/sin rows of three position streams, a section
	// of the rotary half each: RotaryEmbedding's count and bytes.
	RegisterRule(msDomain, "MRotaryEmbedding", msRotaryRule)
}

// attnProblem is what one attention kernel computes.
type attnProblem struct {
	b, h    float64 // batch and query heads
	sq, skv float64 // queries and the keys each attends to
	d, dv   float64 // head size of Q·Kᵀ and of V
}

// core is the kernel's arithmetic and its GEMM view for the time model,
// the view of fusedAttentionRule: M = Sq, N = dv, K = Skv·(d+dv)/dv,
// Batch = B·H.
func (p attnProblem) core(softcap bool) NodeEstimate {
	e := NodeEstimate{Class: perf.ClassAttention, Launches: 1}
	rows := p.b * p.h * p.sq
	scores := rows * p.skv
	e.MACs = scores * (p.d + p.dv)
	e.FLOPs = perf.FMAFLOPs * e.MACs
	sm := normOps["Softmax"]
	e.FLOPs += sm.inFLOPs*scores + sm.rowFLOPs*rows
	e.Transcendentals += sm.inTrans*scores + sm.rowTrans*rows
	if softcap {
		e.FLOPs += 2 * scores
		e.Transcendentals += scores
	}
	if p.dv > 0 {
		e.M, e.N = clampInt(p.sq), clampInt(p.dv)
		e.K = clampInt(p.skv * (p.d + p.dv) / p.dv)
		e.Batch = clampInt(p.b * p.h)
	}
	return e
}

// decodeView is the split-KV view (perf.AttnDecode) of an attention of
// sq queries per sequence: heads independent (sequence, KV head) pairs,
// each query attending skv keys of size d. Zero unless sq is 1: a decode
// step, whose kernel streams the cache rather than tiling queries.
func decodeView(sq, heads, skv, d float64) perf.AttnDecode {
	if sq != 1 || !(heads > 0) || !(skv > 0) || !(d > 0) {
		return perf.AttnDecode{}
	}
	return perf.AttnDecode{Heads: clampInt(heads), Keys: clampInt(skv), HeadDim: clampInt(d)}
}

// sameDims reports whether a and b have the same known shape: a present
// cache that is its past's buffer.
func sameDims(a, b *ir.Value) bool {
	if a == nil || b == nil || !a.Shape.Ranked || !b.Shape.Ranked {
		return false
	}
	return a.Shape.IsKnown() && a.Shape.Equal(b.Shape)
}

// kvCache is one past/present pair of a node: the past at input slot
// past, the present at output slot present, each [.., P or T, head] with
// the sequence on axis seq.
type kvCache struct {
	past, present int
	seq           int
}

// traffic adds the cache's bytes: pastRows rows of the past read, and
// newRows rows (shared buffer) or the whole present (a buffer of its
// own) written.
func (k kvCache) traffic(n *ir.Node, c *RuleCtx, e *NodeEstimate, shared bool, pastRows, newRows float64) {
	if past := n.In(k.past); past != nil {
		c.param(past, e)
		if p, ok := c.Dim(past, k.seq); ok && p > 0 {
			e.BytesRead += c.Bytes(past) * min(pastRows, p) / p
		}
	}
	pres := n.Out(k.present)
	if pres == nil {
		return
	}
	if !shared {
		e.BytesWritten += c.Bytes(pres)
		return
	}
	if t, ok := c.Dim(pres, k.seq); ok && t > 0 {
		e.BytesWritten += c.Bytes(pres) * min(newRows, t) / t
	}
}

// cachedAttention is an attention op's K and V caches: pasts at input
// slots pastK and pastV ([B,H,P,d]), presents at outputs 1 and 2, the
// sequence on dim 2; shared when past and present are one buffer.
type cachedAttention struct {
	pastK, pastV      int
	shared            bool
	pastRows, newRows float64
}

// finish prices the cache pair's traffic, writes outputs 0 (the
// attention) and 3 (its optional extra output) and notes the kernel kind.
func (a cachedAttention) finish(n *ir.Node, c *RuleCtx, e *NodeEstimate, kind, note string) {
	kvCache{past: a.pastK, present: 1, seq: 2}.traffic(n, c, e, a.shared, a.pastRows, a.newRows)
	kvCache{past: a.pastV, present: 2, seq: 2}.traffic(n, c, e, a.shared, a.pastRows, a.newRows)
	writeOutputs(n, c, e, 0, 3)
	e.Note = kind + " attention: the B·H·Sq·Skv scores stay on chip (not in bytes); causal mask not discounted" + note
}

// pastLength is the sequence length of a [B,H,P,d] past cache, 0 without
// one.
func pastLength(c *RuleCtx, past *ir.Value) float64 {
	if pd, ok := c.Dims(past); ok && len(pd) == 4 {
		return pd[2]
	}
	return 0
}

// writeOutputs writes the outputs at slots, whole.
func writeOutputs(n *ir.Node, c *RuleCtx, e *NodeEstimate, slots ...int) {
	for _, i := range slots {
		e.BytesWritten += c.Bytes(n.Out(i))
	}
}

// keysAttended is the keys each query attends to (total, bounded by a
// local window of w keys before it) and the cache rows read: the keys any
// of the sq queries sees, less the newRows appended this step.
func keysAttended(total, sq, newRows, w float64) (skv, pastRows float64) {
	skv, read := total, total
	if w > 0 {
		skv, read = min(total, w+1), min(total, w+sq)
	}
	return skv, max(read-newRows, 0)
}

// gqaRule: GroupQueryAttention, one flash kernel (with do_rotary the
// rotation of Q and the new K, and with q_norm_weight/k_norm_weight their
// RMS norms, run inside it). Skv is total_sequence_length when that is a
// known constant; else the present length (past + new), or, for a shared
// buffer, the buffer's length: an upper bound, noted.
//
//	rotary  = 3 flops per rotated element of Q and the new K (as
//	          RotaryEmbedding), the cos/sin rows the tokens use read
//	qk norm = 4 flops per element + 1 per head row, 1 sqrt per row
func gqaRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h, kvh := float64(n.AttrInt("num_heads", 0)), float64(n.AttrInt("kv_num_heads", 0))
	q, ok := c.Dims(n.In(0))
	if !ok || len(q) != 3 || h <= 0 || kvh <= 0 {
		return kernel(n, c, perf.ClassAttention), nil
	}
	b, s := q[0], q[1]
	packed := n.In(1) == nil
	d := q[2] / h
	if packed {
		d = q[2] / (h + 2*kvh)
	}
	sNew := s
	if k, ok := c.Dims(n.In(1)); ok && len(k) == 3 {
		sNew = k[1]
	}
	p := pastLength(c, n.In(3))
	shared := sameDims(n.In(3), n.Out(1))
	total := p + sNew
	note := ""
	if t, ok := ir.ConstScalarInt(n.In(6)); ok && t > 0 {
		total = float64(t)
	} else if shared {
		total = p
		note = "; shared KV buffer with no known total_sequence_length: every row of it counted as attended"
	}
	skv, pastRows := keysAttended(total, s, sNew, float64(n.AttrInt("local_window_size", -1)))
	prob := attnProblem{b: b, h: h, sq: s, skv: skv, d: d, dv: d}
	e := prob.core(n.AttrFloat("softcap", 0) > 0)
	e.Decode = decodeView(s, b*kvh, skv, d)
	rot := d
	if n.AttrInt("do_rotary", 0) != 0 {
		if half, ok := c.Dim(n.In(7), -1); ok && half > 0 {
			rot = min(2*half, d)
		}
		e.FLOPs += 3 * rot * (b*s*h + b*sNew*kvh)
		for _, cache := range []*ir.Value{n.In(7), n.In(8)} {
			if cache != nil {
				c.param(cache, &e)
				e.BytesRead += min(c.Numel(cache), b*s*rot/2) * c.elemBytes(cache)
			}
		}
	}
	if n.In(14) != nil && n.In(15) != nil {
		elems, rows := b*s*h*d+b*sNew*kvh*d, b*s*h+b*sNew*kvh
		e.FLOPs += 4*elems + rows
		e.Transcendentals += rows
	}
	c.Read(n, &e, 0, 1, 2, 5, 6, 9, 10, 11, 12, 13, 14, 15)
	cachedAttention{pastK: 3, pastV: 4, shared: shared, pastRows: pastRows, newRows: sNew}.finish(n, c, &e, "flash", note)
	return e, nil
}

// mhaRule: MultiHeadAttention as onnxruntime's CUDA kernel runs it: with
// a bias input, a pass adding it to Q, K and V before the attention
// kernel (attention_prepare_qkv.cu: LaunchAddBias for flash and
// memory-efficient attention, AddBiasTranspose for the others), which
// reads them and writes them to its workspace for the attention to read
// once more, one launch (the unfused and cached paths lay each out in a
// launch of its own); then the attention (mhaCore). With a
// cache_indirection (slot 9, beam search) it runs the decoder-masked
// kernel, which adds the bias itself.
func mhaRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e, err := mhaCore(n, c)
	if err != nil || n.In(3) == nil || n.In(9) != nil || e.Launches == 0 {
		return e, err
	}
	if elems, ok := mhaBiased(n, c); ok {
		eb := c.elemBytes(n.In(0))
		e.BytesRead += elems * eb
		e.BytesWritten += elems * eb
		e.Launches++
		e.Note += "; its bias added in a pass of its own"
	}
	return e, nil
}

// mhaBiased is the Q, K and V elements a MultiHeadAttention's bias is
// added to (mhaCore counts a flop for each); ok false where its shapes
// are not known.
func mhaBiased(n *ir.Node, c *RuleCtx) (float64, bool) {
	h := float64(n.AttrInt("num_heads", 0))
	q, ok := c.Dims(n.In(0))
	if !ok || h <= 0 || len(q) != 3 {
		return 0, false
	}
	elems := q[0] * q[1] * q[2]
	for _, v := range []*ir.Value{n.In(1), n.In(2)} {
		if d, ok := c.Dims(v); ok && len(d) == 3 {
			elems += d[0] * d[1] * d[2]
		}
	}
	return elems, true
}

// mhaCore: MultiHeadAttention's attention kernel, which
// DecoderMaskedMultiHeadAttention is (its bias added inside). The bias
// input adds one flop per projected Q, K and V element, but for a key or
// value given as a [B,H,L,d] cache (cross attention), which is read as it
// is, nothing appended and no bias added.
func mhaCore(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h := float64(n.AttrInt("num_heads", 0))
	q, ok := c.Dims(n.In(0))
	if !ok || h <= 0 || (len(q) != 3 && len(q) != 5) {
		return kernel(n, c, perf.ClassAttention), nil
	}
	b, s := q[0], q[1]
	d := q[len(q)-1]
	if len(q) == 3 {
		d /= h
	}
	l, dv := s, d
	// onnxruntime adds the bias to a key or value given as [B,L,hidden]
	// only: one given as [B,H,L,d] (cross attention over a cache) is taken
	// as is ("no bias for key and value when they are in BNSH format",
	// PrepareQkv_MHA_Cross in contrib_ops/cuda/bert/attention_prepare_qkv.cu).
	kBiased, vBiased := true, true
	if k, ok := c.Dims(n.In(1)); ok {
		kBiased = len(k) == 3
		switch len(k) {
		case 3:
			l = k[1]
		case 4:
			l = k[2]
		case 5:
			l, dv = k[1], k[4]
		}
	}
	if v, ok := c.Dims(n.In(2)); ok {
		vBiased = len(v) == 3
		switch len(v) {
		case 3:
			dv = v[2] / h
		case 4:
			dv = v[3]
		}
	}
	p := pastLength(c, n.In(6))
	shared := n.In(6) != nil && (n.In(8) != nil || sameDims(n.In(6), n.Out(1)))
	total := p + l
	note := ""
	if shared {
		if past, ok := ir.ConstScalarInt(n.In(8)); ok && past >= 0 {
			total = min(float64(past)+l, max(p, l))
		} else {
			total = max(p, l)
			note = "; shared KV buffer with no known past_sequence_length: every row of it counted as attended"
		}
	}
	skv, pastRows := keysAttended(total, s, l, 0)
	e := attnProblem{b: b, h: h, sq: s, skv: skv, d: d, dv: dv}.core(false)
	e.Decode = decodeView(s, b*h, skv, d)
	if n.In(3) != nil {
		e.FLOPs += b * s * h * d
		if kBiased {
			e.FLOPs += b * l * h * d
		}
		if vBiased {
			e.FLOPs += b * l * h * dv
		}
	}
	c.Read(n, &e, 0, 1, 2, 3, 4, 5, 8, 9)
	cachedAttention{pastK: 6, pastV: 7, shared: shared, pastRows: pastRows, newRows: l}.finish(n, c, &e, "fused", note)
	return e, nil
}

// msAttentionRule: com.microsoft Attention is three kernels, the Q|K|V
// projection GEMM (cuBLAS, into a workspace, without the bias), the bias
// added as Q, K and V are laid out, and the attention over them.
//
//	projection: macs = B·S·in·(Dq+Dk+Dv), + 1 flop per output element
//	            for the bias; x, weights, bias read, Q|K|V written
//	attention:  the layout pass and the attention (msAttentionCore) with
//	            H = num_heads, d = Dk/H, dv = Dv/H, Skv = past + S; the
//	            past (input 4, [2,B,H,P,d]) and present as a cache pair
//
// The GEMM view is the projection's when it has more MACs (BERT lengths)
// and the attention's otherwise.
func msAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	p, ok := packedProjectionOf(n, c)
	if !ok {
		return kernel(n, c, perf.ClassGEMM), nil
	}
	b, s, h, width := p.b, p.s, p.h, p.width
	dk, dv := width/3, width/3
	if sizes, ok := n.AttrInts("qkv_hidden_sizes"); ok && len(sizes) == 3 {
		dk, dv = float64(sizes[1]), float64(sizes[2])
	}
	proj := p.gemm(1)
	if n.In(2) != nil {
		proj.FLOPs += b * s * width
	}
	c.Read(n, &proj, 0, 1, 2)
	qkv := b * s * width * c.elemBytes(n.In(0))
	proj.BytesWritten += qkv

	att, note := msAttentionCore(n, c, msAttnSlots{mask: 3, past: 4, bias: 5, pastLen: 6}, b, s, h, dk, dv, qkv)
	e := proj
	if att.MACs > proj.MACs {
		e = att
	}
	e.MACs, e.FLOPs = proj.MACs+att.MACs, proj.FLOPs+att.FLOPs
	e.Transcendentals = proj.Transcendentals + att.Transcendentals
	e.BytesRead, e.BytesWritten = proj.BytesRead+att.BytesRead, proj.BytesWritten+att.BytesWritten
	e.Params = proj.Params + att.Params
	e.Launches = proj.Launches + att.Launches
	e.Note = "Q|K|V projection GEMM, its bias added and laid out for the attention in a kernel of its own, then fused attention over it (scores on chip)" + note
	return e, nil
}

// packedProjection is the Q|K|V projection of the Attention family's
// packed form: input [B, S, in] times weights [in, width], h heads; ok
// false when a shape or num_heads is not known.
type packedProjection struct{ b, s, in, width, h float64 }

func packedProjectionOf(n *ir.Node, c *RuleCtx) (packedProjection, bool) {
	h := float64(n.AttrInt("num_heads", 0))
	x, ok1 := c.Dims(n.In(0))
	w, ok2 := c.Dims(n.In(1))
	if !ok1 || !ok2 || len(x) != 3 || len(w) != 2 || h <= 0 {
		return packedProjection{}, false
	}
	return packedProjection{b: x[0], s: x[1], in: x[2], width: w[1], h: h}, true
}

// gemm is the projection's multiply-accumulates and GEMM view, in
// launches kernels.
func (p packedProjection) gemm(launches float64) NodeEstimate {
	e := NodeEstimate{Class: perf.ClassGEMM, Launches: launches}
	e.MACs = p.b * p.s * p.in * p.width
	e.FLOPs = perf.FMAFLOPs * e.MACs
	e.M, e.N, e.K, e.Batch = clampInt(p.b*p.s), clampInt(p.width), clampInt(p.in), 1
	return e
}

// msAttnSlots are the input slots of the Attention family's attention
// part (-1: the op has none).
type msAttnSlots struct{ mask, past, bias, pastLen int }

// msAttentionCore is the attention over a packed Q|K|V workspace of qkv
// bytes ([B, S, Dq+Dk+Dv], h heads), as onnxruntime's CUDA kernel runs it
// (attention_prepare_qkv.cu PrepareQkv_Attention): one kernel first adds
// the bias to the GEMM's output and lays Q, K and V out for the attention
// kernel (AddBiasTranspose; a transpose alone when the bias was added
// before, QAttention), the workspace read and written once; then the
// attention: its arithmetic, the workspace read back, mask and bias
// read, the [2,B,H,P,d] past and the present as a cache pair (shared when
// past_present_share_buffer is set or the present is the past's shape),
// the output written; and a note on what it had to assume.
func msAttentionCore(n *ir.Node, c *RuleCtx, sl msAttnSlots, b, s, h, dk, dv, qkv float64) (NodeEstimate, string) {
	var p float64
	if pd, ok := c.Dims(n.In(sl.past)); ok && len(pd) == 5 {
		p = pd[3]
	}
	shared := n.In(sl.past) != nil && (n.AttrInt("past_present_share_buffer", 0) != 0 || sameDims(n.In(sl.past), n.Out(1)))
	total := p + s
	note := ""
	if shared {
		if past, ok := ir.ConstScalarInt(n.In(sl.pastLen)); ok && past >= 0 {
			total = min(float64(past)+s, max(p, s))
		} else {
			total = max(p, s)
			note = "; shared KV buffer with no known past_sequence_length: every row of it counted as attended"
		}
	}
	skv, pastRows := keysAttended(total, s, s, 0)
	att := attnProblem{b: b, h: h, sq: s, skv: skv, d: dk / h, dv: dv / h}.core(false)
	att.BytesRead += 2 * qkv // the layout pass's read, then the attention's
	att.BytesWritten += qkv  // Q, K and V laid out
	att.Launches++
	c.Read(n, &att, sl.mask, sl.bias, sl.pastLen)
	kvCache{past: sl.past, present: 1, seq: 3}.traffic(n, c, &att, shared, pastRows, s)
	writeOutputs(n, c, &att, 0)
	return att, note
}

// qAttentionRule: com.microsoft QAttention (onnxruntime's dynamic
// quantization of Attention) runs, as its CUDA kernel does, an 8-bit
// GEMM of input and weight into int32 accumulators, a kernel that scales
// them back to float and adds the bias, and the float attention over the
// result (msAttentionCore; mask at slot 5, past at 8). With m = B·S·(Dq+Dk+Dv):
//
//	projection: macs = B·S·in·(Dq+Dk+Dv) at 8 bits; 2 flops per
//	            accumulator (scale, bias); int32 accumulators written and
//	            read back, Q|K|V written as floats; 2 launches
//	attention:  as Attention's, at the float type of the output
//
// The projection is the node's kernel, priced at its 8-bit path; the
// attention is its Trailer, priced at the float one: one path for both
// would price the attention's GEMMs at int8 rates or the projection at
// float ones.
func qAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	p, ok := packedProjectionOf(n, c)
	if !ok {
		return kernel(n, c, perf.ClassGEMM), nil
	}
	b, s, h, width := p.b, p.s, p.h, p.width
	proj := p.gemm(2)
	acc := b * s * width
	proj.FLOPs += 2 * acc
	c.Read(n, &proj, 0, 1, 6, 7)
	proj.BytesWritten += 4 * acc
	proj.BytesRead += 4 * acc
	var att NodeEstimate
	var note string
	c.inFloat(func() {
		c.Read(n, &proj, 2, 3, 4)
		qkv := acc * c.elemBytes(n.Out(0))
		proj.BytesWritten += qkv
		att, note = msAttentionCore(n, c, msAttnSlots{mask: 5, past: 8, bias: -1, pastLen: -1}, b, s, h, width/3, width/3, qkv)
	})
	e := proj.withTrailer(att)
	e.Note = "8-bit Q|K|V projection GEMM and its dequantize-and-bias kernel, Q, K and V laid out for the attention, then float attention over them (scores on chip)" + note
	return e, nil
}

// decoderMaskedMHARule: DecoderMaskedMultiHeadAttention is
// MultiHeadAttention's kernel for one query token (mhaCore over its slots
// in MultiHeadAttention's order); beam_width is a scalar read as it is.
func decoderMaskedMHARule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	probe := &ir.Node{Name: n.Name, OpType: "MultiHeadAttention", Domain: msDomain, Attrs: n.Attrs,
		Inputs: ir.DecoderMaskedMHAInputs(n), Outputs: n.Outputs}
	e, err := mhaCore(probe, c)
	if err == nil {
		c.Read(n, &e, 8)
	}
	return e, err
}

// sparseAttentionRule: com.microsoft SparseAttention (Phi-3-small) is
// GroupQueryAttention's flash kernel over a shared cache (gqaRule on its
// slots), each query attending only the key blocks its layout row holds:
// the block mask's non-zero blocks per row (counted in
// block_col_indices when it is a constant, else its width, the most a
// layout holds, over the rows of block_row_indices) times
// sparse_block_size keys, as a window of that many keys before it. The
// CSR indices are read too.
func sparseAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	in := func(i int) *ir.Value { return n.In(i) }
	window := sparseWindow(n, c)
	attrs := append(ir.AttrsWithout(n.Attrs, "local_window_size"), ir.IntAttr("local_window_size", int64(max(window-1, 0))))
	probe := &ir.Node{Name: n.Name, OpType: "GroupQueryAttention", Domain: msDomain, Attrs: attrs,
		Inputs:  []*ir.Value{in(0), in(1), in(2), in(3), in(4), in(8), in(7), in(9), in(10)},
		Outputs: n.Outputs}
	e, err := gqaRule(probe, c)
	if err != nil || window <= 0 {
		return e, err
	}
	c.Read(n, &e, 5, 6)
	e.Note += fmt.Sprintf("; block-sparse: %.0f keys a query at most", window)
	return e, nil
}

// sparseWindow is the keys a SparseAttention query attends: the average
// non-zero blocks of a block-mask row times the block size; 0 when the
// shapes do not say.
func sparseWindow(n *ir.Node, c *RuleCtx) float64 {
	bs := float64(n.AttrInt("sparse_block_size", 0))
	rowIdx, ok1 := c.Dims(n.In(5))
	colIdx, ok2 := c.Dims(n.In(6))
	if !ok1 || !ok2 || len(rowIdx) != 2 || len(colIdx) != 2 || rowIdx[1] < 2 || !(bs > 0) {
		return 0
	}
	rows, nnz := rowIdx[1]-1, colIdx[1]
	if v := n.In(6); v != nil && v.Const != nil && v.Const.HasData && len(v.Const.Ints) > 0 && colIdx[0] > 0 {
		set := 0.0
		for _, x := range v.Const.Ints {
			if x >= 0 { // -1 pads a layout with fewer blocks
				set++
			}
		}
		nnz = set / colIdx[0]
	}
	return max(nnz/rows, 1) * bs
}

// msRotaryRule: com.microsoft RotaryEmbedding takes (input, position_ids,
// cos_cache, sin_cache); it is priced as the ONNX op (rotaryRule) with
// the inputs in that op's order. A 3-D input without num_heads has heads
// of 2·cos_cache's width, as onnxruntime derives them.
func msRotaryRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	attrs := n.Attrs
	if n.AttrInt("num_heads", 0) <= 0 {
		hidden, ok1 := c.Dim(n.In(0), -1)
		half, ok2 := c.Dim(n.In(2), -1)
		if x := n.In(0); ok1 && ok2 && half > 0 && x.Shape.Rank() == 3 {
			attrs = []*ir.Attribute{ir.IntAttr("num_heads", int64(hidden/(2*half)))}
			for _, a := range n.Attrs {
				if a.Name != "num_heads" {
					attrs = append(attrs, a)
				}
			}
		}
	}
	onnx := ir.Node{Name: n.Name, OpType: "RotaryEmbedding", Inputs: []*ir.Value{n.In(0), n.In(2), n.In(3), n.In(1)},
		Outputs: n.Outputs, Attrs: attrs}
	return rotaryRule(&onnx, c)
}
