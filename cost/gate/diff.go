package gate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// Change is one metric's movement from base to head.
type Change struct {
	Metric string  `json:"metric"`
	Base   float64 `json:"base"`
	Head   float64 `json:"head"`
	Delta  float64 `json:"delta"`
	// Rel is Delta/Base; nil when Base is 0 and Head is not (an infinite
	// relative change has no JSON number).
	Rel *float64 `json:"rel"`
}

// NodeChange is one node's movement. Nodes are matched by name, then the
// rest by structure (op type and output shapes, in order of appearance).
type NodeChange struct {
	Name       string  `json:"name"`
	HeadName   string  `json:"head_name,omitempty"` // when matched by structure under another name
	OpType     string  `json:"op_type"`
	Status     string  `json:"status"` // "changed", "added", "removed"
	BaseTimeS  float64 `json:"base_time_s"`
	HeadTimeS  float64 `json:"head_time_s"`
	DeltaTimeS float64 `json:"delta_time_s"`
	BaseFLOPs  float64 `json:"base_flops"`
	HeadFLOPs  float64 `json:"head_flops"`
	BaseBytes  float64 `json:"base_bytes"`
	HeadBytes  float64 `json:"head_bytes"`
}

// Provenance says how a report was computed, so that a diff between
// reports from different tool or cost-model versions or GPU specs warns.
type Provenance struct {
	Model            string `json:"model"`
	ToolVersion      string `json:"tool_version"`
	CostModelVersion string `json:"cost_model_version"`
	GPU              string `json:"gpu"`
	GPUSpecHash      string `json:"gpu_spec_hash"`
	DType            string `json:"dtype"`
	Plan             string `json:"plan"`
	// Runtime is the execution profile the side was priced under
	// (runtimeName), absent for counts without a GPU.
	Runtime string `json:"runtime,omitempty"`
	// Warm says the side priced a call repeated back to back (--warm).
	Warm bool `json:"warm,omitempty"`
	// Train is the training step the side's times are of (--train);
	// absent for inference.
	Train *report.TrainSetting `json:"train,omitempty"`
	// Calibration is the calibration the side was priced with
	// (report.Report.Calibration), absent without one.
	Calibration string `json:"calibration,omitempty"`
	// CalibrationFile is its file (report.Report.CalibrationName).
	CalibrationFile string `json:"calibration_file,omitempty"`
}

// ReportDiff is what `onnxcost diff` reports: how head differs from base.
type ReportDiff struct {
	Base     Provenance   `json:"base"`
	Head     Provenance   `json:"head"`
	Totals   []Change     `json:"totals"`
	Nodes    []NodeChange `json:"nodes"` // changed, added and removed nodes, largest |Δtime| first
	Warnings []string     `json:"warnings"`
}

func provenance(r *report.Report) Provenance {
	p := Provenance{Model: r.Model, ToolVersion: r.ToolVersion, CostModelVersion: r.CostModelVersion, GPU: r.GPU, GPUSpecHash: r.GPUSpecHash,
		DType: r.DType, Plan: r.Plan, Warm: r.Warm, Train: r.Totals.Train.Setting(), Calibration: r.Calibration, CalibrationFile: r.CalibrationName()}
	if r.GPU != "" {
		p.Runtime = runtimeName(r)
	}
	return p
}

// Diff diffs base against head: the `diff` command.
func Diff(base, head *report.Report) *ReportDiff {
	d := &ReportDiff{Base: provenance(base), Head: provenance(head), Warnings: []string{}}
	d.Warnings = append(d.Warnings, provenanceWarnings(d.Base, d.Head)...)
	if b, h := bindingText(base.Bindings), bindingText(head.Bindings); b != h {
		d.Warnings = append(d.Warnings, fmt.Sprintf("base and head were computed with different bindings (%s vs %s): part of the difference may come from that", b, h))
	}
	if b, h := runtimeName(base), runtimeName(head); b != h {
		d.Warnings = append(d.Warnings, fmt.Sprintf("base and head were computed with different runtimes (%s vs %s): part of the difference may come from that", b, h))
	}
	for i := range Metrics {
		m := &Metrics[i]
		d.Totals = append(d.Totals, change(m.Name, m.get(base.Totals), m.get(head.Totals)))
	}
	d.Nodes = matchNodes(base.Nodes, head.Nodes)
	return d
}

// runtimeName is the execution profile a report was priced with; a report
// saved before profiles existed was priced as the default graph replay.
func runtimeName(r *report.Report) string {
	if r.Runtime == nil {
		return "graph"
	}
	return r.Runtime.Name
}

