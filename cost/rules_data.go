package cost

import (
	"math"

	"github.com/onnxcost/onnxcost/cost/perf"
	"github.com/onnxcost/onnxcost/internal/detmath"
	"github.com/onnxcost/onnxcost/ir"
)

// copyOps move data without arithmetic: one kernel, every input read once
// and every output written once.
var copyOps = []string{
	"Transpose", "Concat", "Split", "Tile", "Expand", "Pad",
	"DepthToSpace", "SpaceToDepth", "ReverseSequence", "CenterCropPad",
	"Compress", "MaxUnpool", "SplitToSequence", "Upsample",
}

// writeOps produce their output from attributes or a shape (generators):
// one kernel writing the output; small shape inputs are read.
var writeOps = map[string]float64{ // flops per output element
	"ConstantOfShape": 0,
	"EyeLike":         0,
	"Range":           1, // start + i*delta folded into one multiply-add; counted 1
	"OneHot":          1, // compare
	"Trilu":           1, // select
}

// randomOps draw one random number per output element: a Philox-style
// generator is integer work, then a transform (normal: Box-Muller log,
// sqrt, cos). Counted as 4 flops, with transcendentals per random* entry.
var randomOps = map[string]float64{
	"RandomUniform":     0,
	"RandomUniformLike": 0,
	"RandomNormal":      2,
	"RandomNormalLike":  2,
	"Bernoulli":         0,
}

func init() {
	// Views (ir.View) change only metadata: the output aliases the input
	// buffer (or is host-side bookkeeping), so no kernel runs and no
	// bytes move.
	for _, s := range ir.Ops() {
		if s.Domain == "" && s.Traits.Has(ir.View) {
			RegisterRule("", s.Name, viewRule)
		}
	}
	for _, op := range copyOps {
		RegisterRule("", op, copyRule)
	}
	for op := range writeOps {
		RegisterRule("", op, writeRule)
	}
	for op := range randomOps {
		RegisterRule("", op, randomRule)
	}
	RegisterRule("", "Slice", gatherRule)
	RegisterRule("", "Gather", gatherRule)
	RegisterRule("", "GatherElements", gatherRule)
	RegisterRule("", "GatherND", gatherRule)
	RegisterRule("", "Scatter", scatterRule)
	RegisterRule("", "ScatterElements", scatterRule)
	RegisterRule("", "ScatterND", scatterRule)
	RegisterRule("", "Dropout", dropoutRule)
	RegisterRule("", "NonZero", nonZeroRule)
	RegisterRule("", "Resize", resizeRule)
	RegisterRule("", "GridSample", gridSampleRule)
	RegisterRule("", "AffineGrid", affineGridRule)
	RegisterRule("", "RoiAlign", roiAlignRule)
	RegisterRule("", "MaxRoiPool", maxRoiPoolRule)
	RegisterRule("", "Col2Im", col2ImRule)
	RegisterRule("", "Det", detRule)
	RegisterRule("", "DFT", dftRule)
	RegisterRule("", "STFT", stftRule)
	RegisterRule(msDomain, "Rfft", realFFTRule(false))
	RegisterRule(msDomain, "Irfft", realFFTRule(true))
	for _, op := range []string{"HannWindow", "HammingWindow", "BlackmanWindow"} {
		RegisterRule("", op, windowRule)
	}
	RegisterRule("", "MelWeightMatrix", writeRule)
}

// viewRule: no kernel, no bytes.
func viewRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	return NodeEstimate{View: true, Class: perf.ClassData}, nil
}

func copyRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 1}
	// Only the data input moves: shape, pads, repeats and axes inputs are
	// small host-side operands, but they still count as bytes read so
	// that weights fed through them are never lost.
	c.ReadWrite(n, &e)
	return e, nil
}

func writeRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassData)
	e.FLOPs = writeOps[n.OpType] * c.Numel(n.Out(0))
	return e, nil
}

func randomRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassElementwise, Launches: 1}
	// The *Like variants read only their input's shape, not its data.
	c.Write(n, &e)
	out := c.Numel(n.Out(0))
	e.FLOPs = 4 * out
	e.Transcendentals = randomOps[n.OpType] * out
	if n.OpType == "Bernoulli" {
		c.Read(n, &e, 0) // reads the probabilities
	}
	return e, nil
}

// gatherRule: an indexed read touches only the elements it copies, so the
// data input counts at the output's size (an embedding lookup reads a few
// rows, not the table); index inputs are read in full. The table is still
// a parameter when it is an initializer.
func gatherRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := NodeEstimate{Class: perf.ClassData, Launches: 1}
	for i, in := range n.Inputs {
		if in == nil {
			continue
		}
		if i == 0 { // the data
			e.BytesRead += min(c.Bytes(in), c.Numel(n.Out(0))*c.elemBytes(in))
			c.param(in, &e)
			continue
		}
		c.readOne(in, &e)
	}
	c.Write(n, &e)
	if n.OpType == "Gather" {
		e.Indexed = indexedCopy(n, c)
	}
	return e, nil
}

// indexedCopy is a Gather's view as an indexed copy (perf.IndexedCopy):
// numel(indices) slices of numel(output)/numel(indices) elements, which
// PyTorch copies with index_select's kernels (an embedding lookup,
// index_select on any axis). Left out: a scalar index (PyTorch's x[:, i],
// which exports to one, is a view: select) and integer data (shape
// arithmetic, which PyTorch does on the host).
func indexedCopy(n *ir.Node, c *RuleCtx) perf.IndexedCopy {
	data, idx := n.In(0), n.In(1)
	if data == nil || !data.DType.IsFloat() || idx == nil || idx.Shape.Rank() < 1 {
		return perf.IndexedCopy{}
	}
	ni, out := c.Numel(idx), c.Numel(n.Out(0))
	if !(ni >= 1) || !(out >= ni) {
		return perf.IndexedCopy{}
	}
	return perf.IndexedCopy{Indices: clampInt(ni), SliceElems: clampInt(out / ni), Rows: wholeRows(n, c)}
}

// wholeRows reports whether Gather n's slices are whole rows of its data:
// every dim before the gathered axis is 1, so TensorIterator sees a
// contiguous slice per index (perf.IndexedCopy.Rows).
func wholeRows(n *ir.Node, c *RuleCtx) bool {
	dims, ok := c.Dims(n.In(0))
	if !ok {
		return false
	}
	axis, ok := gatherAxis(n, len(dims))
	return ok && unitPrefix(dims, axis)
}

// gatherAxis is Gather n's axis into data of the given rank, made
// non-negative; false when it lies outside the data.
func gatherAxis(n *ir.Node, rank int) (int, bool) {
	axis := n.AttrInt("axis", 0)
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), axis >= 0 && axis < int64(rank)
}

// scatterRule: out-of-place: data copied to the output, then updates
// written through the indices.
func scatterRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassData)
	if n.AttrString("reduction", "none") != "none" {
		e.FLOPs = c.Numel(n.In(2)) // one reduction op per update
	}
	return e, nil
}

// DropsNothing reports whether Dropout n has a constant ratio of 0, where
// ATen's dropout returns its input: no mask, no kernel, no buffer of its
// own, in training too (train's activation set and backward read it).
func DropsNothing(n *ir.Node) bool { return zeroRatio(n.In(1)) }

// zeroRatio reports whether a dropout ratio input is a constant 0.
func zeroRatio(r *ir.Value) bool {
	return r != nil && r.Const != nil && len(r.Const.Floats) == 1 && r.Const.Floats[0] == 0
}

