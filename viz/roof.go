package viz

import (
	"math"
	"sort"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
)

// Ceiling names the roof that bounds a node: its compute peak, the HBM or
// L2 bandwidth diagonal, or the kernel-launch overhead.
type Ceiling string

const (
	CeilCompute Ceiling = "compute"
	CeilHBM     Ceiling = "HBM"
	CeilL2      Ceiling = "L2"
	CeilLatency Ceiling = "latency" // a GEMM-like kernel's fixed fill and drain
	CeilLaunch  Ceiling = "launch"
	CeilNone    Ceiling = "" // no kernel (constants, views, folded shape ops)
)

// Ceilings are a GPU's roofs in FLOP/s and bytes/s (datasheet figures, as
// rooflines are drawn; the time model's efficiencies put nodes below them).
type Ceilings struct {
	GPU   *hwdb.GPU
	HBMBW float64
	L2BW  float64
	// L2Assumed is true when the GPU lists no L2 bandwidth and the time
	// model's assumed multiple of HBM bandwidth is used.
	L2Assumed bool
}

// CeilingsOf reads a GPU's roofs. A nil GPU gives zero ceilings (drawing
// still works, without roofs).
func CeilingsOf(g *hwdb.GPU) Ceilings {
	c := Ceilings{GPU: g}
	if g == nil {
		return c
	}
	c.HBMBW = g.MemBW
	c.L2BW = perf.L2Bandwidth(g, perf.DefaultParams())
	c.L2Assumed = g.L2BW <= 0 && g.MemBW > 0
	return c
}

// Peak is the compute roof of a precision (0 when unknown).
func (c Ceilings) Peak(p string) float64 {
	if c.GPU == nil || p == "" {
		return 0
	}
	return c.GPU.PeakFor(hwdb.Precision(p))
}

// BW is the bandwidth of a memory level ("hbm" when unknown).
func (c Ceilings) BW(level string) float64 {
	if level == "l2" {
		return c.L2BW
	}
	return c.HBMBW
}

// NodeRoof is one node's place under the roofline.
type NodeRoof struct {
	AI float64 // arithmetic intensity, FLOP/byte
	// Achieved is the estimated FLOP/s: FLOPs / estimated time.
	Achieved float64
	// Roof is the classic roofline at the node's intensity:
	// min(peak of its precision, AI × bandwidth of its memory level).
	Roof    float64
	Peak    float64
	BW      float64
	Ceiling Ceiling
}

// RoofOf places a node under the GPU's roofs. The binding ceiling comes
// from the report's bound and memory level, so viz and the cost model
// never disagree about what bounds a node.
func (c Ceilings) RoofOf(n *report.NodeCost) NodeRoof {
	r := NodeRoof{AI: n.ArithmeticIntensity, Peak: c.Peak(n.Precision), BW: c.BW(n.MemLevel)}
	// Achieved rate and intensity are both of the executed work (a
	// Winograd kernel's), so the point sits under its roof; a saved report
	// older than executed_flops has only flops.
	flops := n.ExecutedFLOPs
	if flops == 0 {
		flops = n.FLOPs
	}
	if n.TimeS > 0 && flops > 0 {
		r.Achieved = flops / n.TimeS
	}
	switch {
	case r.Peak > 0 && r.BW > 0:
		r.Roof = math.Min(r.Peak, r.AI*r.BW)
	case r.Peak > 0:
		r.Roof = r.Peak
	}
	r.Ceiling = ceilingOf(n)
	return r
}

// ceilingOf maps the report's bound to the roof that binds.
func ceilingOf(n *report.NodeCost) Ceiling { return boundCeiling(n.Bound, n.MemLevel) }

// boundCeiling maps a bound ("compute", "latency", "launch", "memory" or
// "") to its roof; memLevel ("l2" or "hbm") picks the roof of a
// memory-bound one. Nodes and groups of nodes share it, so a box and its
// point on the roofline always name the same roof.
func boundCeiling(bound, memLevel string) Ceiling {
	switch bound {
	case "compute":
		return CeilCompute
	case "latency":
		return CeilLatency
	case "launch":
		return CeilLaunch
	case "memory":
		if memLevel == "l2" {
			return CeilL2
		}
		return CeilHBM
	}
	return CeilNone
}

// usedPrecisions lists, sorted by name, the precisions the nodes run at.
func usedPrecisions(nodes []report.NodeCost) []string {
	seen := map[string]bool{}
	var out []string
	for i := range nodes {
		if p := nodes[i].Precision; p != "" && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}
