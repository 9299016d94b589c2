package ir

// Tensor manipulation: ops that move, select or replicate elements
// without arithmetic. When their inputs are small known tensors (shape
// vectors above all) they also compute the output's contents, through
// elemVals.pick, so that shape-computing subgraphs resolve.

import "math"

func init() {
	Register(
		&OpSchema{Name: "Concat", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferConcat,
			Doc: "join along axis (attr required from 4; negative from 11)"},
		&OpSchema{Name: "Split", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: -1, Infer: inferSplit,
			Doc: "split attr (1, 2, 11) or input (13); num_outputs (18) gives ceil-sized chunks"},
		&OpSchema{Name: "Slice", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 5, MinOut: 1, MaxOut: 1, Infer: inferSlice,
			Doc: "starts/ends/axes attrs (1) or inputs with steps (10); indices clamp to the dim"},
		&OpSchema{Name: "Gather", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkGather, Infer: inferGather,
			Doc: "data[:axis] + indices.shape + data[axis+1:]"},
		&OpSchema{Name: "GatherElements", Family: FamilyData, Since: 11, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkGatherElements, Infer: inferGatherElements,
			Doc: "the shape of indices, the dtype of data"},
		&OpSchema{Name: "GatherND", Family: FamilyData, Since: 11, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkGatherND, Infer: inferGatherND,
			Doc: "indices.shape[:-1] + data.shape[batch_dims+indices.shape[-1]:] (batch_dims from 12)"},
		&OpSchema{Name: "Scatter", Family: FamilyData, Traits: InPlace, Since: 9, Until: 10, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkScatterElements, Infer: inferDataType,
			Doc: "the data's type (replaced by ScatterElements at 11)"},
		&OpSchema{Name: "ScatterElements", Family: FamilyData, Traits: InPlace, Since: 11, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkScatterElements, Infer: inferDataType,
			Doc: "the data's type"},
		&OpSchema{Name: "ScatterND", Family: FamilyData, Traits: InPlace, Since: 11, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkScatterND, Infer: inferDataType,
			Doc: "the data's type"},
		&OpSchema{Name: "Transpose", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferTranspose,
			Doc: "dims permuted by perm (reversed by default)"},
		&OpSchema{Name: "Expand", Family: FamilyData, Since: 8, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferExpand,
			Doc: "the input broadcast with the shape input"},
		&OpSchema{Name: "Tile", Family: FamilyData, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferTile,
			Doc: "each dim times its repeat (opset 1: tiles along one axis)"},
		&OpSchema{Name: "Pad", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferPad,
			Doc: "paddings attr (1), pads attr (2), pads input (11), axes input (18)"},
		&OpSchema{Name: "DepthToSpace", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferDepthToSpace,
			Doc: "[N, C/b^2, H*b, W*b]"},
		&OpSchema{Name: "SpaceToDepth", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferSpaceToDepth,
			Doc: "[N, C*b^2, H/b, W/b]"},
		&OpSchema{Name: "Trilu", Family: FamilyData, Since: 14, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkTrilu, Infer: inferDataType,
			Doc: "the input's type"},
		&OpSchema{Name: "CumSum", Since: 11, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkCumSum, Infer: inferDataType,
			Doc: "the input's type"},
		&OpSchema{Name: "ReverseSequence", Since: 10, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkReverseSequence, Infer: inferDataType,
			Doc: "the input's type"},
		&OpSchema{Name: "ImageScaler", Since: 1, Until: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferDataType,
			Doc: "experimental, removed at 10: the input's type"},
		&OpSchema{Name: "Det", Since: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferDet,
			Doc: "[*, M, M] -> [*]"},
		&OpSchema{Name: "CenterCropPad", Since: 18, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferCenterCropPad,
			Doc: "dims at axes replaced by the shape input"},
		&OpSchema{Name: "Col2Im", Since: 18, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferCol2Im,
			Doc: "[N, C*prod(block), L] -> [N, C, image_shape...]"},
	)
}

