package cost

import (
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// Autocast inference (--dtype fp16-amp, bf16-amp): an fp32 model called
// under torch.autocast, as BERT-style models with an fp32 attention mask
// are served in PyTorch (.half() would not run them). The weights stay
// fp32 in memory; each op reads and writes the dtype autocast gives it
// (torch.amp docs, "Autocast Op Reference", CUDA):
//   - the ops on the lower-precision list (convolutions, matmuls, linear
//     layers, RNN cells, attention) cast every fp32 input to the half
//     dtype before their kernel and write half: one cast kernel per input,
//     a weight's once per call (autocast caches the casts of leaf tensors
//     that require grad, a module's parameters, until the autocast
//     context exits) and an activation's at every such use (not cached);
//   - the ops on the fp32 list (softmax, layer/group norm, exp, log, pow,
//     sums and norms) cast a half input up to fp32 and write fp32;
//   - every other op computes in the widest floating type among its
//     inputs (type promotion: TensorIterator reads mixed inputs in one
//     kernel, no cast kernel), a 0-d tensor not counting against a
//     dimensioned one (PyTorch's promotion of wrapped scalars); batch norm
//     keeps its input's dtype (cuDNN runs fp16 data with fp32 statistics).
// Our H100 BERT-base rows count what this flow predicts: 458 kernels
// under autocast at batch 8 against 251 in fp32, 207 more = 12 layers ×
// (12 weight and bias casts, 3 casts of the LayerNorm output for Q, K and
// V, 1 of the fp32 softmax output for ·V, 1 of the LayerNorm output for
// the first FFN matmul) + 3 for the pooler.

// autocastHalf names the half dtype of each autocast --dtype.
var autocastHalf = map[string]ir.DType{"fp16-amp": ir.Float16, "bf16-amp": ir.BFloat16}

// autocastHalfOps are the ONNX ops autocast runs in the half dtype (the
// lower-precision list: conv*, matmul, mm, bmm, addmm, linear, prelu,
// the RNN cells, scaled_dot_product_attention).
var autocastHalfOps = map[string]bool{
	"Conv": true, "ConvTranspose": true, "MatMul": true, "Gemm": true, "PRelu": true,
	"LSTM": true, "GRU": true, "RNN": true, "Attention": true, "Einsum": true,
	"com.microsoft.Attention": true, "com.microsoft.MultiHeadAttention": true,
	"com.microsoft.GroupQueryAttention": true, "com.microsoft.FusedMatMul": true,
	"com.microsoft.TransposeMatMul": true, "com.microsoft.FusedMatMulActivation": true,
	// The plans' fused nodes anchored on one of those (ir/fused.go).
	"onnxcost.FusedConv": true, "onnxcost.WinogradConv": true, "onnxcost.FusedGemm": true,
	"onnxcost.GroupedGemm": true, "onnxcost.FusedAttention": true,
}

// autocastFP32Ops are the ONNX ops autocast runs in fp32 (the fp32 list:
// softmax, log_softmax, layer_norm, group_norm, exp, log, pow,
// reciprocal, softplus, sum, prod, cumsum, norm, normalize, acos, asin,
// cosh, sinh, tan).
var autocastFP32Ops = map[string]bool{
	"Softmax": true, "LogSoftmax": true, "LayerNormalization": true, "GroupNormalization": true,
	"onnxcost.LayerNormalization": true, "com.microsoft.SkipLayerNormalization": true,
	"onnxcost.SkipLayerNormalization": true, "Exp": true, "Log": true, "Pow": true,
	"Reciprocal": true, "Softplus": true, "ReduceSum": true, "ReduceProd": true, "CumSum": true,
	"ReduceL1": true, "ReduceL2": true, "LpNormalization": true, "Acos": true, "Asin": true,
	"Cosh": true, "Sinh": true, "Tan": true, "onnxcost.Softmax": true,
}

// AutocastFP32 reports whether autocast runs op (ir.QualifiedOp) in fp32
// whatever its inputs' dtype.
func AutocastFP32(op string) bool { return autocastFP32Ops[op] }

// autocastCast is one input autocast converts for a node: its kernel
// reads the copy; run is false where the copy is a weight's cast cached
// from an earlier use in the call (no kernel of its own).
type autocastCast struct {
	v        *ir.Value
	from, to ir.DType
	run      bool
}

// autocastFlow is the run-time dtype of every floating-point value of a
// graph under autocast, and the casts each node runs.
type autocastFlow struct {
	half ir.DType
	// dt holds the values whose run-time dtype differs from their stored
	// one (RuleCtx.elemBytes reads it).
	dt map[*ir.Value]ir.DType
	// casts are the inputs each node reads converted.
	casts map[*ir.Node][]autocastCast
}

// newAutocastFlow walks g in topological order. Subgraphs keep their own
// dtypes (a loop body is costed as stored). A KV cache the graph is fed
// (autocastCacheInputs) is at the half dtype: the previous step wrote it
// from the key and value projections, which autocast runs in half (the
// prompt's step, with an empty cache, writes nothing else), so a cache
// carried from step to step stays half; an fp32 past would be a second
// fixed point that no generation reaches.
func newAutocastFlow(g *ir.Graph, half ir.DType) *autocastFlow {
	f := &autocastFlow{half: half, dt: map[*ir.Value]ir.DType{}, casts: map[*ir.Node][]autocastCast{}}
	for _, past := range autocastCacheInputs(g) {
		if past.DType == ir.Float32 {
			f.dt[past] = half
		}
	}
	cachedWeight := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		op := ir.QualifiedOp(n.Domain, n.OpType)
		var out ir.DType
		switch {
		case autocastHalfOps[op] || f.linearBias(n):
			out = half
			res := residualInput(n)
			for _, in := range n.Inputs {
				if in == res && res != nil {
					// A fused residual add promotes as the Add did.
					if dt := f.of(in); dt.IsFloat() && dt.Bits() > out.Bits() {
						out = dt
					}
					continue
				}
				if in == nil || f.of(in) != ir.Float32 {
					continue
				}
				run := !in.IsInitializer || !cachedWeight[in]
				if in.IsInitializer {
					cachedWeight[in] = true
				}
				f.casts[n] = append(f.casts[n], autocastCast{v: in, from: ir.Float32, to: half, run: run})
			}
		case autocastFP32Ops[op]:
			out = ir.Float32
			if x := n.In(0); x != nil && f.of(x) == half {
				f.casts[n] = append(f.casts[n], autocastCast{v: x, from: half, to: ir.Float32, run: true})
			}
		case op == "BatchNormalization" || op == "InstanceNormalization":
			out = f.of(n.In(0))
		case op == "Cast" || op == "CastLike":
			continue // the dtype the graph asks for
		default:
			out = f.promoted(n)
		}
		for _, o := range n.Outputs {
			if o != nil && o.DType.IsFloat() && out.IsFloat() && o.DType != out {
				f.dt[o] = out
			}
		}
	}
	return f
}

