// Command calibrate fits the time model's parameters on DeepBench's
// training split and prints the held-out error table (internal/calibrate/CALIBRATION.md).
//
//	go run ./scripts/calibrate                 # table with the committed parameters
//	go run ./scripts/calibrate -fit            # re-fit, print table and parameters
//	go run ./scripts/calibrate -fit -write     # also rewrite "+paramsFile+"
//	go run ./scripts/calibrate -leave-out T4   # fit without T4, report T4
//	go run ./scripts/calibrate -rnn -fit       # re-fit only the RNN step latencies
package main

import (
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/calibrate"
)

// paramsFile is the generated file holding the committed parameters.
const paramsFile = "cost/perf/calibration_params.go"

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(2)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("calibrate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "internal/calibrate/testdata/deepbench", "folder of DeepBench CSV exports")
	doFit := fs.Bool("fit", false, "re-fit the parameters on the training split")
	write := fs.Bool("write", false, "with -fit: rewrite "+paramsFile+"")
	leaveOut := fs.String("leave-out", "", "fit on all other GPUs and report this one in full; \"all\" does so for every GPU in turn and prints one summary table")
	evals := fs.Int("evals", 4000, "Nelder-Mead evaluation budget")
	showDrops := fs.Bool("drops", false, "list dropped rows")
	dump := fs.String("dump", "", "write every row's prediction as TSV to this file (for studying the misses)")
	backward := fs.Bool("backward", false, "report the backward kernels (convolution and RNN gradients) instead of the forward ones")
	rnn := fs.Bool("rnn", false, "with -fit: fit only the RNN step latencies, on the forward RNN rows")
	joint := fs.Bool("joint", false, "fit (with -fit) and report on every measured-kernel source of internal/kernelrows (DeepBench and Vidur fit rows), from the repository root")
	vidurEvery := fs.Int("vidur-every", 8, "with -joint -fit: keep every n-th Vidur fit row per (GPU, op)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *joint {
		p, err := runJoint(stdout, perf.DefaultParams(), *doFit, *vidurEvery, *evals)
		if err == nil && *doFit && *write {
			err = writeParams(paramsFile, p)
		}
		return err
	}
	cases, files, skipped, err := calibrate.LoadDeepBench(os.DirFS(*dir), hwdb.Lookup)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintln(stderr, "skipped:", s)
	}
	drops := 0
	for _, f := range files {
		drops += len(f.Dropped)
		if *showDrops {
			for _, d := range f.Dropped {
				fmt.Fprintf(stdout, "%s:%d: %s\n", d.File, d.Line, d.Reason)
			}
		}
	}
	fmt.Fprintf(stdout, "%d measured kernels from %d files (%d rows dropped)\n\n", len(cases), len(files), drops)

	p := perf.DefaultParams()
	if *backward {
		cases = calibrate.BackwardCases(cases)
		fmt.Fprintf(stdout, "%d measured backward kernels\n\n", len(cases))
	}
	if *dump != "" {
		if err := dumpRows(*dump, cases, p); err != nil {
			return err
		}
	}
	if *leaveOut == "all" {
		return leaveEachOut(stdout, cases, p, *evals)
	}
	if *leaveOut != "" {
		train := filter(cases, func(c calibrate.BenchCase) bool { return c.GPUName != *leaveOut && !c.Holdout })
		lp, loss, err := calibrate.Fit(train, p, *evals)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "fit without %s: training loss %.4f (mean |log ratio|)\n\n", *leaveOut, loss)
		calibrate.WriteErrorTable(stdout, calibrate.ErrorTable(cases, lp, func(c calibrate.BenchCase) bool { return c.GPUName == *leaveOut }))
		fmt.Fprintln(stdout)
		calibrate.WriteParams(stdout, lp)
		return nil
	}
	if *doFit {
		train := filter(cases, calibrate.Training)
		scope := fmt.Sprintf("%d rows", len(train))
		fit := func(train []calibrate.BenchCase, p perf.Params) (perf.Params, float64, error) {
			return calibrate.Fit(train, p, *evals)
		}
		switch {
		case *backward && *rnn:
			return fmt.Errorf("-backward and -rnn fit different stages: run them one at a time")
		case *backward:
			fit = calibrate.FitBackward
		case *rnn:
			// The loss shown is the forward RNN rows'; the stage fits
			// their backward-through-time rows too.
			rnnRows := filter(train, func(c calibrate.BenchCase) bool { return c.Row.Kind == calibrate.BenchRNN })
			scope = fmt.Sprintf("%d forward RNN rows", len(rnnRows))
			fit = func(train []calibrate.BenchCase, p perf.Params) (perf.Params, float64, error) {
				fp, err := calibrate.FitRNN(train, p)
				return fp, calibrate.FitLoss(rnnRows, fp), err
			}
		}
		fp, loss, err := fit(train, p)
		if err != nil {
			return err
		}
		p = fp
		fmt.Fprintf(stdout, "training loss %.4f (mean |log ratio|) on %s\n\n", loss, scope)
		if *write {
			if err := writeParams(paramsFile, p); err != nil {
				return err
			}
		}
	}
	fmt.Fprintln(stdout, "Held-out rows:")
	fmt.Fprintln(stdout)
	calibrate.WriteErrorTable(stdout, calibrate.ErrorTable(cases, p, calibrate.Holdout))
	fmt.Fprintln(stdout)
	calibrate.WriteParams(stdout, p)
	if !*backward {
		fmt.Fprintln(stdout)
		calibrate.WriteVectorScales(stdout, cases, p)
	}
	return nil
}

