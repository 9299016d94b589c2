package models

import (
	"fmt"
	"math"
	"strconv"

	"github.com/onnxcost/onnxcost/ir"
)

// Opset is the ai.onnx opset the zoo's models import.
const Opset = 17

// weightDType is the storage type of every weight: the zoo models fp32
// checkpoints; `report --dtype` costs them at another precision.
const weightDType = ir.Float32

// maxBuildNodes bounds any zoo graph (a 70B LLaMA has about 9,000 nodes),
// so that an absurd layer count fails instead of exhausting memory.
const maxBuildNodes = MaxSyntheticNodes + 1000

// builder accumulates a graph. The first error sticks and turns every later
// call into a no-op returning placeholder values, so model code reads as a
// straight line and checks err once at the end.
type builder struct {
	m       *ir.Model
	g       *ir.Graph
	dataLoc string // external data file the weights claim to live in
	offset  int64  // next free byte in that (absent) file
	counts  map[string]int
	err     error
}

func newBuilder(name string) *builder {
	g := ir.NewGraph(name)
	return &builder{
		m: &ir.Model{
			IRVersion:    8,
			ProducerName: "onnxcost-zoo",
			Opsets:       []ir.OpsetImport{{Domain: "", Version: Opset}},
			Graph:        g,
		},
		g:       g,
		dataLoc: name + ".onnx.data",
		counts:  map[string]int{},
	}
}

func (b *builder) fail(err error) {
	if b.err == nil && err != nil {
		b.err = err
	}
}

// newValue creates a value, or a detached placeholder after an error.
func (b *builder) newValue(name string) *ir.Value {
	if b.err != nil {
		return &ir.Value{Name: name}
	}
	v, err := b.g.NewValue(name)
	if err != nil {
		b.fail(err)
		return &ir.Value{Name: name}
	}
	return v
}

// Symbolic, as a config's Batch or Seq, leaves that graph-input dim as a
// symbol ("batch", "seq") to be bound later with --batch / --dim. Zero in
// a config field always means "the documented default".
const Symbolic = -1

// dim is a graph-input dimension: known when v > 0, else the symbol sym.
func dim(v int64, sym string) ir.Dim {
	if v > 0 {
		return ir.D(v)
	}
	return ir.S(sym)
}

// checkDims accepts positive sizes or Symbolic.
func checkDims(vs ...int64) error {
	for _, v := range vs {
		if v <= 0 && v != Symbolic {
			return fmt.Errorf("batch and seq must be > 0, or %d for a symbolic dim", Symbolic)
		}
	}
	return nil
}

// input declares a graph input.
func (b *builder) input(name string, dt ir.DType, dims ...ir.Dim) *ir.Value {
	v := b.newValue(name)
	v.Kind = ir.TensorValue
	v.DType = dt
	v.Shape = ir.RankedShape(dims...)
	v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: dt, Shape: v.Shape.Clone()}
	b.g.AddInput(v)
	return v
}

// output marks v, renamed to name as an exporter's output_names would, as
// a graph output, and returns the renamed value for later readers. v must
// be a node output nobody reads yet.
func (b *builder) output(v *ir.Value, name string) *ir.Value {
	if n := v.Producer; n != nil && len(v.Consumers) == 0 && b.err == nil {
		// Re-add the producer with the new output value: the ir API has no
		// rename, and a node's outputs may only change while it is out of
		// the graph. finish() restores topological order.
		b.g.RemoveNode(n)
		b.g.RemoveValue(v)
		nv := b.newValue(name)
		for i, o := range n.Outputs {
			if o == v {
				n.Outputs[i] = nv
			}
		}
		b.fail(b.g.AddNode(n))
		v = nv
	}
	b.g.AddOutput(v)
	return v
}

// weight declares a float initializer with dims and dtype only. Its bytes
// are said to live in an external file that does not exist, at consecutive
// offsets, exactly like a fixture whose side file was not shipped.
func (b *builder) weight(name string, dims ...int64) *ir.Value {
	v := b.newValue(name)
	elems := int64(1)
	for _, d := range dims {
		if d <= 0 || d > ir.DefaultLimits.MaxDim || elems > ir.DefaultLimits.MaxElements/d {
			b.fail(fmt.Errorf("weight %s%v is too large (over %d elements)", name, dims, ir.DefaultLimits.MaxElements))
			return v
		}
		elems *= d
	}
	t := &ir.Tensor{Name: name, DType: weightDType, Dims: append([]int64(nil), dims...)}
	n := t.ByteSize()
	t.Loc = ir.DataLocation{File: b.dataLoc, Offset: b.offset, Length: n, Missing: true}
	b.offset += n
	b.g.AddInitializer(v, t)
	return v
}

