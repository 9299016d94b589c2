package registrytest

import (
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/ir/irtest"
	_ "github.com/onnxcost/onnxcost/passes" // linked in so that anything passes registered would be checked too
	"github.com/onnxcost/onnxcost/train"
)

func shapeKeys() []string {
	var ks []string
	for _, s := range ir.Ops() {
		ks = append(ks, ir.QualifiedOp(s.Domain, s.Name))
	}
	return ks
}

// TestRegistriesAgree: every op with a shape rule has a cost rule or a
// documented reason on cost.NoCostRule, and every cost rule has a shape
// rule.
func TestRegistriesAgree(t *testing.T) {
	for _, line := range CheckKeys(shapeKeys(), cost.RuleKeys(), cost.NoCostRule) {
		t.Error(line)
	}
}

// TestCheckKeysFails shows the check failing when either side gains an op
// the other lacks.
func TestCheckKeysFails(t *testing.T) {
	shape := []string{"Relu", "Constant", "Unique"}
	costs := []string{"Relu"}
	noCost := map[string]string{"Unique": "data-dependent"}
	if bad := CheckKeys(shape, costs, noCost); len(bad) != 0 {
		t.Fatalf("agreeing sets reported %v", bad)
	}
	cases := []struct {
		name         string
		shape, costs []string
		noCost       map[string]string
		want         string
	}{
		{"shape side gains an op", append(slices.Clone(shape), "NewOp"), costs, noCost, "NewOp has a shape rule but no cost rule"},
		{"cost side gains an op", shape, append(slices.Clone(costs), "Orphan"), noCost, "Orphan has a cost rule but no shape rule"},
		{"costed and excused", shape, append(slices.Clone(costs), "Unique"), noCost, "Unique has a cost rule and is also on"},
		{"stale excuse", shape, costs, map[string]string{"Unique": "x", "Gone": "y"}, "Gone is on cost.NoCostRule but has no shape rule"},
	}
	for _, c := range cases {
		bad := CheckKeys(c.shape, c.costs, c.noCost)
		if len(bad) != 1 || !strings.Contains(bad[0], c.want) {
			t.Errorf("%s: got %q, want one line containing %q", c.name, bad, c.want)
		}
	}
}

// TestTraitsKeepPromises: each trait implies what its readers rely on.
func TestTraitsKeepPromises(t *testing.T) {
	for _, s := range ir.Ops() {
		k := s.Domain + "" + s.Name
		// Peak memory reads InPlace by the node's own domain (a contrib
		// attention op's cache); the other traits only in these two.
		if s.Traits&^ir.InPlace != 0 && s.Domain != "" && s.Domain != ir.FusedDomain {
			t.Errorf("%s: traits are read for the default and %s domains only", k, ir.FusedDomain)
		}
		if s.Traits.Has(ir.Elementwise) {
			if s.Domain == "" {
				// The chain rule and fused parts price each member by
				// its per-element count.
				if _, _, ok := cost.OpCount(s.Name); !ok {
					t.Errorf("%s is Elementwise but has no per-element count in cost", k)
				}
			} else if cost.LookupRule(s.Domain, s.Name) == nil {
				t.Errorf("%s is Elementwise but has no cost rule", k)
			}
		}
		if s.Traits.Has(ir.FusableActivation) {
			if _, _, ok := cost.OpCount(s.Name); !ok {
				t.Errorf("%s is a FusableActivation but the epilogue cost part has no count for it", k)
			}
			if s.MinIn != 1 {
				t.Errorf("%s is a FusableActivation but not unary", k)
			}
		}
		if !s.Traits.Has(ir.FusableActivation) && len(s.EpilogueAttrs) > 0 {
			t.Errorf("%s carries EpilogueAttrs without FusableActivation", k)
		}
		if s.Traits.Has(ir.Commutative) && (s.MinIn != 2 || s.MaxIn != 2) {
			t.Errorf("%s is Commutative but not binary", k)
		}
		if s.Traits.Has(ir.View) {
			if e := costOf(t, s); e.Launches != 0 || e.BytesRead != 0 || e.BytesWritten != 0 || !e.View {
				t.Errorf("%s is a View but its cost rule gives %+v", k, e)
			}
		}
		if s.Traits.Has(ir.Alias) && !s.Traits.Has(ir.View) && s.Name != "Dropout" {
			t.Errorf("%s is an Alias that is not a View; only Dropout (a no-op at inference) may be", k)
		}
		if s.Domain == ir.FusedDomain && cost.LookupRule(s.Domain, s.Name) == nil {
			t.Errorf("fused op %s has no cost rule", k)
		}
	}
}

// costOf runs s's cost rule on a one-node graph with float inputs and
// outputs of shape [2, 3].
func costOf(t *testing.T, s *ir.OpSchema) cost.NodeEstimate {
	t.Helper()
	r := cost.LookupRule(s.Domain, s.Name)
	if r == nil {
		t.Fatalf("%s has no cost rule", s.Name)
	}
	b := irtest.New(t, ir.DefaultOpset)
	n := &ir.Node{Name: "n", OpType: s.Name, Domain: s.Domain}
	mk := func(name string) *ir.Value { return b.Tensor(name, ir.Float32, 2, 3) }
	for i := 0; i < max(s.MinIn, 1); i++ {
		n.Inputs = append(n.Inputs, mk("in"+string(rune('0'+i))))
	}
	n.Outputs = []*ir.Value{mk("out")}
	e, err := r(n, &cost.RuleCtx{Graph: b.G})
	if err != nil {
		t.Fatalf("%s: %v", s.Name, err)
	}
	return e
}

// TestBackwardRegistryAgrees: every op with a cost rule has a backward rule
// or a documented reason on train.NoBackward.
func TestBackwardRegistryAgrees(t *testing.T) {
	for _, line := range CheckBackward(cost.RuleKeys(), train.BackwardKeys(), train.NoBackward) {
		t.Error(line)
	}
}

// TestCheckBackwardFails shows the check catching each disagreement.
func TestCheckBackwardFails(t *testing.T) {
	costs := []string{"Conv", "ArgMax"}
	if bad := CheckBackward(costs, []string{"Conv"}, map[string]string{"ArgMax": "not differentiable"}); len(bad) != 0 {
		t.Fatalf("agreeing sets reported %v", bad)
	}
	for _, c := range []struct {
		bwd    []string
		no     map[string]string
		substr string
	}{
		{[]string{}, map[string]string{"ArgMax": "x"}, "Conv has a cost rule but no backward rule"},
		{[]string{"Conv", "ArgMax"}, map[string]string{"ArgMax": "x"}, "ArgMax has a backward rule and is also on"},
		{[]string{"Conv", "Relu"}, map[string]string{"ArgMax": "x"}, "Relu has a backward rule but no cost rule"},
		{[]string{"Conv"}, map[string]string{"ArgMax": ""}, "ArgMax is on train.NoBackward with no reason"},
	} {
		bad := CheckBackward(costs, c.bwd, c.no)
		if !slices.ContainsFunc(bad, func(s string) bool { return strings.Contains(s, c.substr) }) {
			t.Errorf("%v %v: want %q in %v", c.bwd, c.no, c.substr, bad)
		}
	}
}
