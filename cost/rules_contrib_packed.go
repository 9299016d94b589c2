package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's packing mode (ir/ops_contrib_packed.go),
// as its CUDA kernels run it (contrib_ops/cuda/bert/bert_padding.cu,
// packed_attention_impl.cu, packed_multihead_attention_impl.cu):
//
//	RemovePadding   2 kernels: the token offsets from the counts, then a
//	                gather of the real rows
//	RestorePadding  1 kernel: the rows scattered back, the padding zeroed
//	                (B·S rows written)
//	PackedAttention the Q|K|V projection GEMM over the T real rows, then
//	                a bias-add/transpose into the attention's layout and
//	                the variable-length fused attention (its trailer)
//	PackedMultiHeadAttention
//	                the fused attention, after the bias-add/transpose
//	                kernel when there is a bias or Q|K|V come packed
//
// The fused kernels attend within each sequence: Σ L_b² scores per head,
// not B·S². With cumulative_sequence_length known (the mask given with
// --input-data) the lengths are exact; else the T tokens are taken as B
// equal sequences, the fewest scores T tokens can make (a spread of
// lengths makes more), and the row's note says so.

func init() {
	RegisterRule(msDomain, "RemovePadding", removePaddingRule)
	RegisterRule(msDomain, "RestorePadding", restorePaddingRule)
	RegisterRule(msDomain, "PackedAttention", packedAttentionRule)
	RegisterRule(msDomain, "PackedMultiHeadAttention", packedMHARule)
}

// removePaddingRule: the counts and the real rows read (a gather moves
// only those), the packed rows and the three index outputs written.
func removePaddingRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 2}
	c.Read(n, &e, 1)
	if x := n.In(0); x != nil {
		c.param(x, &e)
		e.BytesRead += min(c.Bytes(x), c.Bytes(n.Out(0)))
	}
	c.Write(n, &e)
	return e, nil
}

// restorePaddingRule: the packed rows and token_offset read, every slot
// of [B, S, hidden] written.
func restorePaddingRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	return kernel(n, c, perf.ClassData), nil
}

// packedAttn is the variable-length attention of a packed op: b
// sequences holding t tokens, sq the mean queries per sequence and skv
// the keys a query attends on average (Σ L²/T), so that attnProblem's
// b·h·sq rows and b·h·sq·skv scores are h·T and h·Σ L².
type packedAttn struct {
	b, sq, skv float64
	note       string
}

// packedAttnOf reads the batch from token_offset (slot off, [B, S]) or
// cumulative_sequence_length (slot cum, [B+1]) and the lengths from
// the latter's values when they are known; ok is false when neither
// gives the batch or there are no tokens.
func packedAttnOf(n *ir.Node, c *RuleCtx, tokens float64, off, cum int) (packedAttn, bool) {
	b, ok := c.Dim(n.In(off), 0)
	if !ok {
		if cb, ok2 := c.Dim(n.In(cum), 0); ok2 {
			b, ok = cb-1, true
		}
	}
	if !ok || !(b > 0) || !(tokens > 0) {
		return packedAttn{}, false
	}
	if lens := ir.PackedLengths(n.In(cum)); len(lens) == int(b) {
		var sum, sq float64
		for _, l := range lens {
			sum += float64(l)
			sq += float64(l) * float64(l)
		}
		if sum == tokens {
			return packedAttn{b: b, sq: tokens / b, skv: sq / tokens, note: "; sequence lengths from cumulative_sequence_length"}, true
		}
	}
	return packedAttn{b: b, sq: tokens / b, skv: tokens / b,
		note: fmt.Sprintf("; %.0f tokens taken as %.0f sequences of equal length (the lengths are run-time values: the fewest scores these tokens make)", tokens, b)}, true
}

// core is the fused attention's estimate, h heads of sizes d and dv.
func (p packedAttn) core(h, d, dv float64) NodeEstimate {
	return attnProblem{b: p.b, h: h, sq: p.sq, skv: p.skv, d: d, dv: dv}.core(false)
}

