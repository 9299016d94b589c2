package cost

import "github.com/onnxcost/onnxcost/ir"

// modelDType names the compute dtype of a float model run as stored (no
// --dtype): the floating-point type holding most parameter and input
// elements, in the report's vocabulary (fp32, fp16, bf16, fp64, fp8).
// 8-bit integer tensors count only when no floating-point one is there
// ("int8"): a model with int8 weights and float activations dequantizes
// them and computes in float (weight-only quantization). A quantized
// model's own type comes from modelQuantized; Analyze prefers it.
func modelDType(g *ir.Graph) string {
	// float64: shapes are bounded only in float64 (ir.Limits), and a sum
	// of int64 counts could wrap.
	count := map[ir.DType]float64{}
	add := func(v *ir.Value) {
		if v == nil {
			return
		}
		n, ok := v.Shape.NumElements()
		if !ok {
			n = 1
		}
		count[v.DType] += float64(n)
	}
	for _, v := range g.Initializers {
		add(v)
	}
	for _, v := range g.Inputs {
		add(v)
	}
	names := []struct {
		dt   ir.DType
		name string
	}{{ir.Float32, "fp32"}, {ir.Float16, "fp16"}, {ir.BFloat16, "bf16"}, {ir.Float64, "fp64"}, {ir.Float8E4M3FN, "fp8"}, {ir.Float8E5M2, "fp8"}, {ir.Int8, "int8"}, {ir.Uint8, "int8"}}
	best, bestN := "fp32", -1.0
	for _, c := range names {
		if n, ok := count[c.dt]; ok && n > bestN && (c.dt.IsFloat() || bestN < 0) {
			best, bestN = c.name, n
		}
	}
	return best
}
