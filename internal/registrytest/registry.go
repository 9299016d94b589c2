// Package registrytest checks that the op registries agree: the shape
// rules and traits declared in package ir (ops_*.go) and the cost rules in
// package cost (rules_*.go); that schemas keep their promises (opset
// ranges, operand checks, InPlace; schema.go); and that the pass table
// keeps its (requirements, inference-only marks). It lives apart from ir
// and cost because it needs both and the passes that write fused ops; it
// has no exported use outside its test.
package registrytest

import (
	"fmt"
	"sort"
)

// exempt are shape-rule ops that need no cost rule and no NoCostRule entry
// because Analyze handles them itself.
var exempt = map[string]bool{"Constant": true}

// CheckKeys compares the keys (ir.QualifiedOp form, e.g. "Conv", "onnxcost.FusedConv") of ops with a shape rule with
// those with a cost rule, given the documented list of ops deliberately
// left uncosted. It returns one line per disagreement, sorted; none means
// the two registries agree in both directions.
func CheckKeys(shape, cost []string, noCost map[string]string) []string {
	return twoWay{base: "shape rule", rule: "cost rule", list: "cost.NoCostRule",
		orphan: ": it would be costed on unknown shapes", exempt: exempt}.check(shape, cost, noCost)
}

// CheckBackward compares the ops with a cost rule with those with a
// backward rule (train/backward.go), given the documented list of ops with
// none. Every costed op must have exactly one of the two; a backward rule
// or a no-backward entry for an op with no cost rule is an error too.
func CheckBackward(cost, backward []string, noBackward map[string]string) []string {
	bad := twoWay{base: "cost rule", rule: "backward rule", list: "train.NoBackward"}.check(cost, backward, noBackward)
	for k, why := range noBackward {
		if why == "" {
			bad = append(bad, fmt.Sprintf("%s is on train.NoBackward with no reason", k))
		}
	}
	sort.Strings(bad)
	return bad
}

// twoWay is one two-way comparison of registries: every op of the base
// registry has a rule or is on the list, never both, and neither the rules
// nor the list name an op the base lacks. CheckKeys and CheckBackward are
// the same comparison of different registries, so they word it alike.
type twoWay struct {
	base, rule, list string          // what a key of each side is: "shape rule", "cost rule", "cost.NoCostRule"
	orphan           string          // appended to the line for a rule with no base op: what it would cause
	exempt           map[string]bool // base ops that need neither a rule nor a list entry
}

// check returns one line per disagreement, sorted.
func (w twoWay) check(base, rules []string, listed map[string]string) []string {
	inBase, inRule := set(base), set(rules)
	var bad []string
	for k := range inBase {
		_, onList := listed[k]
		switch {
		case w.exempt[k]:
		case !inRule[k] && !onList:
			bad = append(bad, fmt.Sprintf("%s has a %s but no %s and is not on %s", k, w.base, w.rule, w.list))
		case inRule[k] && onList:
			bad = append(bad, fmt.Sprintf("%s has a %s and is also on %s", k, w.rule, w.list))
		}
	}
	for k := range inRule {
		if !inBase[k] {
			bad = append(bad, fmt.Sprintf("%s has a %s but no %s%s", k, w.rule, w.base, w.orphan))
		}
	}
	for k := range listed {
		if !inBase[k] {
			bad = append(bad, fmt.Sprintf("%s is on %s but has no %s", k, w.list, w.base))
		}
	}
	sort.Strings(bad)
	return bad
}

func set(ks []string) map[string]bool {
	m := make(map[string]bool, len(ks))
	for _, k := range ks {
		m[k] = true
	}
	return m
}
