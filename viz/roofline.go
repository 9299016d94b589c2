//go:build !js

// The roofline chart draws with gonum.org/v1/plot, whose embedded fonts
// would more than double the WebAssembly build (web/wasm); the page
// draws its roofline itself from the same report fields.

package viz

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgpdf"
	"gonum.org/v1/plot/vg/vgsvg"
)

// RooflineOptions control Roofline.
type RooflineOptions struct {
	// Label names the N costliest nodes of the main plan (0: 8; <0: none).
	Label int
	// Width and Height of the chart (0: 9×6 inches).
	Width, Height vg.Length
	// MaxPoints keeps the main plan's N costliest points (0: all); the
	// title counts the rest. A 2M-node chain drew a 523 MB SVG.
	MaxPoints int
	// labelBoxes, when set, receives the label boxes drawn (tests).
	labelBoxes *[]vg.Rectangle
}

// DefaultRooflineLabels is how many points get a name.
const DefaultRooflineLabels = 8

// Roofline draws the roofline chart of main (usually the fused plan) and,
// when other is not nil, of a second plan (unfused) as a second glyph,
// with a thin line from each unfused node to the fused node that absorbed
// it (fusion moves points right and up). Axes are log-log: arithmetic
// intensity (FLOP/byte) against estimated FLOP/s. Roofs: each precision
// the nodes use, HBM and L2 bandwidth, ridge points marked. Point area is
// proportional to the node's share of time, colour is its bound. Nodes with
// no FLOPs or no bytes cannot sit on log axes: they are counted in a note.
//
// format is svg (fonts embedded, byte-identical across runs), png or pdf.
func Roofline(main, other *report.Report, c Ceilings, o RooflineOptions, format string) ([]byte, error) {
	if main == nil {
		return nil, fmt.Errorf("viz: no report")
	}
	if o.Label == 0 {
		o.Label = DefaultRooflineLabels
	}
	o.Width = orDefault(o.Width, 9*vg.Inch)
	o.Height = orDefault(o.Height, 6*vg.Inch)
	p, err := rooflinePlot(main, other, c, o)
	if err != nil {
		return nil, err
	}
	return savePlot(p, o.Width, o.Height, format)
}

// point is one node on the chart.
type point struct {
	x, y  float64 // AI, FLOP/s
	share float64
	ceil  Ceiling
	name  string
	node  *report.NodeCost
}

// points places a plan's nodes; skipped counts those log axes cannot draw.
func points(r *report.Report, c Ceilings) (pts []point, skipped int, skippedTime float64) {
	total := r.Totals.TimeS
	if total <= 0 {
		for i := range r.Nodes {
			total += r.Nodes[i].TimeS
		}
	}
	for i := range r.Nodes {
		n := &r.Nodes[i]
		if free(n) {
			continue // no kernel: not a point, not a loss either
		}
		rf := c.RoofOf(n)
		if n.FLOPs <= 0 || n.BytesRead+n.BytesWritten <= 0 || rf.Achieved <= 0 || rf.AI <= 0 {
			skipped++
			skippedTime += n.TimeS
			continue
		}
		s := 0.0
		if total > 0 {
			s = n.TimeS / total
		}
		pts = append(pts, point{x: rf.AI, y: rf.Achieved, share: s, ceil: rf.Ceiling, name: n.Name, node: n})
	}
	return pts, skipped, skippedTime
}

