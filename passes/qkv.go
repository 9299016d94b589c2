package passes

import (
	"sort"

	"github.com/onnxcost/onnxcost/ir"
)

// Horizontal GEMM fusion (TensorRT's packed QKV projection): GEMMs that
// read the same activation with constant weights run as one GEMM over the
// concatenated weights, so the activation is read once and one kernel is
// launched instead of one per projection.
//
//	Y1 = X·W1 + b1, ..., Yn = X·Wn + bn   (MatMul, Gemm or FusedGemm with
//	                                        only a bias epilogue; n ≥ 2)
//	  -> GroupedGemm(X, W1, b1, ..., Wn, bn) -> (Y1, ..., Yn)
//
// onnxcost::GroupedGemm(X, W1, B1?, ..., Wn, Bn?) -> Y1, ..., Yn
//
//	Computes [X·W1 | ... | X·Wn] in one GEMM with N = N1+...+Nn; output i
//	is the i-th column block (a view of the packed result), with the
//	shape the original projection wrote. Wi is [K, Ni], or [Ni, K] when
//	trans_b[i] is 1 (a Gemm with transB); Bi (absent: none) is a bias
//	broadcast along the last axis.
//	Attributes: trans_b (ints, one per branch).
//
// The outputs are the projections' own values, so their readers, graph
// outputs and shapes are untouched: only the producers change. Branches
// with an activation or a residual epilogue are left alone (a grouped
// kernel with per-branch epilogues is not what engines run).
func fuseQKV(g *ir.Graph) (bool, error) { return fuseQKVWhere(g, nil) }

// fuseQKVWhere is fuseQKV over the activations keep accepts (nil: all).
func fuseQKVWhere(g *ir.Graph, keep func(*ir.Graph, *ir.Value) bool) (bool, error) {
	// Positions as the sweep found them: the sweep runs in a Batch, and
	// the nodes it adds are recorded (see positions).
	pos := &positions{g: g}
	seen := map[*ir.Value]bool{}
	changed := false
	err := g.Batch(func() error { // one compaction for the sweep
		for n := range nodesOfType(g, gemmOps...) {
			if !live(g, n) {
				continue
			}
			x := n.In(0)
			if x == nil || seen[x] || !isGemmOp(n) || (keep != nil && !keep(g, x)) {
				continue
			}
			seen[x] = true
			for _, grp := range gemmGroups(g, x, pos) {
				n, err := grp.fusion().apply(g)
				if err != nil {
					return err
				}
				pos.add(n)
				changed = true
			}
		}
		return nil
	})
	return changed, err
}

// gemmOps are the op types isGemmOp accepts.
var gemmOps = []string{"MatMul", "Gemm", ir.OpFusedGemm}

// isGemmOp: the node kinds a branch may be.
func isGemmOp(n *ir.Node) bool {
	return isOp(n, "MatMul") || isOp(n, "Gemm") || ir.IsFused(n, ir.OpFusedGemm)
}

// gemmBranch is one projection of a group.
type gemmBranch struct {
	node       *ir.Node
	w, bias, y *ir.Value
	transB     bool
}

// branchOf returns n as a branch reading x, or ok=false when n is not a
// GEMM of x by a constant 2-D weight with at most a per-column bias.
func branchOf(n *ir.Node, x *ir.Value) (gemmBranch, bool) {
	if !isGemmOp(n) || n.In(0) != x || len(n.Outputs) != 1 {
		return gemmBranch{}, false
	}
	b := gemmBranch{node: n, w: n.In(1), y: n.Out(0)}
	anchor := n.OpType
	if n.Domain == ir.FusedDomain {
		anchor = ir.AnchorOf(n)
		if n.In(3) != nil || n.AttrInt(ir.KeyResidual, 0) != 0 || n.AttrString(ir.KeyActivation, "") != "" {
			return gemmBranch{}, false
		}
	}
	switch anchor {
	case "MatMul":
		if len(n.Inputs) > 3 || (n.Domain == "" && len(n.Inputs) != 2) {
			return gemmBranch{}, false
		}
		b.bias = n.In(2)
	case "Gemm":
		if n.AttrInt("transA", 0) != 0 || n.AttrFloat("alpha", 1) != 1 ||
			(n.In(2) != nil && n.AttrFloat("beta", 1) != 1) || x.Shape.Rank() != 2 {
			return gemmBranch{}, false
		}
		b.bias, b.transB = n.In(2), n.AttrInt("transB", 0) != 0
	default:
		return gemmBranch{}, false
	}
	if !floatTensor(x) || !floatTensor(b.y) || b.y.DType != x.DType || x.Shape.Rank() < 2 ||
		b.y.Shape.Rank() != x.Shape.Rank() || !constWeight(b.w, x.DType) || b.w.Shape.Rank() != 2 {
		return gemmBranch{}, false
	}
	if b.bias != nil && !perColumnBias(b.bias, b.y) {
		return gemmBranch{}, false
	}
	return b, true
}

