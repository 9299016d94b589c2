// Package calibrate fits the time model's parameters (cost/perf.Params) to
// DeepBench's measured kernel times and reports the held-out error. Only
// scripts/calibrate and tests use it; the numbers it fits are committed in
// cost/perf/calibration_params.go.
//
// Files:
//
//	deepbench.go      the DeepBench CSV parser (BenchFile, BenchRow, dropped rows with reasons)
//	calibration.go    LoadDeepBench (GPUs resolved through hwdb), the held-out split, FitLoss, Fit, error tables
//	backward.go       the backward cases (conv dgrad/wgrad, RNN backward; held out with their forward row) and FitBackward (eff_wgrad)
//	calibration_nm.go the Nelder–Mead search (gonum) on the logarithms of the parameters
//	CALIBRATION.md    the data, the command, the fit, every revision and the held-out error
//	testdata/deepbench the DeepBench result sheets (eight GPUs)
//
// Invariants:
//   - Every third row of each (GPU, kind) group, in file order, is held out
//     and never used in fitting.
//   - A GPU's figures come from hwdb only; a file whose GPU hwdb does not
//     know is reported as skipped, never priced with invented figures.
package calibrate
