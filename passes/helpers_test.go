package passes

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
)

// builder makes small inferred graphs by hand for pass tests.
type builder struct {
	t   testing.TB
	m   *ir.Model
	g   *ir.Graph
	rng *rand.Rand
	seq int
}

func newBuilder(t testing.TB) *builder {
	g := ir.NewGraph("test")
	return &builder{t: t, g: g, rng: rand.New(rand.NewSource(1)),
		m: &ir.Model{Opsets: []ir.OpsetImport{{Domain: "", Version: 13}}, Graph: g}}
}

func (b *builder) value(name string) *ir.Value {
	v, err := b.g.NewValue(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// input adds a float32 graph input.
func (b *builder) input(name string, dims ...int64) *ir.Value {
	v := b.value(name)
	v.Kind, v.DType, v.Shape = ir.TensorValue, ir.Float32, ir.KnownShape(dims...)
	v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.KnownShape(dims...)}
	b.g.AddInput(v)
	return v
}

// weight adds a float32 initializer with random contents in [-1, 1).
func (b *builder) weight(name string, dims ...int64) *ir.Value {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 2*b.rng.Float64() - 1
	}
	return b.constant(name, dims, vals)
}

// positive adds an initializer with contents in [0.5, 1.5) (variances, scales).
func (b *builder) positive(name string, dims ...int64) *ir.Value {
	v := b.weight(name, dims...)
	for i, x := range v.Const.Floats {
		v.Const.Floats[i] = 1 + x/2
	}
	return v
}

func (b *builder) constant(name string, dims []int64, vals []float64) *ir.Value {
	v := b.value(name)
	t := ir.FloatTensor(ir.Float32, dims, vals)
	t.Name = name
	b.g.AddInitializer(v, t)
	return v
}

// blind adds a float32 initializer whose contents are not loaded, as in a
// graph-only model.
func (b *builder) blind(name string, dims ...int64) *ir.Value {
	v := b.value(name)
	b.g.AddInitializer(v, &ir.Tensor{Name: name, DType: ir.Float32, Dims: dims, Loc: ir.DataLocation{File: "w.bin", Missing: true}})
	return v
}

// node adds op reading ins and writing nout fresh outputs.
func (b *builder) node(op string, ins []*ir.Value, nout int, attrs ...*ir.Attribute) *ir.Node {
	b.seq++
	n := &ir.Node{Name: op + "_" + strconv.Itoa(b.seq), OpType: op, Inputs: ins, Attrs: attrs}
	for i := 0; i < nout; i++ {
		n.Outputs = append(n.Outputs, b.value(n.Name+"_out"+strconv.Itoa(i)))
	}
	if err := b.g.AddNode(n); err != nil {
		b.t.Fatal(err)
	}
	return n
}

// op adds a one-output node and returns its output.
func (b *builder) op(op string, attrs []*ir.Attribute, ins ...*ir.Value) *ir.Value {
	return b.node(op, ins, 1, attrs...).Out(0)
}

func (b *builder) output(vs ...*ir.Value) {
	for _, v := range vs {
		b.g.AddOutput(v)
	}
}

// infer runs shape inference and checks the graph.
func (b *builder) infer() *ir.Graph {
	if _, err := ir.InferShapes(b.m, ir.InferOptions{}); err != nil {
		b.t.Fatal(err)
	}
	if err := ir.VerifyInferred(b.g); err != nil {
		b.t.Fatal(err)
	}
	return b.g
}

// runPasses runs the named passes with the verifier after each, and
// checks the result is still a well-typed graph.
func runPasses(t testing.TB, g *ir.Graph, names ...string) *Stats {
	t.Helper()
	st, err := Run(g, Options{Only: names, Check: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := ir.Verify(g); err != nil {
		t.Fatalf("graph broken after %v: %v", names, err)
	}
	return st
}

// ops lists the graph's ops in order, "Conv" or "onnxcost.FusedConv".
func ops(g *ir.Graph) string {
	var s []string
	for _, n := range g.Nodes {
		if n.Domain != "" {
			s = append(s, n.Domain+"."+n.OpType)
		} else {
			s = append(s, n.OpType)
		}
	}
	return strings.Join(s, " ")
}

// find returns the first node of op type op.
func find(g *ir.Graph, op string) *ir.Node {
	for _, n := range g.Nodes {
		if n.OpType == op {
			return n
		}
	}
	return nil
}
