package report

import "github.com/onnxcost/onnxcost/ir"

// Eager PyTorch's host cost differs by op: a bare add is the cheapest
// call there is, an nn.Conv2d with its bias or a batch norm costs four
// to five times as much (the argument checks, the cuDNN call, the bias's
// own add), a view a fifth. Our
// H200 machine timed each kind, called back to back on tiny tensors so
// the host sets the pace (scripts/measure_gpu.py --host-ops, PyTorch
// 2.11, testdata/measured/h200_sxm_host_ops.csv); hostOpUS keeps those
// microseconds, and a runtime's dispatch_us, the bare add, scales them
// (HostKindS), so a calibration or a --runtime-file that changes the
// host's speed changes every kind alike. TestHostOpTableMatchesMeasured
// holds the table to the CSV.
var hostOpUS = map[string]float64{
	"add":               7.28,
	"mul":               9.97,
	"relu":              10.81,
	"gelu":              11.01,
	"softmax":           11.33,
	"layer_norm":        21.88,
	"linear":            16.78,
	"matmul":            14.16,
	"bmm4d":             22.49,
	"conv2d":            15.13,
	"batch_norm":        34.80,
	"max_pool2d":        13.54,
	"cat":               11.47,
	"embedding":         12.51,
	"view":              1.46,
	"permute":           1.62,
	"contiguous":        16.58,
	"linear.module":     22.15,
	"conv2d.module":     33.85,
	"batch_norm.module": 27.49,
	"layer_norm.module": 22.19,
	"relu.module":       13.05,
}

// hostRefKind is the kind dispatch_us prices: the bare add.
const hostRefKind = "add"

// HostKindS is the host time of one eager call of kind under a runtime
// whose bare op costs dispatch; an unmeasured kind costs a generic
// pointwise op's (mul).
func HostKindS(dispatch float64, kind string) float64 {
	us, ok := hostOpUS[kind]
	if !ok {
		us = hostOpUS["mul"]
	}
	return dispatch * us / hostOpUS[hostRefKind]
}

// HostCallS is the host time of one call of kind under a runtime whose
// bare op costs dispatch and whose calls cost by kind times scale
// (hwdb.Runtime.OpCallScale); where scale is 0 every call costs dispatch.
func HostCallS(dispatch, scale float64, kind string) float64 {
	if scale <= 0 {
		return dispatch
	}
	return HostKindS(dispatch, kind) * scale
}

// ModuleCallS is the host time of one nn.Module call: module, times
// scale where the runtime prices its calls by kind.
func ModuleCallS(module, scale float64) float64 {
	if scale <= 0 {
		return module
	}
	return module * scale
}

// CallsScale is op_call_scale as a call of ops host calls pays it: the
// scale lumps what a model's forward adds between its calls (the Python
// that computes the next call's arguments, the caches the calls before
// it left cold), so only the calls that follow another in the forward
// pay it, (ops − 1) of ops: a model of one op is that op called back to
// back, which is how the host-op table timed it (LayerNorm alone
// 21.9 µs there, priced 38.5 µs a call at the whole scale and 30.0 µs
// so, call_us 6 included), and a whole model of hundreds of ops keeps
// the scale fitted on whole models within a fraction of a percent.
func CallsScale(scale float64, ops int) float64 {
	switch {
	case scale <= 0:
		return scale // every call costs dispatch (HostCallS)
	case ops <= 1:
		return 1
	}
	return 1 + (scale-1)*float64(ops-1)/float64(ops)
}

// NodesCallsScale is CallsScale over the host calls of nodes (the nodes
// HostKind names a call).
func NodesCallsScale(scale float64, nodes []NodeCost) float64 {
	ops := 0
	for i := range nodes {
		if HostKind(&nodes[i]) != "" {
			ops++
		}
	}
	return CallsScale(scale, ops)
}

// viewOps are the ops an eager framework runs as views when they launch
// nothing: a Python call and a new tensor header, no kernel.
var viewOps = map[string]bool{
	"Reshape": true, "Flatten": true, "Squeeze": true, "Unsqueeze": true,
	"Slice": true, "Expand": true, "Split": true, "Transpose": true,
}

