package calibrate

import (
	"fmt"
	"io"
	"sort"

	"github.com/onnxcost/onnxcost/cost/perf"
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

// FitVectorGEMMScale is the median measured/priced time of the cases that
// keep selects among gpu's VectorGEMMRow rows, priced with p and the
// board's scale set to 1, and how many rows it took; 0, 0 without rows.
func FitVectorGEMMScale(cases []BenchCase, gpu string, p perf.Params, keep func(BenchCase) bool) (float64, int) {
	var q []float64
	for _, c := range cases {
		if c.GPUName != gpu || !keep(c) || !VectorGEMMRow(c) {
			continue
		}
		c.GPU = c.GPU.WithoutVectorGEMMScale()
		if kt, _ := c.Predict(p); kt.TimeS > 0 {
			q = append(q, c.Row.TimeS/kt.TimeS)
		}
	}
	if len(q) == 0 {
		return 0, 0
	}
	return quantile(q, 0.5), len(q)
}

// WriteVectorGEMMScales prints, per board with fit rows, the committed
// vector_gemm_scale and the one its training rows fit under p: after a
// refit of the parameters the two part, and hwdb/gpus.yaml takes the
// refitted figures (TestVectorGEMMScaleFit checks they agree).
func WriteVectorGEMMScales(w io.Writer, cases []BenchCase, p perf.Params) {
	committed := map[string]float64{}
	var names []string
	for _, c := range cases {
		if _, seen := committed[c.GPUName]; !seen {
			committed[c.GPUName] = c.GPU.VectorGEMMScale
			names = append(names, c.GPUName)
		}
	}
	sort.Strings(names)
	fmt.Fprintln(w, "| GPU | vector_gemm_scale committed | training rows fit | n |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, g := range names {
		if s, n := FitVectorGEMMScale(cases, g, p, Training); n > 0 {
			fmt.Fprintf(w, "| %s | %.3f | %.3f | %d |\n", g, committed[g], s, n)
		}
	}
}
