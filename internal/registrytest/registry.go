// Package registrytest checks that the op registries agree: the shape
// rules and traits declared in package ir (ops_*.go) and the cost rules in
// package cost (rules_*.go). It lives apart from both because it needs both
// and the passes that write fused ops; it has no exported use outside its
// test.
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
	inShape, inCost := set(shape), set(cost)
	var bad []string
	for k := range inShape {
		_, listed := noCost[k]
		switch {
		case exempt[k]:
		case !inCost[k] && !listed:
			bad = append(bad, fmt.Sprintf("%s has a shape rule but no cost rule and is not on cost.NoCostRule", k))
		case inCost[k] && listed:
			bad = append(bad, fmt.Sprintf("%s has a cost rule and is also on cost.NoCostRule", k))
		}
	}
	for k := range inCost {
		if !inShape[k] {
			bad = append(bad, fmt.Sprintf("%s has a cost rule but no shape rule: it would be costed on unknown shapes", k))
		}
	}
	for k := range noCost {
		if !inShape[k] {
			bad = append(bad, fmt.Sprintf("%s is on cost.NoCostRule but has no shape rule", k))
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

// CheckBackward compares the ops with a cost rule with those with a
// backward rule (cost/backward.go), given the documented list of ops with
// none. Every costed op must have exactly one of the two; a backward rule
// or a no-backward entry for an op with no cost rule is an error too.
func CheckBackward(cost, backward []string, noBackward map[string]string) []string {
	inCost, inBwd := set(cost), set(backward)
	var bad []string
	for k := range inCost {
		_, listed := noBackward[k]
		switch {
		case !inBwd[k] && !listed:
			bad = append(bad, fmt.Sprintf("%s has a cost rule but no backward rule and is not on cost.NoBackward", k))
		case inBwd[k] && listed:
			bad = append(bad, fmt.Sprintf("%s has a backward rule and is also on cost.NoBackward", k))
		}
	}
	for k := range inBwd {
		if !inCost[k] {
			bad = append(bad, fmt.Sprintf("%s has a backward rule but no cost rule", k))
		}
	}
	for k, why := range noBackward {
		if !inCost[k] {
			bad = append(bad, fmt.Sprintf("%s is on cost.NoBackward but has no cost rule", k))
		}
		if why == "" {
			bad = append(bad, fmt.Sprintf("%s is on cost.NoBackward with no reason", k))
		}
	}
	sort.Strings(bad)
	return bad
}
