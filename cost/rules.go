package cost

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// FLOPConvention is printed once in every report (report.Report.FLOPConvention).
// It is the contract behind every number in the flops and macs columns.
const FLOPConvention = "1 MAC = 2 FLOPs (fmaFLOPs); macs and flops are separate fields. " +
	"Conv: macs = N*K*P*Q*(C/group)*R*S; ConvTranspose: macs = numel(X)*(M/group)*kernel; " +
	"Gemm: macs = M*N*K; MatMul: macs = batch*M*N*K; Einsum: macs = product of all label sizes. " +
	"flops = 2*macs plus every other arithmetic operation of the node: bias adds (1 per output element), " +
	"Gemm alpha/beta scaling and C add (1 per output element each), and elementwise work. " +
	"So for Conv/Gemm the bias is in flops; 2*macs is the bias-free count. " +
	"Elementwise: 1 flop per output element per arithmetic operation (table opCounts in cost/rules_elementwise.go); " +
	"exp, log, tanh, erf, sigmoid's exp, sqrt, pow, trig are also counted in transcendentals. " +
	"BatchNormalization (inference) = 2 flops per element (folded scale and shift); " +
	"pooling = kernel-size comparisons or adds per output element (+1 divide for average); " +
	"reductions = 1 flop per input element (+ per-op extras); Softmax = 4 flops + 1 exp per element. " +
	"LSTM per step and direction: macs = batch*4h*(input+h) (so flops = 16h^2 at input = hidden, batch 1), " +
	"+ batch*4h bias adds (Wb+Rb pre-summed), + 15 gate flops per batch*h element (5 transcendentals); " +
	"GRU: macs = batch*3h*(input+h), bias batch*6h, 13 gate flops per element; RNN: macs = batch*h*(input+h), " +
	"bias batch*h, 1 tanh. Recurrent ops are multiplied by seq_length and num_directions. " +
	"Bytes: every data input read once (weights included) and every output written once, at the tensor's dtype, " +
	"or at the compute dtype for floating-point tensors when --dtype is given. Views (Reshape, Squeeze, Unsqueeze, " +
	"Flatten, Identity, inference Dropout) and constant-folded nodes cost 0 bytes and 0 launches."

// NodeEstimate is what a cost rule returns for one node. All quantities are
// float64 so that sums never wrap; Analyze checks them for NaN, Inf and
// negative values.
type NodeEstimate struct {
	// Counts: FLOPs include 2*MACs. A rule sets ExecutedMACs and
	// ExecutedFLOPs only when its kernel does not compute the model's
	// arithmetic as written; left at zero they are taken to equal MACs
	// and FLOPs (fillExecuted).
	report.Counts
	Params   float64 // elements of initializer inputs the node reads
	Launches float64 // kernel launches; 0 for views and folded nodes
	Class    perf.KernelClass
	// GEMM view for the time model (see Kernel); zero when not GEMM-like.
	M, N, K, Batch int64
	// ConvChannels is a convolution's input channels per group
	// (perf.Kernel.ConvChannels).
	ConvChannels int64
	// Steps is the number of dependent sequential steps (RNN time steps).
	Steps int64
	// InputK is, for recurrent ops, the input size (Kernel.InputK).
	InputK int64
	// Row view of a row-wise reduction (Kernel.Rows, RowLen, RowPasses;
	// set by setRows/setReduceRows in rows.go).
	Rows, RowLen int64
	RowPasses    float64
	// RowShared is the bytes every row reads in common (Kernel.RowShared).
	RowShared float64
	// RowInSample says the row lies within one entry of the leading
	// (batch) axis: a batch changes Rows, never RowLen.
	RowInSample bool
	// WinogradFused marks a ClassWinograd estimate run by the fused
	// F(2×2,3×3) kernel (perf.Kernel.WinogradFused).
	WinogradFused bool
	// DequantFLOPs is the weight dequantization inside FLOPs
	// (perf.Kernel.DequantFLOPs).
	DequantFLOPs float64
	// Indexed is the indexed-copy view of a Gather (perf.Kernel.Indexed).
	Indexed perf.IndexedCopy
	// Decode is the KV-cache view of a decode step's attention
	// (perf.Kernel.Decode).
	Decode perf.AttnDecode
	// Trailer is a kernel the node runs after its own at the float type
	// of its output rather than at the node's compute path (QAttention's
	// float attention after its 8-bit projection). The estimate's counts
	// include it; Analyze prices it as a kernel of its own (trailer.go).
	Trailer *NodeEstimate
	// FloatDType, on a Trailer, is the float type its kernels run at when
	// that is not the node's output's (QOrderedLongformerAttention's int8
	// node runs its attention in fp16); Undefined: the output's.
	FloatDType ir.DType
	// Note explains an approximation; it is shown in the report.
	Note string
	// View marks a node that launches no kernel (a view or metadata op).
	View bool
	// Host marks a View the runtime computes on the CPU at run time
	// (ir.Session.Host): no kernel, but host time.
	Host bool

	// composite is set by control-flow rules whose time is the sum of a
	// subgraph's node times rather than one kernel's.
	composite *aggregate
	// fft is, for a convolution the analyzer runs as cuDNN's FFT
	// algorithm (libraryFFT), the transforms fftTransforms adds; nil
	// otherwise.
	fft *fftPlan
}

