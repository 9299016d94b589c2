package profile

import (
	"regexp"
	"strings"
)

// ortHelpers are name prefixes of nodes onnxruntime inserts with no ONNX
// counterpart, and whether each serves the next node (true) or the
// previous one: MatMulAddFusion's reshapes around a 3-D Gemm
// (onnxruntime/core/optimizer/matmul_add_fusion.cc) and the NCHWc
// transformer's layout reorders (nchwc_transformer.cc). Their time is
// charged to the node they serve.
var ortHelpers = []struct {
	prefix string
	next   bool
}{
	{"gemm_input_reshape", true},
	{"gemm_output_reshape", false},
	{"ReorderInput", true},
	{"ReorderOutput", false},
}

// ortCopies are the op types of the copies onnxruntime's memcpy
// transformer inserts between a GPU execution provider and the CPU (an
// input uploaded before the node that reads it, an output downloaded
// after the node that wrote it), and whether each serves the next node.
var ortCopies = map[string]bool{"MemcpyFromHost": true, "MemcpyToHost": false}

// ortPropagatedQDQ is the tensor a QuantizeLinear or DequantizeLinear
// onnxruntime's QDQ propagation inserted re-quantizes
// (qdq_propagation.cc: after a MaxPool, Reshape, Transpose, Squeeze,
// Unsqueeze or Slice whose output has no Q/DQ of its own, a Q named
// "<tensor>_q" and a DQ per reader, "<tensor>_dq", "<tensor>_dq1", ...,
// each perhaps "_token_<n>" more): the matcher charges them to the
// tensor's producer, whose output they quantize.
func ortPropagatedQDQ(e Event) (string, bool) {
	re := map[string]*regexp.Regexp{"QuantizeLinear": ortPropQ, "DequantizeLinear": ortPropDQ}[e.OpType]
	if re == nil {
		return "", false
	}
	m := re.FindStringSubmatch(e.Name)
	if m == nil || m[1] == "" {
		return "", false
	}
	return m[1], true
}

var (
	ortPropQ  = regexp.MustCompile(`^(.*)_q(_token_\d+)?$`)
	ortPropDQ = regexp.MustCompile(`^(.*)_dq\d*(_token_\d+)?$`)
)

// ortLayoutTranspose reports whether e is named as the transposes
// onnxruntime's layout transformation inserts around the nodes it runs
// channels-last (the NHWC transformer's quantized convolutions and pools:
// Graph::GenerateNodeName("Transpose"), "Transpose" or
// "Transpose_token_<n>"): the matcher charges one that no node of the
// model matched to the node it feeds, whose channels-last kernel it
// exists for, as it charges a host copy to the node it serves.
func ortLayoutTranspose(e Event) bool {
	return e.OpType == "Transpose" && ortLayoutName.MatchString(e.Name)
}

var ortLayoutName = regexp.MustCompile(`^Transpose(_token_\d+)?$`)

// ortHelper reports whether e is an onnxruntime-inserted node, and which
// neighbour it serves.
func ortHelper(e Event) (helper, next bool) {
	if next, ok := ortCopies[e.OpType]; ok {
		return true, next
	}
	if _, ok := ortCastTensor(e.Name); ok {
		// One the data flow did not place (a constant inside an inlined
		// function body) converts for the node after it.
		return true, true
	}
	for _, h := range ortHelpers {
		if strings.HasPrefix(e.Name, h.prefix) {
			return true, h.next
		}
	}
	return false, false
}

