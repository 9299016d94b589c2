// Package sweep costs a model across batch sizes, symbolic dims, zoo
// parameters and GPUs: Run returns a Result (rows of time, throughput,
// peak memory and fit, per GPU the knee and largest fitting batch, and
// least-squares fits), which WriteText and WriteCSV print and whose JSON
// form Schema describes; Compare turns a one-point sweep into a GPU
// comparison with prices.
//
// The arithmetic underneath knows nothing of models: value lists
// ("1,2,4" or "1..256"), the search for the largest batch that fits
// (FindMaxBatch, over a Probe), the knee of a throughput curve, and
// polynomial fits.
package sweep