func rooflinePlot(main, other *report.Report, c Ceilings, o RooflineOptions) (*plot.Plot, error) {
	p := plot.New()
	mainPts, skipped, skippedT := points(main, c)
	hidden := 0
	if o.MaxPoints > 0 && len(mainPts) > o.MaxPoints {
		sort.SliceStable(mainPts, func(a, b int) bool { return mainPts[a].share > mainPts[b].share })
		hidden, mainPts = len(mainPts)-o.MaxPoints, mainPts[:o.MaxPoints]
	}
	var otherPts []point
	if other != nil {
		otherPts, _, _ = points(other, c)
	}
	precs := usedPrecisions(main.Nodes)
	if other != nil {
		precs = mergeSorted(precs, usedPrecisions(other.Nodes))
	}
	var peaks []float64
	for _, pr := range precs {
		if pk := c.Peak(pr); pk > 0 {
			peaks = append(peaks, pk)
		}
	}

	xmin, xmax, ymin, ymax := rooflineRanges(c, peaks, mainPts, otherPts)
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = xmin, xmax, ymin, ymax
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker = decadeTicks{unit: ""}
	p.Y.Tick.Marker = decadeTicks{unit: "FLOP/s"}
	p.X.Label.Text = "arithmetic intensity (FLOP/byte)"
	p.Y.Label.Text = "estimated FLOP/s"
	p.Title.Text = rooflineTitle(main, other, len(mainPts), skipped, skippedT)
	if hidden > 0 {
		p.Title.Text += fmt.Sprintf("; %d cheaper nodes not drawn", hidden)
	}
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(8), vg.Points(-4)
	p.Add(lightGrid())

	// Roofs. Ridge labels are kept for the point labels to avoid.
	ridges := addRoofs(p, c, precs, peaks, xmin, xmax)

	// Fusion moves: a line from each unfused node to the fused node that
	// absorbed it.
	if other != nil {
		if moves := fusionMoves(mainPts, otherPts); moves != nil {
			p.Add(moves...)
		}
	}
	// Points: the other plan first (hollow rings) under the main plan.
	if len(otherPts) > 0 {
		s := scatter(otherPts, draw.RingGlyph{})
		p.Add(s)
	}
	if len(mainPts) > 0 {
		p.Add(scatter(mainPts, mainGlyph(other != nil)))
	}
	for _, ce := range ceilingOrder {
		p.Legend.Add(string(ce)+"-bound", legendGlyph(ceilingFill[ce], draw.CircleGlyph{}))
	}
	if other != nil {
		p.Legend.Add(other.Plan+" plan", legendGlyph("#888888", draw.RingGlyph{}))
		p.Legend.Add(main.Plan+" plan", legendGlyph("#888888", draw.PyramidGlyph{}))
	}
	if lbl := topLabels(mainPts, o.Label, o.labelBoxes, ridges); lbl != nil {
		p.Add(lbl)
	}
	return p, nil
}

// rooflineRanges are the axis ranges of a roofline chart: every point of
// sets, every ridge of peaks, a decade of margin.
func rooflineRanges(c Ceilings, peaks []float64, sets ...[]point) (xmin, xmax, ymin, ymax float64) {
	xmin, xmax, ymin, ymax = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, set := range sets {
		for _, q := range set {
			xmin, xmax = math.Min(xmin, q.x), math.Max(xmax, q.x)
			ymin, ymax = math.Min(ymin, q.y), math.Max(ymax, q.y)
		}
	}
	for _, pk := range peaks {
		ymax = math.Max(ymax, pk)
		for _, bw := range []float64{c.HBMBW, c.L2BW} {
			if bw > 0 {
				xmin, xmax = math.Min(xmin, pk/bw), math.Max(xmax, pk/bw)
			}
		}
	}
	if math.IsInf(xmin, 1) { // nothing to draw at all
		xmin, xmax, ymin, ymax = 0.1, 100, 1e9, 1e12
	}
	xmin, xmax = decadeFloor(xmin/2), decadeCeil(xmax*4)
	ymin, ymax = decadeFloor(ymin/2), decadeCeil(ymax*2)
	return xmin, xmax, ymin, ymax
}

