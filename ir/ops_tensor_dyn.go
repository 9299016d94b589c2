package ir

// Tensor ops whose output sizes come from input values (Resize scales,
// TopK's K, OneHot's depth) or from the data itself (NonZero, Compress,
// Unique). The former resolve when those inputs are known; the latter only
// when the data is, and otherwise get fresh symbols.

import (
	"math"
	"strconv"
	"strings"
)

func init() {
	Register(
		&OpSchema{Name: "Resize", Family: FamilyData, Since: 10, MinIn: 1, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferResize,
			Doc: "floor(d*scale), or sizes (11); axes and keep_aspect_ratio_policy from 18"},
		&OpSchema{Name: "Upsample", Family: FamilyData, Since: 1, Until: 10, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferUpsample,
			Doc: "floor(d*scale); scales attr (7) or input (9); deprecated at 10"},
		&OpSchema{Name: "OneHot", Family: FamilyData, Since: 9, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkOneHot, Infer: inferOneHot,
			Doc: "indices' shape with depth inserted at axis; the values' dtype"},
		&OpSchema{Name: "NonZero", Family: FamilyData, Since: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferNonZero,
			Doc: "int64 [rank, count]; count is data-dependent"},
		&OpSchema{Name: "TopK", Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 2, MaxOut: 2, Check: checkTopK, Infer: inferTopK,
			Doc: "k along axis; k attr (1) or input (10); values and int64 indices"},
		&OpSchema{Name: "Compress", Since: 9, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferCompress,
			Doc: "the true count of condition along axis (flattened without axis)"},
		&OpSchema{Name: "Unique", Since: 11, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 4, Infer: inferUnique,
			Doc: "Y, indices, inverse_indices, counts; the unique count is data-dependent"},
	)
}

// ---------------------------------------------------------------------------
// Resize, Upsample.

func inferResize(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims)
	axes := make([]int, r)
	for i := range axes {
		axes[i] = i
	}
	if a, ok := c.AttrInts("axes"); ok && c.Opset >= 18 {
		norm, err := normAxisList(c, a, r)
		if err != nil {
			return err
		}
		axes = norm
	}
	scalesIdx, sizesIdx := 2, 3
	if c.Opset < 11 {
		scalesIdx, sizesIdx = 1, -1
	}
	out := in.Clone()
	if sizesIdx > 0 && c.HasIn(sizesIdx) && !c.InShape(sizesIdx).Equal(KnownShape(0)) {
		sizes, ok := inDimList(c, sizesIdx)
		if !ok {
			return resizeUnknown(c, dt, out, axes)
		}
		if len(sizes) != len(axes) {
			return c.Errorf("sizes has %d entries for %d axes", len(sizes), len(axes))
		}
		policy := "stretch"
		if c.Opset >= 18 {
			policy = c.AttrString("keep_aspect_ratio_policy", "stretch")
		}
		if policy == "stretch" {
			for i, a := range axes {
				out.Dims[a] = sizes[i]
			}
			return setOutShape(c, 0, dt, out)
		}
		return setOutShape(c, 0, dt, keepAspect(c, in, axes, sizes, policy))
	}
	if !c.HasIn(scalesIdx) {
		return c.Errorf("needs scales or sizes")
	}
	scales, ok := c.ConstFloats(scalesIdx)
	if !ok {
		return resizeUnknown(c, dt, out, axes)
	}
	if len(scales) != len(axes) {
		return c.Errorf("scales has %d entries for %d axes", len(scales), len(axes))
	}
	for i, a := range axes {
		d, err := scaleDim(c, in.Dims[a], scales[i])
		if err != nil {
			return err
		}
		out.Dims[a] = d
	}
	return setOutShape(c, 0, dt, out)
}

// resizeUnknown sets Resize's output when its sizes or scales are not
// constant: every resized axis gets a fresh symbol, the others keep in's.
func resizeUnknown(c *InferCtx, dt DType, out Shape, axes []int) error {
	for _, a := range axes {
		out.Dims[a] = c.Fresh("resize")
	}
	return setOutShape(c, 0, dt, out)
}

// scaleDim is floor(d*scale), the size every version of Resize and
// Upsample gives a scaled axis. The scale is the file's float32 value;
// the product is taken in float64, as the reference implementation does.
func scaleDim(c *InferCtx, d Dim, scale float64) (Dim, error) {
	if !(scale > 0) || math.IsInf(scale, 0) {
		return Dim{}, c.Errorf("scale %g must be positive and finite", scale)
	}
	if !d.IsKnown() {
		if scale == math.Trunc(scale) && scale < float64(c.Limits.MaxDim) {
			m, ok := mulDims(d, D(int64(scale)))
			if ok {
				return m, nil
			}
		}
		return c.Fresh("resize"), nil
	}
	v := math.Floor(float64(d.Value) * scale)
	if v > float64(c.Limits.MaxDim) {
		return Dim{}, c.Errorf("scaled dim %g exceeds the limit", v)
	}
	return D(int64(v)), nil
}