func provenanceWarnings(b, h Provenance) []string {
	var w []string
	// absent is what an empty side says: a field a report always has is
	// unknown when missing, a calibration is none.
	check := func(what, absent, x, y string) {
		if x != y {
			w = append(w, fmt.Sprintf("base and head were computed with different %s (%s vs %s): part of the difference may come from that", what, orDefault(x, absent), orDefault(y, absent)))
		}
	}
	check("tool versions", "unknown", b.ToolVersion, h.ToolVersion)
	check("cost-model versions", "unknown", b.CostModelVersion, h.CostModelVersion)
	check("GPUs", "unknown", b.GPU, h.GPU)
	check("GPU specs", "unknown", b.GPUSpecHash, h.GPUSpecHash)
	check("dtypes", "unknown", b.DType, h.DType)
	check("plans", "unknown", b.Plan, h.Plan)
	check("calibrations", "none", b.Calibration, h.Calibration)
	check("calls", "", callText(b.Warm), callText(h.Warm))
	check("steps", "", stepText(b.Train), stepText(h.Train))
	return w
}

// callText names the call a side priced: a first call, or one repeated
// back to back (--warm).
func callText(warm bool) string {
	if warm {
		return "repeated calls, warm L2"
	}
	return "a first call"
}

// stepText names what a side's times are of: an inference call, or a
// training step and its settings.
func stepText(t *report.TrainSetting) string {
	if t == nil {
		return "an inference call"
	}
	return render.TrainingSetting(t, "")
}

// bindingText prints bindings as k=v, sorted by name ("none" when empty).
func bindingText(b map[string]int64) string {
	if len(b) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = fmt.Sprintf("%s=%d", k, b[k])
	}
	return strings.Join(keys, " ")
}

func change(name string, base, head float64) Change {
	c := Change{Metric: name, Base: base, Head: head, Delta: head - base}
	switch {
	case base != 0:
		r := c.Delta / base
		c.Rel = &r
	case head == 0:
		r := 0.0
		c.Rel = &r
	}
	return c
}

// structKey identifies a node by what it computes rather than its name.
func structKey(n *report.NodeCost) string {
	var b strings.Builder
	b.WriteString(n.Domain + "." + n.OpType)
	for _, o := range n.Outputs {
		js, _ := o.Shape.MarshalJSON()
		b.WriteString("|" + o.DType + string(js))
	}
	return b.String()
}

func matchNodes(base, head []report.NodeCost) []NodeChange {
	headByName := map[string]int{}
	for i := range head {
		headByName[head[i].Name] = i
	}
	usedHead := make([]bool, len(head))
	var out []NodeChange
	var unmatchedBase []int
	for i := range base {
		if j, ok := headByName[base[i].Name]; ok && !usedHead[j] {
			usedHead[j] = true
			out = append(out, nodeChange(&base[i], &head[j]))
		} else {
			unmatchedBase = append(unmatchedBase, i)
		}
	}
	// Structural matching, first come first served, for renamed nodes.
	byKey := map[string][]int{}
	for j := range head {
		if !usedHead[j] {
			k := structKey(&head[j])
			byKey[k] = append(byKey[k], j)
		}
	}
	for _, i := range unmatchedBase {
		k := structKey(&base[i])
		if js := byKey[k]; len(js) > 0 {
			j := js[0]
			byKey[k] = js[1:]
			usedHead[j] = true
			nc := nodeChange(&base[i], &head[j])
			nc.HeadName = head[j].Name
			out = append(out, nc)
			continue
		}
		b := &base[i]
		out = append(out, NodeChange{Name: b.Name, OpType: b.OpType, Status: "removed", BaseTimeS: b.TimeS, DeltaTimeS: -b.TimeS, BaseFLOPs: b.FLOPs, BaseBytes: b.BytesRead + b.BytesWritten})
	}
	for j := range head {
		if !usedHead[j] {
			h := &head[j]
			out = append(out, NodeChange{Name: h.Name, OpType: h.OpType, Status: "added", HeadTimeS: h.TimeS, DeltaTimeS: h.TimeS, HeadFLOPs: h.FLOPs, HeadBytes: h.BytesRead + h.BytesWritten})
		}
	}
	// Keep only nodes that moved; biggest time movement first, then name.
	kept := out[:0]
	for _, c := range out {
		if c.Status != "changed" || c.DeltaTimeS != 0 || c.BaseFLOPs != c.HeadFLOPs || c.BaseBytes != c.HeadBytes {
			kept = append(kept, c)
		}
	}
	sort.SliceStable(kept, func(a, b int) bool {
		da, db := math.Abs(kept[a].DeltaTimeS), math.Abs(kept[b].DeltaTimeS)
		if da != db {
			return da > db
		}
		return kept[a].Name < kept[b].Name
	})
	return kept
}

