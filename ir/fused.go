package ir

import (
	"strconv"
	"strings"
)

// The fused-op contract. Package passes writes nodes in FusedDomain;
// package cost prices them; `onnxcost optimize` writes them to a file that
// this package reads back. All three sides use these names, keys and
// accessors, and the shape rules in ops_fused.go; none spells a key as a
// string literal.
//
// FusedConv, WinogradConv and FusedGemm carry an epilogue:
//
//	anchor         string  Gemm or MatMul: the op FusedGemm was built around (default MatMul)
//	residual       int     1: input 3 is added after the bias
//	activation     string  the absorbed activation's op type (Relu, Clip, Silu, ...)
//	activation_*   any     that activation's own attributes (activation_alpha, activation_min, ...)
//	pool           string  FusedConv only: a pooling op applied last (MaxPool, AveragePool, ...)
//	pool_*         any     the pooling op's own attributes (pool_kernel_shape, ...)
//	winograd_tile  int     WinogradConv only: the output tile m of F(m×m, 3×3)
//
// Any other attribute of FusedConv/FusedGemm is the anchor's own (strides,
// pads, transB, ...). FusedElementwise, Gelu, Softmax, LayerNormalization, RMSNormalization and Rotary
// record the default-domain nodes they replaced as parts (part_*), and
// every fused node may record its output dtypes (out_dtypes) so that a
// written graph re-infers under other bindings.
const FusedDomain = "onnxcost"

// Op types in FusedDomain.
const (
	OpFusedConv        = "FusedConv"
	OpWinogradConv     = "WinogradConv"
	OpFusedGemm        = "FusedGemm"
	OpGroupedGemm      = "GroupedGemm"
	OpFusedElementwise = "FusedElementwise"
	OpFusedGelu        = "Gelu"
	OpFusedSoftmax     = "Softmax"
	OpFusedLayerNorm   = "LayerNormalization"
	OpFusedRMSNorm     = "RMSNormalization"
	OpFusedRotary      = "Rotary"
	OpFusedAttention   = "FusedAttention"
	OpSkipLayerNorm    = "SkipLayerNormalization"
	// OpFusedMatMul is onnxruntime's FusedMatMul (alpha, transA, transB,
	// transBatchA, transBatchB as com.microsoft's) built by a pass from a
	// MatMul and the transposes and scalar scales around it.
	OpFusedMatMul = "FusedMatMul"
	// OpFusedQuickGelu is onnxruntime's QuickGelu, x·sigmoid(alpha·x)
	// (alpha 1: SiLU), built by a pass from Sigmoid and Mul.
	OpFusedQuickGelu = "QuickGelu"
)

// Attribute keys of fused nodes.
const (
	KeyAnchor           = "anchor"
	KeyResidual         = "residual"
	KeyGate             = "gate" // FusedGemm: 1 when input 4, G, multiplies the activated output (SwiGLU's gating Mul)
	KeyActivation       = "activation"
	KeyActivationPrefix = "activation_"
	KeyPool             = "pool"
	KeyPoolPrefix       = "pool_"
	KeyWinogradTile     = "winograd_tile"
	KeyNumHeads         = "num_heads"
	KeyQKVPacked        = "qkv_packed" // FusedAttention: 1 when inputs 0-2 are one [.., 3·D] tensor, Q|K|V along its last axis
	KeyOutDTypes        = "out_dtypes"
	KeyTransB           = "trans_b" // GroupedGemm: per weight, 1 when stored [N, K]
	// The part attributes: a fused node from the decomposition, elementwise
	// or attention passes records, for each node it replaced, the op
	// ("Op", or "domain.Op" outside the default domain), the element counts
	// of its first input and its output (KeyPartInExpr, KeyPartOutExpr
	// below: expressions over the fused node's own dims), and how many
	// inputs it read; the cost rules sum the parts' own costs over them, so
	// a fused node's FLOPs are exactly those of the nodes it replaced.
	// KeyPartIn and KeyPartOut are the legacy form, counts frozen at fusion
	// time (an unknown count is -1): no pass writes them any more, the cost
	// rules still read them from files written before.
	KeyPartOps   = "part_ops"
	KeyPartIn    = "part_in"
	KeyPartOut   = "part_out"
	KeyPartArity = "part_arity"
)

// IsFused reports whether n is the fused op typ.
func IsFused(n *Node, typ string) bool {
	return n != nil && n.Domain == FusedDomain && n.OpType == typ
}

