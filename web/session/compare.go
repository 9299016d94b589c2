package session

import (
	"sort"

	"github.com/onnxcost/onnxcost/cost"
)

// Comparison is `onnxcost compare MODEL --format json`: the unfused and
// the fused plan side by side, per fused group and in total. It mirrors
// the CLI's type in cmd/onnxcost/compare.go, which lives in package main
// and so cannot be imported; TestCompareMatchesCLI (cmd/onnxcost) holds
// the two to the same JSON.
type Comparison struct {
	SchemaVersion int              `json:"schema_version"`
	ToolVersion   string           `json:"tool_version"`
	Model         string           `json:"model"`
	GPU           string           `json:"gpu"`
	DType         string           `json:"dtype"`
	Bindings      map[string]int64 `json:"bindings"`
	Unfused       PlanTotals       `json:"unfused"`
	Fused         PlanTotals       `json:"fused"`
	Groups        []Group          `json:"groups"`
	Warnings      []string         `json:"warnings"`
}

// PlanTotals are the totals compared for one plan.
type PlanTotals struct {
	TimeS    float64 `json:"time_s"`
	Bytes    float64 `json:"bytes"` // read + written
	Launches float64 `json:"launches"`
	FLOPs    float64 `json:"flops"`
	Nodes    int     `json:"nodes"`
}

// Group is one fused-plan node and the unfused nodes it replaced.
type Group struct {
	Name         string     `json:"name"`
	OpType       string     `json:"op_type"` // "" for a node the passes removed
	Constituents []string   `json:"constituents"`
	Before       PlanTotals `json:"before"`
	After        PlanTotals `json:"after"`
	SavingS      float64    `json:"saving_s"`
}

// Compare costs both plans under the settings (st.Plan is ignored).
func (s *Session) Compare(st Settings) (*Comparison, error) {
	u, f := st, st
	u.Plan, f.Plan = "unfused", "fused"
	ur, err := s.Estimate(u)
	if err != nil {
		return nil, err
	}
	fr, err := s.Estimate(f)
	if err != nil {
		return nil, err
	}
	return buildComparison(ur, fr, s.version), nil
}

func totalsOf(r *cost.Report) PlanTotals {
	t := r.Totals
	return PlanTotals{TimeS: t.TimeS, Bytes: t.BytesRead + t.BytesWritten, Launches: t.Launches, FLOPs: t.FLOPs, Nodes: len(r.Nodes)}
}

func nodeTotals(n cost.NodeCost) PlanTotals {
	return PlanTotals{TimeS: n.TimeS, Bytes: n.BytesRead + n.BytesWritten, Launches: n.Launches, FLOPs: n.FLOPs, Nodes: 1}
}

func (p *PlanTotals) add(o PlanTotals) {
	p.TimeS += o.TimeS
	p.Bytes += o.Bytes
	p.Launches += o.Launches
	p.FLOPs += o.FLOPs
	p.Nodes += o.Nodes
}

// buildComparison matches every fused-plan node with the unfused nodes
// named in its fused_from (itself when it has none); unfused nodes no
// group claims were removed by the passes and form groups of their own.
func buildComparison(ur, fr *cost.Report, version string) *Comparison {
	cmp := &Comparison{
		SchemaVersion: cost.SchemaVersion, ToolVersion: version,
		Model: fr.Model, GPU: fr.GPU, DType: fr.DType, Bindings: fr.Bindings,
		Unfused: totalsOf(ur), Fused: totalsOf(fr),
		Groups: []Group{}, Warnings: append([]string{}, fr.Warnings...),
	}
	byName := make(map[string]int, len(ur.Nodes))
	for i, n := range ur.Nodes {
		byName[n.Name] = i
	}
	claimed := make([]bool, len(ur.Nodes))
	for _, n := range fr.Nodes {
		g := Group{Name: n.Name, OpType: cost.QualifiedOp(n.Domain, n.OpType), After: nodeTotals(n)}
		parts := n.FusedFrom
		if len(parts) == 0 {
			parts = []string{n.Name}
		}
		for _, p := range parts {
			g.Constituents = append(g.Constituents, p)
			if i, ok := byName[p]; ok && !claimed[i] {
				claimed[i] = true
				g.Before.add(nodeTotals(ur.Nodes[i]))
			}
		}
		g.SavingS = g.Before.TimeS - g.After.TimeS
		cmp.Groups = append(cmp.Groups, g)
	}
	for i, n := range ur.Nodes {
		if claimed[i] {
			continue
		}
		g := Group{Name: n.Name, Constituents: []string{n.Name}, Before: nodeTotals(n)}
		g.SavingS = g.Before.TimeS
		cmp.Groups = append(cmp.Groups, g)
	}
	sort.SliceStable(cmp.Groups, func(i, j int) bool {
		a, b := cmp.Groups[i], cmp.Groups[j]
		if a.SavingS != b.SavingS {
			return a.SavingS > b.SavingS
		}
		return a.Name < b.Name
	})
	return cmp
}
