package sweep

import (
	"fmt"
	"maps"
	"strings"
)

// Axis kinds: what an Axis varies.
const (
	KindParam = "param" // a zoo parameter: the model is rebuilt per value
	KindDim   = "dim"   // a symbolic dim of the graph inputs
)

// Axis is one swept dimension other than the batch.
type Axis struct {
	Name   string
	Kind   string // KindParam or KindDim
	Values []int64
	// Tie names another param axis whose value this one takes at every
	// point (--param embed=hidden); Values is then empty.
	Tie string
}

// Point is one combination of axis values; the batch is separate.
type Point struct {
	Params map[string]int64
	Dims   map[string]int64
}

// ParseAxes reads NAME=LIST specs (a NAME alone, for a param, ties it to
// another param) into axes: params first, then dims, in the order given.
// The messages name the flags of `onnxcost sweep` (--param, --dim).
func ParseAxes(params, dims []string) ([]Axis, error) {
	var axes []Axis
	seen := map[string]bool{}
	read := func(flag, kind string, vals []string) error {
		for _, v := range vals {
			k, list, ok := strings.Cut(v, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return fmt.Errorf("%s %q: want NAME=LIST", flag, v)
			}
			if seen[kind+":"+k] {
				return fmt.Errorf("%s %s given twice", flag, k)
			}
			seen[kind+":"+k] = true
			a := Axis{Name: k, Kind: kind}
			if kind == KindParam && isName(list) {
				a.Tie = strings.TrimSpace(list)
			} else {
				xs, err := ParseList(list)
				if err != nil {
					return fmt.Errorf("%s %s: %v", flag, k, err)
				}
				a.Values = xs
			}
			axes = append(axes, a)
		}
		return nil
	}
	if err := read("--param", KindParam, params); err != nil {
		return nil, err
	}
	if err := read("--dim", KindDim, dims); err != nil {
		return nil, err
	}
	return axes, checkTies(axes)
}

// checkTies requires every tie to name a param axis that has values.
func checkTies(axes []Axis) error {
	for _, a := range axes {
		if a.Tie == "" {
			continue
		}
		ok := false
		for _, b := range axes {
			ok = ok || (b.Kind == KindParam && b.Name == a.Tie && b.Tie == "")
		}
		if !ok {
			return fmt.Errorf("--param %s=%s: %s is not a swept --param with values", a.Name, a.Tie, a.Tie)
		}
	}
	return nil
}

// isName reports whether s is an identifier (a tie), not a list.
func isName(s string) bool {
	s = strings.TrimSpace(s)
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// Points expands the axes into every combination, the last axis fastest.
func Points(axes []Axis) []Point {
	out := []Point{{Params: map[string]int64{}, Dims: map[string]int64{}}}
	for _, a := range axes {
		if a.Tie != "" {
			continue
		}
		var next []Point
		for _, p := range out {
			for _, v := range a.Values {
				q := Point{Params: maps.Clone(p.Params), Dims: maps.Clone(p.Dims)}
				if a.Kind == KindParam {
					q.Params[a.Name] = v
				} else {
					q.Dims[a.Name] = v
				}
				next = append(next, q)
			}
		}
		out = next
	}
	for _, a := range axes {
		if a.Tie != "" {
			for _, p := range out {
				p.Params[a.Name] = p.Params[a.Tie]
			}
		}
	}
	return out
}