// autocastCacheInputs are g's KV-cache inputs: the past of each cache
// append Concat(past, new) -> present (cacheAppends) and each past input
// an attention kernel updates in place into a present output
// (inPlaceCaches), in graph order.
func autocastCacheInputs(g *ir.Graph) []*ir.Value {
	appends := cacheAppends(g)
	var out []*ir.Value
	for _, n := range g.Nodes {
		if appends[n] {
			out = append(out, n.In(0))
			continue
		}
		for _, p := range inPlaceCaches(g, n) {
			out = append(out, p.past)
		}
	}
	return out
}

// residualInput is a fused Conv/Gemm node's residual input (slot 3 when
// its residual attribute is set; ir/fused.go), nil otherwise.
func residualInput(n *ir.Node) *ir.Value {
	if n.Domain != ir.FusedDomain {
		return nil
	}
	if _, residual, _ := ir.EpilogueOf(n); residual {
		return n.In(3)
	}
	return nil
}

// of is v's run-time dtype.
func (f *autocastFlow) of(v *ir.Value) ir.DType {
	if v == nil {
		return ir.Undefined
	}
	if dt, ok := f.dt[v]; ok {
		return dt
	}
	return v.DType
}

// linearBias reports whether n is the bias add of a linear layer the
// exporter split into MatMul and Add: a half-dtype input plus a 1-D fp32
// initializer, which autocast's linear casts with its weight.
func (f *autocastFlow) linearBias(n *ir.Node) bool {
	if n.Domain != "" || n.OpType != "Add" || len(n.Inputs) != 2 {
		return false
	}
	for i, b := range n.Inputs {
		x := n.Inputs[1-i]
		if b != nil && x != nil && b.IsInitializer && b.Shape.Rank() == 1 && f.of(x) == f.half {
			return true
		}
	}
	return false
}