// EpilogueOf reads a fused Conv/Gemm node's epilogue: the absorbed
// activation ("" for none), whether a residual input is added, and the
// pooling op ("" for none).
func EpilogueOf(n *Node) (act string, residual bool, pool string) {
	return n.AttrString(KeyActivation, ""), n.AttrInt(KeyResidual, 0) != 0, n.AttrString(KeyPool, "")
}

// QKVPacked reports whether FusedAttention n reads Q, K and V as the three
// equal thirds of one packed tensor's last axis (inputs 0-2 are that
// tensor): GPT-2's c_attn output, the Split absorbed (passes/attention_packed.go).
func QKVPacked(n *Node) bool { return n.AttrInt(KeyQKVPacked, 0) == 1 }

// AnchorOf is the op a FusedGemm was built around: Gemm or MatMul.
func AnchorOf(n *Node) string { return n.AttrString(KeyAnchor, "MatMul") }

// SplitPoolAttrs separates a FusedConv's attributes into the convolution's
// own and the pooling op's, with the pool_ prefix removed (copies; n is
// not changed).
func SplitPoolAttrs(n *Node) (conv, pool []*Attribute) {
	for _, a := range n.Attrs {
		if name, ok := strings.CutPrefix(a.Name, KeyPoolPrefix); ok {
			cp := *a
			cp.Name = name
			pool = append(pool, &cp)
		} else {
			conv = append(conv, a)
		}
	}
	return conv, pool
}

// Part counts that stay symbolic. A part's element count is written
// (KeyPartInExpr, KeyPartOutExpr) as a product of terms joined by "*":
// an integer, or a reference to a dim of the fused node's own inputs
// ("i<k>.<axis>") or outputs ("o<k>.<axis>"); "?" is a count that could not
// be expressed. The reference is resolved when the node is costed, so a
// fused model written by `onnxcost optimize` with a symbolic batch costs
// the same as the in-memory plan at whatever batch it is re-read with; a
// count frozen at fusion time (the legacy KeyPartIn/KeyPartOut) would keep
// the batch the passes saw.
const (
	KeyPartInExpr  = "part_in_expr"
	KeyPartOutExpr = "part_out_expr"
)

// PartCountExpr writes the element count of shape s relative to a fused
// node's inputs ins and outputs outs. Known dims multiply into the integer
// term; a symbolic dim, or each factor of a symbolic product such as
// "batch*128", becomes a reference to an input or output dim with the same
// symbol. Anything else (an unranked shape, a symbol no input or output
// carries) gives "?".
func PartCountExpr(s Shape, ins, outs []*Value) string {
	if !s.Ranked {
		return "?"
	}
	c := D(1)
	var refs []string
	mul := func(v int64) bool {
		var ok bool
		c, ok = MulDim(c, D(v))
		return ok
	}
	for _, d := range s.Dims {
		if d.IsKnown() {
			if !mul(d.Value) {
				return "?"
			}
			continue
		}
		if r, ok := partRef(d.Sym, ins, outs); ok {
			refs = append(refs, r)
			continue
		}
		coef, factors := symFactors(d.Sym)
		if !mul(coef) {
			return "?"
		}
		for _, f := range factors {
			r, ok := partRef(f, ins, outs)
			if !ok {
				return "?"
			}
			refs = append(refs, r)
		}
	}
	return strings.Join(append([]string{strconv.FormatInt(c.Value, 10)}, refs...), "*")
}

// partRef names the first input, then output, dim whose symbol is sym.
func partRef(sym string, ins, outs []*Value) (string, bool) {
	for _, side := range []struct {
		tag string
		vs  []*Value
	}{{"i", ins}, {"o", outs}} {
		for k, v := range side.vs {
			if v == nil || !v.Shape.Ranked {
				continue
			}
			for a, d := range v.Shape.Dims {
				if d.Sym == sym {
					return side.tag + strconv.Itoa(k) + "." + strconv.Itoa(a), true
				}
			}
		}
	}
	return "", false
}

// PartCountDims reads a part count written by PartCountExpr against the
// fused node's inputs and outputs: the dims whose product it is (the
// integer term first, then each referenced dim, symbolic or not). ok is
// false for "?" or a reference to a dim the node does not have.
func PartCountDims(expr string, ins, outs []*Value) ([]Dim, bool) {
	if expr == "" || expr == "?" {
		return nil, false
	}
	var dims []Dim
	for t := range strings.SplitSeq(expr, "*") {
		d, ok := partDim(t, ins, outs)
		if !ok {
			return nil, false
		}
		dims = append(dims, d)
	}
	return dims, true
}

