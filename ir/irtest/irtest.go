// Package irtest builds small ir graphs for tests in any package (the
// idea of Go ssa's Fun/Bloc/Valu test DSL): inputs, typed values, nodes
// with generated names, inference and a one-line op listing to compare.
// Failures stop the test; it is imported by tests only.
package irtest

import (
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// Builder makes one graph inside a model importing the default domain at
// the given opset.
type Builder struct {
	T testing.TB
	M *ir.Model
	G *ir.Graph

	seq int
}

// New starts an empty graph "test" at the default-domain opset.
func New(t testing.TB, opset int64) *Builder {
	g := ir.NewGraph("test")
	return &Builder{T: t, G: g, M: &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: opset}}, Graph: g}}
}

// Value adds an untyped value named name.
func (b *Builder) Value(name string) *ir.Value {
	b.T.Helper()
	v, err := b.G.NewValue(name)
	if err != nil {
		b.T.Fatal(err)
	}
	return v
}

// Tensor adds a value already typed dt[dims] that is not a graph input: a
// node's input or output for a cost rule run without inference.
func (b *Builder) Tensor(name string, dt ir.DType, dims ...int64) *ir.Value {
	v := b.Value(name)
	v.Kind, v.DType, v.Shape = ir.TensorValue, dt, ir.KnownShape(dims...)
	return v
}

// Input adds a graph input declared dt[dims].
func (b *Builder) Input(name string, dt ir.DType, dims ...int64) *ir.Value {
	v := b.Tensor(name, dt, dims...)
	v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: dt, Shape: ir.KnownShape(dims...)}
	b.G.AddInput(v)
	return v
}

// Node adds op reading ins and writing nout fresh outputs, named
// "<op>_<n>" and "<op>_<n>_out<i>".
func (b *Builder) Node(op string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) *ir.Node {
	b.T.Helper()
	b.seq++
	n := &ir.Node{Name: op + "_" + strconv.Itoa(b.seq), OpType: op, Inputs: ins, Attrs: attrs}
	for i := 0; i < nout; i++ {
		n.Outputs = append(n.Outputs, b.Value(n.Name+"_out"+strconv.Itoa(i)))
	}
	if err := b.G.AddNode(n); err != nil {
		b.T.Fatal(err)
	}
	return n
}

// Op adds a one-output node and returns its output.
func (b *Builder) Op(op string, attrs []*ir.Attribute, ins ...*ir.Value) *ir.Value {
	return b.Node(op, ins, 1, attrs...).Out(0)
}

// Output marks values as graph outputs.
func (b *Builder) Output(vs ...*ir.Value) {
	for _, v := range vs {
		b.G.AddOutput(v)
	}
}

// Infer runs shape inference and checks the result with ir.VerifyInferred.
func (b *Builder) Infer() *ir.Graph {
	b.T.Helper()
	if _, err := ir.InferShapes(b.M, ir.InferOptions{}); err != nil {
		b.T.Fatal(err)
	}
	if err := ir.VerifyInferred(b.G); err != nil {
		b.T.Fatal(err)
	}
	return b.G
}

// Ops lists g's ops in order, space-separated: "Conv" in the default
// domain, "onnxcost.FusedConv" elsewhere (Go ssa's checkOpcodeCounts, as a
// string a test can compare whole).
func Ops(g *ir.Graph) string {
	s := make([]string, 0, len(g.Nodes))
	for _, n := range g.Nodes {
		if n.Domain != "" {
			s = append(s, n.Domain+"."+n.OpType)
		} else {
			s = append(s, n.OpType)
		}
	}
	return strings.Join(s, " ")
}