// fillExecuted sets the executed counts of an estimate whose rule left
// them unset: a kernel that computes the model's arithmetic as written
// executes exactly it. Only a rule whose kernel computes the result
// another way (Winograd) sets ExecutedMACs/ExecutedFLOPs itself.
func (e *NodeEstimate) fillExecuted() {
	if e.ExecutedMACs == 0 && e.ExecutedFLOPs == 0 {
		e.ExecutedMACs, e.ExecutedFLOPs = e.MACs, e.FLOPs
	}
}

// add accumulates o into e (compute and traffic; Class and GEMM view of e kept).
func (e *NodeEstimate) add(o NodeEstimate) {
	e.Counts.Add(o.Counts)
	e.Params += o.Params
	e.Launches += o.Launches
}

// scale multiplies every summable quantity by f (a trip count). Params
// stays: every trip reads the same weights.
func (e *NodeEstimate) scale(f float64) {
	e.Counts.Scale(f)
	e.Launches *= f
}

// Rule computes one node's estimate from its inferred shapes and attributes.
// It must not panic on any input; a shape it cannot use is reported through
// ctx.Warnf and costed with what is known.
type Rule func(n *ir.Node, ctx *RuleCtx) (NodeEstimate, error)

// ruleTable is sized for what registers: growing it by rehashing cost
// ~0.2 ms of every start.
var ruleTable = make(map[string]Rule, 256)

// RegisterRule adds a cost rule for (domain, op). Like ir.Register it
// panics on a duplicate, a programming error caught at init by any test.
// Fused-op rules (domain "onnxcost") are registered the same way, in
// rules_fused.go and rules_fused_attn.go.
func RegisterRule(domain, op string, r Rule) {
	k := ir.QualifiedOp(domain, op)
	if _, dup := ruleTable[k]; dup {
		panic("cost: rule registered twice: " + k)
	}
	ruleTable[k] = r
}

// LookupRule returns the rule for (domain, op), or nil.
func LookupRule(domain, op string) Rule { return ruleTable[ir.QualifiedOp(domain, op)] }

// RuleKeys lists the ops that have a cost rule, named by ir.QualifiedOp
// ("Conv", "onnxcost.FusedConv"), sorted.
func RuleKeys() []string {
	return slices.Sorted(maps.Keys(ruleTable))
}

// NoCostRule lists ops (keyed by ir.QualifiedOp) that shape inference may
// support but that have no cost rule, each with the reason. Analyze reports their nodes under
// unsupported_ops and counts them nowhere.
var NoCostRule = map[string]string{
	"StringNormalizer":                  "string processing runs on the host; no GPU kernel model",
	"TfIdfVectorizer":                   "string/n-gram processing; no GPU kernel model",
	"RegexFullMatch":                    "string processing runs on the host",
	"StringConcat":                      "string processing runs on the host",
	"StringSplit":                       "string processing runs on the host",
	"SequenceMap":                       "body cost times a sequence length that is not known statically",
	"Unique":                            "data-dependent output size and sort cost",
	"com.microsoft.Unique":              "data-dependent output size and sort cost",
	"com.microsoft.EPContext":           "an execution provider's precompiled engine: what it runs is not in the graph",
	"com.microsoft.Snpe":                "a Qualcomm SNPE DLC: what it runs is not in the graph",
	"Multinomial":                       "sampling cost depends on the implementation",
	"ConcatFromSequence":                "sequence element shapes are not known statically",
	"ai.onnx.preview.training.Gradient": "the gradient graph is not materialised; its cost is that of a backward pass",
}