// partDim is one factor of a part count: an integer, or "i<k>.<a>" /
// "o<k>.<a>", dim a of input or output k.
func partDim(t string, ins, outs []*Value) (Dim, bool) {
	if v, err := strconv.ParseInt(t, 10, 64); err == nil {
		return D(v), true
	}
	if len(t) < 4 || (t[0] != 'i' && t[0] != 'o') {
		return Dim{}, false
	}
	ks, as, ok := strings.Cut(t[1:], ".")
	k, err1 := strconv.Atoi(ks)
	a, err2 := strconv.Atoi(as)
	if !ok || err1 != nil || err2 != nil {
		return Dim{}, false
	}
	vs := ins
	if t[0] == 'o' {
		vs = outs
	}
	if k < 0 || k >= len(vs) || vs[k] == nil || !vs[k].Shape.Ranked || a < 0 || a >= len(vs[k].Shape.Dims) {
		return Dim{}, false
	}
	return vs[k].Shape.Dims[a], true
}

// PartCount evaluates a part count against node n; ok is false when it
// is malformed, symbolic or overflows int64 (Shape.NumElements of
// PartCountDims). It multiplies as it reads, with no list of dims: the
// cost model evaluates two per part of every fused node, and the lists
// were 3 MB of Analyze's 73 MB on a 112k-node LLaMA-shaped graph.
func PartCount(expr string, n *Node) (int64, bool) {
	if expr == "" || expr == "?" {
		return 0, false
	}
	count := D(1)
	for t := range strings.SplitSeq(expr, "*") {
		d, ok := partDim(t, n.Inputs, n.Outputs)
		if !ok || !d.IsKnown() {
			return 0, false
		}
		if count, ok = MulDim(count, d); !ok {
			return 0, false
		}
	}
	return count.Value, true
}

// Head-layout attributes of a FusedAttention without num_heads
// (passes/attention_layout.go): input i of the node, as given, reaches the
// head layout [..., L, d] (Kᵀ: [..., d, L]) by the transpose <p>_perm and
// then unit axes inserted at <p>_unsq (an absorbed Unsqueeze); the output
// is the head-layout result transposed by o_perm. p is q, k (only with
// k_transposed) or v.
const (
	KeyQPerm = "q_perm"
	KeyKPerm = "k_perm"
	KeyVPerm = "v_perm"
	KeyOPerm = "o_perm"
	KeyQUnsq = "q_unsq"
	KeyKUnsq = "k_unsq"
	KeyVUnsq = "v_unsq"
)

// AttentionLayout returns the transpose and inserted unit axes that take
// FusedAttention input slot (0 Q, 1 K, 2 V) to the head layout; nil, nil
// when the input is already in it (or the node packs heads: num_heads).
func AttentionLayout(n *Node, slot int) (perm, unsq []int64) {
	if n.Attr(KeyNumHeads) != nil {
		return nil, nil
	}
	keys := [3][2]string{{KeyQPerm, KeyQUnsq}, {KeyKPerm, KeyKUnsq}, {KeyVPerm, KeyVUnsq}}
	if slot < 0 || slot > 2 || (slot == 1 && n.AttrInt("k_transposed", 0) != 1) {
		return nil, nil
	}
	perm, _ = n.AttrInts(keys[slot][0])
	unsq, _ = n.AttrInts(keys[slot][1])
	return perm, unsq
}

// ToHeadLayout applies perm and then inserts the unit axes unsq (sorted
// positions in the result) to dims; ok is false when perm or unsq does
// not fit the rank.
func ToHeadLayout[T any](dims []T, perm, unsq []int64, one T) ([]T, bool) {
	out := dims
	if perm != nil {
		if len(perm) != len(dims) {
			return nil, false
		}
		out = make([]T, len(dims))
		for i, p := range perm {
			if p < 0 || int(p) >= len(dims) {
				return nil, false
			}
			out[i] = dims[p]
		}
	}
	for _, a := range unsq {
		if a < 0 || int(a) > len(out) {
			return nil, false
		}
		out = append(out[:a:a], append([]T{one}, out[a:]...)...)
	}
	return out, true
}
