package viz

import (
	"fmt"
	"strings"

	"github.com/emicklei/dot"
	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
)

// legend draws one plaintext box with the title, the colour key, the halo
// key, the GPU's ceilings and what was hidden or folded.
func (d *drawer) legend() {
	r := d.r
	var b strings.Builder
	b.WriteString(`<table border="1" cellborder="0" cellspacing="2" cellpadding="2" color="#999999" bgcolor="#ffffff">`)
	title := fmt.Sprintf("<b>%s</b>", esc(shorten(baseName(r.Model), 48)))
	b.WriteString(`<tr><td colspan="9" align="left">` + title + `</td></tr>`)
	sub := fmt.Sprintf("%s · %s · dtype %s · total %s · %d nodes",
		r.GPU, planText(r), r.DType, render.Seconds(d.l.total), len(r.Nodes))
	b.WriteString(`<tr><td colspan="9" align="left">` + small(esc(sub)) + `</td></tr>`)

	// Colour key.
	b.WriteString("<tr>")
	switch d.o.Color {
	case "time":
		b.WriteString(`<td align="left">` + small("time share:") + `</td>`)
		for k, c := range heatRamp {
			lbl := "≥" + render.Percent(heatBinLow(k)*d.maxShare)
			if k == 0 {
				lbl = "0"
			}
			b.WriteString(fmt.Sprintf(`<td bgcolor="%s">%s</td>`, c, small(fontFor(c, esc(lbl)))))
		}
	case "op":
		for _, f := range familyList {
			if d.families[f.name] {
				b.WriteString(fmt.Sprintf(`<td bgcolor="%s">%s</td>`, f.fill, small(f.name)))
			}
		}
	default:
		b.WriteString(`<td align="left">` + small("bound:") + `</td>`)
		for _, c := range ceilingOrder {
			b.WriteString(fmt.Sprintf(`<td bgcolor="%s">%s</td>`, ceilingFill[c], small(string(c))))
		}
	}
	b.WriteString("</tr>")

	var lines []string
	if d.o.Halo > 0 {
		lines = append(lines, fmt.Sprintf("gold outline: the %d costliest boxes; a stacked list: the nodes a fusion merged", d.o.Halo))
	}
	if roofs := d.ceilingText(); roofs != "" {
		lines = append(lines, roofs)
	}
	if d.l.hidden > 0 {
		lines = append(lines, fmt.Sprintf("%s with no kernel (constants, views, folded shape ops) hidden; edges pass through them", plural(d.l.hidden, "node")))
	}
	if d.l.folded > 0 {
		lines = append(lines, fmt.Sprintf("%s folded into dashed boxes", plural(d.l.folded, "node")))
	}
	if d.o.Focus != nil {
		lines = append(lines, "focus: "+render.Clean(d.o.Focus.String()))
	}
	if d.o.Collapse > 0 {
		lines = append(lines, fmt.Sprintf("scopes collapsed to depth %d (3-D boxes)", d.o.Collapse))
	}
	lines = append(lines, d.l.notes...)
	for _, ln := range lines {
		b.WriteString(`<tr><td colspan="9" align="left">` + small(esc(ln)) + `</td></tr>`)
	}
	b.WriteString("</table>")
	n := d.g.Node("legend")
	n.Attrs("id", "legend", "label", dot.HTML(b.String()), "shape", "plaintext", "fontname", "Helvetica",
		"fontsize", "10", "tooltip", "legend")
}

// ceilingText lists the roofs: the peaks of the precisions the nodes use,
// then HBM and L2 bandwidth.
func (d *drawer) ceilingText() string {
	if d.c.GPU == nil {
		return ""
	}
	var parts []string
	for _, p := range usedPrecisions(d.r.Nodes) {
		if pk := d.c.Peak(p); pk > 0 {
			parts = append(parts, fmt.Sprintf("%s %s", p, flopsRate(pk)))
		}
	}
	if d.c.HBMBW > 0 {
		parts = append(parts, "HBM "+render.Bytes(d.c.HBMBW)+"/s")
	}
	if d.c.L2BW > 0 {
		l2 := "L2 " + render.Bytes(d.c.L2BW) + "/s"
		if d.c.L2Assumed {
			l2 += " (assumed)"
		}
		parts = append(parts, l2)
	}
	if len(parts) == 0 {
		return ""
	}
	return "roofs: " + strings.Join(parts, " · ")
}

// baseName is the file name of a model path.
func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 && i < len(p)-1 {
		return p[i+1:]
	}
	return p
}

func fontFor(fill, s string) string {
	if darkFill(fill) {
		return `<font color="white">` + s + `</font>`
	}
	return s
}

// plural is "1 node", "2 nodes".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// planText names what a drawing's times are for (render.PricedText).
func planText(r *report.Report) string {
	return render.PricedText(r, " · ")
}
