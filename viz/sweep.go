//go:build !js

package viz

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/sweep"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// SweepSeries is one line of a sweep chart: one GPU (and one combination
// of the other swept values).
type SweepSeries struct {
	Label string
	X, Y  []float64
	// Fits is parallel to X: false past the GPU's memory limit.
	Fits []bool
	// MaxX, when > 0, is the largest x that fits (from a search), marked
	// with a short vertical tick and its value.
	MaxX float64
}

// SweepOptions control SweepChart.
type SweepOptions struct {
	Title, XLabel, YLabel string
	// LogY draws the y axis in decades (time against a model size spans
	// several); throughput against batch reads better linear.
	LogY          bool
	Width, Height vg.Length
}

// sweepPalette gives each line a distinct colour (Okabe–Ito, readable by
// the colour-blind), in series order, so the same sweep draws the same.
var sweepPalette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#f0e442"}

// newPow2Chart starts a chart over a power-of-two x (batch sizes, model
// widths) on a log-2 axis, the frame SweepChart and TimeRoofline share:
// title, axis labels, a light grid, and the legend top left, because what
// both draw (throughput, time) rises to the right, so that corner is the
// emptiest (SweepChart's max-batch ticks stand at the bottom).
func newPow2Chart(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = render.Clean(title)
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = pow2Ticks{}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), vg.Points(-4)
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Add(lightGrid())
	return p
}

// lightGrid is the pale grey grid behind every chart.
func lightGrid() *plotter.Grid {
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 0xe0}
	grid.Horizontal.Color = color.Gray{Y: 0xe0}
	return grid
}

// orDefault is l, or d when l is unset.
func orDefault(l, d vg.Length) vg.Length {
	if l == 0 {
		return d
	}
	return l
}

// SweepChart draws a sweep: x on a log-2 axis (batch sizes and model
// widths are swept in powers of two), one line per series. Points that
// fit in memory are filled and joined by a solid line; points past the
// memory limit are hollow rings joined by a dashed line, with an × at the
// first point that does not fit, so the reader sees where each GPU stops.
func SweepChart(series []SweepSeries, o SweepOptions, format string) ([]byte, error) {
	if len(series) == 0 {
		return nil, fmt.Errorf("sweep chart: nothing to draw")
	}
	o.Width = orDefault(o.Width, 8*vg.Inch)
	o.Height = orDefault(o.Height, 5*vg.Inch)
	p := newPow2Chart(o.Title, o.XLabel, o.YLabel)
	if o.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = timeTicks{}
	} else {
		p.Y.Tick.Marker = siTicks{}
	}

	xmin, xmax, ymin, ymax := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for i, x := range s.X {
			if x <= 0 || s.Y[i] <= 0 || math.IsInf(s.Y[i], 0) || math.IsNaN(s.Y[i]) {
				continue
			}
			xmin, xmax = math.Min(xmin, x), math.Max(xmax, x)
			ymin, ymax = math.Min(ymin, s.Y[i]), math.Max(ymax, s.Y[i])
		}
	}
	if math.IsInf(xmin, 1) {
		return nil, fmt.Errorf("sweep chart: no positive values to draw")
	}
	p.X.Min, p.X.Max = xmin/1.3, xmax*1.3
	if o.LogY {
		p.Y.Min, p.Y.Max = decadeFloor(ymin), decadeCeil(ymax*1.05)
	} else {
		p.Y.Min, p.Y.Max = 0, ymax*1.12
	}

	for k, s := range series {
		col := hexColor(sweepPalette[k%len(sweepPalette)])
		var in, out plotter.XYs
		var lastFit, firstOut *plotter.XY
		for i, x := range s.X {
			y := s.Y[i]
			if x <= 0 || y <= 0 || math.IsNaN(y) || math.IsInf(y, 0) {
				continue
			}
			pt := plotter.XY{X: x, Y: y}
			if s.Fits[i] {
				in = append(in, pt)
				lastFit = &in[len(in)-1]
			} else {
				if firstOut == nil {
					firstOut = &pt
				}
				out = append(out, pt)
			}
		}
		if len(in) > 0 {
			ln, sc, err := plotter.NewLinePoints(in)
			if err != nil {
				return nil, err
			}
			ln.Color, ln.Width = col, vg.Points(1.5)
			sc.Color, sc.Shape, sc.Radius = col, draw.CircleGlyph{}, vg.Points(3)
			p.Add(ln, sc)
			label := render.Clean(s.Label)
			if s.MaxX > 0 {
				label += fmt.Sprintf(" (largest batch that fits: %s)", strconv.FormatFloat(s.MaxX, 'f', -1, 64))
			}
			p.Legend.Add(label, ln, sc)
		}
		if len(out) > 0 {
			// The dashed part starts at the last point that fits, so the
			// line stays continuous where the memory limit cuts it.
			seg := out
			if lastFit != nil && lastFit.X < out[0].X {
				seg = append(plotter.XYs{*lastFit}, out...)
			}
			ln, err := plotter.NewLine(seg)
			if err != nil {
				return nil, err
			}
			ln.Color, ln.Width, ln.Dashes = col, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(3)}
			sc, err := plotter.NewScatter(out)
			if err != nil {
				return nil, err
			}
			sc.Color, sc.Shape, sc.Radius = col, draw.RingGlyph{}, vg.Points(3)
			p.Add(ln, sc)
			if len(in) == 0 {
				p.Legend.Add(render.Clean(s.Label)+" (does not fit)", ln, sc)
			}
			x, err := plotter.NewScatter(plotter.XYs{*firstOut})
			if err != nil {
				return nil, err
			}
			x.Color, x.Shape, x.Radius = col, draw.CrossGlyph{}, vg.Points(6)
			p.Add(x)
		}
		if s.MaxX > 0 {
			p.Add(maxMarker{x: s.MaxX, col: col, label: "max " + strconv.FormatFloat(s.MaxX, 'f', -1, 64), row: k})
		}
	}
	p.Legend.Add("past the memory limit (× = first)", legendRing())
	return savePlot(p, o.Width, o.Height, format)
}