// inferDataType gives output 0 input 0's type: ops that change values,
// not shapes.
func inferDataType(c *InferCtx) error {
	return setOutShape(c, 0, c.InType(0), c.InShape(0).Clone())
}

// freshDimList returns n fresh symbolic dims.
func freshDimList(c *InferCtx, n int, hint string) []Dim {
	out := make([]Dim, n)
	for i := range out {
		out[i] = c.Fresh(hint)
	}
	return out
}

// ---------------------------------------------------------------------------
// Concat, Split.

func inferConcat(c *InferCtx) error {
	dt := Undefined
	rank := -1
	for i := 0; i < c.NumIn(); i++ {
		v := c.In(i)
		if v == nil {
			continue
		}
		if dt == Undefined {
			dt = v.DType
		}
		if v.Shape.Ranked {
			if rank >= 0 && len(v.Shape.Dims) != rank {
				return c.Errorf("inputs have ranks %d and %d", rank, len(v.Shape.Dims))
			}
			rank = len(v.Shape.Dims)
		}
	}
	if rank < 0 {
		return setOutShape(c, 0, dt, Unranked())
	}
	axisAttr := int64(1) // opset 1's default
	if a := c.Attr("axis"); a != nil {
		axisAttr = a.I
	} else if c.Opset >= 4 {
		return c.Errorf("has no axis attribute")
	}
	ax, err := c.NormAxis(axisAttr, rank)
	if err != nil {
		return err
	}
	out := make([]Dim, rank)
	set := make([]bool, rank)
	sum, sumKnown := D(0), true // sumKnown: every input has a rank
	for i := 0; i < c.NumIn(); i++ {
		v := c.In(i)
		if v == nil {
			continue
		}
		if !v.Shape.Ranked {
			sumKnown = false
			continue
		}
		for j, d := range v.Shape.Dims {
			if j == ax {
				continue
			}
			switch {
			case !set[j]:
				out[j], set[j] = d, true
			case d.IsKnown() && out[j].IsKnown() && d.Value != out[j].Value:
				return c.Errorf("input %d has dim %d of size %d, expected %d", i, j, d.Value, out[j].Value)
			case d.IsKnown():
				out[j] = d // a number is more informative than a symbol
			}
		}
		sum = AddDim(sum, v.Shape.Dims[ax])
	}
	for j := range out {
		// The axis is the sum below: asking for a symbol there would
		// mark a detached inference (QLinearConcat's) as unknown.
		if !set[j] && j != ax {
			out[j] = c.Fresh("concat")
		}
	}
	if !sumKnown {
		sum = c.Fresh("concat")
	}
	out[ax] = sum
	s := RankedShape(out...)
	if vals, ok := concatVals(c, ax, s); ok {
		return setOutVals(c, 0, vals)
	}
	return setOutShape(c, 0, dt, s)
}

