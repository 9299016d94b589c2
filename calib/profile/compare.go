package profile

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/calib"
	"github.com/onnxcost/onnxcost/cost/report"
)

// Comparison is what `onnxcost calibrate --profile` prints: every matched
// node's predicted and measured time, largest disagreement first, the
// same per kernel class, and the share of the measured time that could
// not be attributed to any node.
type Comparison struct {
	Profile string `json:"profile"`
	Format  Format `json:"format"`
	Runs    int    `json:"runs"`
	// Replayed: the times are a CUDA-graph replay's, aligned with the
	// profiled eager call's kernels (Profile.Replayed).
	Replayed bool `json:"replayed,omitempty"`
	// Device is what the profile says of the machine it ran on
	// (Profile.Device; absent when it says nothing).
	Device calib.Provenance `json:"device,omitzero"`
	// Runtime and Warm are how the estimate was priced: the runtime
	// profile, and whether as a call repeated back to back (L2 holds what
	// the previous call left) or as a first call (calibrate --warm).
	Runtime             string     `json:"runtime,omitempty"`
	Warm                bool       `json:"warm"`
	MatchedTimeFraction float64    `json:"matched_time_fraction"`
	MatchedS            float64    `json:"matched_s"`
	UnmatchedS          float64    `json:"unmatched_s"`
	PredictedS          float64    `json:"predicted_s"`
	MedianAbsErr        float64    `json:"median_abs_err"`
	Nodes               []NodeTime `json:"nodes"`
	// Profiled is one row per profiled node, in profile order: its time,
	// the report nodes it was matched to and its share of their
	// prediction.
	Profiled  []ProfiledTime `json:"profiled_nodes"`
	Classes   []ClassErrors  `json:"classes"`
	Unmatched []Event        `json:"unmatched"`
	Notes     []string       `json:"notes"`
}

// ClassErrors sums one kernel class: its nodes' predicted and measured
// time and the median |predicted/measured − 1| over them.
type ClassErrors struct {
	Class        string  `json:"class"`
	Nodes        int     `json:"nodes"`
	PredictedS   float64 `json:"predicted_s"`
	MeasuredS    float64 `json:"measured_s"`
	MedianAbsErr float64 `json:"median_abs_err"`
}

