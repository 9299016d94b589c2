package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// Comparison is the JSON form of `onnxcost compare`: the unfused and the
// fused plan of one model, side by side.
type Comparison struct {
	Header
	Model string `json:"model"`
	GPU   string `json:"gpu"`
	DType string `json:"dtype"`
	// Runtime is the execution profile both plans were priced under
	// (absent for counts without a GPU); PowerCapW and SMClockMHz their
	// power setting (absent at the GPU's default).
	Runtime    string  `json:"runtime,omitempty"`
	PowerCapW  float64 `json:"power_cap_w,omitempty"`
	SMClockMHz float64 `json:"sm_clock_mhz,omitempty"`
	// Warm marks estimates priced as calls repeated back to back
	// (--warm: L2 holds what the previous call left); absent for first
	// calls.
	Warm bool `json:"warm,omitempty"`
	// Train is the training step both plans' times are of (--train);
	// absent for inference.
	Train    *TrainSetting    `json:"train,omitempty"`
	Bindings map[string]int64 `json:"bindings"`
	Unfused  PlanTotals       `json:"unfused"`
	Fused    PlanTotals       `json:"fused"`
	// UnfusedTimeIntervalS and FusedTimeIntervalS are the plans' 80%
	// intervals (Totals.TimeIntervalS); absent where a report has none.
	// The saving between them is priced by one model, whose systematic
	// errors cancel in it.
	UnfusedTimeIntervalS []float64 `json:"unfused_time_interval_s,omitempty"`
	FusedTimeIntervalS   []float64 `json:"fused_time_interval_s,omitempty"`
	// Calibration is the calibration both plans were priced with
	// (Report.Calibration), absent without one.
	Calibration string `json:"calibration,omitempty"`
	// CalibrationFile is its file (Report.CalibrationFile), for headers.
	CalibrationFile string `json:"calibration_file,omitempty"`
	// Groups has one entry per node of the fused plan and one per node
	// the passes removed, sorted by time saved (largest first).
	Groups []Group `json:"groups"`
	// UnfusedFusable is the coverage measure of the fused plan
	// (UnfusedFusable in coverage.go): the kernels it still launches
	// that a production runtime would have fused.
	UnfusedFusable Coverage `json:"unfused_fusable"`
	Warnings       []string `json:"warnings"`
}

// PlanTotals are the totals compare shows for one plan.
type PlanTotals struct {
	TimeS    float64 `json:"time_s"`
	Bytes    float64 `json:"bytes"` // read + written
	Launches float64 `json:"launches"`
	FLOPs    float64 `json:"flops"`
	// ExecutedFLOPs is what the plan's kernels run (Counts.ExecutedFLOPs):
	// FLOPs are the model's in both plans, a Winograd plan executes fewer.
	ExecutedFLOPs float64 `json:"executed_flops"`
	Nodes         int     `json:"nodes"`
}

// Group is one fused-plan node and the unfused nodes it replaced.
type Group struct {
	Name   string `json:"name"`
	OpType string `json:"op_type"` // in the fused plan; "" for a removed node
	// Constituents are the unfused nodes the group replaced, in order.
	Constituents []string   `json:"constituents"`
	Before       PlanTotals `json:"before"`
	After        PlanTotals `json:"after"`
	SavingS      float64    `json:"saving_s"`
}

func totalsOf(r *Report) PlanTotals {
	t := r.Totals
	return PlanTotals{TimeS: t.TimeS, Bytes: t.Bytes(), Launches: t.Launches, FLOPs: t.FLOPs, ExecutedFLOPs: t.ExecutedFLOPs, Nodes: len(r.Nodes)}
}

func nodeTotals(n NodeCost) PlanTotals {
	return PlanTotals{TimeS: n.TimeS, Bytes: n.Bytes(), Launches: n.Launches, FLOPs: n.FLOPs, ExecutedFLOPs: n.ExecutedFLOPs, Nodes: 1}
}

func (p *PlanTotals) add(o PlanTotals) {
	p.TimeS += o.TimeS
	p.Bytes += o.Bytes
	p.Launches += o.Launches
	p.FLOPs += o.FLOPs
	p.ExecutedFLOPs += o.ExecutedFLOPs
	p.Nodes += o.Nodes
}