// concatVals joins the inputs' contents when all are known.
func concatVals(c *InferCtx, ax int, s Shape) (elemVals, bool) {
	dims, ok := s.Ints()
	if !ok || !smallShape(c, dims) {
		return elemVals{}, false
	}
	var parts []elemVals
	for i := 0; i < c.NumIn(); i++ {
		if !c.HasIn(i) {
			continue
		}
		t, ok := inVals(c, i)
		if !ok || len(t.dims) != len(dims) || (len(parts) > 0 && t.isFloat() != parts[0].isFloat()) {
			return elemVals{}, false
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return elemVals{}, false
	}
	// Lay the parts end to end, then pick each output element from the
	// part its axis coordinate falls in.
	all := elemVals{dt: parts[0].dt}
	bases := make([]int, len(parts))
	for i, p := range parts {
		bases[i] = all.len()
		all.ints = append(all.ints, p.ints...)
		all.flts = append(all.flts, p.flts...)
		all.strs = append(all.strs, p.strs...)
	}
	src := sourceIndex(dims, func(idx []int64) int {
		a := idx[ax]
		for i, p := range parts {
			if a < p.dims[ax] {
				st := rowMajorStrides(p.dims)
				f := int64(0)
				for k, x := range idx {
					if k == ax {
						x = a
					}
					f += x * st[k]
				}
				return bases[i] + int(f)
			}
			a -= p.dims[ax]
		}
		return 0 // unreachable: the axis sizes sum to dims[ax]
	})
	return all.pick(dims, src), true
}

func inferSplit(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	nOut := len(c.Node.Outputs)
	if !in.Ranked {
		for i := 0; i < nOut; i++ {
			if err := setOutShape(c, i, dt, Unranked()); err != nil {
				return err
			}
		}
		return nil
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(in.Dims))
	if err != nil {
		return err
	}
	dim := in.Dims[ax]
	sizes, err := splitSizes(c, dim, nOut)
	if err != nil {
		return err
	}
	t, haveVals := inVals(c, 0)
	offset := int64(0)
	for i, sz := range sizes {
		s := in.Clone()
		s.Dims[ax] = sz
		if dims, ok := s.Ints(); ok && haveVals && sz.IsKnown() {
			in := t.dims
			st := rowMajorStrides(in)
			off := offset
			src := sourceIndex(dims, func(idx []int64) int {
				f := int64(0)
				for k, x := range idx {
					if k == ax {
						x += off
					}
					f += x * st[k]
				}
				return int(f)
			})
			if err := setOutVals(c, i, t.pick(dims, src)); err != nil {
				return err
			}
		} else if err := setOutShape(c, i, dt, s); err != nil {
			return err
		}
		if sz.IsKnown() {
			offset += sz.Value
		}
	}
	return nil
}

// splitSizes works out the size of each of Split's nOut outputs along the
// split axis, from the split attribute or input, num_outputs, or an even
// split.
func splitSizes(c *InferCtx, dim Dim, nOut int) ([]Dim, error) {
	var split []int64
	have, known := false, true
	switch {
	case c.Opset >= 13 || (c.Opset < 2 && c.HasIn(1)):
		if c.HasIn(1) {
			have = true
			split, known = inIntList(c, 1)
		}
	default:
		split, have = c.AttrInts("split")
	}
	if have && !known {
		return freshDimList(c, nOut, "split"), nil
	}
	if have {
		if len(split) != nOut {
			return nil, c.Errorf("split has %d sizes for %d outputs", len(split), nOut)
		}
		sizes := make([]Dim, nOut)
		sum := int64(0)
		for i, v := range split {
			if v < 0 {
				return nil, c.Errorf("negative split size %d", v)
			}
			sizes[i] = D(v)
			sum += v
		}
		if dim.IsKnown() && sum != dim.Value {
			return nil, c.Errorf("split sizes sum to %d, the axis has %d", sum, dim.Value)
		}
		return sizes, nil
	}
	if nOut == 0 {
		return nil, c.Errorf("has no outputs")
	}
	n := int64(nOut)
	uneven := false
	if c.Opset >= 18 {
		if a := c.Attr("num_outputs"); a != nil {
			if a.I != n {
				return nil, c.Errorf("num_outputs is %d but the node has %d outputs", a.I, n)
			}
			uneven = true // the last chunk may be smaller
		}
	}
	sizes := make([]Dim, nOut)
	if !dim.IsKnown() {
		for i := range sizes {
			sizes[i] = DivDim(dim, D(n), uneven)
		}
		return sizes, nil
	}
	chunk := dim.Value / n
	if dim.Value%n != 0 {
		if !uneven {
			return nil, c.Errorf("axis of size %d does not split evenly into %d outputs", dim.Value, n)
		}
		chunk = ceilDivI64(dim.Value, n)
	}
	left := dim.Value
	for i := range sizes {
		sz := min(chunk, max(left, 0))
		sizes[i] = D(sz)
		left -= sz
	}
	return sizes, nil
}

// ---------------------------------------------------------------------------
// Slice.

// sliceOpen is the magnitude from which a slice bound means "to the end"
// whatever the dim: exporters write INT64_MAX or INT32_MAX there.
const sliceOpen = math.MaxInt32

func inferSlice(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	var starts, ends []Dim
	var axes, steps []int64
	haveAxes, haveSteps := false, false
	if c.Opset < 10 {
		s, ok1 := c.AttrInts("starts")
		e, ok2 := c.AttrInts("ends")
		if !ok1 || !ok2 {
			return c.Errorf("needs starts and ends")
		}
		starts, ends = dimsOfInts(s), dimsOfInts(e)
		axes, haveAxes = c.AttrInts("axes")
	} else {
		var ok1, ok2, ok3, ok4 bool = true, true, true, true
		starts, ok1 = inDimList(c, 1)
		ends, ok2 = inDimList(c, 2)
		if c.HasIn(3) {
			axes, ok3 = inIntList(c, 3)
			haveAxes = true
		}
		if c.HasIn(4) {
			steps, ok4 = inIntList(c, 4)
			haveSteps = true
		}
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return sliceUnknown(c, in, dt, ok3 && haveAxes, axes)
		}
	}
	if len(starts) != len(ends) {
		return c.Errorf("has %d starts and %d ends", len(starts), len(ends))
	}
	if !haveAxes {
		axes = make([]int64, len(starts))
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	if !haveSteps {
		steps = make([]int64, len(starts))
		for i := range steps {
			steps[i] = 1
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return c.Errorf("starts, ends, axes and steps differ in length")
	}
	norm, err := normAxisList(c, axes, r)
	if err != nil {
		return err
	}
	out := in.Clone()
	type span struct{ start, step int64 }
	spans := make([]span, r)
	exact := true
	for a := range spans {
		spans[a] = span{0, 1}
	}
	for i, a := range norm {
		if steps[i] == 0 {
			return c.Errorf("step is 0")
		}
		dim := in.Dims[a]
		if dim.IsKnown() && starts[i].IsKnown() && ends[i].IsKnown() {
			s, n := sliceExact(dim.Value, starts[i].Value, ends[i].Value, steps[i])
			out.Dims[a] = D(n)
			spans[a] = span{s, steps[i]}
			continue
		}
		exact = false
		out.Dims[a] = sliceCount(c, dim, starts[i], ends[i], steps[i])
	}
	if dims, ok := out.Ints(); ok && exact && smallShape(c, dims) {
		if t, ok := inVals(c, 0); ok {
			st := rowMajorStrides(t.dims)
			src := sourceIndex(dims, func(idx []int64) int {
				f := int64(0)
				for k, x := range idx {
					f += (spans[k].start + x*spans[k].step) * st[k]
				}
				return int(f)
			})
			return setOutVals(c, 0, t.pick(dims, src))
		}
	}
	return setOutShape(c, 0, dt, out)
}

func dimsOfInts(v []int64) []Dim {
	out := make([]Dim, len(v))
	for i, x := range v {
		out[i] = D(x)
	}
	return out
}

// sliceUnknown is Slice's output when its bounds are not known: the rank
// stays, and the sliced axes (every axis when those are unknown too) get
// fresh dims.
func sliceUnknown(c *InferCtx, in Shape, dt DType, axesKnown bool, axes []int64) error {
	out := in.Clone()
	if !axesKnown {
		for i := range out.Dims {
			out.Dims[i] = c.Fresh("slice")
		}
		return setOutShape(c, 0, dt, out)
	}
	norm, err := normAxisList(c, axes, len(in.Dims))
	if err != nil {
		return err
	}
	for _, a := range norm {
		out.Dims[a] = c.Fresh("slice")
	}
	return setOutShape(c, 0, dt, out)
}

// sliceExact applies the spec's clamping to one axis of known size and
// returns the first index read and the element count.
func sliceExact(dim, start, end, step int64) (first, count int64) {
	if start < 0 {
		start += dim
	}
	if end < 0 {
		end += dim
	}
	if step > 0 {
		start = min(max(start, 0), dim)
		end = min(max(end, 0), dim)
		count = ceilDivI64(end-start, step)
	} else {
		start = min(max(start, 0), dim-1)
		end = min(max(end, -1), dim-1)
		mag := -step
		if step == math.MinInt64 {
			mag = math.MaxInt64
		}
		count = ceilDivI64(start-end, mag)
	}
	return start, max(count, 0)
}

// slicePos is a slice bound relative to the start or the end of an axis.
type slicePos struct {
	fromEnd bool
	off     Dim
}

// slicePosOf places a bound on an axis of unknown size. Symbolic bounds
// come from shapes (x[:, :seq]) and are taken to lie within the axis.
func slicePosOf(v Dim, step int64) slicePos {
	if !v.IsKnown() {
		return slicePos{false, v}
	}
	last := int64(0) // where an open bound lands: one past the end, or the end itself when stepping backwards
	if step < 0 {
		last = -1
	}
	switch x := v.Value; {
	case x >= sliceOpen:
		return slicePos{true, D(last)}
	case x <= -sliceOpen:
		return slicePos{false, D(last)}
	case x < 0:
		return slicePos{true, D(x)}
	}
	return slicePos{false, v}
}

// sliceCount is the element count of a slice whose dim or bounds are
// symbolic, assuming (as a valid model promises) that bounds lie within
// the axis: x[:, 1:] of seq gives seq-1, x[:, :seq] of 1024 gives seq.
func sliceCount(c *InferCtx, dim, start, end Dim, step int64) Dim {
	pos := func(v Dim) slicePos {
		if !dim.IsKnown() || !v.IsKnown() {
			return slicePosOf(v, step)
		}
		// Known dim and bound: clamp as the spec does.
		x, d := v.Value, dim.Value
		if x < 0 {
			x += d
		}
		if step > 0 {
			return slicePos{false, D(min(max(x, 0), d))}
		}
		return slicePos{false, D(min(max(x, -1), d-1))}
	}
	lo, hi := pos(start), pos(end)
	mag := step
	if step < 0 {
		lo, hi = hi, lo
		mag = -step
		if step == math.MinInt64 {
			mag = math.MaxInt64
		}
	}
	var diff Dim
	switch {
	case lo.fromEnd == hi.fromEnd:
		diff = SubDim(hi.off, lo.off)
	case hi.fromEnd:
		diff = SubDim(AddDim(dim, hi.off), lo.off)
	default:
		return c.Fresh("slice")
	}
	if diff.IsKnown() {
		n := max(ceilDivI64(diff.Value, mag), 0)
		if dim.IsKnown() {
			n = min(n, dim.Value)
		}
		return D(n)
	}
	if mag == 1 {
		return diff
	}
	return DivDim(diff, D(mag), true)
}

// ---------------------------------------------------------------------------
// Gather family, Scatter family.

func inferGather(c *InferCtx) error {
	data, idx := c.InShape(0), c.InShape(1)
	dt := c.InType(0)
	if !data.Ranked || !idx.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	if len(data.Dims) == 0 {
		return c.Errorf("cannot gather from a scalar")
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(data.Dims))
	if err != nil {
		return err
	}
	out := append([]Dim(nil), data.Dims[:ax]...)
	out = append(out, idx.Dims...)
	out = append(out, data.Dims[ax+1:]...)
	s := RankedShape(out...)
	dims, ok := s.Ints()
	if !ok || !smallShape(c, dims) {
		return setOutShape(c, 0, dt, s)
	}
	t, ok1 := inVals(c, 0)
	iv, ok2 := inVals(c, 1)
	if !ok1 || !ok2 {
		return setOutShape(c, 0, dt, s)
	}
	ind, ok := iv.knownInts()
	if !ok {
		return setOutShape(c, 0, dt, s)
	}
	n := t.dims[ax]
	for k, x := range ind {
		if x < -n || x >= n {
			return c.Errorf("index %d out of range for axis of size %d", x, n)
		}
		if x < 0 {
			ind[k] = x + n
		}
	}
	st := rowMajorStrides(t.dims)
	ist := rowMajorStrides(iv.dims)
	q := len(iv.dims)
	src := sourceIndex(dims, func(o []int64) int {
		f := int64(0)
		for k := 0; k < ax; k++ {
			f += o[k] * st[k]
		}
		j := int64(0)
		for k := 0; k < q; k++ {
			j += o[ax+k] * ist[k]
		}
		f += ind[j] * st[ax]
		for k := ax + 1; k < len(t.dims); k++ {
			f += o[k-1+q] * st[k]
		}
		return int(f)
	})
	return setOutVals(c, 0, t.pick(dims, src))
}

func inferGatherElements(c *InferCtx) error {
	data, idx := c.InShape(0), c.InShape(1)
	if data.Ranked && idx.Ranked && len(data.Dims) != len(idx.Dims) {
		return c.Errorf("data has rank %d, indices rank %d", len(data.Dims), len(idx.Dims))
	}
	if data.Ranked {
		if _, err := c.NormAxis(c.AttrInt("axis", 0), len(data.Dims)); err != nil {
			return err
		}
	}
	return setOutShape(c, 0, c.InType(0), idx.Clone())
}

func inferGatherND(c *InferCtx) error {
	data, idx := c.InShape(0), c.InShape(1)
	dt := c.InType(0)
	if !data.Ranked || !idx.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	q := len(idx.Dims)
	if q == 0 {
		return c.Errorf("indices must have rank >= 1")
	}
	last := idx.Dims[q-1]
	if !last.IsKnown() {
		return setOutShape(c, 0, dt, Unranked())
	}
	b := c.AttrInt("batch_dims", 0)
	k := last.Value
	if b < 0 || b >= int64(q) || b >= int64(len(data.Dims)) || k < 1 || b+k > int64(len(data.Dims)) {
		return c.Errorf("batch_dims %d and index depth %d do not fit data of rank %d", b, k, len(data.Dims))
	}
	out := append([]Dim(nil), idx.Dims[:q-1]...)
	out = append(out, data.Dims[b+k:]...)
	return setOutShape(c, 0, dt, RankedShape(out...))
}

// ---------------------------------------------------------------------------
// Transpose, Expand, Tile.

func inferTranspose(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	perm, ok := c.AttrInts("perm")
	if !ok {
		perm = make([]int64, r)
		for i := range perm {
			perm[i] = int64(r - 1 - i)
		}
	}
	if len(perm) != r {
		return c.Errorf("perm has %d entries for rank %d", len(perm), r)
	}
	seen := make([]bool, r)
	out := make([]Dim, r)
	for i, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return c.Errorf("perm %v is not a permutation of 0..%d", perm, r-1)
		}
		seen[p] = true
		out[i] = in.Dims[p]
	}
	s := RankedShape(out...)
	if dims, ok := s.Ints(); ok && smallShape(c, dims) {
		if t, ok := inVals(c, 0); ok {
			st := rowMajorStrides(t.dims)
			src := sourceIndex(dims, func(idx []int64) int {
				f := int64(0)
				for i, p := range perm {
					f += idx[i] * st[p]
				}
				return int(f)
			})
			return setOutVals(c, 0, t.pick(dims, src))
		}
	}
	return setOutShape(c, 0, dt, s)
}

