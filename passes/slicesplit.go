package passes

import (
	"cmp"
	"slices"

	"github.com/onnxcost/onnxcost/ir"
)

// Slices that cut one tensor into parts along an axis, as one Split:
// onnxruntime's GatherSliceToSplitFusion (core/optimizer/gather_fusion.cc,
// level 2, CPU and CUDA providers), which takes rotate_half's two halves
// of every rotary embedding (LLaMA: two Slices per Q and per K in each
// layer) into one kernel.
//
//	Slice(x, 0, d/2, axis), Slice(x, d/2, d, axis) -> Split(x, [d/2, d/2], axis)
//
// The conditions are the source's, for Slices: every Slice reading x as
// its data (x may have other readers) takes constant one-element starts,
// ends and axes (the axes input present) and unit steps, all along one
// axis of known length, and together they cover that axis without
// overlap. A Gather among x's readers is a part onnxruntime also takes
// (with a scalar index); such groups are left as they are here.
func fuseSliceSplit(g *ir.Graph) (bool, error) {
	changed := false
	seen := map[*ir.Value]bool{}
	err := g.Batch(func() error {
		for n := range nodesOfType(g, "Slice") {
			if !live(g, n) || !isOp(n, "Slice") {
				continue
			}
			x := n.In(0)
			if x == nil || seen[x] {
				continue
			}
			seen[x] = true
			split, old, ok := matchSliceSplit(g, x)
			if !ok {
				continue
			}
			if err := g.ReplaceNodes(old, split); err != nil {
				return err
			}
			changed = true
		}
		return nil
	})
	return changed, err
}

// slicePart is one Slice of the group and the range it takes.
type slicePart struct {
	n          *ir.Node
	start, end int64
}

// matchSliceSplit builds the Split for x's Slices, and the Slices it
// replaces, ordered so that the Split takes the earliest one's place.
func matchSliceSplit(g *ir.Graph, x *ir.Value) (*ir.Node, []*ir.Node, bool) {
	if p := producerOf(x); p != nil && (isOp(p, "Shape") || len(p.Outputs) > 1) {
		return nil, nil, false
	}
	var parts []slicePart
	axis, dim := int64(-1), int64(0)
	for _, c := range x.Consumers {
		switch {
		case c.In(0) != x || !isOp(c, "Slice") && !isOp(c, "Gather"):
			continue
		case isOp(c, "Gather"):
			return nil, nil, false
		}
		a, s, e, ok := sliceRange(c, x)
		if !ok || (axis >= 0 && a != axis) {
			return nil, nil, false
		}
		axis, dim = a, x.Shape.Dims[a].Value
		parts = append(parts, slicePart{c, s, e})
	}
	if len(parts) < 2 {
		return nil, nil, false
	}
	slices.SortFunc(parts, func(a, b slicePart) int { return cmp.Compare(a.start, b.start) })
	at := int64(0)
	sizes := make([]int64, len(parts))
	outs := make([]*ir.Value, len(parts))
	for i, p := range parts {
		if p.start != at {
			return nil, nil, false // a gap or an overlap
		}
		at = p.end
		sizes[i], outs[i] = p.end-p.start, p.n.Out(0)
	}
	if at != dim {
		return nil, nil, false
	}
	splits, err := newInitializer(g, parts[0].n.Name+"/splits", ir.IntTensor([]int64{int64(len(sizes))}, sizes))
	if err != nil {
		return nil, nil, false
	}
	old := make([]*ir.Node, len(parts))
	for i, p := range parts {
		old[i] = p.n
	}
	// ReplaceNodes puts the new node in the last old node's place: the
	// earliest Slice goes last, so every reader of a part stays after it.
	slices.SortFunc(old, func(a, b *ir.Node) int { return g.Position(b) - g.Position(a) })
	// Named as onnxruntime names it, after the last Slice, and listing the
	// Slices it took, so that a profile's event finds it.
	var from []string
	for i := len(old) - 1; i >= 0; i-- {
		from = append(from, old[i].Name)
	}
	split := &ir.Node{Name: g.UniqueName(old[0].Name + "/GatherSliceToSplitFusion"), OpType: "Split", FusedFrom: from,
		Attrs: []*ir.Attribute{ir.IntAttr("axis", axis)}, Inputs: []*ir.Value{x, splits}, Outputs: outs}
	return split, old, true
}

// sliceRange is Slice n's axis and [start, end) on x, clamped as the
// operator clamps them, when its starts, ends and axes are one-element
// integer constants, its step 1 and the axis of known length.
func sliceRange(n *ir.Node, x *ir.Value) (axis, start, end int64, ok bool) {
	if len(n.Inputs) < 4 || len(n.Outputs) != 1 || !x.Shape.Ranked {
		return 0, 0, 0, false
	}
	one := func(i int) (int64, bool) {
		t := ir.Known(n.In(i))
		if t == nil || len(t.Ints) != 1 {
			return 0, false
		}
		return t.Ints[0], true
	}
	s, ok1 := one(1)
	e, ok2 := one(2)
	a, ok3 := one(3)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, false
	}
	if len(n.Inputs) > 4 && n.In(4) != nil {
		if step, ok := one(4); !ok || step != 1 {
			return 0, 0, 0, false
		}
	}
	r := int64(len(x.Shape.Dims))
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r || !x.Shape.Dims[a].IsKnown() {
		return 0, 0, 0, false
	}
	d := x.Shape.Dims[a].Value
	clamp := func(v int64) int64 {
		if v < 0 {
			v += d
		}
		return min(max(v, 0), d)
	}
	s, e = clamp(s), clamp(e)
	return a, s, e, s < e
}