// Compare builds the comparison of an unfused report ur and a fused
// report fr of the same model. It matches every fused-plan node with the unfused nodes
// named in its fused_from (itself when it has none); unfused nodes no
// group claims were removed by the passes and form groups of their own.
func Compare(ur, fr *Report, toolVersion string) *Comparison {
	out := &Comparison{
		Header: Header{SchemaVersion: SchemaVersion, ToolVersion: toolVersion},
		Model:  fr.Model, GPU: fr.GPU, DType: fr.DType, Bindings: fr.Bindings,
		PowerCapW: fr.Totals.PowerCapW, SMClockMHz: fr.Totals.SMClockCapMHz, Warm: fr.Warm, Train: fr.Totals.Train.Setting(),
		Unfused: totalsOf(ur), Fused: totalsOf(fr),
		UnfusedTimeIntervalS: ur.Totals.TimeIntervalS, FusedTimeIntervalS: fr.Totals.TimeIntervalS,
		Calibration:     fr.Calibration,
		CalibrationFile: fr.CalibrationName(),
		UnfusedFusable:  UnfusedFusable(fr), Warnings: append([]string{}, fr.Warnings...),
	}
	if fr.Runtime != nil {
		out.Runtime = fr.Runtime.Name
	}
	// Built in place and sorted through an index: a Group is ~170 bytes,
	// and growing and stably sorting 140k of them by value (the 112k-node
	// graph) was most of this function's 0.2 s.
	groups := make([]Group, 0, len(fr.Nodes)+len(ur.Nodes))
	byName := make(map[string]int, len(ur.Nodes))
	for i, n := range ur.Nodes {
		byName[n.Name] = i
	}
	claimed := make([]bool, len(ur.Nodes))
	for _, n := range fr.Nodes {
		g := Group{Name: n.Name, OpType: ir.QualifiedOp(n.Domain, n.OpType), After: nodeTotals(n)}
		parts := n.FusedFrom
		if len(parts) == 0 {
			parts = []string{n.Name}
		}
		g.Constituents = parts
		for _, p := range parts {
			if i, ok := byName[p]; ok && !claimed[i] {
				claimed[i] = true
				g.Before.add(nodeTotals(ur.Nodes[i]))
			}
		}
		g.SavingS = g.Before.TimeS - g.After.TimeS
		groups = append(groups, g)
	}
	for i, n := range ur.Nodes {
		if claimed[i] {
			continue
		}
		g := Group{Name: n.Name, Constituents: []string{n.Name}, Before: nodeTotals(n)}
		g.SavingS = g.Before.TimeS
		groups = append(groups, g)
	}
	order := make([]int32, len(groups))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortStableFunc(order, func(i, j int32) int {
		a, b := &groups[i], &groups[j]
		if c := cmp.Compare(b.SavingS, a.SavingS); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	out.Groups = make([]Group, len(groups))
	for k, i := range order {
		out.Groups[k] = groups[i]
	}
	return out
}

// DropTensors empties the input and output lists of r's nodes, for an
// unfused report that only Compare reads (names and costs) while the
// fused plan is costed: on the 112k-node graph they were ~25 MB of the
// 64 MB that report held through the second estimate.
func (r *Report) DropTensors() {
	for i := range r.Nodes {
		r.Nodes[i].Inputs, r.Nodes[i].Outputs = nil, nil
	}
}

// PerGPU is r as one GPU of a tensor-parallel group runs it: each node's
// counts times its gpu_share, and the totals their sum. r is not changed.
func (r *Report) PerGPU() *Report {
	c := *r
	c.Nodes = make([]NodeCost, len(r.Nodes))
	copy(c.Nodes, r.Nodes)
	c.Totals.Counts = Counts{}
	for i := range c.Nodes {
		n := &c.Nodes[i]
		if n.GPUShare > 0 {
			n.Counts.Scale(n.GPUShare)
		}
		c.Totals.Counts.Add(n.Counts)
	}
	return &c
}