// RuleCtx is what a rule sees besides the node: the compute dtype, the
// opset, and helpers that turn shapes into element and byte counts while
// remembering which weights were read and which shapes were unknown.
type RuleCtx struct {
	Graph *ir.Graph
	Model *ir.Model
	Opset int64
	// DType is the compute dtype override (Undefined = each tensor's own).
	DType ir.DType
	// Compute is the compute dtype's name as given (Options.DType: "" or
	// fp32|tf32|fp16|bf16|fp8|int8). DType alone cannot tell tf32 from
	// fp32: both are stored as float32.
	Compute string
	// NoConvTensorCores says the GPU has no tensor path for a convolution
	// at Compute (Pascal's fp16 runs in fp32 math), where Winograd stays
	// the faster algorithm. The zero value assumes the tensor path the
	// dtype implies.
	NoConvTensorCores bool

	warnings []string
	params   []*ir.Value
	unknown  bool // a shape the rule needed was not fully known
	// sub analyses a subgraph (If/Loop/Scan bodies); subPeak is the
	// highest peak activation memory of the subgraphs it analysed.
	sub     func(g *ir.Graph) (*graphCost, error)
	subPeak float64
	// node is the node being costed, for messages.
	node *ir.Node
	// flow holds the run-time dtypes autocast gives values (autocast.go),
	// read when no DType override is set.
	flow map[*ir.Value]ir.DType
	// converted are the inputs the node reads as autocast's copies.
	converted []autocastCast
}

// Warnf records a warning naming the node.
func (c *RuleCtx) Warnf(format string, args ...any) {
	name := ""
	if c.node != nil {
		name = fmt.Sprintf("%s node %q: ", c.node.OpType, c.node.Name)
	}
	c.warnings = append(c.warnings, name+fmt.Sprintf(format, args...))
}

// Numel is the number of elements of v as float64 (no overflow possible).
// An absent value has 0 elements; an unknown shape counts as 0 and is
// reported once per node (never a symbol silently taken as a number).
func (c *RuleCtx) Numel(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	if v.Const != nil && !v.Shape.Ranked {
		return float64(v.Const.NumElements())
	}
	if !c.fullyKnown(v) {
		return 0
	}
	// The product over the shape itself, not over Dims' float copy:
	// Numel runs several times per node, and those copies were 6 MB of
	// Analyze's 73 MB on a 112k-node LLaMA-shaped graph.
	n := 1.0
	for _, d := range v.Shape.Dims {
		n *= float64(d.Value)
	}
	return n
}

// fullyKnown reports whether v's rank and every dim are known (and no dim
// is negative); when not, the node is marked approximate as Dims does.
func (c *RuleCtx) fullyKnown(v *ir.Value) bool {
	if v == nil {
		return false
	}
	s := v.Shape
	if !s.Ranked {
		c.markUnknown(v)
		return false
	}
	for _, d := range s.Dims {
		if !d.IsKnown() || d.Value < 0 {
			c.markUnknown(v)
			return false
		}
	}
	return true
}

// Dims returns v's dims as float64; ok is false (and the node is marked
// approximate) when the rank or a dim is unknown.
func (c *RuleCtx) Dims(v *ir.Value) ([]float64, bool) {
	if !c.fullyKnown(v) {
		return nil, false
	}
	out := make([]float64, len(v.Shape.Dims))
	for i, d := range v.Shape.Dims {
		out[i] = float64(d.Value)
	}
	return out, true
}

// Dim returns dim i of v (negative i counts from the end), or 0 and false.
func (c *RuleCtx) Dim(v *ir.Value, i int) (float64, bool) {
	if !c.fullyKnown(v) {
		return 0, false
	}
	dims := v.Shape.Dims
	if i < 0 {
		i += len(dims)
	}
	if i < 0 || i >= len(dims) {
		return 0, false
	}
	return float64(dims[i].Value), true
}