func nodeChange(b, h *report.NodeCost) NodeChange {
	return NodeChange{
		Name: b.Name, OpType: b.OpType, Status: "changed",
		BaseTimeS: b.TimeS, HeadTimeS: h.TimeS, DeltaTimeS: h.TimeS - b.TimeS,
		BaseFLOPs: b.FLOPs, HeadFLOPs: h.FLOPs,
		BaseBytes: b.BytesRead + b.BytesWritten, HeadBytes: h.BytesRead + h.BytesWritten,
	}
}

// Condition is one --fail-on clause: metric > threshold, where the
// threshold is a relative change ("+5%"), an absolute change ("+0",
// "+0.1 ms") or an absolute head value ("1.8 ms").
type Condition struct {
	Text   string
	Metric *Metric
	Kind   string // "rel", "delta" or "value"
	Limit  float64
	OrEq   bool // ">=" instead of ">"
}

// ParseConditions parses "time>+5%,launches>+0,flops>+2%,peak_memory>+10%".
func ParseConditions(s string) ([]Condition, error) {
	var out []Condition
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		c := Condition{Text: part}
		op := ">"
		i := strings.Index(part, ">")
		if i < 0 {
			return nil, fmt.Errorf("--fail-on %q: want METRIC>THRESHOLD, e.g. time>+5%%", part)
		}
		lhs, rhs := part[:i], part[i+1:]
		if strings.HasPrefix(rhs, "=") {
			c.OrEq, rhs, op = true, rhs[1:], ">="
		}
		_ = op
		m, err := LookupMetric(lhs)
		if err != nil {
			return nil, fmt.Errorf("--fail-on %q: %w", part, err)
		}
		c.Metric = m
		rhs = strings.TrimSpace(rhs)
		switch {
		case strings.HasSuffix(rhs, "%"):
			c.Kind = "rel"
			c.Limit, err = ParsePercent(rhs)
		case strings.HasPrefix(rhs, "+"):
			c.Kind = "delta"
			c.Limit, err = ParseQuantity(rhs[1:], m)
		default:
			c.Kind = "value"
			c.Limit, err = ParseQuantity(rhs, m)
		}
		if err != nil {
			return nil, fmt.Errorf("--fail-on %q: %w", part, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--fail-on %q: no condition", s)
	}
	return out, nil
}

// Holds reports whether the condition is met by the change (that is, the
// check fails), with a sentence saying what moved.
func (c Condition) Holds(ch Change) (bool, string) {
	gt := func(x, lim float64) bool {
		if c.OrEq {
			return x >= lim
		}
		return x > lim
	}
	m := c.Metric
	moved := fmt.Sprintf("%s %s → %s (%s%s)", m.Name, Format(ch.Base, m), Format(ch.Head, m), signed(ch.Delta, m), relText(ch.Rel))
	switch c.Kind {
	case "rel":
		if ch.Rel == nil { // from zero to something: an infinite increase
			return ch.Delta > 0, moved
		}
		return gt(*ch.Rel, c.Limit), moved
	case "delta":
		return gt(ch.Delta, c.Limit), moved
	}
	return gt(ch.Head, c.Limit), moved
}

func signed(v float64, m *Metric) string {
	if v >= 0 {
		return "+" + Format(v, m)
	}
	return "-" + Format(-v, m)
}

func relText(r *float64) string {
	if r == nil {
		return ", new"
	}
	return fmt.Sprintf(", %+.1f%%", *r*100)
}

// ChangeFor returns the diff's change for a metric.
func (d *ReportDiff) ChangeFor(metric string) Change {
	for _, c := range d.Totals {
		if c.Metric == metric {
			return c
		}
	}
	return Change{Metric: metric}
}

// Violations tests conds against d: one line per condition that holds,
// naming it and what moved.
func (d *ReportDiff) Violations(conds []Condition) []string {
	var out []string
	for _, c := range conds {
		if holds, moved := c.Holds(d.ChangeFor(c.Metric.Name)); holds {
			out = append(out, fmt.Sprintf("%s: %s", c.Text, moved))
		}
	}
	return out
}

// DiffResult is what `diff --format json` writes: the diff, and the
// --fail-on conditions given and those that held.
type DiffResult struct {
	*ReportDiff
	FailOn     string   `json:"fail_on,omitempty"`
	Violations []string `json:"violations"`
}

// orDefault is s, or absent where s is empty.
func orDefault(s, absent string) string {
	if s == "" {
		return absent
	}
	return s
}
