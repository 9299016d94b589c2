package passes

import (
	"github.com/onnxcost/onnxcost/ir"
)

// bnPointwise rewrites an inference-mode BatchNormalization as the
// per-channel affine map it is, Mul(x, a) then Add(·, b) with
// a = gamma/sqrt(var+eps) and b = beta − mean·a, each [C, 1, …, 1]: how
// torch.compile runs it. Inductor decomposes an inference batch norm into
// pointwise ops (torch/_decomp/decompositions.py: aten.
// _native_batch_norm_legit_no_training becomes _native_batch_norm_legit
// with training off, _batch_norm_helper's subtract, multiply and add) and
// fuses them into the Triton kernel of the ReLU and residual add that
// follow; with
// freezing off (the default) it does not fold the statistics into the
// convolution, which stays an extern cuDNN call. fuse-elementwise then
// makes the chain one kernel. Parameters whose contents are not loaded
// give initializers marked missing (the cost needs only their dims).
func bnPointwise(g *ir.Graph) (bool, error) {
	changed := false
	err := g.Batch(func() error {
		for bn := range nodesOfType(g, "BatchNormalization") {
			if bn.Graph() != g || !isOp(bn, "BatchNormalization") || !bnAffine(g, bn) {
				continue
			}
			if err := applyBNPointwise(g, bn); err != nil {
				return err
			}
			changed = true
		}
		return nil
	})
	return changed, err
}

// bnAffine: an inference BN of a float input of known rank ≥ 2, its
// statistics outputs unused, its four parameters constant vectors of the
// channel count.
func bnAffine(g *ir.Graph, bn *ir.Node) bool {
	x, y := bn.In(0), bn.Out(0)
	if !floatTensor(x) || !floatTensor(y) || y.Shape.Rank() < 2 || x.DType != y.DType {
		return false
	}
	return inferenceBN(g, bn) && bnConstParams(bn, y.Shape.Dims[1])
}

// applyBNPointwise inserts the Mul before bn and replaces bn with the
// Add, which keeps writing bn's output value.
func applyBNPointwise(g *ir.Graph, bn *ir.Node) error {
	x, y := bn.In(0), bn.Out(0)
	ps := bnOf(bn)
	rank := y.Shape.Rank()
	k := y.Shape.Dims[1].Value
	var scale, shift []float64
	if s, ok := bnScale(ps, bn.AttrFloat("epsilon", 1e-5)); ok {
		if b, ok := foldedBias(ps, s, nil, 1, k); ok {
			scale, shift = s, b
		}
	}
	a, err := newInitializer(g, bn.Name+"_scale", channelVector(y.DType, k, rank, scale))
	if err != nil {
		return err
	}
	b, err := newInitializer(g, bn.Name+"_shift", channelVector(y.DType, k, rank, shift))
	if err != nil {
		return err
	}
	mid, err := g.NewValue(g.UniqueName(bn.Name + "_scaled"))
	if err != nil {
		return err
	}
	mid.Kind, mid.DType, mid.Shape = y.Kind, y.DType, y.Shape
	mul := &ir.Node{Name: g.UniqueName(bn.Name + "/scale"), OpType: "Mul", Inputs: []*ir.Value{x, a}, Outputs: []*ir.Value{mid}}
	inheritModule(mul, bn)
	if err := g.InsertNodeBefore(mul, bn); err != nil {
		return err
	}
	add := &ir.Node{Name: bn.Name, OpType: "Add", Inputs: []*ir.Value{mid, b}, Outputs: []*ir.Value{y},
		FusedFrom: nodeNames(bn)}
	add.SetDoc(bn.Doc())
	return swapIn(g, []*ir.Node{bn}, add)
}

// channelVector is vals as a [k, 1, …, 1] tensor broadcasting along the
// channel axis of a rank-r value; marked missing when vals is nil.
func channelVector(dt ir.DType, k int64, rank int, vals []float64) *ir.Tensor {
	dims := make([]int64, rank-1)
	for i := range dims {
		dims[i] = 1
	}
	dims[0] = k
	if vals != nil {
		return ir.FloatTensor(dt, dims, vals)
	}
	return &ir.Tensor{DType: dt, Dims: dims, Loc: ir.DataLocation{Missing: true}}
}
