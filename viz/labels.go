//go:build !js

package viz

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// placedLabels names points without letting two names overlap: nodes
// that share an intensity (AlexNet's conv3–5) would otherwise print on
// top of each other. Labels are placed in order (the costliest first),
// each at the first candidate position around its point whose box meets
// no box placed before it and stays inside the plot; a label pushed away
// from its point gets a thin leader line.
type placedLabels struct {
	xys   []plotter.XY
	texts []string
	style draw.TextStyle
	// glyphs are the drawn points (centre and radius in data and canvas
	// units): labels keep off them where there is room.
	glyphs []glyph
	// ridges are the ridge marks, whose labels are obstacles too.
	ridges []ridgeMarker
	// boxes receives the boxes of the last drawing, in label order, for
	// tests.
	boxes *[]vg.Rectangle
}

func (l placedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	tx, ty := p.Transforms(&c)
	anchors := make([]vg.Point, len(l.xys))
	sizes := make([]vg.Point, len(l.xys))
	for i, xy := range l.xys {
		anchors[i] = vg.Point{X: tx(xy.X), Y: ty(xy.Y)}
		sizes[i] = vg.Point{X: l.style.Width(l.texts[i]), Y: l.style.Height(l.texts[i])}
	}
	var obstacles []vg.Rectangle
	for _, g := range l.glyphs {
		x, y := tx(g.xy.X), ty(g.xy.Y)
		obstacles = append(obstacles, vg.Rectangle{Min: vg.Point{X: x - g.r, Y: y - g.r}, Max: vg.Point{X: x + g.r, Y: y + g.r}})
	}
	for _, r := range l.ridges {
		obstacles = append(obstacles, r.box(vg.Point{X: tx(r.x), Y: ty(r.y)}))
	}
	boxes := placeLabels(anchors, sizes, obstacles, c.Rectangle, vg.Points(5))
	if l.boxes != nil {
		*l.boxes = boxes
	}
	st := l.style
	st.XAlign, st.YAlign = draw.XLeft, draw.YBottom
	for i, b := range boxes {
		a := anchors[i]
		if !near(a, b, vg.Points(9)) {
			c.SetColor(color.Gray{Y: 0x88})
			c.SetLineWidth(vg.Points(0.4))
			c.SetLineDash(nil, 0)
			var path vg.Path
			path.Move(a)
			path.Line(closestPoint(b, a))
			c.Stroke(path)
		}
		c.FillText(st, b.Min, l.texts[i])
	}
}

// glyph is a drawn point for placedLabels to avoid.
type glyph struct {
	xy plotter.XY
	r  vg.Length
}

// placeLabels returns one box per label (anchor point, width×height),
// pairwise disjoint when the area has room: candidates are tried at
// growing distances from the anchor, right first (the reading direction),
// then left, above and below. A first pass also keeps off the obstacles
// (the drawn points); a label with no such room anywhere is placed by a
// second pass that ignores them (labels still never meet each other).
func placeLabels(anchors, sizes []vg.Point, obstacles []vg.Rectangle, area vg.Rectangle, gap vg.Length) []vg.Rectangle {
	var placed []vg.Rectangle
	for i, a := range anchors {
		w, h := sizes[i].X, sizes[i].Y
		var best vg.Rectangle
		found := false
		for pass := 0; pass < 2 && !found; pass++ {
			for ring := 0; ring < 40 && !found; ring++ {
				d := gap + vg.Length(ring)*h*0.9
				for _, off := range []vg.Point{
					{X: d, Y: 0}, {X: d, Y: -h}, {X: -d - w, Y: 0}, {X: -d - w, Y: -h},
					{X: gap, Y: d}, {X: gap, Y: -d - h}, {X: -w - gap, Y: d}, {X: -w - gap, Y: -d - h},
				} {
					r := vg.Rectangle{Min: vg.Point{X: a.X + off.X, Y: a.Y + off.Y}}
					r.Max = vg.Point{X: r.Min.X + w, Y: r.Min.Y + h}
					if !inside(r, area) || overlapsAny(r, placed) || pass == 0 && overlapsAny(r, obstacles) {
						continue
					}
					best, found = r, true
					break
				}
			}
		}
		if !found {
			// No room anywhere near: stack it below the lowest box placed,
			// still disjoint, at the left edge.
			y := area.Max.Y - h
			for _, p := range placed {
				if p.Min.Y-h-1 < y {
					y = p.Min.Y - h - 1
				}
			}
			best = vg.Rectangle{Min: vg.Point{X: area.Min.X, Y: y}, Max: vg.Point{X: area.Min.X + w, Y: y + h}}
		}
		placed = append(placed, best)
	}
	return placed
}

func inside(r, area vg.Rectangle) bool {
	return r.Min.X >= area.Min.X && r.Min.Y >= area.Min.Y && r.Max.X <= area.Max.X && r.Max.Y <= area.Max.Y
}

func overlaps(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func overlapsAny(r vg.Rectangle, rs []vg.Rectangle) bool {
	for _, q := range rs {
		if overlaps(r, q) {
			return true
		}
	}
	return false
}

// closestPoint is the point of r nearest to p (for leader lines).
func closestPoint(r vg.Rectangle, p vg.Point) vg.Point {
	clamp := func(v, lo, hi vg.Length) vg.Length { return max(lo, min(v, hi)) }
	return vg.Point{X: clamp(p.X, r.Min.X, r.Max.X), Y: clamp(p.Y, r.Min.Y, r.Max.Y)}
}

// near reports whether r is within d of p.
func near(p vg.Point, r vg.Rectangle, d vg.Length) bool {
	q := closestPoint(r, p)
	dx, dy := q.X-p.X, q.Y-p.Y
	return dx*dx+dy*dy <= d*d
}