// addRoofs draws the bandwidth diagonals and each precision's compute
// roof on p, and returns the ridge marks (labelled, for the point labels
// to avoid).
func addRoofs(p *plot.Plot, c Ceilings, precs []string, peaks []float64, xmin, xmax float64) []plot.Plotter {
	var ridges []plot.Plotter
	addRidge := func(r plot.Plotter) { p.Add(r); ridges = append(ridges, r) }
	maxPeak := 0.0
	for _, pk := range peaks {
		maxPeak = math.Max(maxPeak, pk)
	}
	if maxPeak > 0 {
		for _, bw := range []struct {
			name   string
			bw     float64
			dashed bool
			note   string
		}{{"HBM", c.HBMBW, false, ""}, {"L2", c.L2BW, true, map[bool]string{true: " (assumed)"}[c.L2Assumed]}} {
			if bw.bw <= 0 {
				continue
			}
			ln := roofLine([]float64{xmin, maxPeak / bw.bw}, []float64{xmin * bw.bw, maxPeak}, roofColor, bw.dashed)
			p.Add(ln)
			p.Legend.Add(fmt.Sprintf("%s %s/s%s", bw.name, render.Bytes(bw.bw), bw.note), ln)
		}
		for k, pr := range precs {
			pk := c.Peak(pr)
			if pk <= 0 {
				continue
			}
			ridge := pk / c.HBMBW
			if c.HBMBW <= 0 {
				ridge = xmin
			}
			ln := roofLine([]float64{math.Max(ridge, xmin), xmax}, []float64{pk, pk}, precColor(k), false)
			p.Add(ln)
			p.Legend.Add(fmt.Sprintf("%s peak %s", pr, flopsRate(pk)), ln)
			if c.HBMBW > 0 {
				addRidge(ridgeMark(ridge, pk, fmt.Sprintf("ridge %s", aiText(ridge))))
			}
			if c.L2BW > 0 && pk == maxPeak {
				addRidge(ridgeMark(pk/c.L2BW, pk, fmt.Sprintf("L2 ridge %s", aiText(pk/c.L2BW))))
			}
		}
	}
	return ridges
}

func mainGlyph(twoPlans bool) draw.GlyphDrawer {
	if twoPlans {
		return draw.PyramidGlyph{}
	}
	return draw.CircleGlyph{}
}

var roofColor = color.RGBA{R: 0x33, G: 0x33, B: 0x33, A: 0xff}

// precColor gives each precision roof its own dark colour.
func precColor(k int) color.Color {
	pal := []color.RGBA{{0x31, 0x82, 0xbd, 0xff}, {0x75, 0x6b, 0xb1, 0xff}, {0x31, 0xa3, 0x54, 0xff}, {0xe6, 0x55, 0x0d, 0xff}, {0x63, 0x63, 0x63, 0xff}}
	return pal[k%len(pal)]
}

func roofLine(xs, ys []float64, c color.Color, dashed bool) *plotter.Line {
	xy := make(plotter.XYs, len(xs))
	for i := range xs {
		xy[i].X, xy[i].Y = xs[i], ys[i]
	}
	ln, _ := plotter.NewLine(xy)
	ln.Color = c
	ln.Width = vg.Points(1.5)
	if dashed {
		ln.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
	}
	return ln
}

// ridgeMark is a diamond at a ridge point with its intensity.
type ridgeMarker struct {
	x, y  float64
	label string
}

func ridgeMark(x, y float64, label string) plot.Plotter { return ridgeMarker{x, y, label} }

func (r ridgeMarker) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	pt := vg.Point{X: tx(r.x), Y: ty(r.y)}
	if !c.Contains(pt) {
		return
	}
	c.DrawGlyph(draw.GlyphStyle{Color: roofColor, Radius: vg.Points(3.5), Shape: draw.PyramidGlyph{}}, pt)
	sty := textStyle(7)
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YTop
	c.FillText(sty, vg.Point{X: pt.X + vg.Points(3), Y: pt.Y - vg.Points(4)}, r.label)
}

// box is where Plot draws the ridge's glyph and label, in canvas units.
func (r ridgeMarker) box(pt vg.Point) vg.Rectangle {
	sty := textStyle(7)
	w, h := sty.Width(r.label), sty.Height(r.label)
	return vg.Rectangle{Min: vg.Point{X: pt.X - vg.Points(4), Y: pt.Y - vg.Points(4) - h}, Max: vg.Point{X: pt.X + vg.Points(3) + w, Y: pt.Y + vg.Points(4)}}
}

// scatter draws points with area proportional to time share (a minimum
// size keeps tiny nodes visible) and colour by bound.
func scatter(pts []point, shape draw.GlyphDrawer) *plotter.Scatter {
	xy := make(plotter.XYs, len(pts))
	for i, q := range pts {
		xy[i].X, xy[i].Y = q.x, q.y
	}
	s, _ := plotter.NewScatter(xy)
	s.GlyphStyleFunc = func(i int) draw.GlyphStyle {
		return draw.GlyphStyle{Color: glyphColor(pts[i].ceil, shape), Radius: radius(pts[i].share), Shape: outlined{shape}}
	}
	return s
}