// Compare is m as a Comparison: only nodes with measured time, sorted by
// |measured − predicted|, largest first (ties by name).
func Compare(p *Profile, m *Match) *Comparison {
	c := &Comparison{Profile: p.Path, Format: p.Format, Runs: p.Runs, Replayed: p.Replayed, Device: p.Device, MatchedTimeFraction: m.MatchedTimeFraction,
		MatchedS: m.MatchedS, UnmatchedS: m.UnmatchedS, Unmatched: m.Unmatched, Notes: p.Notes, Nodes: []NodeTime{}, Classes: []ClassErrors{},
		Profiled: m.Profiled}
	if c.Profiled == nil {
		c.Profiled = []ProfiledTime{}
	}
	if c.Unmatched == nil {
		c.Unmatched = []Event{}
	}
	if c.Notes == nil {
		c.Notes = []string{}
	}
	byClass := map[string]*ClassErrors{}
	errs := map[string][]float64{}
	var all []float64
	for _, n := range m.Nodes {
		if n.MeasuredS <= 0 {
			continue
		}
		c.Nodes = append(c.Nodes, n)
		c.PredictedS += n.PredictedS
		e := math.Abs(n.PredictedS/n.MeasuredS - 1)
		all = append(all, e)
		k := cmp.Or(n.KernelClass, "other")
		ce := byClass[k]
		if ce == nil {
			ce = &ClassErrors{Class: k}
			byClass[k] = ce
		}
		ce.Nodes++
		ce.PredictedS += n.PredictedS
		ce.MeasuredS += n.MeasuredS
		errs[k] = append(errs[k], e)
	}
	slices.SortStableFunc(c.Nodes, func(a, b NodeTime) int {
		return cmp.Or(cmp.Compare(math.Abs(b.MeasuredS-b.PredictedS), math.Abs(a.MeasuredS-a.PredictedS)), cmp.Compare(a.Name, b.Name))
	})
	c.MedianAbsErr = median(all)
	for k, ce := range byClass {
		ce.MedianAbsErr = median(errs[k])
		c.Classes = append(c.Classes, *ce)
	}
	slices.SortFunc(c.Classes, func(a, b ClassErrors) int {
		return cmp.Or(cmp.Compare(b.MeasuredS, a.MeasuredS), cmp.Compare(a.Class, b.Class))
	})
	return c
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteJSON writes the comparison as one indented JSON object.
func (c *Comparison) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// pricedText says how the estimate compared was priced: its runtime and
// whether L2 starts warm, which a profile of a call timed after others
// like it (the usual warm-up) needs said.
func (c *Comparison) pricedText() string {
	rt := ""
	if c.Runtime != "" {
		rt = "runtime " + c.Runtime + ", "
	}
	if c.Warm {
		return rt + "a call repeated back to back (L2 holds what the previous call left; --warm=false prices a first call)"
	}
	return rt + "a first call (every weight and input read from DRAM; --warm prices a call timed after others like it)"
}

// WriteText writes the comparison for a terminal: the summary, the top
// nodes (all when top ≤ 0) and the classes.
func (c *Comparison) WriteText(w io.Writer, top int) error {
	var b strings.Builder
	on := ""
	if d := c.Device.DeviceText(); d != "" {
		on = " from " + d
	}
	kind := fmt.Sprintf("%s, %d runs averaged", c.Format, c.Runs)
	if c.Replayed {
		kind = fmt.Sprintf("%s, kernels timed in a CUDA-graph replay", c.Format)
		if c.Runs > 1 {
			kind = fmt.Sprintf("%s, kernels timed in %d CUDA-graph replays averaged", c.Format, c.Runs)
		}
	}
	fmt.Fprintf(&b, "profile %s (%s)%s: %.1f%% of the measured time matched to the model's nodes (%s matched, %s not)\n",
		c.Profile, kind, on, 100*c.MatchedTimeFraction, us(c.MatchedS), us(c.UnmatchedS))
	fmt.Fprintf(&b, "estimate: %s\n", c.pricedText())
	fmt.Fprintf(&b, "matched nodes: predicted %s, measured %s; median |predicted/measured − 1| %.1f%% over %d nodes\n\n",
		us(c.PredictedS), us(c.MatchedS), 100*c.MedianAbsErr, len(c.Nodes))
	nodes := c.Nodes
	if top > 0 && len(nodes) > top {
		nodes = nodes[:top]
	}
	fmt.Fprintf(&b, "%-48s %-22s %12s %12s %8s\n", "node (largest disagreement first)", "op", "predicted", "measured", "error")
	for _, n := range nodes {
		measured := us(n.MeasuredS)
		if n.Shared > 1 {
			measured += "*"
		}
		fmt.Fprintf(&b, "%-48s %-22s %12s %12s %+7.1f%%\n", clip(n.Name, 48), clip(n.OpType, 22), us(n.PredictedS), measured, 100*(n.PredictedS/n.MeasuredS-1))
	}
	if len(c.Nodes) > len(nodes) {
		fmt.Fprintf(&b, "… %d more nodes (--top 0 lists all)\n", len(c.Nodes)-len(nodes))
	}
	if shared := c.sharedNodes(); shared > 0 {
		fmt.Fprintf(&b, "* a share of kernels several nodes were matched to together (%d of the %d nodes), split in proportion to their predictions: the group's error, not the node's (--format json: shared, profiled)\n",
			shared, len(c.Nodes))
	}
	fmt.Fprintf(&b, "\n%-12s %6s %12s %12s %14s\n", "class", "nodes", "predicted", "measured", "median |error|")
	for _, ce := range c.Classes {
		fmt.Fprintf(&b, "%-12s %6d %12s %12s %13.1f%%\n", ce.Class, ce.Nodes, us(ce.PredictedS), us(ce.MeasuredS), 100*ce.MedianAbsErr)
	}
	for i, e := range c.Unmatched {
		if i == 5 {
			fmt.Fprintf(&b, "… %d more unmatched events\n", len(c.Unmatched)-5)
			break
		}
		fmt.Fprintf(&b, "not matched: %s (%s) %s\n", clip(e.Name, 60), cmp.Or(e.OpType, "?"), us(e.DurS))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// sharedNodes counts the nodes whose measured time is a pooled share
// (NodeTime.Shared).
func (c *Comparison) sharedNodes() int {
	n := 0
	for _, nt := range c.Nodes {
		if nt.Shared > 1 {
			n++
		}
	}
	return n
}

// us prints seconds as µs below a millisecond, else ms.
func us(s float64) string {
	if s >= 1e-3 {
		return fmt.Sprintf("%.4g ms", s*1e3)
	}
	return fmt.Sprintf("%.4g µs", s*1e6)
}

func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// Rows are the matched nodes as rows calib.Fit takes: each node's
// kernel time (its predicted time less the gap between kernels, its ramp
// kept: a profile times kernels, not the gaps between them) against what
// the profile measured for it. Nodes whose measured times are shares of
// one pooled time (NodeTime.Shared) make one row, their kernels against
// the pool's time: split in proportion to the prediction, each share
// would teach every class in the pool the pool's error (a small LLaMA's
// attention module, products, pointwise kernels and copies, read −23%
// node by node in our H200 trace, where its products were right and its
// copies short). rep is the report the match was made against.
func (m *Match) Rows(rep *report.Report) []calib.Row {
	byName := make(map[string]*report.NodeCost, len(rep.Nodes))
	for i := range rep.Nodes {
		byName[rep.Nodes[i].Name] = &rep.Nodes[i]
	}
	var rows []calib.Row
	at := map[int]int{} // share group → its row
	for _, n := range m.Nodes {
		rn := byName[n.Name]
		if rn == nil || n.MeasuredS <= 0 || rn.KernelClass == "" {
			continue
		}
		k := *rn
		k.TimeS, k.LaunchS, k.CommunicationS = calib.NodeBody(rn)+rn.RampS, 0, 0
		if k.TimeS <= 0 {
			continue
		}
		if i, ok := at[n.group]; ok && n.group >= 0 {
			r := &rows[i]
			r.Report.Nodes = append(r.Report.Nodes, k)
			r.Report.Totals.TimeS += k.TimeS
			r.MeasuredS += n.MeasuredS
			continue
		}
		if n.group >= 0 {
			at[n.group] = len(rows)
		}
		one := &report.Report{GPU: rep.GPU, Nodes: []report.NodeCost{k}}
		one.Totals.TimeS = k.TimeS
		rows = append(rows, calib.Row{Name: n.Name, MeasuredS: n.MeasuredS, Report: one})
	}
	for i := range rows {
		if k := len(rows[i].Report.Nodes); k > 1 {
			rows[i].Name = fmt.Sprintf("%s and the %d other nodes of its kernels", rows[i].Name, k-1)
		}
	}
	return rows
}

// Trace is a Chrome trace (Perfetto, chrome://tracing) with the
// predicted and the measured timeline of the matched nodes one above the
// other: two processes, each node a slice laid end to end in report
// order, on whole-nanosecond boundaries so that no viewer's rounding
// makes neighbours overlap.
func (m *Match) Trace() ([]byte, error) {
	type ev struct {
		Name string         `json:"name"`
		Ph   string         `json:"ph"`
		Pid  int            `json:"pid"`
		Tid  int            `json:"tid"`
		Ts   float64        `json:"ts"`
		Dur  float64        `json:"dur,omitempty"`
		Args map[string]any `json:"args,omitempty"`
	}
	evs := []ev{
		{Name: "process_name", Ph: "M", Pid: 1, Tid: 1, Args: map[string]any{"name": "predicted (onnxcost)"}},
		{Name: "process_name", Ph: "M", Pid: 2, Tid: 1, Args: map[string]any{"name": "measured (profile)"}},
	}
	var tp, tm int64 // nanoseconds
	for _, n := range m.Nodes {
		if n.MeasuredS <= 0 && n.PredictedS <= 0 {
			continue
		}
		args := map[string]any{"op": n.OpType, "predicted_us": n.PredictedS * 1e6, "measured_us": n.MeasuredS * 1e6}
		if d := int64(math.Round(n.PredictedS * 1e9)); d > 0 {
			evs = append(evs, ev{Name: n.Name, Ph: "X", Pid: 1, Tid: 1, Ts: float64(tp) / 1e3, Dur: float64(d) / 1e3, Args: args})
			tp += d
		}
		if d := int64(math.Round(n.MeasuredS * 1e9)); d > 0 {
			evs = append(evs, ev{Name: n.Name, Ph: "X", Pid: 2, Tid: 1, Ts: float64(tm) / 1e3, Dur: float64(d) / 1e3, Args: args})
			tm += d
		}
	}
	return json.Marshal(map[string]any{"traceEvents": evs, "displayTimeUnit": "ns"})
}