func inferExpand(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	target, ok := inDimList(c, 1)
	if !ok {
		ts := c.InShape(1)
		if !in.Ranked || ts.Rank() != 1 || !ts.Dims[0].IsKnown() || ts.Dims[0].Value > int64(c.Limits.MaxRank) {
			return setOutShape(c, 0, dt, Unranked())
		}
		// Unknown target: a dim other than 1 survives broadcasting.
		r := max(len(in.Dims), int(ts.Dims[0].Value))
		out := freshDimList(c, r, "expand")
		for i, d := range in.Dims {
			if d.IsKnown() && d.Value != 1 {
				out[r-len(in.Dims)+i] = d
			}
		}
		return setOutShape(c, 0, dt, RankedShape(out...))
	}
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	s, err := BroadcastShapes(in, RankedShape(target...))
	if err != nil {
		return c.Errorf("%w", err)
	}
	if dims, ok := s.Ints(); ok && smallShape(c, dims) {
		if t, ok := inVals(c, 0); ok {
			return setOutVals(c, 0, t.pick(dims, broadcastMap(dims, t.dims)))
		}
	}
	return setOutShape(c, 0, dt, s)
}

func inferTile(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	reps := make([]Dim, r)
	for i := range reps {
		reps[i] = D(1)
	}
	if c.Opset < 6 && c.NumIn() == 3 {
		// Tile-1: repeat along one axis.
		tiles, ok1 := inDimList(c, 1)
		axis, ok2 := inIntList(c, 2)
		if !ok1 || !ok2 || len(tiles) != 1 || len(axis) != 1 {
			return setOutShape(c, 0, dt, RankedShape(freshDimList(c, r, "tile")...))
		}
		ax, err := c.NormAxis(axis[0], r)
		if err != nil {
			return err
		}
		reps[ax] = tiles[0]
	} else {
		rv, ok := inDimList(c, 1)
		if !ok {
			return setOutShape(c, 0, dt, RankedShape(freshDimList(c, r, "tile")...))
		}
		if len(rv) != r {
			return c.Errorf("repeats has %d entries for rank %d", len(rv), r)
		}
		reps = rv
	}
	out := make([]Dim, r)
	for i, d := range in.Dims {
		if reps[i].IsKnown() && reps[i].Value < 0 {
			return c.Errorf("negative repeat %d", reps[i].Value)
		}
		m, ok := mulDims(d, reps[i])
		if !ok {
			return c.Errorf("tiled dim overflows")
		}
		out[i] = m
	}
	s := RankedShape(out...)
	if dims, ok := s.Ints(); ok && smallShape(c, dims) {
		if t, ok := inVals(c, 0); ok {
			st := rowMajorStrides(t.dims)
			src := sourceIndex(dims, func(idx []int64) int {
				f := int64(0)
				for k, x := range idx {
					f += (x % t.dims[k]) * st[k]
				}
				return int(f)
			})
			return setOutVals(c, 0, t.pick(dims, src))
		}
	}
	return setOutShape(c, 0, dt, s)
}