// dropoutTrains reports whether a dropout with these ratio and
// training_mode inputs drops in training: training_mode a true constant
// (one that is not a constant is taken as false: onnxcost estimates
// inference) and the ratio not a constant 0.
func dropoutTrains(ratio, mode *ir.Value) bool {
	return mode != nil && mode.Const != nil && len(mode.Const.Ints) == 1 && mode.Const.Ints[0] != 0 && !zeroRatio(ratio)
}

// dropoutRule: at inference Dropout is the identity (a view) unless its
// mask output is used or training_mode is a true constant; a ratio that
// is a constant 0 drops nothing, training or not (torchvision's Swin
// exports its attention dropout as Dropout(ratio 0, training_mode
// true); onnxruntime removes such nodes, as ATen's dropout returns its
// input when p is 0).
func dropoutRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	mask := n.Out(1)
	maskUsed := mask != nil && (len(mask.Consumers) > 0 || isOutput(n, mask))
	if !dropoutTrains(n.In(1), n.In(2)) && !maskUsed {
		return viewRule(n, c)
	}
	e := kernel(n, c, perf.ClassElementwise)
	e.FLOPs = 3 * c.Numel(n.Out(0)) // draw, compare, scale
	e.Note = "Dropout in training mode or with a used mask: counted as a kernel"
	return e, nil
}

func isOutput(n *ir.Node, v *ir.Value) bool {
	g := n.Graph()
	return g != nil && g.IsGraphOutput(v)
}

// nonZeroRule: one compare per input element; the output size is data
// dependent, so only what inference knows of it is counted.
func nonZeroRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	e.FLOPs = c.Numel(n.In(0))
	return e, nil
}

// interpFLOPs is the work of r-linear interpolation per output element:
// 2^r taps, each a multiply, summed with 2^r - 1 adds; cubic uses 4^r
// taps. Nearest is a copy (0).
func interpFLOPs(mode string, r int) float64 {
	switch mode {
	case "linear", "bilinear", "trilinear":
		t := detmath.Pow(2, float64(r))
		return 2*t - 1
	case "cubic", "bicubic":
		t := detmath.Pow(4, float64(r))
		return 2*t - 1
	}
	return 0
}

// resizeRule: interpolation over the spatial dims (rank-2 of them for
// NCHW tensors; all dims for rank < 3).
func resizeRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassData)
	out := c.Numel(n.Out(0))
	r := n.Out(0).Shape.Rank()
	if r >= 3 {
		r -= 2
	}
	e.FLOPs = out * interpFLOPs(n.AttrString("mode", "nearest"), max(r, 0))
	if e.FLOPs > 0 {
		e.Class = perf.ClassElementwise
	}
	return e, nil
}

func gridSampleRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	r := max(n.Out(0).Shape.Rank()-2, 0)
	mode := n.AttrString("mode", "linear")
	e.FLOPs = c.Numel(n.Out(0)) * (interpFLOPs(mode, r) + 2*float64(r)) // + unnormalise coords
	return e, nil
}

// affineGridRule: each output point is a (r x (r+1)) matrix times a
// homogeneous coordinate: r+1 MACs per output element.
func affineGridRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	out := c.Numel(n.Out(0))
	r := float64(max(n.Out(0).Shape.Rank()-2, 1))
	e.MACs = out * (r + 1)
	e.FLOPs = perf.FMAFLOPs * e.MACs
	return e, nil
}

// roiAlignRule: sampling_ratio² bilinear samples per output bin (an
// adaptive ratio of 0 is assumed 2, noted), each 4 taps (7 flops), plus
// the average.
func roiAlignRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	s := float64(n.AttrInt("sampling_ratio", 0))
	if s <= 0 {
		s = 2
		e.Note = "adaptive sampling_ratio assumed 2"
	}
	e.FLOPs = c.Numel(n.Out(0)) * (s*s*7 + 1)
	return e, nil
}

