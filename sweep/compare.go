package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/onnxcost/onnxcost/cost/render"
	"github.com/onnxcost/onnxcost/cost/report"
	"github.com/onnxcost/onnxcost/hwdb"
	"go.yaml.in/yaml/v3"
)

// Comparison is one model at one batch on several GPUs, as `onnxcost gpus
// compare --format json` writes it.
type Comparison struct {
	SchemaVersion int    `json:"schema_version"`
	ToolVersion   string `json:"tool_version"`
	Model         string `json:"model"`
	DType         string `json:"dtype"`
	Runtime       string `json:"runtime"`
	Plan          string `json:"plan"`
	// PowerCapW and SMClockMHz are the sweep's power setting (absent at
	// each GPU's default).
	PowerCapW  float64 `json:"power_cap_w,omitempty"`
	SMClockMHz float64 `json:"sm_clock_mhz,omitempty"`
	// Warm marks estimates priced as calls repeated back to back
	// (--warm: L2 holds what the previous call left); absent for first
	// calls.
	Warm bool `json:"warm,omitempty"`
	// Train is the training step every row prices: a row's latency is
	// one optimizer step, its throughput and cost per item the samples
	// trained (absent for inference).
	Train *report.TrainSetting `json:"train,omitempty"`
	// Calibration says which measured calibration corrected the kernel
	// times (the sweep's); absent when none.
	Calibration string `json:"calibration,omitempty"`
	Batch       int64  `json:"batch"`
	// GPUs is the tensor-parallel degree when above 1: each row is then
	// a group of that many GPUs of its kind, and energy and cost count
	// all of them.
	GPUs     int             `json:"gpus,omitempty"`
	Rows     []ComparisonRow `json:"rows"`
	Warnings []string        `json:"warnings"`
}

