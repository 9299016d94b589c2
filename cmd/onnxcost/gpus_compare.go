package main

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"
)

// compareGPUsJSON is `gpus compare --format json`.
type compareGPUsJSON struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Model         string `json:"model"`
	DType         string `json:"dtype"`
	Plan          string `json:"plan"`
	Batch         int64  `json:"batch"`
	// GPUs is the tensor-parallel degree (--gpus) when above 1: each row
	// is then a group of that many GPUs of its kind, and energy and cost
	// count all of them.
	GPUs     int             `json:"gpus,omitempty"`
	Rows     []compareGPURow `json:"rows"`
	Warnings []string        `json:"warnings"`
}

// compareGPURow is one GPU. Prices are the user's (no price ships with
// onnxcost: they change by the month and by the seller).
type compareGPURow struct {
	GPU              string  `json:"gpu"`
	TimeS            float64 `json:"time_s"`
	ThroughputPerS   float64 `json:"throughput_per_s"`
	EnergyJ          float64 `json:"energy_j"`
	EnergyPerItemJ   float64 `json:"energy_per_item_j"`
	PeakMemoryBytes  float64 `json:"peak_memory_bytes"`
	MemoryLimitBytes float64 `json:"memory_limit_bytes"`
	Fits             bool    `json:"fits"`
	// USDPerHour is the price given; USDPerMillion is the cost of a
	// million items at the estimated throughput, busy all the time.
	USDPerHour    *float64 `json:"usd_per_hour,omitempty"`
	USDPerMillion *float64 `json:"usd_per_million,omitempty"`
}

func newGPUsCompareCmd(stdout, stderr io.Writer) *cobra.Command {
	var f sweepFlags
	var batch int64
	var prices []string
	var pricesFile string
	c := &cobra.Command{
		Use:   "compare MODEL --gpu all|A,B,... [--batch N] [--price GPU=USD_PER_HOUR] [--prices FILE]",
		Short: "One model on several GPUs: time, throughput, energy, memory fit, cost per million",
		Long: `compare costs one model at one batch on every GPU given (all: the whole
database) and prints, per GPU, the time of one batch, throughput (items/s),
energy per batch and per item, peak memory and whether it fits, and, when
prices are given, the cost of a million items at that throughput.

Without --batch, per-item figures use the model's own batch (a zoo
model's batch parameter, the bound batch symbol, or a static export's
batch dim). With --gpus N each row is N GPUs of its kind in tensor
parallel: time and memory are one GPU's, energy and cost the group's.

Prices are yours: --price GPU=USD_PER_HOUR (repeatable) or --prices FILE, a
YAML or JSON mapping of GPU name to USD per hour. No price ships with
onnxcost.

  onnxcost gpus compare zoo:resnet50 --gpu T4,L4,A10 --batch 32 --price T4=0.35 --price L4=0.70`,
		Args: exactArgs(1, "MODEL"),
		RunE: func(c *cobra.Command, args []string) error {
			f.dumpTo = stderr
			if batch < 0 {
				return usageErr("--batch must be positive, got %d", batch)
			}
			if batch > 0 {
				f.batch = strconv.FormatInt(batch, 10)
			}
			if err := checkFormat(f.format, "text", "json", "csv"); err != nil {
				return err
			}
			if strings.EqualFold(strings.TrimSpace(f.gpus), "all") {
				db, err := gpuDB(f.gpuFile)
				if err != nil {
					return err
				}
				var names []string
				for _, g := range db.All() {
					names = append(names, g.Name)
				}
				f.gpus = strings.Join(names, ",")
			}
			price, err := readPrices(prices, pricesFile, f.gpuFile)
			if err != nil {
				return err
			}
			format := f.format
			f.format = "json"
			res, err := runSweep(args[0], &f, stderr)
			if err != nil {
				return err
			}
			out := &compareGPUsJSON{SchemaVersion: 1, ToolVersion: version, Model: res.Model, DType: res.DType, Plan: res.Plan, Warnings: res.Warnings}
			// A report under --gpus N is one GPU's energy while the N
			// run in lockstep on the same items: the group's energy and
			// hourly price are N times one GPU's.
			n := max(int(f.shared.gpus), 1)
			if n > 1 {
				out.GPUs = n
			}
			for i, r := range res.Rows {
				out.Batch = r.Batch
				energy := r.energyJ * float64(n)
				row := compareGPURow{GPU: r.GPU, TimeS: r.TimeS, ThroughputPerS: r.ThroughputPerS, PeakMemoryBytes: r.PeakMemoryBytes,
					MemoryLimitBytes: res.GPUs[i].MemoryBytes, Fits: r.Fits, EnergyJ: energy, EnergyPerItemJ: energy / float64(r.Batch)}
				if p, ok := price[r.GPU]; ok {
					p := p
					row.USDPerHour = &p
					if r.ThroughputPerS > 0 {
						m := float64(n) * p / 3600 / r.ThroughputPerS * 1e6
						row.USDPerMillion = &m
					}
					delete(price, r.GPU)
				}
				out.Rows = append(out.Rows, row)
			}
			if len(price) > 0 {
				var left []string
				for k := range price {
					left = append(left, k)
				}
				sort.Strings(left)
				return usageErr("--price: %s not among the GPUs compared", strings.Join(left, ", "))
			}
			printWarnings(stderr, out.Warnings)
			return writeAs(stdout, format, out, writeCompareGPUsCSV, writeCompareGPUsText)
		},
	}
	c.Flags().StringVar(&f.gpus, "gpu", "", "GPUs to compare: all, or names comma-separated; required")
	f.addCostFlags(c)
	c.Flags().Int64Var(&batch, "batch", 0, "bind the leading symbolic dim of every graph input to `N`")
	c.Flags().StringArrayVar(&f.dims, "dim", nil, "bind a symbolic dim: `NAME=VALUE` (repeatable)")
	c.Flags().StringArrayVar(&prices, "price", nil, "price of a GPU: `GPU=USD_PER_HOUR` (repeatable)")
	c.Flags().StringVar(&pricesFile, "prices", "", "YAML or JSON `FILE` mapping GPU names to USD per hour")
	c.Flags().StringVar(&f.format, "format", "text", "output format: text|json|csv")
	f.passFlags.add(c)
	return c
}