// constWeight: an initializer or a known constant of dtype dt (contents
// need not be loaded: a graph-only model's weights are enough).
func constWeight(w *ir.Value, dt ir.DType) bool {
	return w != nil && w.Kind == ir.TensorValue && w.DType == dt && w.Shape.Ranked &&
		(w.IsInitializer || w.Const != nil)
}

// perColumnBias: a constant of y's dtype whose only non-unit dim is a
// last axis of y's last-dim size, so that it belongs to its column block.
func perColumnBias(b, y *ir.Value) bool {
	if !constWeight(b, y.DType) || b.Shape.Rank() == 0 || b.Shape.Rank() > y.Shape.Rank() {
		return false
	}
	dims := b.Shape.Dims
	for _, d := range dims[:len(dims)-1] {
		if !d.Is(1) {
			return false
		}
	}
	last, ylast := dims[len(dims)-1], y.Shape.Dims[y.Shape.Rank()-1]
	return last.IsKnown() && ylast.IsKnown() && last.Value == ylast.Value
}

// gemmGroup is a set of branches to fuse, in graph order.
type gemmGroup []gemmBranch

// gemmGroups collects x's readers that are branches into groups of at
// least two. Branches join a group only when their weights are available
// where the group's first branch stands (the fused node goes there, so
// that every reader of an earlier branch still follows its producer).
func gemmGroups(g *ir.Graph, x *ir.Value, pos *positions) []gemmGroup {
	var bs []gemmBranch
	done := map[*ir.Node]bool{}
	for _, c := range x.Consumers {
		if done[c] || !live(g, c) {
			continue
		}
		done[c] = true
		if b, ok := branchOf(c, x); ok {
			bs = append(bs, b)
		}
	}
	if len(bs) < 2 {
		return nil
	}
	sort.Slice(bs, func(i, j int) bool { return pos.of(bs[i].node) < pos.of(bs[j].node) })
	first := pos.of(bs[0].node)
	grp := gemmGroup{bs[0]}
	for _, b := range bs[1:] {
		if availableBefore(b.w, first, pos) && availableBefore(b.bias, first, pos) {
			grp = append(grp, b)
		}
	}
	if len(grp) < 2 {
		return nil
	}
	return []gemmGroup{grp}
}

// availableBefore: v is absent, an initializer, or produced by a node
// placed before position at.
func availableBefore(v *ir.Value, at int, pos *positions) bool {
	if v == nil || v.Producer == nil {
		return true
	}
	p := pos.of(v.Producer)
	return p >= 0 && p < at
}

// qkvFusion is the rewrite of a group: Fusion plus the branch order.
type qkvFusion struct {
	Fusion
	names []string
}

// fusion builds the GroupedGemm rewrite.
func (grp gemmGroup) fusion() qkvFusion {
	f := qkvFusion{Fusion: Fusion{OpType: ir.OpGroupedGemm}}
	f.Inputs = []*ir.Value{grp[0].node.In(0)}
	trans := make([]int64, len(grp))
	// Fusion.Apply places the new node where its last node stood: list
	// the branches last to first so that it lands at the first branch.
	for i := len(grp) - 1; i >= 0; i-- {
		f.Nodes = append(f.Nodes, grp[i].node)
	}
	for i, b := range grp {
		f.Inputs = append(f.Inputs, b.w, b.bias)
		f.Outputs = append(f.Outputs, b.y)
		if b.transB {
			trans[i] = 1
		}
		if len(b.node.FusedFrom) > 0 {
			f.names = append(f.names, b.node.FusedFrom...)
		} else {
			f.names = append(f.names, b.node.Name)
		}
	}
	f.Inputs = trimNil(f.Inputs)
	f.Attrs = []*ir.Attribute{{Name: ir.KeyTransB, Type: ir.AttrInts, Ints: trans}}
	return f
}

// apply applies the rewrite and lists FusedFrom in branch (graph) order,
// the order of the outputs.
func (f qkvFusion) apply(g *ir.Graph) (*ir.Node, error) {
	n, err := f.Fusion.Apply(g)
	if err != nil {
		return nil, err
	}
	n.FusedFrom = f.names
	return n, nil
}