func legendRing() plot.Thumbnailer {
	s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
	s.Color, s.Shape, s.Radius = color.Gray{Y: 0x55}, draw.RingGlyph{}, vg.Points(3)
	return s
}

// maxMarker draws a vertical tick at the largest batch that fits, from
// the x axis up a fixed height, labelled; row staggers the labels of
// several GPUs so they do not print on one another.
type maxMarker struct {
	x     float64
	col   color.Color
	label string
	row   int
}

func (m maxMarker) Plot(c draw.Canvas, p *plot.Plot) {
	tx, _ := p.Transforms(&c)
	if m.x < p.X.Min || m.x > p.X.Max {
		return
	}
	x := tx(m.x)
	y0 := c.Min.Y
	h := vg.Points(18 + 11*float64(m.row))
	c.SetColor(m.col)
	c.SetLineWidth(vg.Points(1))
	c.SetLineDash([]vg.Length{vg.Points(2), vg.Points(2)}, 0)
	var path vg.Path
	path.Move(vg.Point{X: x, Y: y0})
	path.Line(vg.Point{X: x, Y: y0 + h})
	c.Stroke(path)
	c.SetLineDash(nil, 0)
	st := textStyle(7)
	st.Color = m.col
	st.XAlign = draw.XCenter
	c.FillText(st, vg.Point{X: x, Y: y0 + h + vg.Points(2)}, m.label)
}

// pow2Ticks labels powers of two on a log axis.
type pow2Ticks struct{}

func (pow2Ticks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	lo, hi := math.Ceil(math.Log2(min)), math.Floor(math.Log2(max))
	step := math.Max(1, math.Ceil((hi-lo+1)/12))
	for e := lo; e <= hi; e++ {
		v := math.Exp2(e)
		t := plot.Tick{Value: v}
		if math.Mod(e-lo, step) == 0 {
			t.Label = strconv.FormatFloat(v, 'f', -1, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}

// siTicks are linear ticks labelled with SI prefixes (1.2k, 3M).
type siTicks struct{}

func (siTicks) Ticks(min, max float64) []plot.Tick {
	ticks := plot.DefaultTicks{}.Ticks(min, max)
	for i := range ticks {
		if ticks[i].Label != "" {
			ticks[i].Label = linearSILabel(ticks[i].Value)
		}
	}
	return ticks
}

func linearSILabel(v float64) string {
	for _, u := range []struct {
		f float64
		s string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(v) >= u.f {
			return strconv.FormatFloat(v/u.f, 'g', 4, 64) + u.s
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// SweepResultChart draws a sweep: throughput against batch, or time
// against the swept dimension when that is not batch, or what metric
// names (throughput, time, memory); one line per GPU, model and
// combination of the other swept values.
func SweepResultChart(res *sweep.Result, metric, format string) ([]byte, error) {
	xName := "batch"
	if len(res.Swept) > 0 {
		xName = res.Swept[len(res.Swept)-1]
	}
	byBatch := xName == "batch"
	if metric == "" {
		metric = "time"
		if byBatch {
			metric = "throughput"
		}
	}
	series := sweepSeries(res, metric, byBatch)
	title := ModelTitle(res.Model)
	if ms := res.Models(); len(ms) > 0 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = ModelTitle(m)
		}
		title = strings.Join(names, ", ")
	}
	o := SweepOptions{
		Title: fmt.Sprintf("%s, dtype %s, runtime %s%s", title, res.DType, render.RuntimeKernels(res.Runtime, res.Plan, res.Warm),
			render.PowerSetting(res.PowerCapW, res.SMClockMHz, ", ")+render.TrainingSetting(res.Train, ", ")),
		XLabel: xName,
		YLabel: "throughput (items/s)",
	}
	switch metric {
	case "time":
		o.YLabel, o.LogY = "estimated time per batch", true
	case "memory":
		// The peak the sweep reports: for a training step, its
		// nvidia-smi view.
		o.YLabel = "estimated peak memory (GB)"
	}
	return SweepChart(series, o, format)
}

// sweepSeries groups a sweep's rows into lines of metric against Row.X.
func sweepSeries(res *sweep.Result, metric string, byBatch bool) []SweepSeries {
	var series []SweepSeries
	index := map[string]int{}
	for _, r := range res.Rows {
		label := r.GPU
		if r.Model != "" {
			label = ModelTitle(r.Model) + " · " + label
		}
		if pl := sweep.PointLabel(r, res.Swept[:max(0, len(res.Swept)-1)]); pl != "" {
			label += " " + pl
		}
		k, ok := index[label]
		if !ok {
			k = len(series)
			index[label] = k
			s := SweepSeries{Label: label}
			if mb := res.MaxBatch[r.Key()]; byBatch && mb != nil {
				s.MaxX = float64(*mb)
			}
			series = append(series, s)
		}
		s := &series[k]
		s.X = append(s.X, r.X)
		switch metric {
		case "throughput":
			s.Y = append(s.Y, r.ThroughputPerS)
		case "memory":
			s.Y = append(s.Y, r.PeakMemoryBytes/1e9)
		default:
			s.Y = append(s.Y, r.TimeS)
		}
		s.Fits = append(s.Fits, r.Fits)
	}
	return series
}

// ModelTitle shortens a model path for a chart title to its file name;
// zoo paths stay whole.
func ModelTitle(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 && !strings.HasPrefix(p, "zoo:") {
		return p[i+1:]
	}
	return p
}