// ortSuffix matches what onnxruntime appends to the name of a node it
// creates in a fusion, innermost last, so that stripping repeatedly
// recovers an ONNX name: Graph::GenerateNodeName's "_token_<n>" on a
// clash; "/LayerNormFusion/" (layer_norm_fusion.cc, after the Mul),
// "/MatMulAddFusion" (matmul_add_fusion.cc, after the MatMul),
// "/MatMulScaleFusion/" (matmul_scale_fusion.cc), "_new_reshape"
// (reshape_fusion.cc), "_nchwc" and "_bn_nchwc" (nchwc_transformer.cc,
// after the name of the output tensor: a Conv, pool or Resize, and a
// BatchNormalization it runs as a depthwise 1x1 Conv), "_nhwc"
// (nhwc_transformer.cc, the quantized convolutions' NHWC form, likewise),
// "/SimplifiedLayerNormFusion/" and
// "/SkipLayerNormFusion/" (skip_layer_norm_fusion.cc),
// "/GatherSliceToSplitFusion" (gather_slice_fusion.cc, after the last
// Slice): every fusion names its node "<first node>/<Name>Fusion", with
// or without a closing slash, so any such component is stripped. In a QDQ
// model, "/duplicated" (ensure_unique_dq_for_node_unit.cc: a copy of a
// DequantizeLinear for each further node it feeds, which runs the same
// work again) and "_bias_dq", "_bias_int32", "_bias_div_round",
// "_bias_div" (bias_quantization.cc: a Conv's or Gemm's float bias
// quantized to int32 and dequantized again, after the Conv or Gemm), and
// "_pre_q" (qdq_propagation.cc: the output a node's QuantizeLinear was
// inserted after is renamed "<tensor>_pre_q", and a MaxPool the NCHWc
// transformer then takes is named after that).
var ortSuffix = regexp.MustCompile(`(_token_\d+|/[A-Za-z0-9]+Fusion/?|_new_reshape|_bn_nchwc|_nchwc|_nhwc|/duplicated|_bias_dq|_bias_int32|_bias_div_round|_bias_div|_pre_q)$`)

// ortCastPrefix starts the name of a Cast onnxruntime inserts for a
// node its provider runs at another precision (insert_cast_transformer.cc:
// the CPU provider's fp32 kernels inside an fp16 model), followed by the
// name of the tensor converted and, on a clash, "_token_<n>".
const ortCastPrefix = "InsertedPrecisionFreeCast_"

// ortCastTensor is the tensor an inserted Cast named name converts.
func ortCastTensor(name string) (string, bool) {
	t, ok := strings.CutPrefix(name, ortCastPrefix)
	if !ok || t == "" {
		return "", false
	}
	if loc := ortToken.FindStringIndex(t); loc != nil && loc[0] > 0 {
		t = t[:loc[0]]
	}
	return t, true
}

var ortToken = regexp.MustCompile(`_token_\d+$`)

// ortCandidates is name and the names left by stripping fusion suffixes
// one at a time, in that order.
func ortCandidates(name string) []string {
	out := []string{name}
	for {
		loc := ortSuffix.FindStringIndex(name)
		if loc == nil || loc[0] == 0 {
			return out
		}
		name = name[:loc[0]]
		out = append(out, name)
	}
}

// outputSuffix is how torch.onnx names a node's outputs: "<node>_output_<i>".
var outputSuffix = regexp.MustCompile(`_output_\d+$`)

// opFromName is the op type torch.onnx puts last in a node name
// ("/layer1/conv1/Conv" → "Conv", ".../MatMul_1" → "MatMul"), or that a
// generated name for an unnamed node starts with ("MatMul_40": onnxruntime's
// and onnxcost's "<OpType>_<i>"); "" for a name of neither form.
func opFromName(name string) string {
	i := strings.LastIndex(name, "/")
	if i < 0 {
		if j := strings.LastIndex(name, "_"); j > 0 && j < len(name)-1 && strings.Trim(name[j+1:], "0123456789") == "" {
			return name[:j]
		}
		return ""
	}
	op := name[i+1:]
	if j := strings.LastIndex(op, "_"); j > 0 && strings.Trim(op[j+1:], "0123456789") == "" {
		op = op[:j]
	}
	return op
}

