package passes

import (
	"maps"
	"math/rand"
	"slices"
	"testing"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
)

// builder makes small inferred graphs by hand for pass tests: the shared
// irtest builder plus float32 shorthands and random weights.
type builder struct {
	*irtest.Builder
	t   testing.TB
	g   *ir.Graph
	rng *rand.Rand
}

func newBuilder(t testing.TB) *builder {
	ib := irtest.New(t, 13)
	return &builder{Builder: ib, t: t, g: ib.G, rng: rand.New(rand.NewSource(1))}
}

func (b *builder) value(name string) *ir.Value { return b.Value(name) }

// input adds a float32 graph input.
func (b *builder) input(name string, dims ...int64) *ir.Value {
	return b.Input(name, ir.Float32, dims...)
}

// weight adds a float32 initializer with random contents in [-1, 1).
func (b *builder) weight(name string, dims ...int64) *ir.Value {
	return b.constant(name, dims, fill(dims, func() float64 { return 2*b.rng.Float64() - 1 }))
}

// fill returns a tensor's worth of values for dims, each from next: the
// contents of a random weight.
func fill[T any](dims []int64, next func() T) []T {
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]T, n)
	for i := range vals {
		vals[i] = next()
	}
	return vals
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
	return b.Node(op, ins, nout, attrs...)
}

// op adds a one-output node and returns its output.
func (b *builder) op(op string, attrs []*ir.Attribute, ins ...*ir.Value) *ir.Value {
	return b.Op(op, attrs, ins...)
}

func (b *builder) output(vs ...*ir.Value) { b.Output(vs...) }

// infer runs shape inference and checks the graph.
func (b *builder) infer() *ir.Graph { return b.Infer() }

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

// run infers the graph b holds and runs the named passes on it, with the
// checks runPasses makes: the build, infer, run steps every fusion test
// takes.
func (b *builder) run(names ...string) *ir.Graph {
	g := b.infer()
	runPasses(b.t, g, names...)
	return g
}

// checkGuards runs one subtest per case, in name order: each builds a
// graph on which a fusion must decline, runs the named passes on it, and
// hands the result to check. A fusion's guard test is one table of these,
// one case per guard.
func checkGuards(t *testing.T, cases map[string]func(b *builder), passes []string, check func(t *testing.T, g *ir.Graph)) {
	t.Helper()
	for _, name := range slices.Sorted(maps.Keys(cases)) {
		t.Run(name, func(t *testing.T) {
			b := newBuilder(t)
			cases[name](b)
			check(t, b.run(passes...))
		})
	}
}

// expectDeclines is checkGuards for the common guard: pass makes no op.
func expectDeclines(t *testing.T, pass, op string, cases map[string]func(b *builder)) {
	t.Helper()
	checkGuards(t, cases, []string{pass}, func(t *testing.T, g *ir.Graph) { expectNone(t, g, op) })
}

// guardCases makes checkGuards cases of a test graph built from an options
// struct: each entry of opts names the options that break one guard.
func guardCases[O, R any](build func(*builder, O) R, opts map[string]O) map[string]func(*builder) {
	cases := make(map[string]func(*builder), len(opts))
	for name, o := range opts {
		cases[name] = func(b *builder) { build(b, o) }
	}
	return cases
}

// ops lists the graph's ops in order, "Conv" or "onnxcost.FusedConv".
func ops(g *ir.Graph) string { return irtest.Ops(g) }

// find returns the first node of op type op.
func find(g *ir.Graph, op string) *ir.Node {
	for _, n := range g.Nodes {
		if n.OpType == op {
			return n
		}
	}
	return nil
}
