package cost

import (
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for onnxruntime's n-gram ops (ir/ops_contrib_ngram.go), one
// kernel each over its boundary traffic:
//
//	(Varlen)NGramHashMapping  per token, for each order n in 2..N and each
//	                          of its h heads: n multiplies, n−1 xors and a
//	                          modulo, h·(N(N+1) − 2) integer ops in all,
//	                          + an add a head with head_offsets
//	NGramRepeatBlock          scores copied to the output, then each of
//	                          the S − n + 1 windows of a sequence compared
//	                          with its last n − 1 tokens: (n−1)·(S−n+1)
//	                          compares a sequence (two launches: the copy
//	                          and the ban; none when S + 1 < n)

func init() {
	RegisterRule(msDomain, "NGramHashMapping", ngramHashRule)
	RegisterRule(msDomain, "VarlenNGramHashMapping", ngramHashRule)
	RegisterRule(msDomain, "NGramRepeatBlock", ngramRepeatBlockRule)
}

func ngramHashRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	order, heads := float64(n.AttrInt("max_ngram_size", 0)), float64(n.AttrInt("n_head_per_ngram", 0))
	per := heads * (order*(order+1) - 2)
	offsets := 4 // head_offsets' slot
	if n.OpType == "VarlenNGramHashMapping" {
		offsets = 5
	}
	if n.In(offsets) != nil {
		per += (order - 1) * heads
	}
	e.FLOPs = per * c.Numel(n.In(0))
	return e, nil
}

func ngramRepeatBlockRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassData)
	e.Launches = 2
	ids, ok := c.Dims(n.In(0))
	size := float64(n.AttrInt("ngram_size", 0))
	if !ok || len(ids) != 2 {
		return e, nil
	}
	if windows := ids[1] - size + 1; ids[1]+1 >= size && windows > 0 {
		e.FLOPs = ids[0] * windows * (size - 1)
	} else {
		e.Launches = 1 // the copy alone
	}
	return e, nil
}
