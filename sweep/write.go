package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
)

// WriteText writes the sweep as `onnxcost sweep` prints it: a table of
// rows, each GPU's knee and largest fitting batch, and the fits.
func WriteText(w io.Writer, res *Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · sweep %s · dtype %s · runtime %s%s", res.ToolVersion, render.Clean(res.Model), res.DType, render.RuntimeKernels(res.Runtime, res.Plan, res.Warm),
		render.PowerSetting(res.PowerCapW, res.SMClockMHz, " · ")+render.TrainingSetting(res.Train, " · "))
	if len(res.Swept) > 0 {
		fmt.Fprintf(&b, " · swept %s", strings.Join(res.Swept, ", "))
	}
	if res.Calibration != "" {
		fmt.Fprintf(&b, "\n%s", res.Calibration)
	}
	b.WriteString("\n\n")
	writeRows(&b, res)
	b.WriteString("\n")
	keys := []string{""}
	if models := res.Models(); len(models) > 0 {
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
			t    FitTerms
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

// writeRows writes the table of rows; the model and params columns
// appear only when some row has them.
func writeRows(b *strings.Builder, res *Result) {
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', tabwriter.AlignRight)
	hasParams := false
	for _, r := range res.Rows {
		hasParams = hasParams || len(r.Params) > 0
	}
	multi := len(res.Models()) > 0
	head := "gpu\tbatch\t"
	if multi {
		head = "model\t" + head
	}
	if hasParams {
		head += "params\t"
	}
	fmt.Fprintln(tw, head+"bindings\tlatency\t80% interval\tthroughput/s\tpeak memory\tfits\t")
	carried := false
	for _, r := range res.Rows {
		line := render.Clean(r.GPU) + "\t" + strconv.FormatInt(r.Batch, 10) + "\t"
		if multi {
			line = render.Clean(r.Model) + "\t" + line
		}
		if hasParams {
			line += BindingText(r.Params) + "\t"
		}
		iv, star := markedInterval(r.TimeIntervalS, r.IntervalBasis)
		carried = carried || star
		line += BindingText(r.Bindings) + "\t" + render.Seconds(r.TimeS) + "\t" + iv + "\t" + strconv.FormatFloat(r.ThroughputPerS, 'f', 1, 64) +
			"\t" + render.Bytes(r.PeakMemoryBytes) + "\t" + FitsText(r.Fits) + "\t"
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if carried {
		b.WriteString(carriedFootnote)
	}
}

// writeGPUSummary writes one GPU's (or one model's on one GPU's) knee and
// largest fitting batch, keyed as res.Knee and res.MaxBatch are.
func writeGPUSummary(b *strings.Builder, res *Result, key string, g GPU) {
	fmt.Fprintf(b, "%s (%s):", render.Clean(key), render.Bytes(g.MemoryBytes))
	switch k := res.Knee[key]; {
	case k != nil:
		fmt.Fprintf(b, " knee at batch %d (90%% of the best throughput)", *k)
	case !batchSwept(res.RowsOf(key)):
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

// WriteCSV writes one line per row, as `onnxcost sweep --format csv`.
func WriteCSV(w io.Writer, res *Result) error {
	cw := csv.NewWriter(w)
	head := []string{"gpu", "batch", "params", "bindings", "time_s", "throughput_per_s", "peak_memory_bytes", "fits", "flops", "gemm_flops",
		"time_interval_low_s", "time_interval_high_s"}
	multi := len(res.Models()) > 0
	if multi {
		head = append([]string{"model"}, head...)
	}
	cw.Write(head)
	for _, r := range res.Rows {
		var lead []string
		if multi {
			lead = []string{r.Model}
		}
		lo, hi := intervalCSV(r.TimeIntervalS)
		cw.Write(append(lead, r.GPU, strconv.FormatInt(r.Batch, 10), BindingText(r.Params), BindingText(r.Bindings), g(r.TimeS),
			g(r.ThroughputPerS), g(r.PeakMemoryBytes), strconv.FormatBool(r.Fits), g(r.FLOPs), g(r.GEMMFLOPs), lo, hi))
	}
	cw.Flush()
	return cw.Error()
}

// IntervalText is an interval column: "lo – hi", or "-" for none.
func IntervalText(iv []float64) string {
	if len(iv) != 2 {
		return "-"
	}
	return render.Seconds(iv[0]) + " – " + render.Seconds(iv[1])
}

// intervalCSV is an interval's two CSV cells, empty for none.
func intervalCSV(iv []float64) (lo, hi string) {
	if len(iv) != 2 {
		return "", ""
	}
	return g(iv[0]), g(iv[1])
}

// g formats a CSV number (render.CSVNumber: one notation per column).
func g(v float64) string { return render.CSVNumber(v) }

// FitsText is a fits column: "yes", or a "NO" that stands out.
func FitsText(fits bool) string {
	if fits {
		return "yes"
	}
	return "NO"
}

// BindingText writes bindings sorted by name ("batch=8 seq=128"), or
// "none".
func BindingText(b map[string]int64) string {
	if len(b) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + strconv.FormatInt(b[k], 10)
	}
	return strings.Join(parts, " ")
}

// PointLabel names a row's point by its values of the swept dims other
// than batch, sorted ("hidden=256 seq=64").
func PointLabel(r Row, swept []string) string {
	var parts []string
	for _, k := range swept {
		if k == "batch" {
			continue
		}
		if v, ok := r.Params[k]; ok {
			parts = append(parts, k+"="+strconv.FormatInt(v, 10))
		} else if v, ok := r.Bindings[k]; ok {
			parts = append(parts, k+"="+strconv.FormatInt(v, 10))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}