// keepAspect applies keep_aspect_ratio_policy not_larger / not_smaller:
// one scale for every axis, the smallest (largest) sizes[i]/d, and
// round(scale*d) with halves rounded up.
func keepAspect(c *InferCtx, in Shape, axes []int, sizes []Dim, policy string) Shape {
	out := in.Clone()
	scale := math.NaN()
	for i, a := range axes {
		d := in.Dims[a]
		if !d.IsKnown() || !sizes[i].IsKnown() || d.Value == 0 {
			for _, a := range axes {
				out.Dims[a] = c.Fresh("resize")
			}
			return out
		}
		s := float64(sizes[i].Value) / float64(d.Value)
		switch {
		case math.IsNaN(scale):
			scale = s
		case policy == "not_smaller":
			scale = max(scale, s)
		default:
			scale = min(scale, s)
		}
	}
	for _, a := range axes {
		out.Dims[a] = D(int64(math.Floor(scale*float64(in.Dims[a].Value) + 0.5)))
	}
	return out
}

func inferUpsample(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	scales, ok := c.AttrFloats("scales")
	if c.Opset >= 9 || c.HasIn(1) {
		scales, ok = c.ConstFloats(1)
	}
	out := in.Clone()
	if !ok {
		for i := range out.Dims {
			out.Dims[i] = c.Fresh("upsample")
		}
		return setOutShape(c, 0, dt, out)
	}
	if len(scales) != len(in.Dims) {
		return c.Errorf("scales has %d entries for rank %d", len(scales), len(in.Dims))
	}
	for i, s := range scales {
		d, err := scaleDim(c, in.Dims[i], s)
		if err != nil {
			return err
		}
		out.Dims[i] = d
	}
	return setOutShape(c, 0, dt, out)
}

// ---------------------------------------------------------------------------
// OneHot, TopK.

func inferOneHot(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(2)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	r := len(in.Dims) + 1
	ax, err := c.NormAxis(c.AttrInt("axis", -1), r)
	if err != nil {
		return err
	}
	depth := c.Fresh("onehot")
	if f, ok := c.ConstFloats(1); ok {
		if len(f) != 1 {
			return c.Errorf("depth must have one element, has %d", len(f))
		}
		if !(f[0] >= 1) || f[0] > float64(c.Limits.MaxDim) {
			return c.Errorf("depth %g out of range", f[0])
		}
		depth = D(int64(f[0]))
	} else if d, ok := inDimList(c, 1); ok && len(d) == 1 {
		depth = d[0]
	}
	out := make([]Dim, 0, r)
	out = append(out, in.Dims[:ax]...)
	out = append(out, depth)
	out = append(out, in.Dims[ax:]...)
	return setOutShape(c, 0, dt, RankedShape(out...))
}

func inferTopK(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	if !in.Ranked {
		if err := setOutShape(c, 0, dt, Unranked()); err != nil {
			return err
		}
		return setOutShape(c, 1, Int64, Unranked())
	}
	if len(in.Dims) == 0 {
		return c.Errorf("input must have rank >= 1")
	}
	ax, err := c.NormAxis(c.AttrInt("axis", -1), len(in.Dims))
	if err != nil {
		return err
	}
	var k Dim
	if c.Opset < 10 {
		a := c.Attr("k")
		if a == nil {
			return c.Errorf("has no k attribute")
		}
		k = D(a.I)
	} else if l, ok := inDimList(c, 1); ok && len(l) == 1 {
		k = l[0]
	} else if ok {
		return c.Errorf("K must have one element, has %d", len(l))
	} else {
		k = c.Fresh("topk")
	}
	if k.IsKnown() {
		if k.Value < 0 {
			return c.Errorf("k %d is negative", k.Value)
		}
		if d := in.Dims[ax]; d.IsKnown() && k.Value > d.Value {
			return c.Errorf("k %d exceeds the axis size %d", k.Value, d.Value)
		}
	}
	out := in.Clone()
	out.Dims[ax] = k
	if err := setOutShape(c, 0, dt, out); err != nil {
		return err
	}
	return setOutShape(c, 1, Int64, out.Clone())
}

// ---------------------------------------------------------------------------
// Data-dependent sizes: NonZero, Compress, Unique.

