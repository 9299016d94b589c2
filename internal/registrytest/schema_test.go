package registrytest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
	"github.com/onnxcost/onnxcost/passes"
)

func hasCostRule(domain, name string) bool { return cost.LookupRule(domain, name) != nil }

// TestSchemasKeepPromises: opset ranges are enforceable and InPlace ops
// can be trusted by peak memory.
func TestSchemasKeepPromises(t *testing.T) {
	for _, line := range CheckSchemas(ir.Ops(), hasCostRule) {
		t.Error(line)
	}
}

// TestCheckSchemasFails shows each schema check catching its breakage.
func TestCheckSchemasFails(t *testing.T) {
	infer := func(*ir.InferCtx) error { return nil }
	ok := &ir.OpSchema{Name: "Relu", Since: 6, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: infer}
	costed := func(_, name string) bool { return name != "Uncosted" }
	if bad := CheckSchemas([]*ir.OpSchema{ok}, costed); len(bad) != 0 {
		t.Fatalf("a sound schema reported %v", bad)
	}
	edit := func(f func(s *ir.OpSchema)) *ir.OpSchema {
		s := *ok
		f(&s)
		return &s
	}
	for _, c := range []struct {
		name string
		s    *ir.OpSchema
		want string
	}{
		{"no Since", edit(func(s *ir.OpSchema) { s.Since = 0 }), "Relu has Since 0"},
		{"Until before Since", edit(func(s *ir.OpSchema) { s.Until = 5 }), "Relu has Until 5 before Since 6"},
		{"InPlace alias", edit(func(s *ir.OpSchema) { s.Traits = ir.InPlace | ir.Alias }), "Relu is InPlace and Alias or View"},
		{"InPlace uncosted", edit(func(s *ir.OpSchema) { s.Name, s.Traits = "Uncosted", ir.InPlace }), "Uncosted is InPlace but has no cost rule"},
		{"InPlace without input", edit(func(s *ir.OpSchema) { s.Traits, s.MinIn = ir.InPlace, 0 }), "Relu is InPlace but does not always have input 0"},
		{"InPlace pair past the inputs", edit(func(s *ir.OpSchema) { s.Traits, s.InPlacePairs = ir.InPlace, [][2]int{{0, 1}} }), "Relu pairs output 0 with input 1, outside its 1 outputs and 1 inputs"},
		{"InPlace input in two pairs", edit(func(s *ir.OpSchema) {
			s.Traits, s.MaxOut, s.InPlacePairs = ir.InPlace, 2, [][2]int{{0, 0}, {1, 0}}
		}), "Relu names output 1 or input 0 in two in-place pairs"},
		{"pairs without InPlace", edit(func(s *ir.OpSchema) { s.InPlacePairs = [][2]int{{0, 0}} }), "Relu has InPlacePairs but not the InPlace trait"},
		{"check without rule", edit(func(s *ir.OpSchema) { s.Check, s.Infer = infer, nil }), "Relu has an operand check but no shape rule"},
	} {
		bad := CheckSchemas([]*ir.OpSchema{c.s}, costed)
		if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
			t.Errorf("%s: got %q, want one line containing %q", c.name, bad, c.want)
		}
	}
}

// operandCheckExempt are the ops whose operand check may refuse a node
// with no attributes whatever its operands: the refusal is of a missing
// required attribute, which is provably wrong.
var operandCheckExempt = map[string]string{
	"LRN":                "size is a required attribute",
	"GroupNormalization": "num_groups is a required attribute",
}

// TestOperandChecksTolerateUnknown: an operand check never refuses
// operands it cannot see.
func TestOperandChecksTolerateUnknown(t *testing.T) {
	for _, line := range CheckOperandChecks(ir.Ops(), operandCheckExempt) {
		t.Error(line)
	}
	n := 0
	for _, s := range ir.Ops() {
		if s.Check != nil {
			n++
		}
	}
	if n == 0 {
		t.Error("no schema has an operand check: the checks are not wired into the op table")
	}
}

// TestCheckOperandChecksFails shows the check catching a check that
// refuses unknown operands, and stale or unexplained exemptions.
func TestCheckOperandChecksFails(t *testing.T) {
	infer := func(*ir.InferCtx) error { return nil }
	strict := &ir.OpSchema{Name: "Strict", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: infer,
		Check: func(*ir.InferCtx) error { return errors.New("rank unknown") }}
	plain := &ir.OpSchema{Name: "Plain", Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: infer}
	ops := []*ir.OpSchema{strict, plain}
	if bad := CheckOperandChecks(ops, map[string]string{"Strict": "why"}); len(bad) != 0 {
		t.Fatalf("an exempt refusal reported %v", bad)
	}
	for _, c := range []struct {
		name   string
		exempt map[string]string
		want   string
	}{
		{"refuses unknown operands", nil, "Strict's operand check refuses operands of unknown shape"},
		{"stale exemption", map[string]string{"Strict": "why", "Plain": "why"}, "Plain is exempt but has no operand check"},
		{"no reason", map[string]string{"Strict": ""}, "Strict is exempt with no reason"},
	} {
		bad := CheckOperandChecks(ops, c.exempt)
		if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
			t.Errorf("%s: got %q, want one line containing %q", c.name, bad, c.want)
		}
	}
}

