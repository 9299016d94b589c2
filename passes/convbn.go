package passes

import (
	"math"

	"github.com/onnxcost/onnxcost/ir"
)

// foldBN folds an inference-mode BatchNormalization into the Conv or Gemm
// that produces its input, as every inference engine does before running:
//
//	BN(Conv(x,W,b)) -> Conv(x, W*s, (b-mean)*s + beta),  s = gamma/sqrt(var+eps)
//	BN(Gemm(A,B,C)) -> Gemm(A, B*s (per column), s*(beta_g*C - mean) + beta){beta=1}
//
// The folded node is a plain default-domain Conv/Gemm (it runs the same
// kernel) whose FusedFrom names both nodes; it writes the BN's output
// value, so readers and graph outputs are untouched. Weights are not
// loaded to estimate cost: the new weight and bias are computed only when
// every tensor involved has decoded contents (small models, tests);
// otherwise the weight input is left as it was (its dims and bytes are
// what the cost needs) and the new bias is an initializer of dims [K]
// whose contents are marked missing.
func foldBN(g *ir.Graph) (bool, error) {
	changed := false
	for bn := range nodesOfType(g, "BatchNormalization") {
		if bn.Graph() != g || !isOp(bn, "BatchNormalization") {
			continue
		}
		prod := bn.In(0).Producer
		if prod == nil || prod.Graph() != g || !bnFoldable(g, prod, bn) {
			continue
		}
		if err := applyBNFold(g, prod, bn); err != nil {
			return changed, err
		}
		changed = true
	}
	return changed, nil
}

// bnParams are the four per-channel BN tensors, in input order.
type bnParams struct{ scale, bias, mean, variance *ir.Value }

func bnOf(bn *ir.Node) bnParams {
	return bnParams{bn.In(1), bn.In(2), bn.In(3), bn.In(4)}
}

// bnFoldable is the selector: producer p (Conv or Gemm) feeds only the
// BN, both are float, the BN is in inference mode with its statistics
// outputs unused, and its parameters are constant vectors of p's output
// channel count.
func bnFoldable(g *ir.Graph, p, bn *ir.Node) bool {
	y := p.Out(0)
	if !soleConsumer(g, y, bn) || bn.In(0) != y || !floatTensor(y) || !floatTensor(bn.Out(0)) || !inferenceBN(g, bn) {
		return false
	}
	var k ir.Dim
	switch {
	case isOp(p, "Conv"):
		if len(p.Inputs) < 2 || constant(p.In(1)) == nil || y.Shape.Rank() < 2 {
			return false
		}
		if b := p.In(2); b != nil && constant(b) == nil {
			return false
		}
		k = y.Shape.Dims[1]
	case isOp(p, "Gemm"):
		if y.Shape.Rank() != 2 || constant(p.In(1)) == nil || !gemmBiasPerColumn(p) {
			return false
		}
		k = y.Shape.Dims[1]
	default:
		return false
	}
	return bnConstParams(bn, k)
}

// inferenceBN reports whether bn is in inference mode (no training_mode,
// spatial, is_test saying otherwise) with its statistics outputs unused.
func inferenceBN(g *ir.Graph, bn *ir.Node) bool {
	if bn.AttrInt("training_mode", 0) != 0 || bn.AttrInt("spatial", 1) != 1 {
		return false
	}
	if a := bn.Attr("is_test"); a != nil && a.I == 0 {
		return false
	}
	for _, o := range bn.Outputs[1:] {
		if o != nil && (len(o.Consumers) > 0 || g.IsGraphOutput(o)) {
			return false
		}
	}
	return true
}

// bnConstParams reports whether bn's four parameters are constant vectors
// of the known channel count k.
func bnConstParams(bn *ir.Node, k ir.Dim) bool {
	if !k.IsKnown() {
		return false
	}
	ps := bnOf(bn)
	for _, v := range []*ir.Value{ps.scale, ps.bias, ps.mean, ps.variance} {
		c := constant(v)
		if c == nil || len(c.Dims) != 1 || c.Dims[0] != k.Value {
			return false
		}
	}
	return true
}