// packedAttentionRule: the projection GEMM is the node's kernel, the
// bias-add/transpose and the fused attention its trailer:
//
//	projection: macs = T·in·(Dq+Dk+Dv); input, weights read, the
//	            Q|K|V workspace written
//	transpose:  the workspace and bias read, 1 flop per element (the
//	            bias), the attention's layout written
//	attention:  h·Σ L² scores at head sizes Dk/h and Dv/h; Q, K, V
//	            read back, the offsets, lengths and attention_bias read,
//	            the output written
func packedAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h := float64(n.AttrInt("num_heads", 0))
	x, ok1 := c.Dims(n.In(0))
	w, ok2 := c.Dims(n.In(1))
	if !ok1 || !ok2 || len(x) != 2 || len(w) != 2 || h <= 0 {
		return kernel(n, c, perf.ClassGEMM), nil
	}
	t, width := x[0], w[1]
	pa, ok := packedAttnOf(n, c, t, 3, 4)
	if !ok {
		return kernel(n, c, perf.ClassGEMM), nil
	}
	dk, dv := width/3, width/3
	if sizes, ok := n.AttrInts("qkv_hidden_sizes"); ok && len(sizes) == 3 {
		dk, dv = float64(sizes[1]), float64(sizes[2])
	}
	proj := packedProjection{b: 1, s: t, in: x[1], width: width, h: h}.gemm(1)
	c.Read(n, &proj, 0, 1)
	qkv := t * width * c.elemBytes(n.In(0))
	proj.BytesWritten += qkv

	att := pa.core(h, dk/h, dv/h)
	att.Launches = 2
	att.FLOPs += t * width
	att.BytesRead += 2 * qkv // the transpose's read, the attention's
	att.BytesWritten += qkv
	c.Read(n, &att, 2, 3, 4, 5)
	writeOutputs(n, c, &att, 0)
	e := proj.withTrailer(att)
	e.Note = "Q|K|V projection GEMM over the packed tokens, then bias-add/transpose and variable-length fused attention (scores on chip)" + pa.note
	return e, nil
}

// packedMHARule: the fused attention over Q, K and V as given (query
// [T, D] with key and value, or packed [T, h, 3, d]); the bias, when
// given, adds 1 flop per Q, K and V element in a bias-add/transpose
// kernel of its own, which packed Q|K|V needs too.
func packedMHARule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h := float64(n.AttrInt("num_heads", 0))
	q, ok := c.Dims(n.In(0))
	if !ok || h <= 0 || (len(q) != 2 && len(q) != 4) {
		return kernel(n, c, perf.ClassAttention), nil
	}
	t := q[0]
	var d, dv float64
	packed := len(q) == 4
	if packed {
		d, dv = q[3], q[3]
	} else {
		v, ok := c.Dims(n.In(2))
		if !ok || len(v) != 2 {
			return kernel(n, c, perf.ClassAttention), nil
		}
		d, dv = q[1]/h, v[1]/h
	}
	pa, ok := packedAttnOf(n, c, t, 4, 5)
	if !ok {
		return kernel(n, c, perf.ClassAttention), nil
	}
	e := pa.core(h, d, dv)
	c.Read(n, &e, 0, 1, 2, 3, 4, 5, 6)
	writeOutputs(n, c, &e, 0)
	note := "variable-length fused attention (scores on chip)"
	if n.In(3) != nil || packed {
		qkv := c.Bytes(n.In(0)) + c.Bytes(n.In(1)) + c.Bytes(n.In(2))
		e.Launches++
		e.BytesRead += qkv
		e.BytesWritten += qkv
		if n.In(3) != nil {
			e.FLOPs += t * h * (2*d + dv)
		}
		note = "bias-add/transpose into the kernel's layout, then " + note
	}
	e.Note = note + pa.note
	return e, nil
}