// nodeName gives scope+"/"+op, then scope+"/"+op+"_1", ... as the PyTorch
// exporter does.
func (b *builder) nodeName(scope, op string) string {
	base := scope + "/" + op
	k := b.counts[base]
	b.counts[base] = k + 1
	if k == 0 {
		return base
	}
	return base + "_" + strconv.Itoa(k)
}

// aFloat is a FLOAT attribute holding v as float32 stores it.
func aFloat(name string, v float64) *ir.Attribute { return ir.FloatAttr(name, f32(v)) }

// f32 rounds to the float32 the file will hold, so that a model compares
// equal to itself after a write and read.
func f32(v float64) float64 { return float64(float32(v)) }

// opN adds a node with nOut outputs named "<node>_output_<i>".
func (b *builder) opN(scope, op string, nOut int, ins []*ir.Value, attrs ...*ir.Attribute) []*ir.Value {
	if len(b.g.Nodes) >= maxBuildNodes {
		b.fail(fmt.Errorf("more than %d nodes: choose fewer layers", maxBuildNodes))
	}
	name := b.nodeName(scope, op)
	n := &ir.Node{Name: name, OpType: op, Inputs: ins, Attrs: attrs}
	for i := 0; i < nOut; i++ {
		n.Outputs = append(n.Outputs, b.newValue(name+"_output_"+strconv.Itoa(i)))
	}
	if b.err == nil {
		b.fail(b.g.AddNode(n))
	}
	return n.Outputs
}

// op adds a single-output node.
func (b *builder) op(scope, op string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
	return b.opN(scope, op, 1, ins, attrs...)[0]
}

// ints is a Constant node holding a small int64 tensor (1-D).
func (b *builder) ints(scope string, vals ...int64) *ir.Value {
	t := ir.IntTensor([]int64{int64(len(vals))}, append([]int64(nil), vals...))
	return b.op(scope, "Constant", nil, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: t})
}

// scalarInt is a Constant node holding an int64 scalar.
func (b *builder) scalarInt(scope string, v int64) *ir.Value {
	t := ir.IntTensor(nil, []int64{v})
	return b.op(scope, "Constant", nil, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: t})
}

// scalar is a Constant node holding a float32 scalar.
func (b *builder) scalar(scope string, v float64) *ir.Value {
	t := ir.FloatTensor(ir.Float32, nil, []float64{f32(v)})
	return b.op(scope, "Constant", nil, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: t})
}

// floats is a Constant node holding a small 1-D float32 tensor.
func (b *builder) floats(scope string, vals []float64) *ir.Value {
	r := make([]float64, len(vals))
	for i, v := range vals {
		r[i] = f32(v)
	}
	t := ir.FloatTensor(ir.Float32, []int64{int64(len(vals))}, r)
	return b.op(scope, "Constant", nil, &ir.Attribute{Name: "value", Type: ir.AttrTensor, T: t})
}

// finish infers every shape and checks the graph's invariants: a builder
// bug must fail loudly here, not surface as a wrong cost later.
func (b *builder) finish() (*ir.Model, error) {
	if b.err != nil {
		return nil, fmt.Errorf("building %s: %v", b.g.Name, b.err)
	}
	if err := b.g.Toposort(); err != nil {
		return nil, fmt.Errorf("building %s: %v", b.g.Name, err)
	}
	res, err := ir.InferShapes(b.m, ir.InferOptions{})
	if err != nil {
		return nil, fmt.Errorf("building %s: shape inference: %v", b.g.Name, err)
	}
	if len(res.UnknownOps) > 0 {
		return nil, fmt.Errorf("building %s: ops without a shape rule: %v", b.g.Name, res.UnknownOps)
	}
	if len(res.Warnings) > 0 {
		return nil, fmt.Errorf("building %s: shape inference: %s", b.g.Name, res.Warnings[0])
	}
	if err := ir.VerifyInferred(b.g); err != nil {
		return nil, fmt.Errorf("building %s: %v", b.g.Name, err)
	}
	// Declare the inferred types of the outputs, as an exporter would, so
	// the written file states what the model produces.
	for _, o := range b.g.Outputs {
		o.Declared = &ir.TypeInfo{Kind: o.Kind, DType: o.DType, Shape: o.Shape.Clone()}
	}
	return b.m, nil
}

// negInf is the additive mask value for a masked position: the most
// negative float32, as Hugging Face uses (finfo.min), which softmax turns
// into exactly zero without producing NaN for a fully masked row.
var negInf = -math.MaxFloat32
