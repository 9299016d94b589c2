package passes

import (
	"slices"
	"strings"

	"github.com/onnxcost/onnxcost/ir"
)

// Where onnxruntime's CUDA execution provider runs the nodes it cannot
// fold.
//
// A value onnxruntime cannot compute when it builds the session (one that
// comes of a dim symbolic in the file: Session.Known) is computed at run
// time, and the CUDA provider decides where (GetCpuPreferredNodes,
// core/framework/fallback_cpu_capability.cc): Shape and Size write their
// output to host memory, and a node that reads such a host tensor runs on
// the CPU when every other input it reads is a small initializer (100
// elements at most) or a graph input, none of them fp16 or bf16, and it
// reads none of its host inputs as an argument the CUDA kernel itself
// takes in host memory (a Reshape's target, a Slice's bounds, Range's
// limits, ConstantOfShape's shape: such a node runs on the GPU). Its
// outputs are host tensors in turn. So a dynamic-batch export's shape
// arithmetic (Shape → Gather → Unsqueeze → Concat → a Reshape's target)
// runs on the host, and a tensor built at run time from a computed shape
// (Swin's shifted-window attention mask: ConstantOfShape, Slice, Expand,
// ScatterND on float data) runs as GPU kernels, where a graph with the
// dims bound folds both when the engine is built.

// cudaHostInputs lists, per op of the default domain, the inputs the CUDA
// provider's kernel reads in host memory (its registrations'
// InputMemoryType(OrtMemTypeCPUInput, i)), from the opset given on: an
// input that was an attribute before that opset is not listed before it.
var cudaHostInputs = map[string]struct {
	since  int64
	inputs []int
}{
	"Reshape":           {5, []int{1}},
	"Expand":            {8, []int{1}},
	"Slice":             {10, []int{1, 2, 3, 4}},
	"Unsqueeze":         {13, []int{1}},
	"Squeeze":           {13, []int{1}},
	"ConstantOfShape":   {9, []int{0}},
	"Range":             {11, []int{0, 1, 2}},
	"Tile":              {6, []int{1}},
	"Pad":               {11, []int{1, 2, 3}}, // the axes (3) since 18
	"Split":             {13, []int{1}},
	"TopK":              {10, []int{1}},
	"Resize":            {10, []int{1, 2, 3}},
	"Upsample":          {9, []int{1}},
	"OneHot":            {9, []int{1, 2}},
	"ReduceSum":         {13, []int{1}},
	"CumSum":            {11, []int{1}},
	"Trilu":             {14, []int{1}},
	"Dropout":           {12, []int{1, 2}},
	"Clip":              {11, []int{1, 2}},
	"NonMaxSuppression": {10, []int{2, 3, 4}},
	"If":                {1, []int{0}},
	"Loop":              {1, []int{0, 1}},
	"Scan":              {8, []int{0}},
}

// cudaContribHostInputs is cudaHostInputs for the com.microsoft ops
// (contrib_ops/cuda): the past or total sequence length the attention
// kernels read on the host.
var cudaContribHostInputs = map[string][]int{
	"Attention":                       {6},
	"MultiHeadAttention":              {8},
	"GroupQueryAttention":             {6},
	"DecoderMaskedSelfAttention":      {6},
	"DecoderMaskedMultiHeadAttention": {7, 8},
}

// reduceAxesInputSince is the opset from which every Reduce* op but
// ReduceSum (13) takes its axes as an input, read in host memory.
const reduceAxesInputSince = 18

// cudaReadsOnHost reports whether the CUDA provider's kernel for n reads
// input i in host memory.
func cudaReadsOnHost(n *ir.Node, i int, opset int64) bool {
	switch n.Domain {
	case "":
	case "com.microsoft":
		return slices.Contains(cudaContribHostInputs[n.OpType], i)
	default:
		return false
	}
	if n.OpType == "Scan" && opset >= 9 {
		return false // Scan-8's sequence lengths only
	}
	if e, ok := cudaHostInputs[n.OpType]; ok {
		return opset >= e.since && slices.Contains(e.inputs, i)
	}
	return i == 1 && opset >= reduceAxesInputSince && strings.HasPrefix(n.OpType, "Reduce")
}

