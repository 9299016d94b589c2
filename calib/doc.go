// Package calib turns measured times into a calibration of the time model
// and puts an 80% interval on every time estimate.
//
// A calibration multiplies each term of a kernel's time (compute,
// latency, memory: perf.KernelTime's) by a factor looked up by kernel
// class, the node's ONNX op type, its GEMM's N × K (the shape cells), the
// term, the term's size and the kernel's position against the ridge
// point (Calibration,
// Applied.TermFactor), which cost.Analyze applies to every
// kernel as perf.BodyS(fc·C, fl·L, fm·M). It is fitted by Fit from measured
// calls priced uncalibrated (Row), predicting each the same way, written
// as a small commented YAML file (Calibration.Write, Load) and bound to
// the GPU being priced by Calibration.For: on the GPU it was fitted on it
// applies in full; on another GPU only what it learned about kernels
// relative to each other (class, op and term cells) is carried, shrunk,
// never what the fitted GPU's peaks were off by (GPUFactor, centred on
// the typical op so that one class's or op's error stays in its cells)
// nor its shape and size cells.
//
// The size cells are interpolated over log time by one rule
// (monotoneSizeLog) that the fit and the application share, so a
// calibrated term never falls as it grows and never grows faster than
// its uncalibrated time. The ridge cells (ridge.go) key a kernel's shape
// as the model sees it, its compute time over its memory time (how far
// it sits from the GPU's ridge point), interpolated by a rule
// (monotoneRidgeLog) that lets the compute factor only fall and the
// memory factor only rise along it, at most half as fast: then a kernel
// with more FLOPs or more bytes is never priced faster. Like the
// size cells they stay on the GPU fitted.
//
// Interval prices the uncertainty: each kernel's time spans the 10th to
// 90th percentile of measured/predicted for its class on its GPU family
// (builtinBands, or the calibration's own held-out residuals on the GPU
// it was fitted on), added as fully correlated errors.
//
// The package does not import cost or pipeline: cost calls a calibration
// through TermFactor, and the command line reads measurement tables
// with ReadMeasurements and prices them before calling Fit.
package calib
