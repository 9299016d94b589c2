package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/viz"
)

// bindingText writes bindings sorted by name: "batch=8 seq=128".

func fitsText(fits bool) string {
	if fits {
		return "yes"
	}
	return "NO"
}

func writeSweepText(w io.Writer, res *sweepJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · sweep %s · dtype %s · plan %s", version, render.Clean(res.Model), res.DType, res.Plan)
	if len(res.Swept) > 0 {
		fmt.Fprintf(&b, " · swept %s", strings.Join(res.Swept, ", "))
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	hasParams := false
	for _, r := range res.Rows {
		hasParams = hasParams || len(r.Params) > 0
	}
	models := sweptModels(res)
	head := "gpu\tbatch\t"
	if len(models) > 0 {
		head = "model\t" + head
	}
	if hasParams {
		head += "params\t"
	}
	fmt.Fprintln(tw, head+"bindings\tlatency\tthroughput/s\tpeak memory\tfits\t")
	for _, r := range res.Rows {
		line := render.Clean(r.GPU) + "\t" + strconv.FormatInt(r.Batch, 10) + "\t"
		if len(models) > 0 {
			line = render.Clean(r.Model) + "\t" + line
		}
		if hasParams {
			line += bindingText(r.Params) + "\t"
		}
		line += dash(bindingText(r.Bindings)) + "\t" + render.Seconds(r.TimeS) + "\t" + strconv.FormatFloat(r.ThroughputPerS, 'f', 1, 64) +
			"\t" + render.Bytes(r.PeakMemoryBytes) + "\t" + fitsText(r.Fits) + "\t"
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	b.WriteString("\n")
	keys := []string{""}
	if len(models) > 0 {
		keys = models
	}
	for _, m := range keys {
		for _, g := range res.GPUs {
			key := g.Name
			if m != "" {
				key = m + " on " + g.Name
			}
			writeGPUSummary(&b, res, key, g)
		}
	}
	for _, ft := range res.Fit {
		fmt.Fprintf(&b, "\nfit (%s, %s) of cost against %s:\n", ft.Degree, render.Clean(ft.GPU), ft.X)
		for _, t := range []struct {
			name string
			t    fitTerms
		}{{"time_s", ft.TimeS}, {"flops", ft.FLOPs}, {"gemm_flops", ft.GEMMFLOPs}} {
			fmt.Fprintf(&b, "  %-10s = %.6g + %.6g·%s", t.name, t.t.Baseline, t.t.Slope, ft.X)
			if t.t.Quadratic != nil {
				fmt.Fprintf(&b, " + %.6g·%s²", *t.t.Quadratic, ft.X)
			}
			fmt.Fprintf(&b, "   (R² %.6f, max residual %.2g%%)\n", t.t.R2, 100*t.t.MaxRelResidual)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeSweepCSV(w io.Writer, res *sweepJSON) error {
	cw := csv.NewWriter(w)
	head := []string{"gpu", "batch", "params", "bindings", "time_s", "throughput_per_s", "peak_memory_bytes", "fits", "flops", "gemm_flops"}
	multi := len(sweptModels(res)) > 0
	if multi {
		head = append([]string{"model"}, head...)
	}
	cw.Write(head)
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, r := range res.Rows {
		var lead []string
		if multi {
			lead = []string{r.Model}
		}
		cw.Write(append(lead, r.GPU, strconv.FormatInt(r.Batch, 10), bindingText(r.Params), bindingText(r.Bindings), g(r.TimeS),
			g(r.ThroughputPerS), g(r.PeakMemoryBytes), strconv.FormatBool(r.Fits), g(r.FLOPs), g(r.GEMMFLOPs)))
	}
	cw.Flush()
	return cw.Error()
}

// writeSweepChart draws throughput against batch (or time against the
// swept dimension when that is not batch): one line per GPU and
// combination of the other swept values.
func writeSweepChart(path string, res *sweepJSON, metric string) error {
	format, err := outFormat(path, "svg", "png", "pdf")
	if err != nil {
		return err
	}
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
	var series []viz.SweepSeries
	index := map[string]int{}
	for _, r := range res.Rows {
		label := r.GPU
		if r.Model != "" {
			label = baseNameOf(r.Model) + " · " + label
		}
		if pl := pointLabel(r, res.Swept[:max(0, len(res.Swept)-1)]); pl != "" {
			label += " " + pl
		}
		k, ok := index[label]
		if !ok {
			k = len(series)
			index[label] = k
			s := viz.SweepSeries{Label: label}
			key := r.GPU
			if r.Model != "" {
				key = r.Model + " on " + r.GPU
			}
			if mb := res.MaxBatch[key]; byBatch && mb != nil {
				s.MaxX = float64(*mb)
			}
			series = append(series, s)
		}
		s := &series[k]
		s.X = append(s.X, r.x)
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
	title := baseNameOf(res.Model)
	if ms := sweptModels(res); len(ms) > 0 {
		names := make([]string, len(ms))
		for i, m := range ms {
			names[i] = baseNameOf(m)
		}
		title = strings.Join(names, ", ")
	}
	o := viz.SweepOptions{
		Title:  fmt.Sprintf("%s, dtype %s, plan %s", title, res.DType, res.Plan),
		XLabel: xName,
		YLabel: "throughput (items/s)",
	}
	switch metric {
	case "time":
		o.YLabel, o.LogY = "estimated time per batch", true
	case "memory":
		// The peak the sweep reports: with --train the step's nvidia-smi view.
		o.YLabel = "estimated peak memory (GB)"
	}
	img, err := viz.SweepChart(series, o, format)
	if err != nil {
		return usageErr("%s: %v", path, err)
	}
	return writeOut(path, img)
}

// baseNameOf shortens a model path for a title; zoo paths stay whole.
func baseNameOf(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 && !strings.HasPrefix(p, "zoo:") {
		return p[i+1:]
	}
	return p
}

// sweptModels lists the models of a several-model sweep in row order;
// nil for one model.
func sweptModels(res *sweepJSON) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range res.Rows {
		if r.Model != "" && !seen[r.Model] {
			seen[r.Model] = true
			out = append(out, r.Model)
		}
	}
	return out
}

// rowsOf are the rows of key, as res.Knee keys them ("GPU", or "MODEL
// on GPU" in a several-model sweep).
func rowsOf(res *sweepJSON, key string) []sweepRow {
	var out []sweepRow
	for _, r := range res.Rows {
		k := r.GPU
		if r.Model != "" {
			k = r.Model + " on " + r.GPU
		}
		if k == key {
			out = append(out, r)
		}
	}
	return out
}

// writeGPUSummary writes one GPU's (or one model's on one GPU's) knee and
// largest fitting batch, keyed as res.Knee and res.MaxBatch are.
func writeGPUSummary(b *strings.Builder, res *sweepJSON, key string, g sweepGPU) {
	fmt.Fprintf(b, "%s (%s):", render.Clean(key), render.Bytes(g.MemoryBytes))
	switch k := res.Knee[key]; {
	case k != nil:
		fmt.Fprintf(b, " knee at batch %d (90%% of the best throughput)", *k)
	case !batchSwept(rowsOf(res, key)):
		b.WriteString(" no knee: batch not swept")
	default:
		b.WriteString(" no knee (no row fits)")
	}
	if mb, asked := res.MaxBatch[key]; asked {
		if mb != nil {
			fmt.Fprintf(b, "; largest batch that fits: %d", *mb)
		} else {
			b.WriteString("; batch 1 does not fit")
		}
	}
	b.WriteString("\n")
}
