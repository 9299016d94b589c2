package calib

import "github.com/onnxcost/onnxcost/hwdb"

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
	Class string
	// Precision is the precision group of the kernels' compute path
	// (PrecisionGroup), "" for the band of every precision together: one
	// class runs other kernels on other paths (T4's fp16 convolutions,
	// on tensor cores, sit within [0.71, 1.24] of the model on DeepBench's
	// held-out rows; its int8 ones, some falling back to fp32 math, span
	// [0.32, 1.87]).
	Precision     string
	N             int
	Q10, Q50, Q90 float64
	// Source names the data set and rows (and the command that measured
	// the band).
	Source string
}

// precisionGroups are PrecisionGroup's names.
var precisionGroups = []string{"fp32", "fp64", "tf32", "16bit", "8bit"}

// PrecisionGroup is the band key of a compute path: "fp32", "fp64",
// "tf32", "16bit" (fp16 and bf16, tensor or vector), "8bit" (int8 and
// fp8), "" for none of them. Paths within a group run the same kind of
// library kernel (SIMT, tensor-core MMA at one operand width).
// computePaths are PathOf's values.
var computePaths = []string{"tensor", "vector"}

// PathOf is the unit a precision runs on: "tensor" for the tensor-core
// (matrix-core) precisions, "vector" for the CUDA cores' (SIMT, DP4A).
// Within a path one library family serves the precisions (cuBLAS's
// tensor-core GEMMs at TF32, fp16 and bf16; its SGEMMs).
func PathOf(p hwdb.Precision) string {
	switch p {
	case hwdb.TF32Tensor, hwdb.FP16Tensor, hwdb.BF16Tensor, hwdb.FP8Tensor, hwdb.INT8Tensor, hwdb.FP64Tensor:
		return "tensor"
	}
	return "vector"
}

func PrecisionGroup(p hwdb.Precision) string {
	switch p {
	case hwdb.FP32:
		return "fp32"
	case hwdb.FP64, hwdb.FP64Tensor:
		return "fp64"
	case hwdb.TF32Tensor:
		return "tf32"
	case hwdb.FP16, hwdb.FP16Tensor, hwdb.BF16, hwdb.BF16Tensor:
		return "16bit"
	case hwdb.INT8, hwdb.INT8Tensor, hwdb.FP8Tensor:
		return "8bit"
	}
	return ""
}