// radius makes area ∝ share: 2 pt minimum, 22 pt for a node that is all
// of the time.
func radius(share float64) vg.Length {
	return vg.Points(2 + 20*math.Sqrt(math.Max(share, 0)))
}

func glyphColor(c Ceiling, shape draw.GlyphDrawer) color.Color {
	col := hexColor(ceilingFill[c])
	if _, ring := shape.(draw.RingGlyph); ring {
		return darker(col)
	}
	// color.RGBA is alpha-premultiplied: translucency needs NRGBA.
	return color.NRGBA{R: col.R, G: col.G, B: col.B, A: 0xd0}
}

// outlined draws a filled glyph with a thin dark outline, so pale colours
// stay visible on white.
type outlined struct{ shape draw.GlyphDrawer }

func (o outlined) DrawGlyph(c *draw.Canvas, sty draw.GlyphStyle, pt vg.Point) {
	o.shape.DrawGlyph(c, sty, pt)
	if _, ring := o.shape.(draw.RingGlyph); ring {
		return
	}
	edge := sty
	edge.Color = color.RGBA{0x44, 0x44, 0x44, 0xff}
	c.SetLineWidth(vg.Points(0.5))
	switch o.shape.(type) {
	case draw.PyramidGlyph:
		r := sty.Radius + (sty.Radius-sty.Radius*vg.Length(math.Sin(math.Pi/6)))/2
		var path vg.Path
		path.Move(vg.Point{X: pt.X, Y: pt.Y + r})
		path.Line(vg.Point{X: pt.X - r*vg.Length(math.Cos(math.Pi/6)), Y: pt.Y - r*vg.Length(math.Sin(math.Pi/6))})
		path.Line(vg.Point{X: pt.X + r*vg.Length(math.Cos(math.Pi/6)), Y: pt.Y - r*vg.Length(math.Sin(math.Pi/6))})
		path.Close()
		c.SetColor(edge.Color)
		c.Stroke(path)
	default:
		draw.RingGlyph{}.DrawGlyph(c, edge, pt)
	}
}

func legendGlyph(fill string, shape draw.GlyphDrawer) plot.Thumbnailer {
	s, _ := plotter.NewScatter(plotter.XYs{{X: 1, Y: 1}})
	s.GlyphStyle = draw.GlyphStyle{Color: glyphColor(CeilNone, shape), Radius: vg.Points(4), Shape: outlined{shape}}
	c := hexColor(fill)
	if _, ring := shape.(draw.RingGlyph); ring {
		s.GlyphStyle.Color = darker(c)
	} else {
		s.GlyphStyle.Color = c
	}
	return s
}

// fusionMoves joins each unfused point to the fused point whose node
// lists it in fused_from.
func fusionMoves(fused, unfused []point) []plot.Plotter {
	at := map[string]int{}
	for i, q := range unfused {
		at[q.name] = i
	}
	var out []plot.Plotter
	for _, f := range fused {
		for _, src := range f.node.FusedFrom {
			i, ok := at[src]
			if !ok {
				continue
			}
			u := unfused[i]
			ln := roofLine([]float64{u.x, f.x}, []float64{u.y, f.y}, color.RGBA{0x99, 0x99, 0x99, 0xa0}, false)
			ln.Width = vg.Points(0.6)
			out = append(out, ln)
		}
	}
	return out
}

// topLabels names the n costliest points, placed so that no two names
// overlap (labels.go).
func topLabels(pts []point, n int, boxes *[]vg.Rectangle, ridges []plot.Plotter) plot.Plotter {
	if n <= 0 || len(pts) == 0 {
		return nil
	}
	idx := make([]int, len(pts))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return pts[idx[a]].share > pts[idx[b]].share })
	if len(idx) > n {
		idx = idx[:n]
	}
	l := placedLabels{style: textStyle(7), boxes: boxes}
	for _, r := range ridges {
		if rm, ok := r.(ridgeMarker); ok {
			l.ridges = append(l.ridges, rm)
		}
	}
	for _, q := range pts {
		l.glyphs = append(l.glyphs, glyph{xy: plotter.XY{X: q.x, Y: q.y}, r: radius(q.share)})
	}
	for _, i := range idx {
		q := pts[i]
		l.xys = append(l.xys, plotter.XY{X: q.x, Y: q.y})
		l.texts = append(l.texts, fmt.Sprintf("%s %s", render.Clean(shorten(q.name, 28)), render.Percent(q.share)))
	}
	return l
}