// gemmBiasPerColumn: a Gemm's C may be folded into only when it is absent
// or one value per output column ([N] or [1,N]), constant.
func gemmBiasPerColumn(p *ir.Node) bool {
	c := p.In(2)
	if c == nil {
		return true
	}
	t := constant(c)
	if t == nil {
		return false
	}
	n := p.Out(0).Shape.Dims[1]
	switch len(t.Dims) {
	case 1:
		return n.Is(t.Dims[0])
	case 2:
		return t.Dims[0] == 1 && n.Is(t.Dims[1])
	}
	return false
}

// applyBNFold is the action: a new Conv/Gemm replaces p and bn.
func applyBNFold(g *ir.Graph, p, bn *ir.Node) error {
	ps := bnOf(bn)
	y := bn.Out(0)
	k := y.Shape.Dims[1].Value
	dt := p.Out(0).DType
	eps := bn.AttrFloat("epsilon", 1e-5)
	isGemm := isOp(p, "Gemm")

	w := p.In(1)
	oldBias := p.In(2)
	biasScale := 1.0 // Gemm's beta multiplies C
	if isGemm {
		biasScale = p.AttrFloat("beta", 1)
	}
	// Contents, when every tensor involved has them.
	var newW *ir.Tensor
	var newB []float64
	if s, ok := bnScale(ps, eps); ok {
		if b, ok := foldedBias(ps, s, oldBias, biasScale, k); ok {
			newB = b
			if wt := ir.Known(w); wt != nil && wt.DType.IsFloat() {
				if isGemm {
					newW = scaleGemmWeight(wt, s, p.AttrInt("transB", 0) != 0)
				} else {
					newW = scaleConvWeight(wt, s)
				}
			}
		}
	}
	base := p.Name
	if newW != nil {
		wv, err := newInitializer(g, base+"_bn_weight", newW)
		if err != nil {
			return err
		}
		w = wv
	}
	bt := &ir.Tensor{DType: dt, Dims: []int64{k}, Loc: ir.DataLocation{Missing: true}}
	if newB != nil {
		bt = ir.FloatTensor(dt, []int64{k}, newB)
	}
	bv, err := newInitializer(g, base+"_bn_bias", bt)
	if err != nil {
		return err
	}
	attrs := append([]*ir.Attribute(nil), p.Attrs...)
	n := &ir.Node{Name: p.Name, OpType: p.OpType, Domain: p.Domain, Attrs: attrs,
		FusedFrom: append(nodeNames(p), nodeNames(bn)...)}
	n.SetDoc(p.Doc())
	// BN's arithmetic (2 FLOPs an element, cost's normRule) is now in
	// the weights: still the model's FLOPs, no kernel's. Of the two, the
	// add is the folded node's bias add when the node had no bias before
	// (its rule counts it), so only the rest is folded away.
	folded := 2 * numel(y)
	if oldBias == nil {
		folded = numel(y)
	}
	n.AddFoldedFLOPs(p.FoldedFLOPs() + bn.FoldedFLOPs() + folded)
	if isGemm {
		n.SetAttr(&ir.Attribute{Name: "beta", Type: ir.AttrFloat, F: 1})
	}
	n.Inputs = []*ir.Value{p.In(0), w, bv}
	n.Outputs = []*ir.Value{y}
	return swapIn(g, []*ir.Node{p, bn}, n)
}

// bnScale is gamma/sqrt(var+eps) when the BN's scale and variance are known.
func bnScale(ps bnParams, eps float64) ([]float64, bool) {
	gamma, vr := floatsOf(ps.scale), floatsOf(ps.variance)
	if gamma == nil || vr == nil || len(gamma) != len(vr) {
		return nil, false
	}
	s := make([]float64, len(gamma))
	for i := range s {
		d := vr[i] + eps
		if !(d > 0) {
			return nil, false
		}
		s[i] = gamma[i] / math.Sqrt(d)
	}
	return s, true
}

