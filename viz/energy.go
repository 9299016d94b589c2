//go:build !js

package viz

import (
	"fmt"
	"image/color"
	"math"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/energy"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// EnergySeries is one line of an energy chart: a quantity (time, energy)
// of one model against the power cap or SM clock, relative to a baseline
// setting so that time and energy share one axis.
type EnergySeries struct {
	Label string
	X, Y  []float64
	// Dashed draws the line dashed (energy), solid otherwise (time).
	Dashed bool
	// Colour indexes sweepPalette: a model's time and energy lines share
	// one colour.
	Colour int
	// Marks are x values to ring (the energy- or EDP-optimal setting).
	Marks []float64
}

// EnergyOptions control EnergyChart.
type EnergyOptions struct {
	Title, XLabel, YLabel string
	Width, Height         vg.Length
}

// EnergyChart draws time and energy against a power cap or SM clock on
// linear axes, one line per series; each series' marked x values are
// ringed (the optimal settings).
func EnergyChart(series []EnergySeries, o EnergyOptions, format string) ([]byte, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("energy chart: nothing to draw")
	}
	if o.Width == 0 {
		o.Width = 8 * vg.Inch
	}
	if o.Height == 0 {
		o.Height = 5 * vg.Inch
	}
	p := plot.New()
	p.Title.Text = render.Clean(o.Title)
	p.X.Label.Text = o.XLabel
	p.Y.Label.Text = o.YLabel
	p.Legend.Top, p.Legend.Left = true, false
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(-6), vg.Points(-4)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	p.Add(grid)

	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i, x := range s.X {
			if y := s.Y[i]; !math.IsNaN(y) && !math.IsInf(y, 0) {
				xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
				ymin, ymax = math.Min(ymin, y), math.Max(ymax, y)
			}
		}
	}
	if math.IsInf(xmin, 1) {
		return nil, fmt.Errorf("energy chart: no values to draw")
	}
	pad := math.Max((xmax-xmin)*0.04, 1)
	p.X.Min, p.X.Max = xmin-pad, xmax+pad
	span := math.Max(ymax-ymin, 0.05*math.Abs(ymax))
	p.Y.Min, p.Y.Max = ymin-0.08*span, ymax+0.25*span

	for _, s := range series {
		col := hexColor(sweepPalette[s.Colour%len(sweepPalette)])
		var pts plotter.XYs
		for i, x := range s.X {
			if y := s.Y[i]; !math.IsNaN(y) && !math.IsInf(y, 0) {
				pts = append(pts, plotter.XY{X: x, Y: y})
			}
		}
		ln, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		ln.Color, ln.Width = col, vg.Points(1.5)
		sc.Color, sc.Radius = col, vg.Points(2.5)
		sc.Shape = draw.CircleGlyph{}
		if s.Dashed {
			ln.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			sc.Shape = draw.SquareGlyph{}
		}
		p.Add(ln, sc)
		p.Legend.Add(render.Clean(s.Label), ln, sc)
		var marks plotter.XYs
		for _, m := range s.Marks {
			for _, pt := range pts {
				if pt.X == m {
					marks = append(marks, pt)
				}
			}
		}
		if len(marks) > 0 {
			r, err := plotter.NewScatter(marks)
			if err != nil {
				return nil, err
			}
			r.Color, r.Shape, r.Radius = col, draw.RingGlyph{}, vg.Points(7)
			p.Add(r)
		}
	}
	p.Legend.Add("least-energy setting (ringed)", legendRing())
	return savePlot(p, o.Width, o.Height, format)
}

// EnergyResultChart draws an energy result's time and energy relative to
// its reference (the GPU's default setting) against the setting; the
// energy-optimal row is ringed on the energy line.
func EnergyResultChart(res *energy.Result, format string) ([]byte, error) {
	series, xl := energySeries(res)
	o := EnergyOptions{
		Title:  fmt.Sprintf("%s on %s, dtype %s, runtime %s%s", ModelTitle(res.Model), onGPUs(res.GPU, res.GPUs), res.DType, render.RuntimeKernels(res.Runtime, res.Plan, res.Warm), trainedBy(res)),
		XLabel: xl,
		YLabel: "relative to the default (TDP, no clock lock)",
	}
	return EnergyChart(series, o, format)
}

// energySeries is a result's time and energy lines, relative to its
// reference, and the x axis's label.
func energySeries(res *energy.Result) ([]EnergySeries, string) {
	base := res.Reference
	ts := EnergySeries{Label: "time"}
	es := EnergySeries{Label: "energy", Dashed: true}
	xl := "power cap (W)"
	clock := res.Mode == energy.ModeSMClock
	for _, r := range res.Rows {
		x := r.PowerCapW
		if clock {
			x, xl = r.SMClockMHz, "SM clock (MHz)"
		}
		ts.X, ts.Y = append(ts.X, x), append(ts.Y, r.TimeS/base.TimeS)
		es.X, es.Y = append(es.X, x), append(es.Y, r.EnergyJ/base.EnergyJ)
	}
	opt := res.Optimal.Energy.PowerCapW
	if clock {
		opt = res.Optimal.Energy.SMClockMHz
	}
	es.Marks = []float64{opt}
	return []EnergySeries{ts, es}, xl
}

// onGPUs names the GPU an energy chart is of: one GPU of the n a call
// or step runs on where there are several (its energy is that GPU's).
func onGPUs(gpu string, n int) string {
	if n > 1 {
		return fmt.Sprintf("one GPU of %d × %s", n, gpu)
	}
	return gpu
}

// trainedBy names the training step an energy chart's rows price.
func trainedBy(res *energy.Result) string {
	if t := res.Train; t != nil {
		return render.TrainingSetting(&t.TrainSetting, ", ")
	}
	return ""
}
