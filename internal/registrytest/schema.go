package registrytest

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
	"github.com/onnxcost/onnxcost/passes"
)

// CheckSchemas returns one line per schema that breaks a promise of the op
// table, sorted: an opset range inference can enforce (Since >= 1, Until
// not before Since), and an InPlace op that peak memory can rely on (it
// runs a kernel, so it has a cost rule and is neither Alias nor View, and
// it has the slots that share a buffer: input 0 and output 0 by default,
// else each InPlacePairs pair within its arity, no slot in two pairs).
// InPlacePairs without the trait are refused: memory would ignore them.
func CheckSchemas(ops []*ir.OpSchema, hasCostRule func(domain, name string) bool) []string {
	var bad []string
	for _, s := range ops {
		k := ir.QualifiedOp(s.Domain, s.Name)
		if s.Since < 1 {
			bad = append(bad, fmt.Sprintf("%s has Since %d: want the first opset that has the op", k, s.Since))
		}
		if s.Until != 0 && s.Until < s.Since {
			bad = append(bad, fmt.Sprintf("%s has Until %d before Since %d", k, s.Until, s.Since))
		}
		if s.Traits.Has(ir.InPlace) {
			if s.Traits.Has(ir.Alias) || s.Traits.Has(ir.View) {
				bad = append(bad, fmt.Sprintf("%s is InPlace and Alias or View: an in-place op runs a kernel", k))
			}
			if !hasCostRule(s.Domain, s.Name) {
				bad = append(bad, fmt.Sprintf("%s is InPlace but has no cost rule", k))
			}
			if len(s.InPlacePairs) == 0 && (s.MinIn < 1 || s.MinOut < 1) {
				bad = append(bad, fmt.Sprintf("%s is InPlace but does not always have input 0 and output 0", k))
			}
			bad = append(bad, checkInPlacePairs(k, s)...)
		} else if len(s.InPlacePairs) > 0 {
			bad = append(bad, fmt.Sprintf("%s has InPlacePairs but not the InPlace trait", k))
		}
		if s.Check != nil && s.Infer == nil {
			bad = append(bad, fmt.Sprintf("%s has an operand check but no shape rule to run it before", k))
		}
	}
	sort.Strings(bad)
	return bad
}

// checkInPlacePairs refuses a pair outside the op's arity and a slot in
// two pairs (two outputs cannot both own one buffer).
func checkInPlacePairs(k string, s *ir.OpSchema) []string {
	var bad []string
	outs, ins := map[int]bool{}, map[int]bool{}
	for _, p := range s.InPlacePairs {
		out, in := p[0], p[1]
		if out < 0 || in < 0 || (s.MaxOut >= 0 && out >= s.MaxOut) || (s.MaxIn >= 0 && in >= s.MaxIn) {
			bad = append(bad, fmt.Sprintf("%s pairs output %d with input %d, outside its %d outputs and %d inputs", k, out, in, s.MaxOut, s.MaxIn))
		}
		if outs[out] || ins[in] {
			bad = append(bad, fmt.Sprintf("%s names output %d or input %d in two in-place pairs", k, out, in))
		}
		outs[out], ins[in] = true, true
	}
	return bad
}

// CheckOperandChecks runs each schema's operand check on a node whose
// inputs (MinIn of them, at least one) have unknown shape and contents and
// which has no attributes, and returns one line per refusal not on exempt
// (op -> why the refusal is right), sorted. A check refuses only what is
// provably wrong (ir/validate.go): an unknown dim is never a mismatch. An
// exemption must name an op with a check and give a reason.
func CheckOperandChecks(ops []*ir.OpSchema, exempt map[string]string) []string {
	var bad []string
	checked := map[string]bool{}
	for _, s := range ops {
		if s.Check == nil {
			continue
		}
		k := ir.QualifiedOp(s.Domain, s.Name)
		checked[k] = true
		n := &ir.Node{Name: "n", OpType: s.Name, Domain: s.Domain}
		for i := 0; i < max(s.MinIn, 1); i++ {
			n.Inputs = append(n.Inputs, &ir.Value{Name: fmt.Sprint("in", i), Kind: ir.TensorValue, DType: ir.Float32, Shape: ir.Unranked()})
		}
		for i := 0; i < max(s.MinOut, 1); i++ {
			n.Outputs = append(n.Outputs, &ir.Value{Name: fmt.Sprint("out", i)})
		}
		limits := ir.DefaultLimits
		err := s.Check(&ir.InferCtx{Node: n, Opset: ir.DefaultOpset, Limits: &limits})
		if _, ok := exempt[k]; err != nil && !ok {
			bad = append(bad, fmt.Sprintf("%s's operand check refuses operands of unknown shape: %v", k, err))
		}
	}
	for k, why := range exempt {
		switch {
		case !checked[k]:
			bad = append(bad, fmt.Sprintf("%s is exempt but has no operand check", k))
		case why == "":
			bad = append(bad, fmt.Sprintf("%s is exempt with no reason", k))
		}
	}
	sort.Strings(bad)
	return bad
}

// CheckPasses returns one line per broken promise of a pass table, in
// table order: each pass has Doc and Run, the declared order holds
// (passes.CheckOrder), and inferenceOnly lists exactly the passes marked
// InferenceOnly, in table order.
func CheckPasses(ps []passes.Pass, inferenceOnly []string) []string {
	var bad []string
	var marked []string
	for _, p := range ps {
		if p.Doc == "" || p.Run == nil {
			bad = append(bad, fmt.Sprintf("pass %q has no Doc or Run", p.Name))
		}
		if p.InferenceOnly {
			marked = append(marked, p.Name)
		}
	}
	if err := passes.CheckOrder(ps); err != nil {
		bad = append(bad, err.Error())
	}
	if !slices.Equal(marked, inferenceOnly) {
		bad = append(bad, fmt.Sprintf("inference-only list [%s], but the passes marked are [%s]", strings.Join(inferenceOnly, " "), strings.Join(marked, " ")))
	}
	return bad
}

// CheckBatchNormFolders runs each pass on a graph from build (a Conv
// feeding an inference BatchNormalization) and returns one line per pass
// that removes the BatchNormalization without being InferenceOnly: a
// training step updates the statistics such a pass bakes into weights.
func CheckBatchNormFolders(ps []passes.Pass, build func() *ir.Graph) ([]string, error) {
	var bad []string
	for _, p := range ps {
		g := build()
		before := countOp(g, "BatchNormalization")
		if _, err := p.Run(g); err != nil {
			return nil, fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if countOp(g, "BatchNormalization") < before && !p.InferenceOnly {
			bad = append(bad, fmt.Sprintf("pass %q removes a BatchNormalization but is not InferenceOnly", p.Name))
		}
	}
	return bad, nil
}

func countOp(g *ir.Graph, op string) int {
	n := 0
	for _, nd := range g.Nodes {
		if nd.Domain == "" && nd.OpType == op {
			n++
		}
	}
	return n
}