// ---------------------------------------------------------------------------
// Pad.

func inferPad(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	var pads []Dim
	axes := make([]int64, r)
	for i := range axes {
		axes[i] = int64(i)
	}
	switch {
	case c.Opset >= 11:
		p, ok := inDimList(c, 1)
		axesKnown := true
		if c.Opset >= 18 && c.HasIn(3) {
			axes, axesKnown = inIntList(c, 3)
		}
		if !ok || !axesKnown {
			out := in.Clone()
			if !axesKnown {
				return setOutShape(c, 0, dt, RankedShape(freshDimList(c, r, "pad")...))
			}
			norm, err := normAxisList(c, axes, r)
			if err != nil {
				return err
			}
			for _, a := range norm {
				out.Dims[a] = c.Fresh("pad")
			}
			return setOutShape(c, 0, dt, out)
		}
		pads = p
	default:
		name := "pads"
		if c.Opset < 2 {
			name = "paddings"
		}
		p, ok := c.AttrInts(name)
		if !ok {
			return c.Errorf("has no %s attribute", name)
		}
		pads = dimsOfInts(p)
	}
	norm, err := normAxisList(c, axes, r)
	if err != nil {
		return err
	}
	n := len(norm)
	if len(pads) != 2*n {
		return c.Errorf("has %d pads for %d axes", len(pads), n)
	}
	out := in.Clone()
	for i, a := range norm {
		out.Dims[a] = AddDim(AddDim(in.Dims[a], pads[i]), pads[i+n])
	}
	return setOutShape(c, 0, dt, out)
}

