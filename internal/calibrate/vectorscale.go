package calibrate

import (
	"fmt"
	"io"
	"sort"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/hwdb"
)

// A board's large CUDA-core products (hwdb vector_gemm_scale).
//
// DeepBench's fp32 products of at least vectorGEMMMinFLOPs run, on each
// board, at a steady share of the rate the time model gives them, and the
// share differs by board beyond what one fitted efficiency can hold: on
// the training rows, measured over priced time is 0.86 on the P100 and
// 0.89-0.90 on the GTX 1080 Ti and Pascal Titan X (which hold GPU Boost
// clocks above their rated boost: 1,785 and 1,695 MHz would explain
// them), 1.00 on the Titan Xp, and 1.10-1.24 on the Maxwell boards, the
// T4 and the MI25 (power-limited below the clock the model derives, or
// an older library's kernels). The time model's eff_vector is their
// compromise. The scale is the median of that quotient over a board's
// training rows; its held-out rows check it (TestVectorGEMMScaleFit).
//
// A board's forward convolutions (hwdb vector_conv_scale) do the same
// with their own quotient, fitted alike on its fp32 forward convolutions
// (VectorConvRow): cuDNN's kernels are not cuBLAS's, and where the two
// quotients agree (Titan X Pascal 0.90 and 0.91, the Maxwell boards) the
// board's clock is the likelier cause, where they part (GTX 1080 Ti 0.89
// and 0.80, P100 0.86 and 1.02, T4 1.20 and 0.96) the libraries' kernels
// (TestVectorConvScaleFit).

// vectorGEMMMinFLOPs is the size from which a product's main loop is
// nearly all of its time and its tiles fill the SMs: 0.2 TFLOP (the
// 2,048³ product is 17 GFLOP; DeepBench's 0.2 TFLOP and larger products
// run 0.8-350 ms on these boards).
const vectorGEMMMinFLOPs = 2e11

// VectorGEMMRow reports whether c is a forward fp32 product the board's
// vector_gemm_scale is fitted on: a GEMM row run on the CUDA cores in FP32
// arithmetic (fp32 and pseudo-fp16 sheets) of at least vectorGEMMMinFLOPs.
func VectorGEMMRow(c BenchCase) bool {
	r := c.Row
	if r.Kind != BenchGEMM || (r.Precision != BenchFP32 && r.Precision != BenchPseudoFP16) {
		return false
	}
	return 2*float64(r.M)*float64(r.N)*float64(r.K) >= vectorGEMMMinFLOPs
}

// VectorConvRow reports whether c is a convolution the board's
// vector_conv_scale is fitted on: a forward row of an fp32 sheet. Every
// size is taken: the scale moves the main loop alone, and DeepBench's
// forward convolutions are nearly all main loop (the smallest run 20-60
// µs against a fill of a few); the pseudo-fp16 sheet (P100 only) is left
// out, its half-precision storage halving the bytes the quotient would
// mix in.
func VectorConvRow(c BenchCase) bool {
	return c.Row.Kind == BenchConv && c.Row.Precision == BenchFP32
}

// boardScale is one of a board's measured CUDA-core rates: the rows it is
// fitted on, how to price them without it, and its committed figure.
type boardScale struct {
	name      string
	row       func(BenchCase) bool
	without   func(*hwdb.GPU) *hwdb.GPU
	committed func(*hwdb.GPU) float64
}

var (
	vectorGEMMScale = boardScale{"vector_gemm_scale", VectorGEMMRow, (*hwdb.GPU).WithoutVectorGEMMScale,
		func(g *hwdb.GPU) float64 { return g.VectorGEMMScale }}
	vectorConvScale = boardScale{"vector_conv_scale", VectorConvRow, (*hwdb.GPU).WithoutVectorConvScale,
		func(g *hwdb.GPU) float64 { return g.VectorConvScale }}
)

// fit is the median measured/priced time of the cases that keep selects
// among gpu's rows of the scale, priced with p and the scale unset, and
// how many rows it took; 0, 0 without rows.
func (s boardScale) fit(cases []BenchCase, gpu string, p perf.Params, keep func(BenchCase) bool) (float64, int) {
	q := s.quotients(cases, gpu, p, keep, func(BenchCase) string { return "" })[""]
	if len(q) == 0 {
		return 0, 0
	}
	return quantile(q, 0.5), len(q)
}

// quotients are the measured/priced times of the cases that keep selects
// among gpu's rows of the scale, priced with p and the scale unset,
// grouped by group's key.
func (s boardScale) quotients(cases []BenchCase, gpu string, p perf.Params, keep func(BenchCase) bool, group func(BenchCase) string) map[string][]float64 {
	q := map[string][]float64{}
	for _, c := range cases {
		if c.GPUName != gpu || !keep(c) || !s.row(c) {
			continue
		}
		c.GPU = s.without(c.GPU)
		if kt, _ := c.Predict(p); kt.TimeS > 0 {
			q[group(c)] = append(q[group(c)], c.Row.TimeS/kt.TimeS)
		}
	}
	return q
}

// FitVectorGEMMScale is a board's vector_gemm_scale fitted on the cases
// keep selects among its VectorGEMMRow rows, and how many it took.
func FitVectorGEMMScale(cases []BenchCase, gpu string, p perf.Params, keep func(BenchCase) bool) (float64, int) {
	return vectorGEMMScale.fit(cases, gpu, p, keep)
}

// FitVectorConvScale is FitVectorGEMMScale for vector_conv_scale, on
// the board's VectorConvRow rows.
func FitVectorConvScale(cases []BenchCase, gpu string, p perf.Params, keep func(BenchCase) bool) (float64, int) {
	return vectorConvScale.fit(cases, gpu, p, keep)
}

// WriteVectorScales prints, per board with fit rows, each committed
// measured rate (vector_gemm_scale, vector_conv_scale) and the one its
// training rows fit under p: after a refit of the parameters the two
// part, and hwdb/gpus.yaml takes the refitted figures
// (TestVectorGEMMScaleFit, TestVectorConvScaleFit check they agree).
func WriteVectorScales(w io.Writer, cases []BenchCase, p perf.Params) {
	gpus := map[string]*hwdb.GPU{}
	var names []string
	for _, c := range cases {
		if _, seen := gpus[c.GPUName]; !seen {
			gpus[c.GPUName] = c.GPU
			names = append(names, c.GPUName)
		}
	}
	sort.Strings(names)
	for i, s := range []boardScale{vectorGEMMScale, vectorConvScale} {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "| GPU | %s committed | training rows fit | n |\n", s.name)
		fmt.Fprintln(w, "|---|---:|---:|---:|")
		for _, g := range names {
			if f, n := s.fit(cases, g, p, Training); n > 0 {
				fmt.Fprintf(w, "| %s | %.3f | %.3f | %d |\n", g, s.committed(gpus[g]), f, n)
			}
		}
	}
}