// scopeKey turns a torch.onnx node name into the module path that made
// it: "/layer1/layer1.0/conv1/Conv" → "layer1.0.conv1" (each scope
// component is the child's name, prefixed by its parent's component for
// the children of a container: a Sequential's "block" holds "block.0",
// which holds "block.0.0", so "/features/features.9/block/block.0/
// block.0.0/Conv" is "features.9.block.0.0").
func scopeKey(name string) string {
	parts := strings.Split(strings.Trim(name, "/"), "/")
	if len(parts) < 2 {
		return ""
	}
	path, last := "", ""
	for _, c := range parts[:len(parts)-1] {
		switch {
		case path == "":
			path = c
		case strings.HasPrefix(c, last+"."):
			path = path[:len(path)-len(last)] + c
		default:
			path += "." + c
		}
		last = c
	}
	return path
}

// atenOps maps PyTorch aten ops to the ONNX op type torch.onnx exports
// them as; the first listed is the usual one. Small on purpose: ops
// outside it keep their aten name and match by annotation only.
var atenOps = map[string]string{
	"aten::conv1d": "Conv", "aten::conv2d": "Conv", "aten::conv3d": "Conv",
	"aten::convolution": "Conv", "aten::_convolution": "Conv",
	"aten::cudnn_convolution": "Conv", "aten::mkldnn_convolution": "Conv",
	"aten::linear": "Gemm", "aten::addmm": "Gemm", "aten::mm": "MatMul",
	"aten::matmul": "MatMul", "aten::bmm": "MatMul", "aten::baddbmm": "MatMul",
	"aten::batch_norm": "BatchNormalization", "aten::native_batch_norm": "BatchNormalization",
	"aten::cudnn_batch_norm": "BatchNormalization", "aten::_batch_norm_impl_index": "BatchNormalization",
	"aten::layer_norm": "LayerNormalization", "aten::native_layer_norm": "LayerNormalization",
	"aten::relu": "Relu", "aten::relu_": "Relu", "aten::gelu": "Gelu",
	"aten::add": "Add", "aten::add_": "Add", "aten::mul": "Mul", "aten::div": "Div",
	"aten::softmax": "Softmax", "aten::_softmax": "Softmax",
	"aten::max_pool2d": "MaxPool", "aten::max_pool2d_with_indices": "MaxPool",
	"aten::adaptive_avg_pool2d": "GlobalAveragePool", "aten::avg_pool2d": "AveragePool",
	"aten::flatten": "Flatten", "aten::cat": "Concat",
	"aten::transpose": "Transpose", "aten::permute": "Transpose",
}

// atenOp is the ONNX op type of an aten op, "" when not in atenOps.
func atenOp(aten string) string { return atenOps[aten] }