// ---------------------------------------------------------------------------
// DepthToSpace, SpaceToDepth, Det, CenterCropPad, Col2Im.

// blockShape reads the blocksize attribute and checks a 4-D input.
func blockShape(c *InferCtx) (Shape, int64, bool, error) {
	in := c.InShape(0)
	if !in.Ranked {
		return in, 0, false, nil
	}
	if len(in.Dims) != 4 {
		return in, 0, false, c.Errorf("input must be 4-D, got %s", in)
	}
	b := c.AttrInt("blocksize", 0)
	if b <= 0 {
		return in, 0, false, c.Errorf("blocksize %d must be positive", b)
	}
	return in, b, true, nil
}

func inferDepthToSpace(c *InferCtx) error {
	in, b, ok, err := blockShape(c)
	if err != nil || !ok {
		if err != nil {
			return err
		}
		return setOutShape(c, 0, c.InType(0), Unranked())
	}
	b2 := D(b * b)
	ch := in.Dims[1]
	if ch.IsKnown() && ch.Value%(b*b) != 0 {
		return c.Errorf("channels %d not divisible by blocksize^2 = %d", ch.Value, b*b)
	}
	h, _ := mulDims(in.Dims[2], D(b))
	w, _ := mulDims(in.Dims[3], D(b))
	return setOutShape(c, 0, c.InType(0), RankedShape(in.Dims[0], DivDim(ch, b2, false), h, w))
}