// foldedBias is s*(biasScale*b - mean) + beta, b = 0 when absent; ok is
// false unless every term is known.
func foldedBias(ps bnParams, s []float64, b *ir.Value, biasScale float64, k int64) ([]float64, bool) {
	mean, beta := floatsOf(ps.mean), floatsOf(ps.bias)
	if mean == nil || beta == nil || int64(len(s)) != k || len(mean) != len(s) || len(beta) != len(s) {
		return nil, false
	}
	var old []float64
	if b != nil {
		if old = floatsOf(b); old == nil || int64(len(old)) != k {
			return nil, false
		}
	}
	out := make([]float64, k)
	for i := range out {
		bi := 0.0
		if old != nil {
			bi = biasScale * old[i]
		}
		out[i] = s[i]*(bi-mean[i]) + beta[i]
	}
	return out, true
}

// scaleConvWeight multiplies output channel k (the leading axis) by s[k].
func scaleConvWeight(w *ir.Tensor, s []float64) *ir.Tensor {
	if len(w.Dims) == 0 || w.Dims[0] != int64(len(s)) || len(w.Floats) == 0 {
		return nil
	}
	per := len(w.Floats) / len(s)
	out := make([]float64, len(w.Floats))
	for i, x := range w.Floats {
		out[i] = x * s[i/per]
	}
	return ir.FloatTensor(w.DType, w.Dims, out)
}

// scaleGemmWeight multiplies output column j by s[j]: B is [K,N], or
// [N,K] with transB.
func scaleGemmWeight(b *ir.Tensor, s []float64, transB bool) *ir.Tensor {
	if len(b.Dims) != 2 || len(b.Floats) == 0 {
		return nil
	}
	rows, cols := b.Dims[0], b.Dims[1]
	out := make([]float64, len(b.Floats))
	for r := int64(0); r < rows; r++ {
		for c := int64(0); c < cols; c++ {
			j := c
			if transB {
				j = r
			}
			if j >= int64(len(s)) {
				return nil
			}
			out[r*cols+c] = b.Floats[r*cols+c] * s[j]
		}
	}
	return ir.FloatTensor(b.DType, b.Dims, out)
}

// floatsOf returns a constant float tensor's decoded values, or nil.
func floatsOf(v *ir.Value) []float64 {
	t := ir.Known(v)
	if t == nil || !t.DType.IsFloat() {
		return nil
	}
	return t.Floats
}

// newInitializer adds an initializer named after base (made unique).
func newInitializer(g *ir.Graph, base string, t *ir.Tensor) (*ir.Value, error) {
	name := base
	if g.Lookup(name) != nil {
		name = g.UniqueName(base)
	}
	v, err := g.NewValue(name)
	if err != nil {
		return nil, err
	}
	t.Name = name
	g.AddInitializer(v, t)
	return v, nil
}

// nodeNames is what a node contributes to a FusedFrom list: the nodes it
// already replaced, or itself.
func nodeNames(n *ir.Node) []string {
	if len(n.FusedFrom) > 0 {
		return append([]string(nil), n.FusedFrom...)
	}
	return []string{n.Name}
}

// swapIn replaces the nodes old (in graph order) with n, placed where the
// last of them was (ir.Graph.ReplaceNodes). Inputs of old that nothing
// reads any more are removed by cleanup.
func swapIn(g *ir.Graph, old []*ir.Node, n *ir.Node) error { return g.ReplaceNodes(old, n) }

// inheritModule gives n, a node a pass inserts beside from (not in its
// place, where ReplaceNodes does it), from's module path.
func inheritModule(n, from *ir.Node) {
	if p := from.ModulePath(); p != "" && n.ModulePath() != p {
		n.SetModulePath(p)
	}
}

// numel is v's element count, 0 when its shape is not fully known.
func numel(v *ir.Value) float64 {
	n, ok := v.Shape.NumElements()
	if !ok {
		return 0
	}
	return float64(n)
}
