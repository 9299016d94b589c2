package main

// Issue 27, items 7 and 8: a model the cost model cannot size fully says
// so (never a silently lower total with exit 0), and an
// export_params=False export (weights as graph inputs) costs what the
// same network with initializers costs.

import (
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/ir"
)

// testGraph writes small models for these tests.
type testGraph struct {
	t *testing.T
	g *ir.Graph
	m *ir.Model
	// asInputs declares every weight as a graph input (what
	// torch.onnx.export(..., export_params=False) writes) instead of an
	// initializer.
	asInputs bool
}

func newTestGraph(t *testing.T, asInputs bool) *testGraph {
	g := ir.NewGraph("g")
	return &testGraph{t: t, g: g, asInputs: asInputs,
		m: &ir.Model{IRVersion: 8, Opsets: []ir.OpsetImport{{Domain: "", Version: 13}, {Domain: "com.acme", Version: 1}}, Graph: g}}
}

func (b *testGraph) val(name string) *ir.Value {
	v, err := b.g.NewValue(name)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

func (b *testGraph) input(name string, dims ...ir.Dim) *ir.Value {
	v := b.val(name)
	v.Kind, v.DType, v.Shape = ir.TensorValue, ir.Float32, ir.RankedShape(dims...)
	v.Declared = &ir.TypeInfo{Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.RankedShape(dims...)}
	b.g.AddInput(v)
	return v
}

// weight is an initializer holding small values, or (asInputs) a graph
// input of the same type.
func (b *testGraph) weight(name string, dims ...int64) *ir.Value {
	if b.asInputs {
		ds := make([]ir.Dim, len(dims))
		for i, d := range dims {
			ds[i] = ir.D(d)
		}
		return b.input(name, ds...)
	}
	n := int64(1)
	for _, d := range dims {
		n *= d
	}
	vals := make([]float64, n)
	for i := range vals {
		vals[i] = 0.5 + float64(i%5)/10 // positive: a BN variance stays valid
	}
	v := b.val(name)
	tt := ir.FloatTensor(ir.Float32, dims, vals)
	tt.Name = name
	b.g.AddInitializer(v, tt)
	return v
}

func (b *testGraph) node(op, domain, name string, ins []*ir.Value, attrs ...*ir.Attribute) *ir.Value {
	o := b.val(name + "_out")
	if err := b.g.AddNode(&ir.Node{Name: name, OpType: op, Domain: domain, Inputs: ins, Outputs: []*ir.Value{o}, Attrs: attrs}); err != nil {
		b.t.Fatal(err)
	}
	return o
}

func (b *testGraph) write(dir, file string, out *ir.Value) string {
	b.g.AddOutput(out)
	p := filepath.Join(dir, file)
	if err := ir.WriteFile(p, b.m); err != nil {
		b.t.Fatal(err)
	}
	return p
}

var pads1 = &ir.Attribute{Name: "pads", Type: ir.AttrInts, Ints: []int64{1, 1, 1, 1}}

// convCustomConvModel is x[1,16,32,32] → Conv 3×3 → com.acme.Scale (an op
// with neither a shape nor a cost rule) → Conv 3×3.
func convCustomConvModel(t *testing.T, dir string) string {
	b := newTestGraph(t, false)
	x := b.input("x", ir.D(1), ir.D(16), ir.D(32), ir.D(32))
	y := b.node("Conv", "", "conv1", []*ir.Value{x, b.weight("w1", 16, 16, 3, 3)}, pads1)
	y = b.node("Scale", "com.acme", "custom", []*ir.Value{y})
	y = b.node("Conv", "", "conv2", []*ir.Value{y, b.weight("w2", 16, 16, 3, 3)}, pads1)
	return b.write(dir, "custom.onnx", y)
}

// convMACs is one of its convolutions: 16·16·3·3 products per output
// pixel, 32·32 pixels.
const convMACs = 16 * 16 * 9 * 32 * 32

// TestUnsizedNodesMarkTotalsPartial: the Conv after an op with no shape
// rule has an input of unknown shape and counts 0 MACs; the report said
// 2.36 M MACs (half the model's 4.72 M), exit 0, and named only the
// custom op. Now the totals carry partial (1 node without a cost rule,
// 1 unsized and named), the text says the total is partial, and a
// warning says so on stderr.
func TestUnsizedNodesMarkTotalsPartial(t *testing.T) {
	model := convCustomConvModel(t, t.TempDir())
	var r report.Report
	out := runJSON(t, &r, "report", model, "--gpu", "T4", "--format", "json")
	if r.Totals.MACs != convMACs {
		t.Errorf("MACs %g, want %d (conv1; conv2's input is unsized)", r.Totals.MACs, convMACs)
	}
	p := r.Totals.Partial
	if p == nil {
		t.Fatalf("totals.partial absent from a report whose conv2 was not sized: %s", out)
	}
	if p.UncostedNodes != 1 || p.UnsizedNodes != 1 || len(p.UnsizedNodeNames) != 1 || p.UnsizedNodeNames[0] != "conv2" {
		t.Errorf("partial = %+v, want 1 uncosted, 1 unsized (conv2)", *p)
	}
	if want := 2.0 / 3; math.Abs(p.ShareOfNodes-want) > 1e-12 {
		t.Errorf("share_of_nodes %g, want %g", p.ShareOfNodes, want)
	}
	if p.Reason == "" {
		t.Error("partial.reason is empty")
	}
	var raw struct {
		Totals map[string]json.RawMessage `json:"totals"`
	}
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	if _, ok := raw.Totals["partial"]; !ok {
		t.Error("JSON totals has no \"partial\" key")
	}
	for _, n := range r.Nodes {
		if n.Name == "conv2" && !strings.Contains(n.Note, "unknown") {
			t.Errorf("conv2's note %q does not say its shape was unknown", n.Note)
		}
	}

	code, text, errs := runCLI(t, "report", model, "--gpu", "T4")
	if code != 0 {
		t.Fatalf("report: exit %d: %s", code, errs)
	}
	if !strings.Contains(text, "partial totals: 2 of 3 nodes") || !strings.Contains(text, "conv2") {
		t.Errorf("text report has no partial-totals footer naming conv2:\n%s", text)
	}
	if !strings.Contains(errs, "partial") {
		t.Errorf("stderr does not warn that the totals are partial:\n%s", errs)
	}

	// A model every node of which is sized has no partial marker.
	var full report.Report
	runJSON(t, &full, "report", convModel(t, t.TempDir(), "c.onnx", ir.D(1)), "--gpu", "T4", "--format", "json")
	if full.Totals.Partial != nil {
		t.Errorf("a fully sized model has totals.partial %+v", *full.Totals.Partial)
	}
}

// paramsModel is a small CNN with its weights as initializers or, with
// asInputs, as graph inputs: x[batch,3,32,32] → Conv 3→32 → BN → Relu →
// Conv 32→32 (Winograd-eligible) → BN → Relu → GlobalAveragePool →
// Flatten → Gemm 32→10.
func paramsModel(t *testing.T, dir string, asInputs bool) string {
	b := newTestGraph(t, asInputs)
	x := b.input("x", ir.S("batch"), ir.D(3), ir.D(32), ir.D(32))
	bn := func(name string, y *ir.Value, c int64) *ir.Value {
		return b.node("BatchNormalization", "", name, []*ir.Value{y,
			b.weight(name+".weight", c), b.weight(name+".bias", c), b.weight(name+".running_mean", c), b.weight(name+".running_var", c)})
	}
	y := b.node("Conv", "", "conv1", []*ir.Value{x, b.weight("conv1.weight", 32, 3, 3, 3), b.weight("conv1.bias", 32)}, pads1)
	y = b.node("Relu", "", "relu1", []*ir.Value{bn("bn1", y, 32)})
	y = b.node("Conv", "", "conv2", []*ir.Value{y, b.weight("conv2.weight", 32, 32, 3, 3)}, pads1)
	y = b.node("Relu", "", "relu2", []*ir.Value{bn("bn2", y, 32)})
	y = b.node("GlobalAveragePool", "", "gap", []*ir.Value{y})
	y = b.node("Flatten", "", "flatten", []*ir.Value{y})
	y = b.node("Gemm", "", "fc", []*ir.Value{y, b.weight("fc.weight", 10, 32), b.weight("fc.bias", 10)},
		&ir.Attribute{Name: "transB", Type: ir.AttrInt, I: 1})
	name := "init.onnx"
	if asInputs {
		name = "noparams.onnx"
	}
	return b.write(dir, name, y)
}

// TestWeightInputsAreParameters: with export_params=False the same
// network reported 0 parameters, kept its BatchNorms and ran conv2 as
// implicit GEMM instead of Winograd: more time, no warning. Now its
// weight-like graph inputs are parameters (one warning says so) and it
// costs what the initializer export costs.
func TestWeightInputsAreParameters(t *testing.T) {
	dir := t.TempDir()
	initModel, inputModel := paramsModel(t, dir, false), paramsModel(t, dir, true)
	// 32·3·9+32 + 4·32 + 32·32·9 + 4·32 + 10·32+10
	const params = 896 + 128 + 9216 + 128 + 330
	for _, c := range []struct{ batch, plan string }{{"1", "fused"}, {"8", "fused"}, {"8", "unfused"}} {
		what := "batch " + c.batch + ", " + c.plan
		args := []string{"--gpu", "T4", "--batch", c.batch, "--plan", c.plan, "--format", "json"}
		var a, b report.Report
		runJSON(t, &a, append([]string{"report", initModel}, args...)...)
		code, out, errs := runCLI(t, append([]string{"report", inputModel}, args...)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", what, code, errs)
		}
		if err := json.Unmarshal([]byte(out), &b); err != nil {
			t.Fatal(err)
		}
		// The fused plan folds each BN into its Conv (a bias instead of
		// 4 vectors): fewer parameters, the same in both exports.
		if c.plan == "unfused" && a.Totals.Params != params {
			t.Errorf("%s: the initializer export has %g params, want %d", what, a.Totals.Params, params)
		}
		if b.Totals.Params != a.Totals.Params || b.Totals.ParamBytes != a.Totals.ParamBytes {
			t.Errorf("%s: export_params=False: params %g (%g B), the initializer export %g (%g B)", what, b.Totals.Params, b.Totals.ParamBytes, a.Totals.Params, a.Totals.ParamBytes)
		}
		if math.Abs(b.Totals.TimeS-a.Totals.TimeS) > 0.01*a.Totals.TimeS {
			t.Errorf("%s: export_params=False: time %g s, the initializer export %g s", what, b.Totals.TimeS, a.Totals.TimeS)
		}
		if b.Totals.MACs != a.Totals.MACs || b.Totals.ExecutedMACs != a.Totals.ExecutedMACs || len(b.Nodes) != len(a.Nodes) {
			t.Errorf("%s: export_params=False: %d nodes, executed MACs %g; the initializer export %d, %g", what, len(b.Nodes), b.Totals.ExecutedMACs, len(a.Nodes), a.Totals.ExecutedMACs)
		}
		want := "13 graph inputs look like weights (export_params=False?): counted as parameters"
		if n := strings.Count(errs, "look like weights"); n != 1 || !strings.Contains(errs, want) {
			t.Errorf("%s: want one warning %q, got stderr:\n%s", what, want, errs)
		}
		if !strings.Contains(strings.Join(b.Warnings, "\n"), want) {
			t.Errorf("%s: the JSON warnings do not carry it: %q", what, b.Warnings)
		}
		if strings.Contains(strings.Join(a.Warnings, "\n"), "look like weights") {
			t.Errorf("%s: the initializer export warns about weight inputs", what)
		}
	}
	// The fused plan written by optimize and read back keeps the weights
	// as inputs of onnxcost.FusedConv/FusedGemm: still parameters.
	var a, b report.Report
	for _, c := range []struct {
		model string
		r     *report.Report
	}{{initModel, &a}, {inputModel, &b}} {
		out := c.model + ".opt.onnx"
		if code, _, errs := runCLI(t, "optimize", c.model, "-o", out); code != 0 {
			t.Fatalf("optimize %s: exit %d: %s", c.model, code, errs)
		}
		runJSON(t, c.r, "report", out, "--gpu", "T4", "--batch", "8", "--format", "json")
	}
	if b.Totals.Params != a.Totals.Params || b.Totals.ExecutedMACs != a.Totals.ExecutedMACs || b.Totals.TimeS != a.Totals.TimeS {
		t.Errorf("optimized export_params=False: params %g, executed MACs %g, time %g; optimized initializer export %g, %g, %g",
			b.Totals.Params, b.Totals.ExecutedMACs, b.Totals.TimeS, a.Totals.Params, a.Totals.ExecutedMACs, a.Totals.TimeS)
	}
}