// leaveEachOut fits once per GPU without that GPU's rows and reports the
// error on all of its rows: the proxy for a GPU the fit never saw.
func leaveEachOut(w io.Writer, cases []calibrate.BenchCase, start perf.Params, evals int) error {
	var gpus []string
	for _, c := range cases {
		if !slices.Contains(gpus, c.GPUName) {
			gpus = append(gpus, c.GPUName)
		}
	}
	sort.Strings(gpus)
	fmt.Fprintln(w, "| GPU left out | n | median abs err | P90 abs err |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, g := range gpus {
		train := filter(cases, func(c calibrate.BenchCase) bool { return c.GPUName != g && !c.Holdout })
		lp, _, err := calibrate.Fit(train, start, evals)
		if err != nil {
			return err
		}
		for _, s := range calibrate.ErrorTable(cases, lp, func(c calibrate.BenchCase) bool { return c.GPUName == g }) {
			if s.GPU == g && s.Kind == "all" {
				fmt.Fprintf(w, "| %s | %d | %.1f%% | %.1f%% |\n", g, s.N, 100*s.Median, 100*s.P90)
			}
		}
	}
	return nil
}

func filter(cs []calibrate.BenchCase, keep func(calibrate.BenchCase) bool) []calibrate.BenchCase {
	var out []calibrate.BenchCase
	for _, c := range cs {
		if keep(c) {
			out = append(out, c)
		}
	}
	return out
}

// writeParams rewrites the committed parameters, via a temporary file and
// a rename so a failed write leaves the old file.
func writeParams(path string, p perf.Params) error {
	src := fmt.Sprintf(`// Code generated by go run ./scripts/calibrate; DO NOT EDIT.

package perf

// calibratedParams are the time model's parameters fitted on the fit rows
// of DeepBench and Vidur (go run ./scripts/calibrate -joint -fit -write),
// then the stages fitted on their own rows with the rest held:
// eff_wgrad (-backward -fit -write) and the RNN step latencies (-rnn -fit
// -write). internal/calibrate/CALIBRATION.md gives the data, the split
// and the held-out error.
var calibratedParams = Params{
	EffVector:       %.4g,
	EffTensor:       %.4g,
	EffConv:         %.4g,
	EffWinograd:     %.4g,
	EffWgrad:        %.4g,
	KHalf:           %.4g,
	SmallTile:       %.4g,
	TileReuse:       %.4g,
	Occupancy:       %.4g,
	Unaligned:       %.4g,
	MemEff:          %.4g,
	L2Factor:        %.4g,
	FullClockPower:  %.4g,
	RNNStepLaunches: %.4g,
	RNNGemvStepLaunches: %.4g,
	RNNTiledBatchHalf: %.4g,
	FillLaunches:    %.4g,
	LaunchS:         %.4g,
	TensorPowerExp:  %.4g,
	PointwiseRate:   %.4g,
}
`, p.EffVector, p.EffTensor, p.EffConv, p.EffWinograd, p.EffWgrad, p.KHalf, p.SmallTile, p.TileReuse, p.Occupancy, p.Unaligned,
		p.MemEff, p.L2Factor, p.FullClockPower, p.RNNStepLaunches, p.RNNGemvStepLaunches, p.RNNTiledBatchHalf, p.FillLaunches, p.LaunchS, p.TensorPowerExp, p.PointwiseRate)
	formatted, err := format.Source([]byte(src))
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".calibration_params-*.go")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(formatted); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// dumpRows writes one TSV line per measured kernel: where it came from,
// its sizes, the kernel the model priced, and predicted versus measured
// time. It is for studying misses row by row, not part of any table.
func dumpRows(path string, cases []calibrate.BenchCase, p perf.Params) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, "gpu\tholdout\tkind\tprec\tsheet\tline\tm\tn\tk\tta\ttb\tw\th\tc\tbatch\tfilters\tr\ts\tpad_h\tpad_w\tstride_h\tstride_w\talgo\tcell\thidden\tsteps\trnn_batch\tclass\tpath\tkm\tkn\tkk\tkbatch\tbound\tcompute_s\tlatency_s\tmemory_s\tpred_s\tmeas_s")
	for _, c := range cases {
		r := c.Row
		t, k := c.Predict(p)
		fmt.Fprintf(f, "%s\t%v\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%v\t%v\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%q\t%s\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%d\t%d\t%s\t%g\t%g\t%g\t%g\t%g\n",
			c.GPUName, c.Holdout, r.Kind, r.Precision, r.Sheet, r.Line, r.M, r.N, r.K, r.TransA, r.TransB,
			r.W, r.H, r.C, r.Batch, r.Filters, r.R, r.S, r.PadH, r.PadW, r.StrideH, r.StrideW, r.Algo,
			r.Cell, r.Hidden, r.Steps, r.RNNBatch, k.Class, k.Precision, k.M, k.N, k.K, k.Batch,
			t.Bound, t.ComputeS, t.LatencyS, t.MemoryS, t.TimeS, r.TimeS)
	}
	return f.Close()
}