// readPrices reads --price flags and a --prices file into canonical GPU
// names (aliases accepted); a flag overrides the file.
func readPrices(flags []string, file, gpuFile string) (map[string]float64, error) {
	raw := map[string]float64{}
	var order []string
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, usageErr("--prices %s: %v", file, err)
		}
		var m map[string]float64
		if err := yaml.Unmarshal(data, &m); err != nil {
			return nil, usageErr("--prices %s: want a mapping of GPU name to USD per hour: %v", file, oneLine(err.Error()))
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			raw[k] = m[k]
			order = append(order, k)
		}
	}
	for _, f := range flags {
		k, v, ok := strings.Cut(f, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, usageErr("--price %q: want GPU=USD_PER_HOUR", f)
		}
		p, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return nil, usageErr("--price %q: the price must be a number", f)
		}
		if _, seen := raw[k]; !seen {
			order = append(order, k)
		}
		raw[k] = p
	}
	if len(raw) == 0 {
		return map[string]float64{}, nil
	}
	db, err := gpuDB(gpuFile)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, k := range order {
		p := raw[k]
		if p < 0 || math.IsNaN(p) || math.IsInf(p, 0) {
			return nil, usageErr("--price %s: the price must be ≥ 0, got %v", k, p)
		}
		g, err := db.Lookup(k)
		if err != nil {
			return nil, usageErr("--price: %v", err)
		}
		out[g.Name] = p
	}
	return out, nil
}

func writeCompareGPUsText(w io.Writer, r *compareGPUsJSON) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · gpus compare %s · dtype %s · plan %s · batch %d", version, render.Clean(r.Model), r.DType, r.Plan, r.Batch)
	if r.GPUs > 1 {
		fmt.Fprintf(&b, " · %d GPUs each (tensor-parallel; energy and cost count all)", r.GPUs)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "gpu\tlatency\tthroughput/s\tenergy/item\tpeak memory\tmemory\tfits\tUSD/hour\tUSD per million\t")
	for _, row := range r.Rows {
		ph, pm := "-", "-"
		if row.USDPerHour != nil {
			ph = strconv.FormatFloat(*row.USDPerHour, 'f', -1, 64)
		}
		if row.USDPerMillion != nil {
			pm = strconv.FormatFloat(*row.USDPerMillion, 'f', 4, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\t\n", render.Clean(row.GPU), render.Seconds(row.TimeS), row.ThroughputPerS,
			render.Joules(row.EnergyPerItemJ), render.Bytes(row.PeakMemoryBytes), render.Bytes(row.MemoryLimitBytes), fitsText(row.Fits), ph, pm)
	}
	tw.Flush()
	_, err := io.WriteString(w, b.String())
	return err
}

func writeCompareGPUsCSV(w io.Writer, r *compareGPUsJSON) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"gpu", "batch", "time_s", "throughput_per_s", "energy_j", "energy_per_item_j", "peak_memory_bytes", "memory_limit_bytes", "fits", "usd_per_hour", "usd_per_million"})
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return g(*p)
	}
	for _, row := range r.Rows {
		cw.Write([]string{row.GPU, strconv.FormatInt(r.Batch, 10), g(row.TimeS), g(row.ThroughputPerS), g(row.EnergyJ), g(row.EnergyPerItemJ),
			g(row.PeakMemoryBytes), g(row.MemoryLimitBytes), strconv.FormatBool(row.Fits), opt(row.USDPerHour), opt(row.USDPerMillion)})
	}
	cw.Flush()
	return cw.Error()
}