// maxRoiPoolRule: the RoI sizes are data; as an upper bound each output bin
// compares a (H/ph) x (W/pw) window of the feature map.
func maxRoiPoolRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	x, ok := c.Dims(n.In(0))
	p, pok := n.AttrInts("pooled_shape")
	if ok && pok && len(x) == 4 && len(p) == 2 && p[0] > 0 && p[1] > 0 {
		e.FLOPs = c.Numel(n.Out(0)) * math.Ceil(x[2]/float64(p[0])) * math.Ceil(x[3]/float64(p[1]))
		e.Note = "RoI sizes are data: upper bound, each bin taken as feature-map size / pooled size"
	}
	return e, nil
}

// col2ImRule: every column element is added into the image: 1 add each.
func col2ImRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassData)
	e.FLOPs = c.Numel(n.In(0))
	return e, nil
}

// detRule: LU factorisation, (2/3)·n³ flops per matrix.
func detRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	x, ok := c.Dims(n.In(0))
	if ok && len(x) >= 2 {
		m := x[len(x)-1]
		e.FLOPs = prod(x[:len(x)-2]) * 2 * m * m * m / 3
	}
	return e, nil
}

// dftRule: a radix-2 FFT costs 5·L·log2(L) flops per transform of length L
// (the usual FFT flop convention); transforms = output elements / L.
func dftRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	out, ok := c.Dims(n.Out(0))
	if !ok || len(out) < 2 {
		return e, nil
	}
	axis := n.AttrInt("axis", 1)
	if v := n.In(2); v != nil && v.Const != nil && len(v.Const.Ints) == 1 {
		axis = v.Const.Ints[0] // opset 20: axis is an input
	}
	if axis < 0 {
		axis += int64(len(out) - 1) // the last dim holds (real, imag)
	}
	if axis < 0 || axis >= int64(len(out)-1) || out[axis] < 1 {
		return e, nil
	}
	l := out[axis]
	e.FLOPs = prod(out[:len(out)-1]) * 5 * detmath.Log2(max(l, 2))
	return e, nil
}

// realFFTRule prices onnxruntime's Rfft and Irfft as DFT is priced: 5
// flops a complex value per halving of the signal, 5·log2(N) for each of
// the complex side's values, N the real side's signal size (the product
// of its last signal_ndim axes): a one-sided transform is half a complex
// one's work. The real side is Rfft's input, Irfft's (inverse) output.
func realFFTRule(inverse bool) Rule {
	return func(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
		e := kernel(n, c, perf.ClassReduction)
		real, cplx := n.In(0), n.Out(0)
		if inverse {
			real, cplx = n.Out(0), n.In(0)
		}
		rd, ok := c.Dims(real)
		nd := int(n.AttrInt("signal_ndim", 1))
		if !ok || nd < 1 || nd > len(rd) {
			return e, nil
		}
		signal := prod(rd[len(rd)-nd:])
		e.FLOPs = c.Numel(cplx) / 2 * 5 * detmath.Log2(max(signal, 2))
		return e, nil
	}
}

// stftRule: one FFT of the frame length per frame (output [B, frames, bins, 2]),
// plus the window multiply.
func stftRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassReduction)
	out, ok := c.Dims(n.Out(0))
	if !ok || len(out) != 4 {
		return e, nil
	}
	frameLen := 2 * (out[2] - 1) // onesided bins = L/2+1 (upper bound when not onesided)
	if n.AttrInt("onesided", 1) == 0 {
		frameLen = out[2]
	}
	frameLen = max(frameLen, 2)
	frames := out[0] * out[1]
	e.FLOPs = frames * (5*frameLen*detmath.Log2(frameLen) + frameLen)
	return e, nil
}

// windowRule: cosine windows: a multiply-add argument and 1-2 cosines per
// element, counted as 3 flops with 1 transcendental.
func windowRule(n *ir.Node, c *RuleCtx) (NodeEstimate, error) {
	e := kernel(n, c, perf.ClassElementwise)
	out := c.Numel(n.Out(0))
	e.FLOPs = 3 * out
	e.Transcendentals = out
	return e, nil
}
