package cost

import (
	"math"
	"strings"
	"sync"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// Cost rules for the nodes written by the decomposition, elementwise and
// attention passes (passes/decomp.go,
// passes/elementwise.go, passes/attention.go): FusedElementwise, the
// recognised LayerNormalization, Gelu and Softmax, and FusedAttention.
// Each is one kernel (FusedEstimate): the arithmetic of the nodes it
// replaced, the bytes of its own inputs and outputs, one launch.
//
// The replaced nodes' arithmetic comes from the part attributes the passes
// record (part_ops, part_in_expr, part_out_expr, part_arity: per replaced
// node its op, the element counts of its first input and its output as
// expressions over the fused node's own dims, and its number of inputs). Each part is costed by its own op's rule on phantom
// values of those sizes, so a fused node's FLOPs equal the unfused nodes'
// exactly. A node without part attributes (written by hand or by another
// tool) is costed from its own op's formula instead.

func init() {
	RegisterRule(ir.FusedDomain, ir.OpFusedElementwise, fusedPartsRule(perf.ClassElementwise, nil))
	RegisterRule(ir.FusedDomain, ir.OpFusedGelu, fusedPartsRule(perf.ClassElementwise, geluFormula))
	RegisterRule(ir.FusedDomain, ir.OpFusedLayerNorm, rowWise(fusedPartsRule(perf.ClassReduction, normFormula("LayerNormalization")), "LayerNormalization"))
	RegisterRule(ir.FusedDomain, ir.OpFusedSoftmax, rowWise(fusedPartsRule(perf.ClassReduction, normFormula("Softmax")), "Softmax"))
	RegisterRule(ir.FusedDomain, ir.OpFusedRMSNorm, rowWise(fusedPartsRule(perf.ClassReduction, nil), "RMSNormalization"))
	RegisterRule(ir.FusedDomain, ir.OpFusedRotary, fusedPartsRule(perf.ClassElementwise, nil))
	RegisterRule(ir.FusedDomain, ir.OpFusedAttention, fusedAttentionRule)
	RegisterRule(ir.FusedDomain, ir.OpSkipLayerNorm, rowWise(skipLayerNormRule, "LayerNormalization"))
}

// skipLayerNormRule: residual add + LayerNorm of the sum
// (passes/skipln.go) as one kernel.
//
//	flops = the recorded parts (the Add; the LayerNorm's own parts when
//	        layernorm_in_parts = 1), else 1 add per element,
//	        + the LayerNorm as the default-domain op counts it over the
//	        real shapes when its parts are not recorded
//	bytes = x, skip, gamma, beta read; y (and the sum, when it is an
//	        output) written: the sum is not re-read.
func skipLayerNormRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	sum, ok := sumParts(n, c)
	if !ok {
		sum = NodeEstimate{Counts: report.Counts{FLOPs: c.Numel(n.Out(0))}} // the residual add
	}
	if n.AttrInt("layernorm_in_parts", 0) == 0 {
		ln, err := c.Estimate(&ir.Node{Name: n.Name, OpType: "LayerNormalization",
			Inputs: []*ir.Value{n.In(0), n.In(2), n.In(3)}, Outputs: []*ir.Value{n.Out(0)}, Attrs: n.Attrs})
		if err != nil {
			c.Warnf("%v; LayerNorm arithmetic not counted", err)
		}
		sum.FLOPs += ln.FLOPs
		sum.Transcendentals += ln.Transcendentals
	}
	sum.Class = perf.ClassReduction
	return FusedEstimate(n, c, sum), nil
}

// geluTanhCounts is the tanh-form GELU as PyTorch exports it:
// 0.5*x*(1+tanh(sqrt(2/pi)*(x+0.044715*x*x*x))): x*x, *x, *0.044715, +x,
// *sqrt(2/pi), tanh, +1, *x, *0.5 = 9 flops, 1 transcendental.
var geluTanhCounts = opCount{9, 1, "tanh-form GELU as exported"}

// geluFormula costs a Gelu without part attributes.
func geluFormula(n *ir.Node, c *RuleCtx) NodeEstimate {
	cnt := opCounts["Gelu"]
	if n.AttrString("approximate", "none") == "tanh" {
		cnt = geluTanhCounts
	}
	out := c.Numel(n.Out(0))
	return NodeEstimate{Counts: report.Counts{FLOPs: cnt.flops * out, Transcendentals: cnt.trans * out}}
}

