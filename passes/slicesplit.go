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
// overlap. A Gather of one constant index along that axis is a part too
// (the source's IsSupportedGather): x[i] of a scalar index, the
// qkv.unbind(0) torchvision's Swin and many attention exports write as
// three Gathers, is rewritten first as the Slice [i, i+1) and a Squeeze
// (a view), so the Split takes it like any Slice.
func fuseSliceSplit(g *ir.Graph) (bool, error) {
	changed := false
	seen := map[*ir.Value]bool{}
	err := g.Batch(func() error {
		var parts []*ir.Node
		for n := range nodesOfType(g, "Slice") {
			parts = append(parts, n)
		}
		for n := range nodesOfType(g, "Gather") {
			parts = append(parts, n)
		}
		for _, n := range parts {
			if !live(g, n) || !isOp(n, "Slice") && !isOp(n, "Gather") {
				continue
			}
			x := n.In(0)
			if x == nil || seen[x] {
				continue
			}
			seen[x] = true
			if err := gathersAsSlices(g, x); err != nil {
				return err
			}
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
		a, s, e, ok := sliceRange(g, c, x)
		if !ok || (axis >= 0 && a != axis) {
			return nil, nil, false
		}
		axis, dim = a, x.Shape.Dims[a].Value
		parts = append(parts, slicePart{c, s, e})
	}
	if len(parts) < 2 || !sessionAxisKnown(g, x, axis) {
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

// sessionAxisKnown reports whether onnxruntime, building its graph
// (ir.Graph.Session), knew x's rank and the length of the axis cut.
func sessionAxisKnown(g *ir.Graph, x *ir.Value, axis int64) bool {
	s := sessionShape(g, x)
	return s.Ranked && s.Rank() == x.Shape.Rank() && axis >= 0 && axis < int64(s.Rank()) &&
		s.Dims[axis].IsKnown()
}

// gatherIndex is Gather n's axis and index on x when its indices are one
// constant integer (scalar: squeeze, the axis dropped; or one element:
// kept at 1), one onnxruntime knew when it built the graph, and the axis
// has a known length.
func gatherIndex(g *ir.Graph, n *ir.Node, x *ir.Value) (axis, index int64, squeeze, ok bool) {
	idx := n.In(1)
	t := ir.Known(idx)
	if t == nil || !sessionKnown(g, idx) || len(t.Ints) != 1 || !idx.Shape.Ranked || len(idx.Shape.Dims) > 1 || len(n.Outputs) != 1 || !x.Shape.Ranked {
		return 0, 0, false, false
	}
	r := int64(len(x.Shape.Dims))
	a := n.AttrInt("axis", 0)
	if a < 0 {
		a += r
	}
	if a < 0 || a >= r || !x.Shape.Dims[a].IsKnown() {
		return 0, 0, false, false
	}
	d := x.Shape.Dims[a].Value
	i := t.Ints[0]
	if i < 0 {
		i += d
	}
	if i < 0 || i >= d {
		return 0, 0, false, false
	}
	return a, i, len(idx.Shape.Dims) == 0, true
}

// gathersAsSlices rewrites x's one-index Gathers as Slices (and a Squeeze
// for a scalar index) when they and x's Slices together cover one axis
// of x without overlap, so that matchSliceSplit takes them all; it
// changes nothing otherwise.
func gathersAsSlices(g *ir.Graph, x *ir.Value) error {
	type part struct {
		n          *ir.Node
		start, end int64
		squeeze    bool
	}
	var parts []part
	var gathers []part
	axis := int64(-1)
	for _, c := range x.Consumers {
		if c.In(0) != x {
			continue
		}
		var a, s, e int64
		var sq, ok bool
		switch {
		case isOp(c, "Slice"):
			a, s, e, ok = sliceRange(g, c, x)
		case isOp(c, "Gather"):
			var i int64
			a, i, sq, ok = gatherIndex(g, c, x)
			s, e = i, i+1
		default:
			continue
		}
		if !ok || (axis >= 0 && a != axis) {
			return nil
		}
		axis = a
		p := part{c, s, e, sq}
		parts = append(parts, p)
		if isOp(c, "Gather") {
			gathers = append(gathers, p)
		}
	}
	if len(gathers) == 0 || len(parts) < 2 || !sessionAxisKnown(g, x, axis) {
		return nil
	}
	if pr := producerOf(x); pr != nil && (isOp(pr, "Shape") || len(pr.Outputs) > 1) {
		return nil
	}
	slices.SortFunc(parts, func(a, b part) int { return cmp.Compare(a.start, b.start) })
	at := int64(0)
	for _, p := range parts {
		if p.start != at {
			return nil
		}
		at = p.end
	}
	if at != x.Shape.Dims[axis].Value {
		return nil
	}
	for _, p := range gathers {
		if err := gatherAsSlice(g, x, p.n, axis, p.start, p.squeeze); err != nil {
			return err
		}
	}
	return nil
}

// gatherAsSlice replaces Gather n (x[index] along axis) by the Slice
// [index, index+1) named as n, and, for a scalar index, a Squeeze of the
// axis (a view) writing n's output.
func gatherAsSlice(g *ir.Graph, x *ir.Value, n *ir.Node, axis, index int64, squeeze bool) error {
	y := n.Out(0)
	one := func(suffix string, v int64) (*ir.Value, error) {
		return newInitializer(g, n.Name+suffix, ir.IntTensor([]int64{1}, []int64{v}))
	}
	starts, err := one("/starts", index)
	if err != nil {
		return err
	}
	ends, err := one("/ends", index+1)
	if err != nil {
		return err
	}
	axes, err := one("/axes", axis)
	if err != nil {
		return err
	}
	slice := &ir.Node{Name: n.Name, OpType: "Slice", Inputs: []*ir.Value{x, starts, ends, axes}, Outputs: []*ir.Value{y}}
	if !squeeze {
		return swapIn(g, []*ir.Node{n}, slice)
	}
	mid, err := g.NewValue(g.UniqueName(n.Name + "_slice"))
	if err != nil {
		return err
	}
	dims := slices.Clone(x.Shape.Dims)
	dims[axis] = ir.D(1)
	mid.Kind, mid.DType, mid.Shape = y.Kind, y.DType, ir.Shape{Ranked: true, Dims: dims}
	slice.Outputs = []*ir.Value{mid}
	inheritModule(slice, n)
	if err := g.InsertNodeBefore(slice, n); err != nil {
		return err
	}
	sq := &ir.Node{Name: g.UniqueName(n.Name + "/squeeze"), OpType: "Squeeze", Inputs: []*ir.Value{mid, axes}, Outputs: []*ir.Value{y}}
	return swapIn(g, []*ir.Node{n}, sq)
}

// sliceRange is Slice n's axis and [start, end) on x, clamped as the
// operator clamps them, when its starts, ends and axes are one-element
// integer constants onnxruntime knew when it built the graph (a
// dynamic-batch ViT's qkv Slices take bounds computed from the Shape of
// their input: its 36 stay in onnxruntime 1.23.2's graph), its step 1
// and the axis of known length.
func sliceRange(g *ir.Graph, n *ir.Node, x *ir.Value) (axis, start, end int64, ok bool) {
	if len(n.Inputs) < 4 || len(n.Outputs) != 1 || !x.Shape.Ranked {
		return 0, 0, 0, false
	}
	one := func(i int) (int64, bool) {
		t := ir.Known(n.In(i))
		if t == nil || len(t.Ints) != 1 || !sessionKnown(g, n.In(i)) {
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
