package cost

import (
	"sort"

	"github.com/onnxcost/onnxcost/hwdb"
	"github.com/onnxcost/onnxcost/ir"
)

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

// wantedPrecision is the path a kernel of class cl would use at compute
// dtype name (one of computeDTypes' keys, or a dtype-derived name).
// Winograd kernels run on the vector units of the dtype: cuDNN's Winograd
// kernels do not use tensor cores (TF32 included), so a WinogradConv at
// tf32 is priced on the fp32 vector path, as WinogradKernel prices it.
func wantedPrecision(dtype string, cl KernelClass) hwdb.Precision {
	if cl == ClassWinograd {
		return vectorPath(wantedPrecision(dtype, ClassGEMM))
	}
	gemm := isGEMMLike(cl)
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

// nodeDTypeName derives a compute dtype name from the node's tensors when
// no --dtype is given: the first floating input (or output) decides;
// 8-bit integer GEMM inputs mean int8.
func nodeDTypeName(n *ir.Node) string {
	for _, vs := range [][]*ir.Value{n.Inputs, n.Outputs} {
		for _, v := range vs {
			if v == nil {
				continue
			}
			switch v.DType {
			case ir.Float16:
				return "fp16"
			case ir.BFloat16:
				return "bf16"
			case ir.Float64:
				return "fp64"
			case ir.Float8E4M3FN, ir.Float8E4M3FNUZ, ir.Float8E5M2, ir.Float8E5M2FNUZ:
				return "fp8"
			case ir.Float32:
				return "fp32"
			}
		}
	}
	if x := n.In(0); x != nil && (x.DType == ir.Int8 || x.DType == ir.Uint8) {
		return "int8"
	}
	return "fp32"
}

// precisionFor picks the node's compute path on the analyzer's GPU.
func (a *analyzer) precisionFor(n *ir.Node, cl KernelClass) hwdb.Precision {
	name := a.opt.DType
	if name == "" {
		name = nodeDTypeName(n)
	}
	want := wantedPrecision(name, cl)
	got := resolvePrecision(a.gpu, want)
	if got != want {
		a.fallbacks[string(want)+"->"+string(got)]++
	}
	return got
}

// resolvePrecision walks want's fallback chain to the first path the GPU
// has a rate for; fp32 when none has.
func resolvePrecision(g *hwdb.GPU, want hwdb.Precision) hwdb.Precision {
	if g.PeakFor(want) > 0 {
		return want
	}
	for _, p := range precisionFallback[want] {
		if g.PeakFor(p) > 0 {
			return p
		}
	}
	return hwdb.FP32
}

// finishWarnings adds one warning per precision fallback, in sorted order.
func (a *analyzer) finishWarnings() {
	keys := make([]string, 0, len(a.fallbacks))
	for k := range a.fallbacks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.warnf("GPU %s has no rate for the wanted compute path (%s): %d node(s) costed on the fallback", a.gpu.Name, k, a.fallbacks[k])
	}
	switch {
	case !(a.gpu.TDPWatts > 0):
		a.warnf("GPU %s has no TDP figure: energy is not estimated", a.gpu.Name)
	case !(a.gpu.IdleWatts > 0):
		a.warnf("GPU %s has no idle power figure: %.0f%% of TDP assumed for the energy model", a.gpu.Name, idleFraction*100)
	}
	if a.gpu.PeakFor(hwdb.FP32) == 0 {
		a.warnf("GPU %s has no fp32 rate: compute time is not estimated", a.gpu.Name)
	}
}