// normFormula costs a recognised norm/softmax without part attributes as
// the default-domain op of the same name (same attributes).
func normFormula(op string) func(n *ir.Node, c *RuleCtx) NodeEstimate {
	return func(n *ir.Node, c *RuleCtx) NodeEstimate {
		e, err := c.Estimate(&ir.Node{Name: n.Name, OpType: op, Inputs: n.Inputs, Outputs: n.Outputs, Attrs: n.Attrs})
		if err != nil {
			c.Warnf("%v; arithmetic not counted", err)
		}
		return e
	}
}

// fusedPartsRule is one kernel of class cl whose arithmetic is the sum of
// its parts, or formula's when the node carries no parts.
func fusedPartsRule(cl perf.KernelClass, formula func(*ir.Node, *RuleCtx) NodeEstimate) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		sum, ok := sumParts(n, c)
		if !ok {
			if formula == nil {
				c.Warnf("no part attributes: its arithmetic is unknown and not counted")
			} else {
				sum = formula(n, c)
			}
		}
		sum.Class = cl
		return FusedEstimate(n, c, sum), nil
	}
}

// sumParts adds the arithmetic (MACs, FLOPs, transcendentals) of the
// parts recorded on n; ok is false when n has no (consistent) part
// attributes.
func sumParts(n *ir.Node, c *RuleCtx) (NodeEstimate, bool) {
	a := n.Attr(ir.KeyPartOps)
	arity, _ := n.AttrInts(ir.KeyPartArity)
	if a == nil || a.Type != ir.AttrStrings {
		return NodeEstimate{}, false
	}
	ops := a.Strings
	in, out := partSideOf(n, ir.KeyPartInExpr, ir.KeyPartIn), partSideOf(n, ir.KeyPartOutExpr, ir.KeyPartOut)
	if in.len() != len(ops) || out.len() != len(ops) || len(arity) != len(ops) {
		c.Warnf("part attributes disagree in length; arithmetic not counted")
		return NodeEstimate{}, true
	}
	dt := ir.Float32
	if y := n.Out(0); y != nil && y.DType != ir.Undefined {
		dt = y.DType
	}
	var sum NodeEstimate
	s := partScratchPool.Get().(*partScratch)
	defer partScratchPool.Put(s)
	for i, key := range ops {
		// "Op" in the default domain, "domain.Op" elsewhere (the domain
		// may itself contain dots).
		domain, op := "", key
		if j := strings.LastIndex(key, "."); j >= 0 {
			domain, op = key[:j], key[j+1:]
		}
		e, err := c.Estimate(s.part(n, key, domain, op, dt, in.count(i), out.count(i), max(arity[i], 1)))
		if err != nil {
			c.Warnf("part %s: %v; not counted", key, err)
			continue
		}
		sum.MACs += e.MACs
		sum.FLOPs += e.FLOPs
		sum.Transcendentals += e.Transcendentals
	}
	return sum, true
}

// partScratch is the node and values sumParts costs a part as, one set
// serving every part of every fused node in turn: a rule returns numbers
// and keeps no pointer to what it costed (RuleCtx.param keeps
// initializers only). Building them per part (node, values, shapes,
// names) was 10 MB of Analyze's 42 MB (after the other cuts) on a
// 112k-node LLaMA-shaped graph. A pool, not one set per analysis, because a part's
// rule may itself be a fused rule (sumParts inside sumParts).
type partScratch struct {
	node          ir.Node
	in, out       ir.Value
	inDim, outDim [1]ir.Dim
	ins           []*ir.Value
	outs          [1]*ir.Value
	// names caches each part key's value names (key+":in", key+":out"):
	// keys are op names, a handful per model.
	names map[string][2]string
}

var partScratchPool = sync.Pool{New: func() any { return &partScratch{names: map[string][2]string{}} }}

// part sets the scratch up as part key of fused node n: op in domain,
// arity inputs of inElems elements, one output of outElems (unknown
// when < 0), all of dtype dt. The part node takes n's name: rules name
// a node only through RuleCtx.Warnf, which names the fused node.
func (s *partScratch) part(n *ir.Node, key, domain, op string, dt ir.DType, inElems, outElems int64, arity int64) *ir.Node {
	names, ok := s.names[key]
	if !ok {
		names = [2]string{key + ":in", key + ":out"}
		s.names[key] = names
	}
	s.in = phantom(names[0], dt, inElems, &s.inDim)
	s.out = phantom(names[1], dt, outElems, &s.outDim)
	s.ins = s.ins[:0]
	for range arity {
		s.ins = append(s.ins, &s.in)
	}
	s.outs[0] = &s.out
	s.node = ir.Node{Name: n.Name, OpType: op, Domain: domain, Inputs: s.ins, Outputs: s.outs[:]}
	return &s.node
}