func inferSpaceToDepth(c *InferCtx) error {
	in, b, ok, err := blockShape(c)
	if err != nil || !ok {
		if err != nil {
			return err
		}
		return setOutShape(c, 0, c.InType(0), Unranked())
	}
	for _, d := range in.Dims[2:] {
		if d.IsKnown() && d.Value%b != 0 {
			return c.Errorf("spatial dim %d not divisible by blocksize %d", d.Value, b)
		}
	}
	ch, _ := mulDims(in.Dims[1], D(b*b))
	return setOutShape(c, 0, c.InType(0), RankedShape(in.Dims[0], ch, DivDim(in.Dims[2], D(b), false), DivDim(in.Dims[3], D(b), false)))
}

func inferDet(c *InferCtx) error {
	in := c.InShape(0)
	if !in.Ranked {
		return setOutShape(c, 0, c.InType(0), Unranked())
	}
	r := len(in.Dims)
	if r < 2 {
		return c.Errorf("input must have rank >= 2, got %s", in)
	}
	a, b := in.Dims[r-2], in.Dims[r-1]
	if a.IsKnown() && b.IsKnown() && a.Value != b.Value {
		return c.Errorf("matrices of %s are not square", in)
	}
	return setOutShape(c, 0, c.InType(0), RankedShape(append([]Dim(nil), in.Dims[:r-2]...)...))
}

