package calib

// ErrorBand is how far the uncalibrated time model is from measurements
// for one kernel class on one GPU family, measured on rows the model was
// not fitted to: the 10th, 50th and 90th percentiles of measured/predicted
// over N kernels. An 80% interval on a kernel of that class is
// [Q10·t, Q90·t].
type ErrorBand struct {
	// Family is the GPU architecture family as hwdb's arch field starts
	// ("Pascal", "Volta", "Turing", "Ampere", "Ada Lovelace", "Hopper"),
	// or "*" for the band used where a family has no rows of the class.
	Family string
	// Class is a perf.KernelClass ("gemm", "conv", ...), or "*" for the
	// band of every class together.
	Class         string
	N             int
	Q10, Q50, Q90 float64
	// Source names the data set and rows (and the command that measured
	// the band).
	Source string
}
