package gate

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// FuzzParseBudget feeds arbitrary text to the budget-file parser.
// Properties: no panic; a refusal is a one-line *ConfigError; an accepted
// budget has a path for every model and, on every assertion, a metric, a
// known level, a line, and finite limits (a NaN or Inf limit would make
// every comparison silently pass or fail).
func FuzzParseBudget(f *testing.F) {
	f.Add(budgetYAML)
	f.Add("version: 1\nmodels:\n  - path: m.onnx\n    batch: 8\n    dims: {seq: 128}\n    budgets:\n      time: 1ms\n      memory: { max: 2GiB, level: warn }\n")
	f.Add(`{"version": 1, "models": [{"path": "m.onnx", "budgets": {"flops": {"max_increase": "10%"}}}]}`)
	f.Add("version: 1\nmodels:\n  - path: m.onnx\n    budgets:\n      time: { max: \"fast\" }\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		b, err := ParseBudget("b.yaml", []byte(text))
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error is not a ConfigError: %T %v", err, err)
			}
			if msg := err.Error(); strings.ContainsAny(msg, "\n\r") {
				t.Fatalf("error is not one line: %q", msg)
			}
			if ce.Line < 0 {
				t.Fatalf("negative line %d", ce.Line)
			}
			return
		}
		for _, m := range b.Models {
			if m.Path == "" {
				t.Fatalf("model without a path accepted: %+v", m)
			}
			for _, a := range m.Assertions {
				if a.Metric == nil || a.Line <= 0 {
					t.Fatalf("assertion without a metric or line: %+v", a)
				}
				if a.Level != Off && a.Level != Warn && a.Level != Error {
					t.Fatalf("assertion level %q", a.Level)
				}
				for _, x := range []float64{a.Max, a.MaxIncrease} {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("non-finite limit accepted: %+v", a)
					}
				}
			}
		}
	})
}
