// Package calibrate fits the time model's parameters (cost/perf.Params) to
// DeepBench's measured kernel times and reports the held-out error. Only
// scripts/calibrate and tests use it; the numbers it fits are committed in
// cost/perf/calibration_params.go.
//
// Invariants:
//   - Every third row of each (GPU, kind) group, in file order, is held out
//     and never used in fitting.
//   - A GPU's figures come from hwdb only; a file whose GPU hwdb does not
//     know is reported as skipped, never priced with invented figures.
package calibrate
