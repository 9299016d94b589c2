// Command choices sets the kernels a library ran for a sweep of
// scripts/measure_gpu.py beside what onnxcost prices: --gemm-choices
// (cuBLAS, torch.matmul), --linear-choices (F.linear with a bias,
// weights cold) and --layouts (each product as A·B and as A·Bᵀ, and their
// ratio) beside the tile and K split perf.ChooseGEMM picks, --conv-choices (cuDNN, F.conv2d) beside the convolution's price
// as a one-node graph, --conv-grads (cuDNN's data and weight gradients)
// beside perf.EstimateConvGrad's price, --rnn (cuDNN's LSTM and GRU calls)
// beside the recurrent layer's price, parted into per call and per step, --power (single kernels' board power and clock)
// beside the power model's, --host-ops (the host's cost per eager call by
// op kind) beside the pytorch runtime's dispatch_us and module_us,
// --host-link (copies between host and device memory) beside the price
// of onnxruntime's input and output copies. The table's header says which
// sweep it is.
//
//	go run ./scripts/choices -gpu H200 gemm_choices.csv
//	go run ./scripts/choices -gpu H200 linear_choices.csv
//	go run ./scripts/choices -gpu H200 layouts.csv
//	go run ./scripts/choices -gpu H200 conv_choices.csv
//	go run ./scripts/choices -gpu H200 conv_grads.csv
//	go run ./scripts/choices -gpu H200 rnn.csv
//	go run ./scripts/choices -gpu H200 power.csv
//	go run ./scripts/choices -gpu H200 host_ops.csv
//	go run ./scripts/choices -gpu H200 host_link.csv
//
// Priced times are the kernels' in a CUDA-graph replay, their operands
// not resident in L2 (a first call; the sweeps' back-to-back calls find
// small operands in L2, so their small cases read slow here).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/internal/measured"
)

func main() {
	fs := flag.NewFlagSet("choices", flag.ContinueOnError)
	gpuName := fs.String("gpu", "", "the GPU the sweep ran on (hwdb name or alias)")
	if err := fs.Parse(os.Args[1:]); err != nil {
		os.Exit(2)
	}
	if err := run(os.Stdout, *gpuName, fs.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "choices:", err)
		os.Exit(2)
	}
}

func run(w io.Writer, gpuName string, files []string) error {
	if gpuName == "" || len(files) != 1 {
		return fmt.Errorf("usage: choices -gpu GPU FILE.csv")
	}
	g, err := hwdb.Lookup(gpuName)
	if err != nil {
		return err
	}
	for _, t := range []struct {
		header string
		kind   productTable
	}{{gemmHeader, matmulTable}, {linearHeader, linearTable}, {layoutHeader, layoutTable}} {
		if recs, err := measured.Read(files[0], t.header); err == nil {
			return gemmTable(w, g, files[0], recs, t.kind)
		}
	}
	if recs, err := measured.Read(files[0], powerHeader); err == nil {
		return powerTable(w, g, files[0], recs)
	}
	if recs, err := measured.Read(files[0], hostHeader); err == nil {
		return hostTable(w, files[0], recs)
	}
	if recs, err := measured.Read(files[0], hostLinkHeader); err == nil {
		return hostLinkTable(w, g, files[0], recs)
	}
	if recs, err := measured.Read(files[0], convGradHeader); err == nil {
		return convGradTable(w, g, files[0], recs)
	}
	if recs, err := measured.Read(files[0], rnnHeader); err == nil {
		return rnnTable(w, g, files[0], recs)
	}
	recs, err := measured.Read(files[0], convHeader)
	if err != nil {
		return fmt.Errorf("%s: not a --gemm-choices, --linear-choices, --layouts, --conv-choices, --conv-grads, --rnn, --power, --host-ops or --host-link table (%v)", files[0], err)
	}
	return convTable(w, g, files[0], recs)
}

// replayOptions are the time model's options under the graph runtime: a
// CUDA-graph replay, as the sweeps time their per-call kernels.
func replayOptions() (perf.Options, error) {
	o := perf.PlanOptions()
	rt, err := hwdb.LookupRuntime("graph")
	o.Runtime = rt
	return o, err
}

// positive parses fields as positive integers, naming path and the field
// that is not one.
func positive(path string, fields []string) ([]int64, error) {
	out := make([]int64, len(fields))
	for i, s := range fields {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%s: bad size %q", path, s)
		}
		out[i] = v
	}
	return out, nil
}

// millis parses a measured per-call time in milliseconds.
func millis(path, s string) (float64, error) {
	ms, err := strconv.ParseFloat(s, 64)
	if err != nil || !(ms > 0) {
		return 0, fmt.Errorf("%s: bad time %q", path, s)
	}
	return ms, nil
}

// median of |errors|, which it sorts.
func median(errs []float64) float64 {
	slices.Sort(errs)
	return errs[len(errs)/2]
}
