package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
)

// rnnHeader is --rnn's table: one recurrent call per (cell, dtype,
// hidden, batch, steps), its per-call time, and one row per kernel name
// with how many times one call launched it and their total time.
const rnnHeader = "cell,dtype,hidden,batch,steps,ms,kernel,calls,us"

// rnnCall is one measured recurrent call of an --rnn table.
type rnnCall struct {
	cell, dtype                  string
	hidden, batch, steps, launch int64
	ms                           float64
	kernels                      []rnnKernelUse
}

// rnnKernelUse is one kernel name of a call: its launches and total time.
type rnnKernelUse struct {
	name  string
	calls int64
	us    float64
}

// rnnTable prints each call of an --rnn table beside its price (priceRNN),
// then, for each layer measured at two or more step counts, the
// least-squares line through its times in the steps, measured and priced:
// what a call costs once and what each step adds. DeepBench's cuDNN rows
// cannot part the two (one step count per GRU size below hidden 1,536,
// one per LSTM size), and they disagree on it (note79), so the time
// model's single per-step latency stands for both.
func rnnTable(w io.Writer, g *hwdb.GPU, path string, recs [][]string) error {
	calls, err := readRNNCalls(path, recs)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-4s %-5s %6s %5s %5s %10s %10s %8s %8s  %s\n", "cell", "dtype", "hidden", "batch", "steps",
		"measured", "priced", "error", "launches", "kernels (launches, us), most time first")
	var errs errorGroups
	type line struct{ steps, meas, priced []float64 }
	lines := map[string]*line{}
	var order []string
	for _, c := range calls {
		priced, err := priceRNN(g, c)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		e := errs.add(c.cell+" "+c.dtype, priced/(c.ms*1e-3))
		fmt.Fprintf(w, "%-4s %-5s %6d %5d %5d %8.1fus %8.1fus %+7.1f%% %8d  %s\n", c.cell, c.dtype, c.hidden, c.batch, c.steps,
			c.ms*1e3, priced*1e6, 100*e, c.launch, kernelList(c.kernels))
		key := fmt.Sprintf("%s %s hidden %d batch %d", c.cell, c.dtype, c.hidden, c.batch)
		l := lines[key]
		if l == nil {
			l = &line{}
			lines[key] = l
			order = append(order, key)
		}
		l.steps = append(l.steps, float64(c.steps))
		l.meas = append(l.meas, c.ms*1e-3)
		l.priced = append(l.priced, priced)
	}
	for _, key := range order {
		l := lines[key]
		if distinct(l.steps) < 2 {
			continue
		}
		ma, ms := stat.LinearRegression(l.steps, l.meas, nil, false)
		pa, ps := stat.LinearRegression(l.steps, l.priced, nil, false)
		fmt.Fprintf(w, "%s: per call %.1f us (priced %.1f), per step %.2f us (priced %.2f)\n", key, ma*1e6, pa*1e6, ms*1e6, ps*1e6)
	}
	errs.write(w, "calls", g)
	return nil
}

// priceRNN is call c's price: a one-layer cell of hidden units over its
// steps with an input projection of the same width (torch.nn.LSTM/GRU
// with input size = hidden), timed alone back to back as the sweep times
// it (perf.Isolated, DeepBench's setting), fp16 on tensor cores where the
// GPU has them.
func priceRNN(g *hwdb.GPU, c rnnCall) (float64, error) {
	pr, eb, known := dtypePath(g, c.dtype)
	if !known {
		return 0, fmt.Errorf("dtype %q: want fp32 or fp16", c.dtype)
	}
	op := map[string]string{"lstm": "LSTM", "gru": "GRU"}[c.cell]
	k := perf.RNNKernel(op, c.hidden, c.hidden, c.batch, c.steps, 1, pr, eb)
	t := perf.EstimateKernel(g, k, perf.Options{Params: perf.DefaultParams(), Setting: perf.Isolated})
	return t.TimeS, nil
}

// readRNNCalls groups an --rnn table's rows into calls: consecutive rows
// of one (cell, dtype, hidden, batch, steps) are one call's kernels.
func readRNNCalls(path string, recs [][]string) ([]rnnCall, error) {
	var calls []rnnCall
	for _, r := range recs {
		if r[0] != "lstm" && r[0] != "gru" {
			return nil, fmt.Errorf("%s: cell %q: want lstm or gru", path, r[0])
		}
		d, err := positive(path, r[2:5])
		if err != nil {
			return nil, err
		}
		ms, err := millis(path, r[5])
		if err != nil {
			return nil, err
		}
		n, err := strconv.ParseInt(r[7], 10, 64)
		us, uerr := strconv.ParseFloat(r[8], 64)
		if err != nil || n <= 0 || uerr != nil || !(us >= 0) {
			return nil, fmt.Errorf("%s: kernel %q: launches %q and time %q want a positive count and microseconds", path, r[6], r[7], r[8])
		}
		use := rnnKernelUse{name: measured.KernelName(r[6]), calls: n, us: us}
		c := rnnCall{cell: r[0], dtype: r[1], hidden: d[0], batch: d[1], steps: d[2], ms: ms}
		if last := len(calls) - 1; last >= 0 && sameRNNCall(calls[last], c) {
			calls[last].kernels = append(calls[last].kernels, use)
			calls[last].launch += n
			continue
		}
		c.kernels, c.launch = []rnnKernelUse{use}, n
		calls = append(calls, c)
	}
	if len(calls) == 0 {
		return nil, fmt.Errorf("%s: no calls", path)
	}
	return calls, nil
}

func sameRNNCall(a, b rnnCall) bool {
	return a.cell == b.cell && a.dtype == b.dtype && a.hidden == b.hidden && a.batch == b.batch && a.steps == b.steps && a.ms == b.ms
}

// kernelList names a call's kernels, most time first (ties by name), with
// their launches and total time.
func kernelList(ks []rnnKernelUse) string {
	ks = slices.Clone(ks)
	slices.SortStableFunc(ks, func(a, b rnnKernelUse) int { return cmp.Or(cmp.Compare(b.us, a.us), strings.Compare(a.name, b.name)) })
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmt.Sprintf("%s (%d, %.1f)", k.name, k.calls, k.us)
	}
	return strings.Join(parts, ", ")
}

// distinct counts the different values of xs.
func distinct(xs []float64) int {
	s := slices.Clone(xs)
	slices.Sort(s)
	return len(slices.Compact(s))
}