func (c *RuleCtx) markUnknown(v *ir.Value) {
	if !c.unknown {
		c.Warnf("shape of %q is %s (not fully known); its unknown part is counted as 0", v.Name, v.Shape)
	}
	c.unknown = true
}

// inFloat runs f with float tensors costed at their own type (or at a
// float --dtype), not at the 8-bit compute dtype a quantized node runs at:
// for the parts of such a node that really are float (QAttention's
// dequantized projection and attention).
func (c *RuleCtx) inFloat(f func()) {
	saved := c.DType
	if saved != ir.Undefined && saved.Bits() <= 8 {
		c.DType = ir.Undefined
	}
	f()
	c.DType = saved
}

// elemBytes is the storage size of one element of v as costed: the compute
// dtype for floating-point tensors when one is set, else v's own dtype.
func (c *RuleCtx) elemBytes(v *ir.Value) float64 {
	dt := v.DType
	if c.DType != ir.Undefined && dt.IsFloat() {
		dt = c.DType
	} else if c.flow != nil {
		dt = c.flowDType(v)
	}
	return float64(dt.Bits()) / 8
}

// flowDType is v's dtype under autocast: the copy the node reads when it
// converts v, else the dtype v runs at.
func (c *RuleCtx) flowDType(v *ir.Value) ir.DType {
	for _, cv := range c.converted {
		if cv.v == v {
			return cv.to
		}
	}
	if f, ok := c.flow[v]; ok {
		return f
	}
	return v.DType
}

// Bytes is the size of v in bytes as costed.
func (c *RuleCtx) Bytes(v *ir.Value) float64 {
	if v == nil {
		return 0
	}
	return c.Numel(v) * c.elemBytes(v)
}

// Read counts input slots idx of n as read (all present inputs when idx is
// empty) and records initializer inputs as parameters.
func (c *RuleCtx) Read(n *ir.Node, e *NodeEstimate, idx ...int) {
	if len(idx) == 0 {
		for i := range n.Inputs {
			c.readOne(n.In(i), e)
		}
		return
	}
	for _, i := range idx {
		c.readOne(n.In(i), e)
	}
}

func (c *RuleCtx) readOne(v *ir.Value, e *NodeEstimate) {
	if v == nil {
		return
	}
	e.BytesRead += c.Bytes(v)
	c.param(v, e)
}

// param records v as a parameter when it is an initializer.
func (c *RuleCtx) param(v *ir.Value, e *NodeEstimate) {
	if v == nil || !v.IsInitializer {
		return
	}
	for _, p := range c.params {
		if p == v {
			return
		}
	}
	c.params = append(c.params, v)
	e.Params += c.Numel(v)
}

// Write counts all present outputs of n as written.
func (c *RuleCtx) Write(n *ir.Node, e *NodeEstimate) {
	for _, o := range n.Outputs {
		e.BytesWritten += c.Bytes(o)
	}
}

// ReadWrite is the boundary traffic of a plain kernel: every input read
// once, every output written once.
func (c *RuleCtx) ReadWrite(n *ir.Node, e *NodeEstimate) {
	c.Read(n, e)
	c.Write(n, e)
}

// Estimate runs the registered rule for a node that need not be in any
// graph (a fused node's parts, built by a pass). The parameters it reads
// are recorded in c as for any node.
func (c *RuleCtx) Estimate(n *ir.Node) (NodeEstimate, error) {
	r := LookupRule(n.Domain, n.OpType)
	if r == nil {
		return NodeEstimate{}, fmt.Errorf("no cost rule for %s", ir.QualifiedOp(n.Domain, n.OpType))
	}
	e, err := r(n, c)
	e.fillExecuted()
	return e, err
}

// kernel is a one-launch estimate of class cl with boundary traffic.
func kernel(n *ir.Node, c *RuleCtx, cl perf.KernelClass) NodeEstimate {
	e := NodeEstimate{Class: cl, Launches: 1}
	c.ReadWrite(n, &e)
	return e
}

// prod multiplies float dims.
func prod(ds []float64) float64 {
	p := 1.0
	for _, d := range ds {
		p *= d
	}
	return p
}

// clampInt converts a non-negative float count to int64 for the kernel's
// GEMM view, saturating instead of wrapping.
func clampInt(f float64) int64 {
	switch {
	case !(f > 0): // NaN or <= 0
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(f)
}