// partSide is one side (inputs or outputs) of n's parts: their element
// counts from the symbolic expressions (exprKey) resolved against n's
// shapes as they are now, or, in a file written before those existed,
// the counts frozen at fusion time (legacyKey). Counts are resolved one
// at a time as sumParts asks, with no list built.
type partSide struct {
	n      *ir.Node
	exprs  []string
	legacy []int64
	isExpr bool
}

func partSideOf(n *ir.Node, exprKey, legacyKey string) partSide {
	if exprs, ok := n.AttrStrings(exprKey); ok {
		return partSide{n: n, exprs: exprs, isExpr: true}
	}
	legacy, _ := n.AttrInts(legacyKey)
	return partSide{legacy: legacy}
}

func (p partSide) len() int {
	if p.isExpr {
		return len(p.exprs)
	}
	return len(p.legacy)
}

// count is part i's element count; -1 when unknown.
func (p partSide) count(i int) int64 {
	if !p.isExpr {
		return p.legacy[i]
	}
	if v, ok := ir.PartCount(p.exprs[i], p.n); ok {
		return v
	}
	return -1
}

// phantom is a value in no graph with elems elements (unknown when < 0):
// the parts' rules need only element counts. A known shape is the one
// dim held in dim.
func phantom(name string, dt ir.DType, elems int64, dim *[1]ir.Dim) ir.Value {
	v := ir.Value{Name: name, Kind: ir.TensorValue, DType: dt}
	if elems >= 0 {
		dim[0] = ir.D(elems)
		v.Shape = ir.Shape{Dims: dim[:], Ranked: true}
	}
	return v
}

// fusedAttentionRule: softmax(scale·Q·Kᵀ + mask)·V as one kernel whose
// scores stay on chip.
//
//	scores = batch·Lq·Lk               (batch = every dim of O but the last two)
//	macs   = scores·d + batch·Lq·Lk·dv (Q·Kᵀ, then P·V; as MatMul counts them)
//	flops  = 2·macs + softmax (4 per score + 1 per row, as Softmax counts it)
//	         + the recorded parts (scale, mask, K transpose, ...)
//	bytes  = Q, K, V, mask read once + O written once: no scores.
//
// GEMM view for the time model: the output O[batch × Lq × dv] is the
// product of a K-loop over the keys, as flash attention runs it (each CTA
// owns a tile of queries and streams K and V): M = Lq, N = dv,
// K = Lk·(d+dv)/dv (2·Lk when d = dv), Batch = batch, so that
// 2·M·N·K·Batch is the two GEMMs' FLOPs. Class ClassAttention (GEMM-like:
// tensor cores at reduced precision).
func fusedAttentionRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	core := NodeEstimate{Class: perf.ClassAttention}
	if batch, lq, lk, d, dv, ok := attentionDims(n, c); ok {
		rows := batch * lq
		scores := rows * lk
		core.MACs = scores*d + rows*lk*dv
		core.FLOPs = perf.FMAFLOPs * core.MACs
		if n.AttrInt("softmax_in_parts", 0) == 0 {
			sm := normOps["Softmax"]
			core.FLOPs += sm.inFLOPs*scores + sm.rowFLOPs*rows
			core.Transcendentals += sm.inTrans*scores + sm.rowTrans*rows
		}
		if dv > 0 {
			core.M, core.N = clampInt(lq), clampInt(dv)
			core.K = clampInt(lk * (d + dv) / dv)
			core.Batch = clampInt(batch)
		}
		core.Decode = decodeView(lq, kvPairs(n, c, batch, lk, dv), lk, d)
	}
	extra, _ := sumParts(n, c)
	extra.Class = perf.ClassElementwise
	e := FusedEstimate(n, c, core, extra)
	e.Note = "fused attention: the batch·Lq·Lk scores stay on chip (not in bytes)"
	return e, nil
}

// kvPairs is the number of (sequence, KV head) pairs a fused attention's
// V holds: its elements over Lk·dv. Grouped-query attention whose K and V
// are read before repeat_kv (the expand absorbed into the node, LLaMA-3's
// export) has fewer pairs than query heads; the kernel streams only those.
// Falls back to batch (one pair per query head) when V's size does not
// divide so, or V is the packed Q|K|V.
func kvPairs(n *ir.Node, c *RuleCtx, batch, lk, dv float64) float64 {
	v := c.Numel(n.In(2))
	if ir.QKVPacked(n) || !(lk*dv > 0) || !(v > 0) {
		return batch
	}
	pairs := v / (lk * dv)
	if pairs < 1 || pairs > batch || pairs != math.Trunc(pairs) {
		return batch
	}
	return pairs
}