// HostKind names the eager PyTorch call node n stands for, the key of
// its host cost; "" for a node the host does not call (a constant, a
// shape computation folded into Python integers).
func HostKind(n *NodeCost) string {
	op := n.OpType
	if n.Launches <= 0 {
		switch {
		case op == "Transpose" && n.Params > 0:
			// A weight's: torch.onnx writes F.linear of a 3-D input as
			// MatMul(x, Transpose(W)), with no Python call between.
			return ""
		case op == "Transpose":
			return "permute"
		case viewOps[op]:
			return "view"
		}
		return ""
	}
	switch op {
	case "Add", "Sub":
		return "add"
	case "Relu", "LeakyRelu", "Clip", "HardSigmoid", "HardSwish", "Sigmoid", "Tanh":
		return "relu"
	case "Gelu", "FastGelu", "BiasGelu", "QuickGelu", "Silu", "Mish", "Softplus":
		return "gelu"
	case "Softmax", "LogSoftmax", "ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceL2", "ArgMax":
		return "softmax"
	case "LayerNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization", "RMSNormalization",
		"GroupNormalization", "InstanceNormalization":
		return "layer_norm"
	case "BatchNormalization":
		return "batch_norm"
	case "Conv", "ConvTranspose", "FusedConv":
		return "conv2d"
	case "MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool":
		return "max_pool2d"
	case "Concat":
		return "cat"
	case "Gather", "GatherElements", "GatherND":
		return "embedding"
	case "Transpose":
		return "contiguous"
	case "Gemm", "FusedGemm", "MatMul", "FusedMatMul":
		// F.linear with a bias (addmm, its bias in cuBLASLt's epilogue)
		// costs more than a product alone (mm), which a bias-free
		// Linear is.
		if n.Params > 0 && len(n.Inputs) > 2 {
			return "linear"
		}
		if len(n.Outputs) > 0 && len(n.Outputs[0].Shape) >= 4 {
			return "bmm4d"
		}
		return "matmul"
	}
	return "mul"
}

// moduleKinds are the kinds timed as an nn.Module's call too: a node
// that is its module's only op pays that figure, the module call in it.
var moduleKinds = map[string]bool{"linear": true, "conv2d": true, "batch_norm": true, "layer_norm": true, "relu": true}

// nodeScope is the module path a node was called from ("" for none).
func nodeScope(n *NodeCost) string {
	if n.Module != "" {
		return n.Module
	}
	return ir.NamePath(n.Name)
}

// NodeHosts returns each node's host time under a runtime whose bare op
// costs dispatch and whose host calls cost by op kind with scale
// (hwdb.Runtime.OpCallScale; 0 for a runtime whose every kernel costs
// dispatch: an executor in C++, a compiled wrapper). Per node: one call
// of its op's kind, HostKindS × scale (the module form for a module's
// only op, a convolution with a bias: the measured call holds the
// module's), a view's call where it launches nothing; each further
// kernel at dispatch, and a library call's own kernels at
// LibraryLaunchHost (a GEMM library's helpers at nothing). With module >
// 0, one nn.Module call (module × scale, or module where scale is 0) for
// each module scope the nodes enter, charged to the first node in it: a
// scope and every scope above it, as the model's modules nest and each
// call of a reused module has its own scope ("relu", "relu_1"). A
// runtime with no dispatch has no host time per node.
func NodeHosts(dispatch, module, scale float64, nodes []NodeCost) []float64 {
	out := make([]float64, len(nodes))
	if dispatch <= 0 {
		return out
	}
	kinds := make([]string, len(nodes))
	calls := map[string]int{} // host calls per module scope
	for i := range nodes {
		if scale > 0 {
			kinds[i] = HostKind(&nodes[i])
		} else if nodes[i].Launches > 0 {
			kinds[i] = hostRefKind
		}
		if kinds[i] != "" {
			calls[nodeScope(&nodes[i])]++
		}
	}
	ops := 0
	for _, c := range calls {
		ops += c
	}
	scale = CallsScale(scale, ops)
	moduleCall := ModuleCallS(module, scale)
	called := map[string]bool{}
	for i := range nodes {
		n, kind := &nodes[i], kinds[i]
		if kind == "" {
			continue
		}
		scope := nodeScope(n)
		// A module whose forward is this one op, timed as a module
		// call; a convolution without a bias is the functional call
		// (torchvision's, before a batch norm): the module's timing
		// holds its bias's add.
		own := scale > 0 && scope != "" && calls[scope] == 1 && moduleKinds[kind] && (kind != "conv2d" || len(n.Inputs) > 2)
		if own {
			kind += ".module"
		}
		host := HostCallS(dispatch, scale, kind)
		if n.Launches > 1 {
			lib := min(max(n.LibraryLaunches, 0), n.Launches-1)
			helpers := min(max(n.HelperLaunches, 0), lib)
			host += (n.Launches-1-lib)*dispatch + (lib-helpers)*LibraryLaunchHost(dispatch)
		}
		if module > 0 {
			for s := scope; s != "" && !called[s]; s = ir.NamePath(s) {
				called[s] = true
				if !(own && s == scope) {
					host += moduleCall
				}
			}
		}
		out[i] = host
	}
	return out
}
