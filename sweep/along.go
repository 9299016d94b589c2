package sweep

import (
	"fmt"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/pipeline"
)

// Along is one parameter swept alone, as roofline --time sweeps it: the
// batch, a symbol or a zoo parameter, with the other bindings held.
type Along struct {
	Name   string
	Values []int64
	// Batch is held unless Name is batch; Dims are held unless Name is
	// one of them.
	Batch int64
	Dims  map[string]int64
}

// ParseAlong parses roofline's --sweep NAME=LIST.
func ParseAlong(s string) (name string, values []int64, err error) {
	name, list, ok := strings.Cut(s, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", nil, fmt.Errorf("--sweep %q: want NAME=LIST (batch=1..1024, seq=128,256)", s)
	}
	if values, err = ParseList(list); err != nil {
		return "", nil, fmt.Errorf("--sweep %s: %v", name, err)
	}
	return name, values, nil
}

// Along costs the model at each of a's values and calls fn with the value
// and the first GPU's report. A batch that binds nothing, or a name that
// is neither a symbol nor a zoo parameter, is an error: it would cost the
// same model at every value, as if time did not depend on it.
func (s *Sweeper) Along(a Along, fn func(v int64, r *report.Report) error) error {
	kind := "dim"
	switch {
	case a.Name == "batch":
		kind = "batch"
	case s.zoo != nil:
		for _, p := range s.zoo.Entry.Params {
			if p.Name == a.Name {
				kind = "param"
			}
		}
	}
	for _, v := range a.Values {
		p := Point{Params: map[string]int64{}, Dims: map[string]int64{}}
		batch := a.Batch
		switch kind {
		case "batch":
			batch = v
		case "param":
			p.Params[a.Name] = v
		default:
			p.Dims[a.Name] = v
		}
		for k, d := range a.Dims {
			if _, set := p.Dims[k]; !set {
				p.Dims[k] = d
			}
		}
		reps, l, err := s.Eval(p, batch)
		if err != nil {
			return err
		}
		if kind == "batch" && s.zoo == nil && v == a.Values[0] && len(a.Values) > 1 && !BatchBinds(l) {
			return fmt.Errorf("%s: no graph input has a symbolic leading dim or a static batch of 1, so --sweep batch cannot vary it", s.cfg.Model)
		}
		if kind == "dim" && v == a.Values[0] {
			if _, ok := l.Bindings[a.Name]; !ok {
				return fmt.Errorf("--sweep %s: %s has no symbolic dim or parameter %s; %s", a.Name, s.cfg.Model, a.Name, Sweepable(l, s.zoo))
			}
		}
		if err := fn(v, reps[0]); err != nil {
			return err
		}
	}
	return nil
}

// Sweepable says what --sweep can vary on a model: batch when an input
// has a symbolic leading dim, the symbolic dims of its graph inputs, and
// a zoo model's parameters; sorted, so the message is stable.
func Sweepable(l *pipeline.Loaded, z *pipeline.ZooSpec) string {
	seen := map[string]bool{}
	if z != nil {
		for _, p := range z.Entry.Params {
			seen[p.Name] = true
		}
	} else if BatchBinds(l) {
		seen["batch"] = true
	}
	for _, in := range l.Model.Graph.Inputs {
		if in.Declared == nil {
			continue
		}
		for _, d := range in.Declared.Shape.Dims {
			if d.Sym != "" {
				seen[d.Sym] = true
			}
		}
	}
	if len(seen) == 0 {
		return "it has no symbolic dims to sweep (a static export)"
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	what := "its symbolic dims"
	if z != nil {
		what = "its parameters and symbolic dims"
	}
	return fmt.Sprintf("%s: %s (--sweep NAME=LIST)", what, strings.Join(names, ", "))
}