// ComparisonRow is one GPU. Prices are the caller's (no price ships with
// onnxcost: they change by the month and by the seller).
type ComparisonRow struct {
	GPU   string  `json:"gpu"`
	TimeS float64 `json:"time_s"`
	// TimeIntervalS is TimeS's 80% interval (Row.TimeIntervalS).
	TimeIntervalS []float64 `json:"time_interval_s,omitempty"`
	// IntervalBasis is the row's Row.IntervalBasis: set where no kernel
	// of the GPU's family is measured here.
	IntervalBasis    string  `json:"interval_basis,omitempty"`
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

// Compare turns a sweep of one point (one row per GPU) into a
// comparison. prices maps canonical GPU names to USD per hour; a price
// for a GPU not compared is an error. groupSize is the tensor-parallel
// degree the sweep was costed at (0 or 1: one GPU).
func Compare(res *Result, prices map[string]float64, groupSize int) (*Comparison, error) {
	out := &Comparison{SchemaVersion: 1, ToolVersion: res.ToolVersion, Model: res.Model, DType: res.DType, Runtime: res.Runtime, Plan: res.Plan,
		PowerCapW: res.PowerCapW, SMClockMHz: res.SMClockMHz, Warm: res.Warm, Train: res.Train, Calibration: res.Calibration, Warnings: res.Warnings}
	// A report over a tensor-parallel group is one GPU's energy while
	// the group runs in lockstep on the same items: the group's energy
	// and hourly price are n times one GPU's.
	n := max(groupSize, 1)
	if n > 1 {
		out.GPUs = n
	}
	left := map[string]bool{}
	for k := range prices {
		left[k] = true
	}
	// A training step trains K micro-batches on each of its
	// data-parallel replicas, each a group of its own: energy and price
	// count every replica, as the throughput counts their samples.
	k, dp := 1, 1
	if t := res.Train; t != nil {
		k, dp = max(t.GradAccum, 1), max(t.DataParallel, 1)
	}
	for i, r := range res.Rows {
		out.Batch = r.Batch
		energy := r.EnergyJ * float64(n*dp)
		row := ComparisonRow{GPU: r.GPU, TimeS: r.TimeS, TimeIntervalS: r.TimeIntervalS, IntervalBasis: r.IntervalBasis, ThroughputPerS: r.ThroughputPerS, PeakMemoryBytes: r.PeakMemoryBytes,
			MemoryLimitBytes: res.GPUs[i].MemoryBytes, Fits: r.Fits, EnergyJ: energy, EnergyPerItemJ: energy / float64(r.Batch*int64(k*dp))}
		if p, ok := prices[r.GPU]; ok {
			row.USDPerHour = &p
			if r.ThroughputPerS > 0 {
				m := float64(n*dp) * p / 3600 / r.ThroughputPerS * 1e6
				row.USDPerMillion = &m
			}
			delete(left, r.GPU)
		}
		out.Rows = append(out.Rows, row)
	}
	if len(left) > 0 {
		names := make([]string, 0, len(left))
		for k := range left {
			names = append(names, k)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("--price: %s not among the GPUs compared", strings.Join(names, ", "))
	}
	return out, nil
}

// Price is one GPU's price as given, before its name is resolved.
type Price struct {
	GPU        string
	USDPerHour float64
}

// ParsePrices reads a prices file, a YAML or JSON mapping of GPU name to
// USD per hour, in name order.
func ParsePrices(data []byte) ([]Price, error) {
	var m map[string]float64
	if err := yaml.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("want a mapping of GPU name to USD per hour: %v", err)
	}
	out := make([]Price, 0, len(m))
	for k, v := range m {
		out = append(out, Price{k, v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GPU < out[j].GPU })
	return out, nil
}

// ResolvePrices keys prices by the canonical names db gives their GPUs
// (aliases accepted), for Compare; each must be finite and ≥ 0. Where two
// names are the same GPU, the later price wins.
func ResolvePrices(db *hwdb.DB, prices []Price) (map[string]float64, error) {
	out := map[string]float64{}
	for _, p := range prices {
		if p.USDPerHour < 0 || math.IsNaN(p.USDPerHour) || math.IsInf(p.USDPerHour, 0) {
			return nil, fmt.Errorf("--price %s: the price must be ≥ 0, got %v", p.GPU, p.USDPerHour)
		}
		g, err := db.Lookup(p.GPU)
		if err != nil {
			return nil, fmt.Errorf("--price: %v", err)
		}
		out[g.Name] = p.USDPerHour
	}
	return out, nil
}

// WriteCompareText writes the comparison as `onnxcost gpus compare`
// prints it.
func WriteCompareText(w io.Writer, r *Comparison) error {
	var b strings.Builder
	fmt.Fprintf(&b, "onnxcost %s · gpus compare %s · dtype %s · runtime %s%s · batch %d", r.ToolVersion, render.Clean(r.Model), r.DType, render.RuntimeKernels(r.Runtime, r.Plan, r.Warm),
		render.PowerSetting(r.PowerCapW, r.SMClockMHz, " · ")+render.TrainingSetting(r.Train, " · "), r.Batch)
	if r.GPUs > 1 {
		fmt.Fprintf(&b, " · %d GPUs each (tensor-parallel; energy and cost count all)", r.GPUs)
	}
	if t := r.Train; t != nil && t.DataParallel > 1 {
		fmt.Fprintf(&b, " · energy and cost count all %d replicas", t.DataParallel)
	}
	if r.Calibration != "" {
		fmt.Fprintf(&b, "\n%s", r.Calibration)
	}
	b.WriteString("\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "gpu\tlatency\t80% interval\tthroughput/s\tenergy/item\tpeak memory\tmemory\tfits\tUSD/hour\tUSD per million\t")
	carried := false
	for _, row := range r.Rows {
		ph, pm := "-", "-"
		if row.USDPerHour != nil {
			ph = strconv.FormatFloat(*row.USDPerHour, 'f', -1, 64)
		}
		if row.USDPerMillion != nil {
			pm = strconv.FormatFloat(*row.USDPerMillion, 'f', 4, 64)
		}
		iv, star := markedInterval(row.TimeIntervalS, row.IntervalBasis)
		carried = carried || star
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\t\n", render.Clean(row.GPU), render.Seconds(row.TimeS), iv, row.ThroughputPerS,
			render.Joules(row.EnergyPerItemJ), render.Bytes(row.PeakMemoryBytes), render.Bytes(row.MemoryLimitBytes), FitsText(row.Fits), ph, pm)
	}
	tw.Flush()
	if carried {
		b.WriteString(carriedFootnote)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markedInterval is an interval's text, starred where its report's
// interval rests on another family's kernels (basis set: no kernel of
// the GPU's family is measured here), and whether it was: side by side,
// such an interval looks as sure as a measured family's.
func markedInterval(iv []float64, basis string) (string, bool) {
	text := IntervalText(iv)
	if basis == "" || len(iv) != 2 {
		return text, false
	}
	return text + " *", true
}

// carriedFootnote says what markedInterval's star means.
const carriedFootnote = "\n* no kernel of this GPU's family is measured here: its interval rests on the nearest measured family's (with the spread between generations added) or on every family's together; 'onnxcost gpus show GPU' says which\n"

// WriteCompareCSV writes one line per GPU.
func WriteCompareCSV(w io.Writer, r *Comparison) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"gpu", "batch", "time_s", "throughput_per_s", "energy_j", "energy_per_item_j", "peak_memory_bytes", "memory_limit_bytes", "fits", "usd_per_hour", "usd_per_million",
		"time_interval_low_s", "time_interval_high_s"})
	opt := func(p *float64) string {
		if p == nil {
			return ""
		}
		return g(*p)
	}
	for _, row := range r.Rows {
		lo, hi := intervalCSV(row.TimeIntervalS)
		cw.Write([]string{row.GPU, strconv.FormatInt(r.Batch, 10), g(row.TimeS), g(row.ThroughputPerS), g(row.EnergyJ), g(row.EnergyPerItemJ),
			g(row.PeakMemoryBytes), g(row.MemoryLimitBytes), strconv.FormatBool(row.Fits), opt(row.USDPerHour), opt(row.USDPerMillion), lo, hi})
	}
	cw.Flush()
	return cw.Error()
}