// promoted is the widest floating dtype among n's inputs, a 0-d input
// counting only when every floating input is 0-d; Undefined when none is
// floating.
func (f *autocastFlow) promoted(n *ir.Node) ir.DType {
	var dims, scalars ir.DType
	for _, in := range n.Inputs {
		dt := f.of(in)
		if in == nil || !dt.IsFloat() {
			continue
		}
		p := &dims
		if in.Shape.Rank() == 0 {
			p = &scalars
		}
		if *p == ir.Undefined || dt.Bits() > p.Bits() {
			*p = dt
		}
	}
	if dims != ir.Undefined {
		return dims
	}
	return scalars
}

// autocastName is the compute dtype name node n runs at under autocast:
// the half dtype's for the lower-precision ops and for nodes writing it,
// fp32 otherwise.
func (f *autocastFlow) autocastName(n *ir.Node) string {
	dt := f.half
	if !autocastHalfOps[ir.QualifiedOp(n.Domain, n.OpType)] {
		if o := n.Out(0); o != nil {
			dt = f.of(o)
		}
	}
	return dtypeShort(dt)
}

// autocastCasts prices, in node n's row, the cast kernels autocast runs
// before it: each a streaming conversion (read the source, write the
// copy; no FLOPs, as the Cast rule counts one) on the elementwise path,
// one launch each. The source is read from DRAM (a weight is cold; an
// activation is charged the same, an upper bound), and the copy stays in
// L2 for the node's kernel when it fits; its write reaches DRAM once,
// charged to the cast as every write is to its writer (cost/residency.go).
func (a *analyzer) autocastCasts(nc *report.NodeCost, n *ir.Node, est *NodeEstimate, agg *aggregate) {
	if a.autocast == nil {
		return
	}
	var casts []autocastCast
	for _, c := range a.autocast.casts[n] {
		if c.run {
			casts = append(casts, c)
		}
	}
	if len(casts) == 0 {
		return
	}
	sizer := RuleCtx{unknown: true}
	for _, c := range casts {
		elems := sizer.Numel(c.v)
		r, w := elems*float64(c.from.Bits())/8, elems*float64(c.to.Bits())/8
		if !(r > 0) {
			continue
		}
		k := perf.Kernel{
			Class: perf.ClassElementwise, Bytes: r + w, WorkingSet: r + w,
			Precision: hwdb.FP32, ElemBytes: float64(c.to.Bits()) / 8, Launches: 1,
			Resident: true, DRAMBytes: r + w,
		}
		a.priceExtra(k, r, w, est, agg)
	}
	nc.Counts, nc.Launches = est.Counts, est.Launches
	nc.Note = appendNote(nc.Note, "with autocast's casts of its inputs ("+castList(casts)+")")
}

// castList names a node's casts for its note: "fp32→fp16 ×3".
func castList(casts []autocastCast) string {
	count := map[string]int{}
	var order []string
	for _, c := range casts {
		k := dtypeShort(c.from) + "→" + dtypeShort(c.to)
		if count[k] == 0 {
			order = append(order, k)
		}
		count[k]++
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = k
		if count[k] > 1 {
			parts[i] += " ×" + strconv.Itoa(count[k])
		}
	}
	return strings.Join(parts, ", ")
}

// dtypeShort is the report's name of a floating dtype.
func dtypeShort(dt ir.DType) string {
	if name, ok := floatDTypeName(dt); ok {
		return name
	}
	return "fp32"
}

// flowDTypes is the autocast dtype map rule contexts size tensors by, and
// the inputs node n reads as converted copies (nil without autocast).
func (a *analyzer) flowDTypes(n *ir.Node) (map[*ir.Value]ir.DType, []autocastCast) {
	if a.autocast == nil {
		return nil, nil
	}
	return a.autocast.dt, a.autocast.casts[n]
}