func inferCenterCropPad(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	axes, ok := c.AttrInts("axes")
	if !ok {
		axes = make([]int64, r)
		for i := range axes {
			axes[i] = int64(i)
		}
	}
	norm, err := normAxisList(c, axes, r)
	if err != nil {
		return err
	}
	target, known := inDimList(c, 1)
	out := in.Clone()
	if known && len(target) != len(norm) {
		return c.Errorf("shape has %d entries for %d axes", len(target), len(norm))
	}
	for i, a := range norm {
		if known {
			out.Dims[a] = target[i]
		} else {
			out.Dims[a] = c.Fresh("centercroppad")
		}
	}
	return setOutShape(c, 0, dt, out)
}

func inferCol2Im(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	img, ok1 := inDimList(c, 1)
	block, ok2 := inDimList(c, 2)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	if len(in.Dims) != 3 {
		return c.Errorf("input must be 3-D [N, C*prod(block), L], got %s", in)
	}
	if !ok1 {
		return setOutShape(c, 0, dt, Unranked())
	}
	ch := c.Fresh("col2im")
	if ok2 {
		if len(block) != len(img) {
			return c.Errorf("image_shape has %d dims, block_shape %d", len(img), len(block))
		}
		p, ok := mulDims(block...)
		if !ok || p.Is(0) {
			return c.Errorf("bad block_shape")
		}
		ch = DivDim(in.Dims[1], p, false)
		if in.Dims[1].IsKnown() && p.IsKnown() && in.Dims[1].Value%p.Value != 0 {
			return c.Errorf("dim 1 (%d) is not a multiple of the block size %d", in.Dims[1].Value, p.Value)
		}
	}
	out := append([]Dim{in.Dims[0], ch}, img...)
	return setOutShape(c, 0, dt, RankedShape(out...))
}
