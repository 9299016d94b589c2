package viz

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"html/template"
	"io"
	"sort"
	"sync"
	"time"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

//go:embed report.html.tmpl
var reportTemplate string

// reportTmpl is parsed on first use, not at start-up: parsing took
// 0.8 ms of every command's start (GODEBUG=inittrace=1), and only `html`
// writes a page.
var reportTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("report").Parse(reportTemplate))
})

// HTMLInput is what the HTML report shows.
type HTMLInput struct {
	Report *report.Report
	Ceil   Ceilings
	// GraphSVG is the rendered graph (nil: GraphNote says why, and the
	// DOT is embedded to render elsewhere).
	GraphSVG  []byte
	GraphDOT  string
	GraphNote string
	// RooflineSVG is the roofline chart.
	RooflineSVG []byte
	// MaxRows keeps the table's N costliest rows (0: all); the heading
	// counts the rest.
	MaxRows int
}

// htmlRow is one line of the per-node table; sort keys are raw numbers.
type htmlRow struct {
	ID, Name, Op, Bound, Shape, Fused     string
	Note                                  string // the node's note, a tooltip on its name
	Time, Share, FLOPs, Bytes, AI, Launch string
	TimeV, ShareV, FLOPsV, BytesV, AIV    float64
	Fill                                  string
}

// HTML writes one self-contained page (no network fetches): the summary,
// a sortable per-node table, the graph SVG and the roofline SVG. Model
// strings are escaped by html/template; the SVGs are our own output
// (Graphviz and gonum escape the text they carry).
func HTML(w io.Writer, in HTMLInput) error {
	r := in.Report
	total := r.Totals.TimeS
	rows := make([]htmlRow, 0, len(r.Nodes))
	for i := range r.Nodes {
		n := &r.Nodes[i]
		share := 0.0
		if total > 0 {
			share = n.TimeS / total
		}
		ce := ceilingOf(n)
		shape := ""
		if len(n.Outputs) > 0 {
			shape = tensorText(n.Outputs[0])
		}
		fused := render.Clean(listText(n.FusedFrom))
		rows = append(rows, htmlRow{
			ID: "node:" + sanitizeID(n.Name), Name: render.Clean(n.Name), Op: render.Clean(opText(n)),
			Bound: string(ce), Shape: shape, Fused: fused, Note: render.Clean(n.Note),
			Time: render.Seconds(n.TimeS), Share: render.Percent(share), FLOPs: render.FLOPs(n.FLOPs),
			Bytes: render.Bytes(n.BytesRead + n.BytesWritten), AI: aiText(n.ArithmeticIntensity),
			Launch: render.Seconds(n.LaunchS),
			TimeV:  n.TimeS, ShareV: share, FLOPsV: n.FLOPs, BytesV: n.BytesRead + n.BytesWritten, AIV: n.ArithmeticIntensity,
			Fill: ceilingFill[ce],
		})
	}
	// Costliest first, as a reader looks for them; the table re-sorts.
	sort.SliceStable(rows, func(a, b int) bool { return rows[a].TimeV > rows[b].TimeV })
	omitted := 0
	if in.MaxRows > 0 && len(rows) > in.MaxRows {
		omitted, rows = len(rows)-in.MaxRows, rows[:in.MaxRows]
	}
	t := r.Totals
	notes, moreNotes := render.NodeNoteLines(r)
	moreLine := ""
	if moreNotes > 0 {
		moreLine = render.MoreNotes(moreNotes)
	}
	data := map[string]any{
		"Notes": notes, "MoreNotes": moreLine,
		"Model": render.Clean(baseName(r.Model)), "Path": render.Clean(r.Model),
		"GPU": render.Clean(r.GPU), "Plan": render.Clean(planText(r)), "DType": render.Clean(r.DType),
		"Tool": render.Clean(r.ToolVersion), "CostModel": render.Clean(r.CostModelVersion),
		"Time": render.Seconds(t.TimeS), "FLOPs": render.FLOPs(t.FLOPs), "MACs": render.Count(t.MACs),
		"Bytes":    render.Bytes(t.BytesRead + t.BytesWritten),
		"Params":   render.ParamsCount(t),
		"Launches": render.Count(t.Launches), "Energy": render.EnergyText(t),
		"Peak": render.Bytes(t.PeakMemoryBytes), "GEMMShare": render.Percent(t.GEMMConvTimeShare),
		"Nodes": len(r.Nodes), "Rows": rows, "Omitted": omitted, "Warnings": cleanAll(r.Warnings),
		"Roofs":    (&drawer{r: r, c: in.Ceil}).ceilingText(),
		"GraphSVG": template.HTML(stripProlog(in.GraphSVG)), "GraphNote": in.GraphNote, "GraphDOT": in.GraphDOT,
		"RooflineSVG": template.HTML(stripProlog(in.RooflineSVG)),
		"Bounds":      boundLegend(),
		"Fits":        t.Fits || t.MemoryLimitBytes <= 0,
		"FitLine":     render.Clean(render.FitLine(r)),
		"Interval":    render.Clean(render.IntervalText(r)),
	}
	return reportTmpl().Execute(w, data)
}

func cleanAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = render.Clean(s)
	}
	return out
}

type boundKey struct{ Name, Fill string }

func boundLegend() []boundKey {
	var out []boundKey
	for _, c := range ceilingOrder {
		out = append(out, boundKey{string(c), ceilingFill[c]})
	}
	return out
}

// stripProlog drops the XML declaration and DOCTYPE before <svg, which
// are not allowed inside HTML (and name a DTD URL nobody should fetch).
func stripProlog(svg []byte) []byte {
	if i := bytes.Index(svg, []byte("<svg")); i > 0 {
		return svg[i:]
	}
	return svg
}

// SetGraph puts the graph drawn from dot on the page: the SVG when the
// system Graphviz renders it within timeout, else the DOT source with a
// note saying why it is not drawn.
func (in *HTMLInput) SetGraph(ctx context.Context, dot string, timeout time.Duration) {
	svg, err := Render(ctx, dot, "svg", timeout)
	switch {
	case errors.Is(err, ErrNoDot):
		in.GraphNote = "Graphviz 'dot' is not on PATH: the graph is not drawn. Render the DOT below with: dot -Tsvg graph.dot -o graph.svg"
		in.GraphDOT = dot
	case err != nil:
		in.GraphNote = err.Error()
		in.GraphDOT = dot
	default:
		in.GraphSVG = svg
	}
}
