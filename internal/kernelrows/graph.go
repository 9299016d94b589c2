package kernelrows

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

// A measured PyTorch kernel is priced as the one ONNX node that computes
// the same thing, through the same cost rule cost.Analyze runs on it: so
// what is measured here is what a model's report prices.

// tensorSpec is one input of a node: element type and dims.
type tensorSpec struct {
	dt   ir.DType
	dims []int64
}

// bytes is the tensor's size.
func (t tensorSpec) bytes() float64 { return float64(t.dt.ByteSize(t.numel())) }

// numel is the tensor's element count.
func (t tensorSpec) numel() int64 {
	n := int64(1)
	for _, d := range t.dims {
		n *= d
	}
	return n
}

// nodeSpec is a one-node graph: the op, its inputs, its output and
// attributes. extra are ops whose arithmetic the measured kernel also does
// in the same pass over the data (SiluAndMul is a Mul that also computes
// Sigmoid and a second Mul per element), counted in FLOPs but not bytes.
type nodeSpec struct {
	op string
	// domain is the op's domain ("" the default one; msDomain for
	// onnxruntime's contrib ops).
	domain string
	ins    []tensorSpec
	out    tensorSpec
	// more are the outputs after the first (an attention's present K and
	// V caches).
	more []tensorSpec
	// consts make the inputs at these indices initializers holding the
	// integers given (an attention's total_sequence_length) instead of
	// graph inputs.
	consts map[int][]int64
	attrs  []*ir.Attribute
	extra  []string
	// compute is the compute dtype (cost.Options.DType).
	compute string
	// justWritten marks the inputs the kernel before this one wrote, as
	// where the row was timed (Vidur's block runs each op right after the
	// op that produced its input): the kernel finds them in L2 as far as
	// cost's residency model reaches them (cost.ReadAfterWrite). Unmarked
	// inputs are cold, as for a kernel timed alone.
	justWritten []bool
}

// opset is the default-domain opset of the graphs: 23 has
// RMSNormalization and RotaryEmbedding.
const opset = 23

// graph builds the one-node graph: every input a graph input (cold in L2
// for the residency model, as a kernel timed alone reads operands it did
// not produce), the output a graph output.
func (s *nodeSpec) graph() (*ir.Graph, *ir.Model, *ir.Node, error) {
	return s.build(false)
}

// contextGraph builds the node's graph as it was timed: each input marked
// justWritten the output of a Relu run just before it (over a graph input
// of its own), so cost.Analyze's residency model sees what the kernel
// found in L2; n is the node itself.
func (s *nodeSpec) contextGraph() (*ir.Graph, *ir.Model, *ir.Node, error) {
	return s.build(true)
}

// build is graph, with producers of the justWritten inputs in context.
func (s *nodeSpec) build(context bool) (*ir.Graph, *ir.Model, *ir.Node, error) {
	g := ir.NewGraph("kernel")
	m := &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: opset}}, Graph: g}
	if s.domain != "" {
		m.Opsets = append(m.Opsets, ir.OpsetImport{Domain: s.domain, Version: 1})
	}
	value := func(name string, t tensorSpec) (*ir.Value, error) {
		v, err := g.NewValue(name)
		if err != nil {
			return nil, err
		}
		v.Kind, v.DType, v.Shape = ir.TensorValue, t.dt, ir.KnownShape(t.dims...)
		return v, nil
	}
	// input makes v a declared graph input.
	input := func(v *ir.Value, t tensorSpec) {
		v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: t.dt, Shape: ir.KnownShape(t.dims...)}
		g.AddInput(v)
	}
	n := &ir.Node{Name: s.op, OpType: s.op, Domain: s.domain, Attrs: s.attrs}
	for i, t := range s.ins {
		v, err := value("in"+strconv.Itoa(i), t)
		if err != nil {
			return nil, nil, nil, err
		}
		if ints, ok := s.consts[i]; ok {
			g.AddInitializer(v, &ir.Tensor{DType: t.dt, Dims: t.dims, Ints: ints, HasData: true})
			n.Inputs = append(n.Inputs, v)
			continue
		}
		if context && i < len(s.justWritten) && s.justWritten[i] {
			x, err := value("x"+strconv.Itoa(i), t)
			if err != nil {
				return nil, nil, nil, err
			}
			input(x, t)
			p := &ir.Node{Name: "producer" + strconv.Itoa(i), OpType: "Relu", Inputs: []*ir.Value{x}, Outputs: []*ir.Value{v}}
			if err := g.AddNode(p); err != nil {
				return nil, nil, nil, err
			}
			n.Inputs = append(n.Inputs, v)
			continue
		}
		input(v, t)
		n.Inputs = append(n.Inputs, v)
	}
	for i, t := range append([]tensorSpec{s.out}, s.more...) {
		name := "out"
		if i > 0 {
			name += strconv.Itoa(i)
		}
		y, err := value(name, t)
		if err != nil {
			return nil, nil, nil, err
		}
		n.Outputs = append(n.Outputs, y)
	}
	if err := g.AddNode(n); err != nil {
		return nil, nil, nil, err
	}
	for _, y := range n.Outputs {
		g.AddOutput(y)
	}
	return g, m, n, nil
}