func rooflineTitle(main, other *report.Report, drawn, skipped int, skippedT float64) string {
	plans := main.Plan + " plan"
	if other != nil {
		plans = main.Plan + " (triangles) vs " + other.Plan + " (rings)"
	}
	if main.Runtime != nil {
		plans = "runtime " + main.Runtime.Name + ", " + plans +
			render.PowerSetting(main.Totals.PowerCapW, main.Totals.SMClockCapMHz, ", ") + render.WarmSetting(main.Warm, ", ")
	}
	plans += render.TrainingSetting(main.Totals.Train.Setting(), ", ")
	t := fmt.Sprintf("%s on %s, dtype %s: %s, %s total", render.Clean(baseName(main.Model)), render.Clean(main.GPU),
		render.Clean(main.DType), render.Clean(plans), render.Seconds(main.Totals.TimeS))
	note := fmt.Sprintf("%d nodes drawn (area = share of time)", drawn)
	if skipped > 0 {
		share := 0.0
		if main.Totals.TimeS > 0 {
			share = skippedT / main.Totals.TimeS
		}
		note += fmt.Sprintf("; %d with zero FLOPs or zero bytes not drawn (%s of time)", skipped, render.Percent(share))
	}
	return t + "\n" + note
}

// decadeTicks marks powers of ten with SI labels ("10 T").
type decadeTicks struct{ unit string }

func (d decadeTicks) Ticks(min, max float64) []plot.Tick {
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(min)); e <= math.Ceil(math.Log10(max)); e++ {
		v := math.Pow(10, e)
		if v >= min*0.999 && v <= max*1.001 {
			ticks = append(ticks, plot.Tick{Value: v, Label: siLabel(v)})
		}
		for m := 2.0; m < 10; m++ {
			if mv := m * v; mv > min && mv < max {
				ticks = append(ticks, plot.Tick{Value: mv})
			}
		}
	}
	return ticks
}

// siLabel writes a power of ten as 1, 10, 100, 1 k, 10 k, ... 100 T.
func siLabel(v float64) string {
	e := int(math.Round(math.Log10(v)))
	if e < 0 {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	prefixes := []string{"", " k", " M", " G", " T", " P", " E"}
	k := min(e/3, len(prefixes)-1)
	return strconv.Itoa(int(math.Pow10(e-3*k))) + prefixes[k]
}

func decadeFloor(v float64) float64 { return math.Pow(10, math.Floor(math.Log10(v))) }
func decadeCeil(v float64) float64  { return math.Pow(10, math.Ceil(math.Log10(v))) }

func mergeSorted(a, b []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range append(append([]string{}, a...), b...) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

func textStyle(size float64) draw.TextStyle {
	s := draw.TextStyle{Color: color.Black, Font: plot.DefaultFont, Handler: plot.DefaultTextHandler}
	s.Font.Size = vg.Points(size)
	return s
}

func hexColor(h string) color.RGBA {
	var r, g, b uint8
	fmt.Sscanf(strings.TrimPrefix(h, "#"), "%02x%02x%02x", &r, &g, &b)
	return color.RGBA{R: r, G: g, B: b, A: 0xff}
}

func darker(c color.RGBA) color.RGBA {
	return color.RGBA{R: c.R / 2, G: c.G / 2, B: c.B / 2, A: 0xff}
}

// savePlot writes the chart. SVG embeds its fonts so that it renders the
// same everywhere (and is byte-identical across runs).
func savePlot(p *plot.Plot, w, h vg.Length, format string) ([]byte, error) {
	var buf bytes.Buffer
	switch format {
	case "svg":
		c := vgsvg.NewWith(vgsvg.UseWH(w, h), vgsvg.EmbedFonts(true))
		p.Draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, err
		}
	case "png":
		c := vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150), vgimg.UseBackgroundColor(color.White))}
		p.Draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, err
		}
	case "pdf":
		c := vgpdf.New(w, h)
		p.Draw(draw.New(c))
		if _, err := c.WriteTo(&buf); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("roofline: format %q: want svg, png or pdf", format)
	}
	return buf.Bytes(), nil
}