// TestPassTableKeepsPromises: every pass is documented and runnable, its
// requirements name passes on the right side, and passes.InferenceOnly
// lists the marked passes.
func TestPassTableKeepsPromises(t *testing.T) {
	for _, line := range CheckPasses(passes.All(), passes.InferenceOnly()) {
		t.Error(line)
	}
}

// TestCheckPassesFails shows each pass check catching its breakage.
func TestCheckPassesFails(t *testing.T) {
	run := func(*ir.Graph) (bool, error) { return false, nil }
	ps := []passes.Pass{
		{Name: "a", Doc: "a", Run: run},
		{Name: "b", Doc: "b", Run: run, After: []string{"a"}, InferenceOnly: true},
	}
	if bad := CheckPasses(ps, []string{"b"}); len(bad) != 0 {
		t.Fatalf("a sound table reported %v", bad)
	}
	edit := func(i int, f func(p *passes.Pass)) []passes.Pass {
		out := slices.Clone(ps)
		f(&out[i])
		return out
	}
	for _, c := range []struct {
		name string
		ps   []passes.Pass
		list []string
		want string
	}{
		{"no Doc", edit(0, func(p *passes.Pass) { p.Doc = "" }), []string{"b"}, `pass "a" has no Doc or Run`},
		{"no Run", edit(1, func(p *passes.Pass) { p.Run = nil }), []string{"b"}, `pass "b" has no Doc or Run`},
		{"unknown requirement", edit(1, func(p *passes.Pass) { p.Before = []string{"z"} }), []string{"b"}, `Before names unknown pass "z"`},
		{"requirement violated", edit(0, func(p *passes.Pass) { p.After = []string{"b"} }), []string{"b"}, `"a" must come after "b"`},
		{"list differs", ps, []string{"a"}, "inference-only list [a], but the passes marked are [b]"},
	} {
		bad := CheckPasses(c.ps, c.list)
		if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
			t.Errorf("%s: got %q, want one line containing %q", c.name, bad, c.want)
		}
	}
}

// convBN is x -> Conv -> BatchNormalization (inference) -> y, with
// constant weight and statistics: what fold-bn folds.
func convBN(t *testing.T) func() *ir.Graph {
	return func() *ir.Graph {
		b := irtest.New(t, 17)
		konst := func(name string, dims ...int64) *ir.Value {
			v := b.Tensor(name, ir.Float32, dims...)
			n := int64(1)
			for _, d := range dims {
				n *= d
			}
			f := make([]float64, n)
			for i := range f {
				f[i] = 1
			}
			b.G.AddInitializer(v, &ir.Tensor{Name: name, DType: ir.Float32, Dims: dims, Floats: f, HasData: true})
			return v
		}
		x := b.Input("x", ir.Float32, 1, 2, 4, 4)
		y := b.Op("Conv", nil, x, konst("w", 3, 2, 1, 1))
		z := b.Op("BatchNormalization", nil, y, konst("scale", 3), konst("bias", 3), konst("mean", 3), konst("var", 3))
		b.Output(z)
		return b.Infer()
	}
}

// TestBatchNormFoldersAreInferenceOnly: whichever pass folds an inference
// BatchNormalization away is marked InferenceOnly, so a training cost
// (which keeps batch statistics) does not run it.
func TestBatchNormFoldersAreInferenceOnly(t *testing.T) {
	bad, err := CheckBatchNormFolders(passes.All(), convBN(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bad {
		t.Error(line)
	}
	// The graph is one fold-bn folds: otherwise this test checks nothing.
	p, _ := passes.Lookup("fold-bn")
	g := convBN(t)()
	if changed, err := p.Run(g); err != nil || !changed || countOp(g, "BatchNormalization") != 0 {
		t.Fatalf("fold-bn did not fold the test graph (changed %v, err %v)", changed, err)
	}
}

// TestCheckBatchNormFoldersFails: fold-bn without its mark is caught.
func TestCheckBatchNormFoldersFails(t *testing.T) {
	p, _ := passes.Lookup("fold-bn")
	unmarked := *p
	unmarked.InferenceOnly = false
	bad, err := CheckBatchNormFolders([]passes.Pass{unmarked}, convBN(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.Contains(bad[0], `pass "fold-bn" removes a BatchNormalization but is not InferenceOnly`) {
		t.Errorf("got %q", bad)
	}
}
