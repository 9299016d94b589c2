package perf

import "github.com/onnxcost/onnxcost/hwdb"

// Precision choice. GEMM-like kernels (Conv, Gemm, MatMul, recurrent,
// attention) use tensor cores whenever the compute dtype has a tensor path:
//
//	fp32 -> fp32 (vector) for every kernel (PyTorch/ORT default, no TF32)
//	tf32 -> tf32_tensor for GEMM-like, fp32 vector for the rest
//	fp16 -> fp16_tensor for GEMM-like, fp16 vector for the rest
//	bf16 -> bf16_tensor for GEMM-like, bf16 vector for the rest
//	fp8  -> fp8_tensor for GEMM-like, fp16 vector for the rest
//	int8 -> int8_tensor for GEMM-like, fp16 vector for the rest (dequantised epilogues)
//
// With no --dtype the node's own floating dtype decides (float64 -> fp64,
// float16 -> fp16, bfloat16 -> bf16, 8-bit integer GEMM inputs -> int8).
// When the GPU has no rate for the chosen path the fallback chain below is
// walked and one warning per (wanted, used) pair is reported.
var precisionFallback = map[hwdb.Precision][]hwdb.Precision{
	hwdb.TF32Tensor: {hwdb.FP32},
	hwdb.FP16Tensor: {hwdb.FP16, hwdb.FP32},
	hwdb.BF16Tensor: {hwdb.BF16, hwdb.FP32},
	hwdb.FP8Tensor:  {hwdb.FP16Tensor, hwdb.FP16, hwdb.FP32},
	hwdb.INT8Tensor: {hwdb.INT8, hwdb.FP16Tensor, hwdb.FP32},
	hwdb.INT8:       {hwdb.FP32},
	hwdb.FP16:       {hwdb.FP32},
	hwdb.BF16:       {hwdb.FP32},
	hwdb.FP64Tensor: {hwdb.FP64, hwdb.FP32},
	hwdb.FP64:       {hwdb.FP32},
}

// WantedPrecision is the path a kernel of class cl would use at compute
// dtype name (fp32, tf32, fp16, bf16, fp8, int8 or fp64).
// Winograd kernels run on the vector units of the dtype: cuDNN's Winograd
// kernels do not use tensor cores (TF32 included), so a WinogradConv at
// tf32 is priced on the fp32 vector path, as WinogradKernel prices it.
func WantedPrecision(dtype string, cl KernelClass) hwdb.Precision {
	if cl == ClassWinograd {
		return vectorPath(WantedPrecision(dtype, ClassGEMM))
	}
	gemm := cl.GEMMLike()
	switch dtype {
	case "tf32":
		if gemm {
			return hwdb.TF32Tensor
		}
	case "fp16":
		if gemm {
			return hwdb.FP16Tensor
		}
		return hwdb.FP16
	case "bf16":
		if gemm {
			return hwdb.BF16Tensor
		}
		return hwdb.BF16
	case "fp8":
		if gemm {
			return hwdb.FP8Tensor
		}
		return hwdb.FP16
	case "int8":
		if gemm {
			return hwdb.INT8Tensor
		}
		return hwdb.FP16
	case "fp64":
		if gemm {
			return hwdb.FP64Tensor
		}
		return hwdb.FP64
	}
	return hwdb.FP32
}

// ResolvePrecision walks want's fallback chain to the first path the GPU
// has a rate for; fp32 when none has. A path the GPU has is still left
// for fp32 where fp32 is faster and at least as precise: that is what
// cuDNN and cuBLAS do on parts whose native half-precision rate is a
// fraction of fp32 (Pascal GP102/GP104/GP106: fp16 at 1/64 of fp32), where
// they keep fp16 tensors in memory and compute in fp32 ("pseudo-fp16";
// DeepBench's fp16 rows on those parts run at the fp32 rate).
func ResolvePrecision(g *hwdb.GPU, want hwdb.Precision) hwdb.Precision {
	got := hwdb.FP32
	if g.PeakFor(want) > 0 {
		got = want
	} else {
		for _, p := range precisionFallback[want] {
			if g.PeakFor(p) > 0 {
				got = p
				break
			}
		}
	}
	if fasterInFP32(got) && g.PeakFor(hwdb.FP32) > g.PeakFor(got) {
		return hwdb.FP32
	}
	return got
}

// fasterInFP32 reports whether a path may be run in fp32 math instead,
// losing no precision: half-precision vector math and TF32.
func fasterInFP32(p hwdb.Precision) bool {
	switch p {
	case hwdb.FP16, hwdb.BF16, hwdb.TF32Tensor:
		return true
	}
	return false
}