// fusedOps lists, for an op a runtime runs in place of several ONNX
// nodes, the ONNX op types it absorbs (signature) and those that mark
// where it starts when its name gives no node (seeds). The signatures
// follow onnxruntime's fusions (onnxruntime/core/optimizer: conv_*_fusion,
// matmul_add_fusion, gemm_activation_fusion, matmul_scale_fusion,
// layer_norm_fusion, skip_layer_norm_fusion, gelu_fusion,
// bias_gelu_fusion, fast_gelu_fusion, attention_fusion,
// bias_softmax_fusion) and the NCHWc Conv, which takes BatchNormalization,
// an activation and a residual Add/Sum.
var fusedOps = map[string]struct{ sig, seeds []string }{
	"Conv":                   {[]string{"Conv", "BatchNormalization", "Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Add", "Sum"}, []string{"Conv"}},
	"FusedConv":              {[]string{"Conv", "BatchNormalization", "Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Add", "Sum"}, []string{"Conv"}},
	"Gemm":                   {[]string{"Gemm", "MatMul", "Add"}, []string{"Gemm", "MatMul"}},
	"FusedGemm":              {[]string{"Gemm", "MatMul", "Add", "Relu", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "Clip"}, []string{"Gemm", "MatMul"}},
	"FusedMatMul":            {[]string{"MatMul", "Mul", "Div", "Transpose"}, []string{"MatMul"}},
	"LayerNormalization":     {[]string{"ReduceMean", "Sub", "Pow", "Add", "Sqrt", "Div", "Mul", "Cast", "LayerNormalization"}, []string{"ReduceMean", "LayerNormalization"}},
	"SkipLayerNormalization": {[]string{"ReduceMean", "Sub", "Pow", "Add", "Sqrt", "Div", "Mul", "Cast", "LayerNormalization"}, []string{"ReduceMean", "LayerNormalization"}},
	"SimplifiedLayerNormalization": {[]string{"Pow", "ReduceMean", "Add", "Sqrt", "Div", "Reciprocal", "Mul", "Cast"},
		[]string{"Pow", "ReduceMean"}},
	"SkipSimplifiedLayerNormalization": {[]string{"Pow", "ReduceMean", "Add", "Sqrt", "Div", "Reciprocal", "Mul", "Cast"},
		[]string{"Pow", "ReduceMean"}},
	"Gelu":               {[]string{"Div", "Erf", "Add", "Mul", "Gelu"}, []string{"Erf", "Gelu"}},
	"BiasGelu":           {[]string{"Div", "Erf", "Add", "Mul", "Gelu"}, []string{"Erf", "Gelu"}},
	"FastGelu":           {[]string{"Mul", "Pow", "Add", "Tanh", "Gelu"}, []string{"Tanh", "Gelu"}},
	"QuickGelu":          {[]string{"Mul", "Sigmoid"}, []string{"Sigmoid"}},
	"BiasSoftmax":        {[]string{"Add", "Softmax"}, []string{"Softmax"}},
	"Attention":          {[]string{"MatMul", "Add", "Reshape", "Transpose", "Softmax", "Div", "Mul"}, []string{"Softmax"}},
	"MultiHeadAttention": {[]string{"MatMul", "Add", "Reshape", "Transpose", "Softmax", "Div", "Mul"}, []string{"Softmax"}},

	// PyTorch ops atenOps leaves by name (inside a submodule its
	// annotation matches them to the module's nodes), with the ONNX op
	// types torch.onnx exports them as, for a call from the model's own
	// forward, which no submodule annotation names (the root scope's
	// "/GlobalAveragePool", "/Tanh"): placed by data flow and position
	// like a mapped op. A mean over the spatial axes exports as
	// GlobalAveragePool or ReduceMean (torchvision's MobileNetV2 pools
	// with adaptive_avg_pool2d, which eager PyTorch runs as aten::mean).
	"aten::mean":    {[]string{"ReduceMean", "GlobalAveragePool"}, []string{"ReduceMean", "GlobalAveragePool"}},
	"aten::tanh":    {[]string{"Tanh"}, []string{"Tanh"}},
	"aten::sigmoid": {[]string{"Sigmoid"}, []string{"Sigmoid"}},
	"aten::sub":     {[]string{"Sub"}, []string{"Sub"}},
	"aten::rsub":    {[]string{"Sub"}, []string{"Sub"}},
	"aten::neg":     {[]string{"Neg"}, []string{"Neg"}},
	"aten::exp":     {[]string{"Exp"}, []string{"Exp"}},
	"aten::pow":     {[]string{"Pow"}, []string{"Pow"}},
	"aten::sqrt":    {[]string{"Sqrt"}, []string{"Sqrt"}},
	"aten::cos":     {[]string{"Cos"}, []string{"Cos"}},
	"aten::sin":     {[]string{"Sin"}, []string{"Sin"}},
	"aten::arange":  {[]string{"Range"}, []string{"Range"}},
}

// signature is the set of ONNX op types an event of op type op may
// cover: fusedOps' signature, or op alone.
func signature(op string) []string {
	if f, ok := fusedOps[op]; ok {
		return f.sig
	}
	return []string{op}
}

// seeds are the ONNX op types that can stand for an event of op type op.
func seeds(op string) []string {
	if f, ok := fusedOps[op]; ok {
		return f.seeds
	}
	return []string{op}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