// kernel is the perf.Kernel cost.Analyze builds for the node on gpu: the
// rule's estimate, the precision the compute dtype resolves to on gpu, and
// the residency of a one-node graph (every byte read from DRAM, the output
// written through).
func (s *nodeSpec) kernel(gpu *hwdb.GPU) (perf.Kernel, error) {
	g, m, n, err := s.graph()
	if err != nil {
		return perf.Kernel{}, err
	}
	dt, ok := computeStorage[s.compute]
	if !ok {
		return perf.Kernel{}, fmt.Errorf("compute dtype %q not known", s.compute)
	}
	c := &cost.RuleCtx{Graph: g, Model: m, Opset: opset, DType: dt, Compute: s.compute}
	est, err := c.Estimate(n)
	if err != nil {
		return perf.Kernel{}, fmt.Errorf("%s: %v", s.op, err)
	}
	for _, op := range s.extra {
		en := &ir.Node{Name: op, OpType: op, Inputs: n.Inputs, Outputs: n.Outputs}
		e, err := c.Estimate(en)
		if err != nil {
			return perf.Kernel{}, fmt.Errorf("%s: %v", op, err)
		}
		est.ExecutedFLOPs += e.ExecutedFLOPs
	}
	if est.Launches <= 0 || est.Bytes() <= 0 {
		return perf.Kernel{}, fmt.Errorf("%s: the rule gives no kernel", s.op)
	}
	prec := perf.ResolvePrecision(gpu, perf.WantedPrecision(s.compute, est.Class))
	k := est.Kernel(prec, elemBytes[s.compute], est.Bytes(), cost.VectorizedOp(s.op))
	// The rows are priced under the eager plan (inPlanRuntime), as
	// cost.Analyze marks its kernels: a norm or softmax row is ATen's row
	// kernel. No row's op is a broadcast or strided pointwise op (Vidur's
	// rotary is sarathi's own kernel), so none is Strided.
	k.ReduceTree = cost.ATenRowOp(s.op)
	k.WarpRows = k.ReduceTree && (s.op == "Softmax" || s.op == "LogSoftmax") && cost.WarpSoftmax(k.RowLen, k.ElemBytes)
	// ATen's layer norm runs a CTA a row (cost's atenLayerNormRows).
	if s.op == "LayerNormalization" && k.RowLen > 0 {
		k.SmallCTAs = s.out.numel() / k.RowLen
	}
	// SiluAndMul (a Mul with extra arithmetic) is sarathi's scalar kernel.
	k.Stream = cost.StreamOp("", s.op) && len(s.extra) == 0
	// torch.add's loop (sarathi's kernels are not ATen's) pays its first
	// load after a different kernel: as cost's analyzer marks it, in a
	// graph with the kernel before it, not in a lone node.
	k.TensorIterator = k.Stream && slices.Contains(s.justWritten, true)
	if slices.Contains(s.justWritten, true) {
		sizes := make([]float64, len(s.ins))
		for i, t := range s.ins {
			sizes[i] = t.bytes()
		}
		k.DRAMBytes, k.OperandsWarm = cost.ReadAfterWrite(gpu.L2ReuseBytes(), sizes, s.justWritten, est.BytesRead, est.BytesWritten)
		k.Resident = true
	}
	return k, nil
}

// computeStorage is the storage dtype cost.Analyze costs float tensors at
// for each compute dtype these rows use (cost's computeDTypes).
var computeStorage = map[string]ir.DType{
	"fp32": ir.Float32, "tf32": ir.Float32, "fp16": ir.Float16, "bf16": ir.BFloat16,
}

// elemBytes is the operand size of each compute dtype (the analyzer's
// elemBytes of a node whose first input is a float tensor).
var elemBytes = map[string]float64{"fp32": 4, "tf32": 4, "fp16": 2, "bf16": 2}
