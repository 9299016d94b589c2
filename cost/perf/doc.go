// Package perf is the time model: what one kernel costs on one GPU, apart
// from what a node computes (package cost counts; perf prices), as XLA
// keeps its GPU performance model apart from HloCostAnalysis. A Kernel
// (class, FLOPs, bytes, compute path, GEMM view) is priced by
// EstimateKernel as a time-based roofline with calibrated efficiencies:
// max(compute, memory) + latency plus the launch (BodyS; for a GEMM a
// 4-norm of compute and memory in place of the maximum), where latency
// is a GEMM-like kernel's fixed fill and drain, in series with both its
// main loop and its operand stream; both fixed costs depend on the
// Setting (a kernel of a whole-model plan, or one timed alone). A kernel
// is "compute", "memory", "latency" or "launch" bound by the largest term.
// GEMMs with one row or column (GEMV, depthwise convolution) are priced
// as the direct kernels libraries run for them, not as padded tiles.
//
// Invariants:
//   - EstimateKernel never panics on degenerate kernels (zero sizes, no
//     rate for the path); a nil GPU gives a zero time.
//   - The parameters are fitted only on the DeepBench training split
//     (internal/calibrate); validation data never enters the fit.
//   - One FMA counts FMAFLOPs (2) FLOPs, the convention of package cost.
package perf
