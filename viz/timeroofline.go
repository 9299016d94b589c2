//go:build !js

package viz

import (
	"fmt"
	"image/color"
	"math"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// TimePoint is one value of the swept parameter: the estimate and the
// three floors it is built from (the time model's estimate is
// max(compute, memory) + launch, more for a GEMM whose two terms are
// close (perf.BodyS), so it lies on or above every floor).
type TimePoint struct {
	X        float64
	ComputeS float64 // FLOPs / attainable compute rate, plus the kernel fill latency
	MemoryS  float64 // bytes / attainable bandwidth
	LaunchS  float64 // kernel launches × launch overhead
	TimeS    float64 // the estimate
}

// TimePointOf is the point at x of report r: its floors and estimate,
// of the whole model, or of one node (by name, or the fused node that
// absorbed it; false when there is none) when node is not "".
func TimePointOf(r *report.Report, node string, x float64) (TimePoint, bool) {
	tp := TimePoint{X: x}
	if node != "" {
		n := r.FindNode(node)
		if n == nil {
			return tp, false
		}
		tp.ComputeS, tp.MemoryS, tp.LaunchS, tp.TimeS = n.ComputeS+n.LatencyS, n.MemoryS, n.RampS+n.LaunchS, n.TimeS
		return tp, true
	}
	for _, n := range r.Nodes {
		// The fixed fill latency runs in series with the compute and the
		// memory stream (the time model prices perf.BodyS: max(compute,
		// memory) + latency, + launch), so the compute floor drawn
		// includes it and the estimate lies on or above both floors.
		tp.ComputeS += n.ComputeS + n.LatencyS
		tp.MemoryS += n.MemoryS
		tp.LaunchS += n.RampS + n.LaunchS
	}
	tp.TimeS = r.Totals.TimeS
	return tp, true
}

// TimeRooflineOptions control TimeRoofline.
type TimeRooflineOptions struct {
	Title, XLabel string
	Width, Height vg.Length
}

// Regime names which floor dominates a point: the largest of the three.
func (p TimePoint) Regime() Ceiling {
	switch {
	case p.LaunchS >= p.ComputeS && p.LaunchS >= p.MemoryS:
		return CeilLaunch
	case p.ComputeS >= p.MemoryS:
		return CeilCompute
	}
	return CeilHBM
}

// regimeName names a regime in the legend (memory, not HBM: the floor
// uses whichever bandwidth the time model chose per kernel).
var regimeName = map[Ceiling]string{CeilCompute: "compute", CeilHBM: "memory", CeilLaunch: "launch"}

// TimeRoofline draws the time-based roofline: time against a swept
// parameter (log-log), with the compute floor, the memory floor and the
// launch floor as lines and the estimate on top, its markers coloured by
// the floor that dominates. Where the estimate leaves the launch floor the
// work stops being launch-bound; where the compute floor crosses the
// memory floor it turns compute-bound.
func TimeRoofline(pts []TimePoint, o TimeRooflineOptions, format string) ([]byte, error) {
	if len(pts) == 0 {
		return nil, fmt.Errorf("time roofline: nothing to draw")
	}
	o.Width = orDefault(o.Width, 8*vg.Inch)
	o.Height = orDefault(o.Height, 5.5*vg.Inch)
	p := newPow2Chart(o.Title, o.XLabel, "time (s)")
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = timeTicks{}

	ymin, ymax := math.Inf(1), math.Inf(-1)
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, q := range pts {
		xmin, xmax = math.Min(xmin, q.X), math.Max(xmax, q.X)
		for _, v := range []float64{q.ComputeS, q.MemoryS, q.LaunchS, q.TimeS} {
			if v > 0 {
				ymin, ymax = math.Min(ymin, v), math.Max(ymax, v)
			}
		}
	}
	if math.IsInf(ymin, 1) || xmin <= 0 {
		return nil, fmt.Errorf("time roofline: no positive times to draw")
	}
	p.X.Min, p.X.Max = xmin/1.3, xmax*1.3
	p.Y.Min, p.Y.Max = decadeFloor(ymin), decadeCeil(ymax*1.5)

	var est plotter.XYs
	for _, q := range pts {
		if q.TimeS > 0 {
			est = append(est, plotter.XY{X: q.X, Y: q.TimeS})
		}
	}
	if len(est) > 0 {
		ln, err := plotter.NewLine(est)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = color.Black, vg.Points(1.4)
		p.Add(ln)
		p.Legend.Add("estimate ≥ max(compute, memory) + launch", ln)
	}
	floors := []struct {
		name   string
		get    func(TimePoint) float64
		ceil   Ceiling
		dashes []vg.Length
	}{
		{"compute floor (FLOPs / attainable rate + fill)", func(q TimePoint) float64 { return q.ComputeS }, CeilCompute, []vg.Length{vg.Points(6), vg.Points(3)}},
		{"memory floor (bytes / bandwidth)", func(q TimePoint) float64 { return q.MemoryS }, CeilHBM, []vg.Length{vg.Points(2), vg.Points(2)}},
		{"launch floor (launches × overhead)", func(q TimePoint) float64 { return q.LaunchS }, CeilLaunch, []vg.Length{vg.Points(8), vg.Points(2), vg.Points(2), vg.Points(2)}},
	}
	for _, fl := range floors {
		var xy plotter.XYs
		for _, q := range pts {
			if v := fl.get(q); v > 0 {
				xy = append(xy, plotter.XY{X: q.X, Y: v})
			}
		}
		if len(xy) == 0 {
			continue
		}
		ln, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width, ln.Dashes = darker(hexColor(ceilingFill[fl.ceil])), vg.Points(1.6), fl.dashes
		p.Add(ln)
		p.Legend.Add(fl.name, ln)
	}
	if len(est) > 0 {
		for _, ce := range []Ceiling{CeilLaunch, CeilHBM, CeilCompute} {
			var xy plotter.XYs
			for _, q := range pts {
				if q.TimeS > 0 && q.Regime() == ce {
					xy = append(xy, plotter.XY{X: q.X, Y: q.TimeS})
				}
			}
			if len(xy) == 0 {
				continue
			}
			sc, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: hexColor(ceilingFill[ce]), Radius: vg.Points(4), Shape: outlined{draw.CircleGlyph{}}}
			p.Add(sc)
			p.Legend.Add(regimeName[ce]+"-bound point", sc)
		}
	}
	return savePlot(p, o.Width, o.Height, format)
}

// timeTicks labels decades of seconds in human units (1 µs, 10 ms, 1 s).
type timeTicks struct{}

func (timeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v := math.Pow(10, e)
		if v < min*(1-1e-9) || v > max*(1+1e-9) {
			continue
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: render.Seconds(v)})
		for k := 2.0; k < 10; k++ {
			if w := k * v; w <= max {
				ticks = append(ticks, plot.Tick{Value: w})
			}
		}
	}
	return ticks
}