// smallHostInit is fallback_cpu_capability.cc's kSmallInitializerThreshold:
// an initializer of at most this many elements does not keep a node off
// the CPU.
const smallHostInit = 100

// hostPlaced returns the values of g the CUDA provider computes on the
// host, given known, the values onnxruntime folded when it built the
// session (see the comment at the top of this file). Nodes are visited in
// graph order, which is topological, so a node's host inputs are marked
// before it is.
func hostPlaced(g *ir.Graph, known map[*ir.Value]bool, opset int64) map[*ir.Value]bool {
	host := map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		if n.AllOutputs(func(o *ir.Value) bool { return foldKnown(o, known) }) {
			continue // an initializer once the session is built
		}
		if n.Domain == "" && (n.OpType == "Shape" || n.OpType == "Size") {
			markOutputs(n, host)
			continue
		}
		if runsOnHost(g, n, opset, host, known) {
			markOutputs(n, host)
		}
	}
	return host
}

// runsOnHost is GetCpuPreferredNodes' test for one node: it reads a host
// tensor, and every input is a small initializer, a graph input or a host
// tensor its CUDA kernel would not read in host memory, none of them
// 16-bit floats.
func runsOnHost(g *ir.Graph, n *ir.Node, opset int64, host, known map[*ir.Value]bool) bool {
	if n.Domain != "" || len(n.Subgraphs()) > 0 {
		return false
	}
	readsHost := false
	for i, v := range n.Inputs {
		if v == nil {
			continue
		}
		if v.DType == ir.Float16 || v.DType == ir.BFloat16 {
			return false
		}
		if foldKnown(v, known) {
			if c, ok := v.Shape.NumElements(); ok && c <= smallHostInit {
				continue
			}
			return false
		}
		if g.IsGraphInput(v) {
			continue
		}
		if !host[v] || cudaReadsOnHost(n, i, opset) {
			return false
		}
		readsHost = true
	}
	return readsHost
}

// markOutputs marks every output of n in set.
func markOutputs(n *ir.Node, set map[*ir.Value]bool) {
	for _, o := range n.Outputs {
		if o != nil {
			set[o] = true
		}
	}
}

// ORTCopies records in g.Session the copies onnxruntime's memcpy
// transformer (core/optimizer/transformer_memcpy.cc) adds to the plan g
// between the CUDA provider's nodes and the host: one MemcpyFromHost for
// each host value (Session.Host) a GPU kernel reads in device memory,
// before its first such reader, and one MemcpyToHost for each value a GPU
// kernel wrote that a kernel reads in host memory (a Reshape target or
// Slice bounds computed by a Range on the GPU), which the host waits for.
// Initializers and graph inputs are copied when the session is built or
// the call binds its inputs, not by nodes. opset is the default domain's.
func ORTCopies(g *ir.Graph, opset int64) {
	s := g.Session
	if s == nil {
		return
	}
	s.Uploads, s.Downloads = map[*ir.Node][]*ir.Value{}, map[*ir.Node][]*ir.Value{}
	up, down := map[*ir.Value]bool{}, map[*ir.Value]bool{}
	for _, n := range g.Nodes {
		if !s.OnDevice(n) {
			continue
		}
		for i, v := range n.Inputs {
			if v == nil || s.Ahead(v) || g.IsGraphInput(v) {
				continue
			}
			hostIn := cudaReadsOnHost(n, i, opset)
			switch {
			case s.Host[v] && !hostIn && !up[v]:
				up[v] = true
				s.Uploads[n] = append(s.Uploads[n], v)
			case !s.Host[v] && hostIn && !down[v]:
				down[v] = true
				s.Downloads[n] = append(s.Downloads[n], v)
			}
		}
	}
}
