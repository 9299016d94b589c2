// Package sweep holds the arithmetic of `onnxcost sweep`: value lists
// ("1,2,4" or "1..256"), the search for the largest batch that fits in a
// GPU's memory, the knee of a throughput curve, and least-squares fits of
// a cost against a swept dimension. It knows nothing of models or GPUs:
// the command line supplies the cost of one point as a function.
package sweep
