package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// Metric is a whole-model quantity a budget or --fail-on can test.
type Metric struct {
	Name string // as written in budget files and --fail-on
	Unit string // "s", "FLOP", "B", "J" or "" for counts
	Doc  string
	get  func(t report.Totals) float64
	// forward marks a count of the forward pass alone: under a training
	// step (train: true) it is still the forward's, while time, energy
	// and peak memory are the step's.
	forward bool
}

// Scope is what m counts in totals t, for messages: "forward pass" for a
// forward-only count of a training step's report, "" otherwise (an
// inference call, or a metric of the whole step).
func (m *Metric) Scope(t report.Totals) string {
	if m.forward && t.Train != nil {
		return "forward pass"
	}
	return ""
}

// Label is m's name with its scope in t: "flops (forward pass)" under
// training.
func (m *Metric) Label(t report.Totals) string {
	if sc := m.Scope(t); sc != "" {
		return m.Name + " (" + sc + ")"
	}
	return m.Name
}

// Metrics is the ordered metric table; order is the order of every output.
var Metrics = []Metric{
	{Name: "time", Unit: "s", Doc: "estimated time of one inference (of one training step under train)", get: func(t report.Totals) float64 { return t.TimeS }},
	{Name: "flops", Unit: "FLOP", Doc: "floating-point operations (the forward pass's under train)", get: func(t report.Totals) float64 { return t.FLOPs }, forward: true},
	{Name: "macs", Unit: "", Doc: "multiply-accumulates (the forward pass's under train)", get: func(t report.Totals) float64 { return t.MACs }, forward: true},
	{Name: "executed_flops", Unit: "FLOP", Doc: "floating-point operations the plan's kernels execute (Winograd: fewer products plus transforms; the forward pass's under train)", get: func(t report.Totals) float64 { return t.ExecutedFLOPs }, forward: true},
	{Name: "bytes", Unit: "B", Doc: "bytes read and written by all kernels (the forward pass's under train)", get: func(t report.Totals) float64 { return t.BytesRead + t.BytesWritten }, forward: true},
	{Name: "launches", Unit: "", Doc: "kernel launches (the forward pass's under train)", get: func(t report.Totals) float64 { return t.Launches }, forward: true},
	{Name: "params", Unit: "", Doc: "parameters", get: func(t report.Totals) float64 { return t.Params }},
	{Name: "param_bytes", Unit: "B", Doc: "parameter bytes", get: func(t report.Totals) float64 { return t.ParamBytes }},
	{Name: "peak_memory", Unit: "B", Doc: "peak activation memory plus weights (a training step's nvidia-smi view under train)", get: func(t report.Totals) float64 { return t.PeakMemoryBytes }},
	{Name: "energy", Unit: "J", Doc: "estimated energy of one inference (of one training step under train)", get: func(t report.Totals) float64 { return t.EnergyJ }},
}

// LookupMetric finds a metric by name (accepting a few common spellings).
func LookupMetric(name string) (*Metric, error) {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "time_s", "latency":
		n = "time"
	case "peak_memory_bytes", "memory":
		n = "peak_memory"
	case "energy_j":
		n = "energy"
	}
	for i := range Metrics {
		if Metrics[i].Name == n {
			return &Metrics[i], nil
		}
	}
	names := make([]string, len(Metrics))
	for i, m := range Metrics {
		names[i] = m.Name
	}
	return nil, fmt.Errorf("unknown metric %q (want one of %s)", name, strings.Join(names, ", "))
}

// unitScale maps a unit suffix to its base unit and factor.
var unitScale = map[string]struct {
	base  string
	scale float64
}{
	"ns": {"s", 1e-9}, "us": {"s", 1e-6}, "µs": {"s", 1e-6}, "ms": {"s", 1e-3}, "s": {"s", 1},
	"flop": {"FLOP", 1}, "kflop": {"FLOP", 1e3}, "mflop": {"FLOP", 1e6}, "gflop": {"FLOP", 1e9}, "tflop": {"FLOP", 1e12}, "pflop": {"FLOP", 1e15},
	"b": {"B", 1}, "kb": {"B", 1e3}, "mb": {"B", 1e6}, "gb": {"B", 1e9}, "tb": {"B", 1e12},
	"kib": {"B", 1 << 10}, "mib": {"B", 1 << 20}, "gib": {"B", 1 << 30}, "tib": {"B", 1 << 40},
	"j": {"J", 1}, "mj": {"J", 1e-3}, "uj": {"J", 1e-6}, "µj": {"J", 1e-6},
	"k": {"", 1e3}, "m": {"", 1e6}, "g": {"", 1e9},
}

// ParseQuantity reads a human quantity for metric m: "1.8 ms", "120 GFLOP",
// "2.5 GB", "300" (base units). A unit of the wrong kind is an error.
func ParseQuantity(s string, m *Metric) (float64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || r == 'µ' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("%q is not a non-negative quantity", s)
	}
	if unit == "" {
		return v, nil
	}
	u := strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(unit, "s"), "/inference"))
	if unit == "s" || unit == "ms" || unit == "ns" || unit == "us" || unit == "µs" {
		u = unit
	}
	// FLOPs, GFLOPs: the plural s was trimmed above.
	sc, ok := unitScale[u]
	if !ok {
		return 0, fmt.Errorf("unknown unit %q in %q", unit, s)
	}
	if sc.base != m.Unit {
		want := m.Unit
		if want == "" {
			want = "a plain count (k, M, G allowed)"
		}
		return 0, fmt.Errorf("unit %q does not fit metric %s (want %s)", unit, m.Name, want)
	}
	return v * sc.scale, nil
}

// ParsePercent reads "5%", "+5%" or "0.5%" as a fraction (0.05).
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if !strings.HasSuffix(t, "%") {
		return 0, fmt.Errorf("%q: want a percentage like 5%%", s)
	}
	v, err := strconv.ParseFloat(strings.TrimPrefix(strings.TrimSuffix(t, "%"), "+"), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: want a percentage like 5%%", s)
	}
	return v / 100, nil
}

// Format renders a value of metric m in human units.
func Format(v float64, m *Metric) string {
	switch m.Unit {
	case "s":
		return render.Seconds(v)
	case "FLOP":
		return render.FLOPs(v)
	case "B":
		return render.Bytes(v)
	case "J":
		return render.Joules(v)
	}
	return render.Count(v)
}

// MetricValue reads metric m from report totals.
func MetricValue(m *Metric, t report.Totals) float64 { return m.get(t) }