// countNonZero counts the elements of t that are not zero; ok is false
// when one is symbolic.
func countNonZero(t elemVals, limit int) (int64, bool) {
	n := int64(0)
	for k := 0; k < min(t.len(), limit); k++ {
		switch {
		case t.isFloat():
			if t.flts[k] != 0 {
				n++
			}
		case t.isString():
			if t.strs[k] != "" {
				n++
			}
		default:
			d := t.ints[k]
			if !d.IsKnown() {
				return 0, false // a symbolic dim may be 0
			}
			if d.Value != 0 {
				n++
			}
		}
	}
	return n, true
}

func inferNonZero(c *InferCtx) error {
	in := c.InShape(0)
	rank := c.Fresh("rank")
	if in.Ranked {
		rank = D(int64(len(in.Dims)))
	}
	count := c.Fresh("nonzero")
	if t, ok := inVals(c, 0); ok {
		if n, ok := countNonZero(t, t.len()); ok {
			count = D(n)
		}
	}
	return setOutShape(c, 0, Int64, RankedShape(rank, count))
}

func inferCompress(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	cond, haveCond := inVals(c, 1)
	count := func(limit Dim) Dim {
		if !haveCond {
			return c.Fresh("compress")
		}
		lim := cond.len()
		if limit.IsKnown() {
			lim = int(min(limit.Value, int64(lim)))
		}
		if n, ok := countNonZero(cond, lim); ok {
			return D(n)
		}
		return c.Fresh("compress")
	}
	if c.Attr("axis") == nil {
		total := c.Fresh("compress")
		if in.Ranked {
			if n, ok := mulDims(in.Dims...); ok {
				total = n
			}
		}
		return setOutShape(c, 0, dt, RankedShape(count(total)))
	}
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	ax, err := c.NormAxis(c.AttrInt("axis", 0), len(in.Dims))
	if err != nil {
		return err
	}
	out := in.Clone()
	out.Dims[ax] = count(in.Dims[ax])
	return setOutShape(c, 0, dt, out)
}

func inferUnique(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	t, known := inVals(c, 0)
	axisAttr := c.Attr("axis")
	var y Shape
	var inverse Dim
	u := c.Fresh("unique")
	switch {
	case axisAttr == nil:
		if known {
			if n, ok := uniqueCount(t, -1); ok {
				u = D(n)
			}
		}
		y = RankedShape(u)
		inverse = c.Fresh("unique")
		if in.Ranked {
			if n, ok := mulDims(in.Dims...); ok {
				inverse = n
			}
		}
	case !in.Ranked:
		y = Unranked()
		inverse = c.Fresh("unique")
	default:
		ax, err := c.NormAxis(axisAttr.I, len(in.Dims))
		if err != nil {
			return err
		}
		if known {
			if n, ok := uniqueCount(t, ax); ok {
				u = D(n)
			}
		}
		y = in.Clone()
		y.Dims[ax] = u
		inverse = in.Dims[ax]
	}
	if err := setOutShape(c, 0, dt, y); err != nil {
		return err
	}
	for i, d := range []Dim{u, inverse, u} {
		if err := setOutShape(c, i+1, Int64, RankedShape(d)); err != nil {
			return err
		}
	}
	return nil
}

// uniqueCount counts the distinct elements of t (axis < 0) or its
// distinct slices along axis; ok is false when an element is symbolic.
func uniqueCount(t elemVals, axis int) (int64, bool) {
	key := func(k int) (string, bool) {
		switch {
		case t.isFloat():
			return strconv.FormatFloat(t.flts[k], 'g', -1, 64), true
		case t.isString():
			return strconv.Quote(t.strs[k]), true
		}
		d := t.ints[k]
		return d.String(), d.IsKnown()
	}
	seen := map[string]bool{}
	if axis < 0 {
		for k := 0; k < t.len(); k++ {
			s, ok := key(k)
			if !ok {
				return 0, false
			}
			seen[s] = true
		}
		return int64(len(seen)), true
	}
	st := rowMajorStrides(t.dims)
	inner := t.dims[axis]
	sliceDims := append([]int64(nil), t.dims...)
	sliceDims[axis] = 1
	for j := int64(0); j < inner; j++ {
		var b strings.Builder
		for _, src := range sourceIndex(sliceDims, func(idx []int64) int {
			f := j * st[axis]
			for k, x := range idx {
				if k != axis {
					f += x * st[k]
				}
			}
			return int(f)
		}) {
			s, ok := key(src)
			if !ok {
				return 0, false
			}
			b.WriteString(s)
			b.WriteByte(',')
		}
		seen[b.String()] = true
	}
	return int64(len(seen)), true
}
