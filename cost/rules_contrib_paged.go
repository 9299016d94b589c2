package cost

import (
	"fmt"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

func init() { RegisterRule(msDomain, "PagedAttention", pagedAttentionRule) }

// pagedAttentionRule: PagedAttention is one flash kernel over the paged
// cache (with do_rotary the rotation, and with q/k norm weights the RMS
// norms, inside it), as GroupQueryAttention's: batch_size sequences of
// num_tokens/batch_size queries each, every one attending the keys its
// sequence holds. How many that is (past_seqlens) is a run-time value,
// so the block table's capacity stands for it, max_blocks_per_sequence ×
// block_size keys, bounded by attention_metadata's max_kv_len_bound when
// that is a constant and by local_window_size: an upper bound the note
// states (bind max_blocks_per_sequence to price another context). The
// cache rows attended are read (every KV head, K and V), the new tokens'
// rows written in place; the outputs key_cache_out and value_cache_out
// are the caches themselves.
func pagedAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	h, kvh := float64(n.AttrInt("num_heads", 0)), float64(n.AttrInt("kv_num_heads", 0))
	d, dv, ok := ir.PagedHeadSize(n)
	q, ok1 := c.Dims(n.In(0))
	cache, ok2 := c.Dims(n.In(3))
	table, ok3 := c.Dims(n.In(7))
	if !ok || !ok1 || !ok2 || !ok3 || len(cache) != 4 || len(table) != 2 || !(table[0] > 0) || !(q[0] > 0) {
		return kernel(n, c, perf.ClassAttention), nil
	}
	tokens, b := q[0], table[0]
	sq := tokens / b
	skv := table[1] * cache[1]
	note := fmt.Sprintf("; paged cache: each sequence's context taken as its block table's capacity, %.0f keys (past_seqlens are run-time values; bind max_blocks_per_sequence for another)", skv)
	if meta := n.In(16); meta != nil && meta.Const != nil && meta.Const.HasData && len(meta.Const.Ints) >= 2 && meta.Const.Ints[1] > 0 {
		skv = min(skv, float64(meta.Const.Ints[1]))
		note = fmt.Sprintf("; paged cache: each sequence's context taken as attention_metadata's bound, %.0f keys", skv)
	}
	skv = max(skv, sq)
	attended, pastRows := keysAttended(skv, sq, sq, float64(n.AttrInt("local_window_size", -1)))
	e := attnProblem{b: b, h: h, sq: sq, skv: attended, d: float64(d), dv: float64(dv)}.core(n.AttrFloat("softcap", 0) > 0)
	e.Decode = decodeView(sq, b*kvh, attended, float64(d))
	if n.AttrInt("do_rotary", 0) != 0 {
		rot := float64(d)
		if half, ok := c.Dim(n.In(8), -1); ok && half > 0 {
			rot = min(2*half, rot)
		}
		e.FLOPs += 3 * rot * tokens * (h + kvh)
		for _, cs := range []*ir.Value{n.In(8), n.In(9)} {
			if cs != nil {
				c.param(cs, &e)
				e.BytesRead += min(c.Numel(cs), tokens*rot/2) * c.elemBytes(cs)
			}
		}
	}
	if n.In(12) != nil && n.In(13) != nil {
		elems, rows := tokens*(h+kvh)*float64(d), tokens*(h+kvh)
		e.FLOPs += 4*elems + rows
		e.Transcendentals += rows
	}
	c.Read(n, &e, 0, 1, 2, 5, 6, 7, 10, 11, 12, 13, 14, 15, 16)
	for _, slot := range []int{3, 4} {
		kc := n.In(slot)
		if kc == nil {
			continue
		}
		c.param(kc, &e)
		row := c.Bytes(kc) / (cache[0] * cache[1]) // one position, every KV head
		e.BytesRead += b * pastRows * row
		e.BytesWritten += tokens * row
	}
	e.BytesWritten += c.Bytes(n.Out(0))
	e.Note = "flash attention over a paged KV cache: the scores stay on chip (not in bytes)" + note
	return e, nil
}