// attentionDims returns the per-head problem of a FusedAttention: batch
// (every dim of the output but the last two, times the heads), Lq, Lk,
// d (Q·K's contraction) and dv. In the head layout O is [..., Lq, dv], Q
// [..., d] and V [..., Lk, dv]. With num_heads = H (the packed layout of
// passes/attention_heads.go) Q, V and O are rank 3 with the heads packed
// in the last axis: their head-split views [a, b, H, d] are permuted by
// q_perm, v_perm and the inverse of o_perm into the head layout
// [B, H, L, d], so batch-first ([B, L, H·d], perms 0,2,1,3) and
// sequence-first ([L, B, H·d], torch.nn.MultiheadAttention,
// passes/attention_seqfirst.go) read their L and B from the right axes.
func attentionDims(n *ir.Node, c *RuleCtx) (batch, lq, lk, d, dv float64, ok bool) {
	od, ok1 := c.Dims(n.Out(0))
	qd, ok2 := c.Dims(n.In(0))
	vd, ok3 := c.Dims(n.In(2))
	if !ok1 || !ok2 || !ok3 || len(od) < 2 || len(qd) < 1 || len(vd) < 2 {
		return 0, 0, 0, 0, 0, false
	}
	lq, dv = od[len(od)-2], od[len(od)-1]
	lk, d = vd[len(vd)-2], qd[len(qd)-1]
	if ir.QKVPacked(n) {
		d /= 3 // Q is the first third of the packed input
	}
	batch = prod(od[:len(od)-2])
	h := float64(n.AttrInt(ir.KeyNumHeads, 0))
	if h <= 0 {
		return headLayoutDims(n, od, qd, vd, batch, lq, lk, d, dv)
	}
	d, dv = d/h, dv/h
	if len(od) != 3 || len(vd) != 3 {
		return batch * h, lq, lk, d, dv, true
	}
	vPerm, vok := headPermOf(n, "v_perm")
	oPerm, ook := headPermOf(n, "o_perm")
	if !vok || !ook {
		return batch * h, lq, lk, d, dv, true
	}
	// The head-layout output R satisfies O_view[i] = R[o_perm[i]].
	oView := []float64{od[0], od[1], h, dv}
	var r [4]float64
	for i, p := range oPerm {
		r[p] = oView[i]
	}
	lk = []float64{vd[0], vd[1], h, dv}[vPerm[2]]
	return r[0] * r[1], r[2], lk, d, r[3], true
}

// headPermOf reads a 4-axis permutation attribute of a packed-layout
// FusedAttention; ok is false when it is absent or not a permutation.
func headPermOf(n *ir.Node, name string) ([]int64, bool) {
	p, ok := n.AttrInts(name)
	if !ok || len(p) != 4 {
		return nil, false
	}
	seen := [4]bool{}
	for _, a := range p {
		if a < 0 || a > 3 || seen[a] {
			return nil, false
		}
		seen[a] = true
	}
	return p, true
}

// headLayoutDims is attentionDims for a FusedAttention whose inputs reach
// the head layout through absorbed transposes (ir.AttentionLayout,
// passes/attention_layout.go): Q, V and O are read in that layout (O by
// undoing o_perm). Without such attributes it returns the given values.
func headLayoutDims(n *ir.Node, od, qd, vd []float64, batch, lq, lk, d, dv float64) (float64, float64, float64, float64, float64, bool) {
	qp, qu := ir.AttentionLayout(n, 0)
	vp, vu := ir.AttentionLayout(n, 2)
	_, hasO := n.AttrInts(ir.KeyOPerm)
	if qp == nil && qu == nil && vp == nil && vu == nil && !hasO {
		return batch, lq, lk, d, dv, true
	}
	qh, ok1 := ir.ToHeadLayout(qd, qp, qu, 1)
	vh, ok2 := ir.ToHeadLayout(vd, vp, vu, 1)
	oh := od
	if p, ok := n.AttrInts(ir.KeyOPerm); ok && len(p) == len(od) {
		oh = make([]float64, len(od))
		for i, a := range p {
			if a < 0 || int(a) >= len(od) {
				return 0, 0, 0, 0, 0, false
			}
			oh[a] = od[i] // O[i] = head[o_perm[i]]
		}
	}
	if !ok1 || !ok2 || len(qh) < 1 || len(vh) < 2 || len(oh) < 2 {
		return 0, 0, 0, 0, 0, false
	}
	return prod(oh[:len(oh)-2]), oh[len(oh)-2], vh[len(vh)-2], qh[len(qh)-1], oh[len(oh)-1], true
}
