package ir

// Shape functions for the neural-network ops that carry most of a model's
// cost: convolutions, pooling, GEMM/MatMul (plain, integer and quantized),
// Einsum, and the detection and sampling ops around them.

import (
	"sort"
	"strings"
)

func init() {
	Register(
		&OpSchema{Name: "Conv", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: numericThen(checkConv(0, 1, 2)), Infer: inferConv,
			Doc: "N-d convolution; output [N, M, spatial...]"},
		&OpSchema{Name: "ConvInteger", Family: FamilyConv, Since: 10, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Check: checkConv(0, 1, -1), Infer: inferConvInteger},
		&OpSchema{Name: "QLinearConv", Family: FamilyConv, Since: 10, MinIn: 8, MaxIn: 9, MinOut: 1, MaxOut: 1, Check: checkConv(0, 3, 8), Infer: inferQLinearConv},
		&OpSchema{Name: "DeformConv", Family: FamilyConv, Since: 19, MinIn: 3, MaxIn: 5, MinOut: 1, MaxOut: 1, Check: checkConv(0, 1, 3), Infer: inferConv},
		&OpSchema{Name: "ConvTranspose", Family: FamilyConv, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: numericThen(checkConvTranspose), Infer: inferConvTranspose},
		&OpSchema{Name: "MaxPool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 2, Check: checkPoolWindow, Infer: inferPool},
		&OpSchema{Name: "AveragePool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Check: checkPoolWindow, Infer: inferPool},
		&OpSchema{Name: "LpPool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Check: checkPoolWindow, Infer: inferPool},
		&OpSchema{Name: "GlobalAveragePool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferGlobalPool},
		&OpSchema{Name: "GlobalMaxPool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferGlobalPool},
		&OpSchema{Name: "GlobalLpPool", Family: FamilyPool, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferGlobalPool},
		&OpSchema{Name: "MaxUnpool", Since: 9, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkMaxUnpool, Infer: inferMaxUnpool},
		&OpSchema{Name: "MaxRoiPool", Family: FamilyPool, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkRois, Infer: inferMaxRoiPool},
		&OpSchema{Name: "RoiAlign", Since: 10, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: checkRois, Infer: inferRoiAlign},
		&OpSchema{Name: "Gemm", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 3, MinOut: 1, MaxOut: 1, Check: numericThen(checkGemm), Infer: inferGemm},
		&OpSchema{Name: "MatMul", Family: FamilyGEMM, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkNumeric, Infer: inferMatMul},
		&OpSchema{Name: "MatMulInteger", Family: FamilyGEMM, Since: 10, MinIn: 2, MaxIn: 4, MinOut: 1, MaxOut: 1, Infer: inferMatMulInteger},
		&OpSchema{Name: "QLinearMatMul", Family: FamilyGEMM, Since: 10, MinIn: 8, MaxIn: 8, MinOut: 1, MaxOut: 1, Infer: inferQLinearMatMul},
		&OpSchema{Name: "Einsum", Family: FamilyGEMM, Since: 12, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1, Infer: inferEinsum},
		&OpSchema{Name: "NonMaxSuppression", Since: 10, MinIn: 2, MaxIn: 5, MinOut: 1, MaxOut: 1, Check: checkNMS, Infer: inferNonMaxSuppression},
		&OpSchema{Name: "GridSample", Since: 16, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Check: checkGridSample, Infer: inferGridSample},
		&OpSchema{Name: "AffineGrid", Since: 20, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferAffineGrid},
	)
}

// convGeom holds the attributes shared by convolution and pooling: one
// entry per spatial axis.
type convGeom struct {
	kernel    []Dim
	strides   []int64
	dilations []int64
	pads      []int64 // begin pads then end pads, 2*len(kernel)
	autoPad   string
}

// readConvGeom reads kernel_shape (or takes kernel from the weight's
// spatial dims), strides, dilations, pads and auto_pad for n spatial axes.
func readConvGeom(c *InferCtx, n int, weightKernel []Dim) (*convGeom, error) {
	g := &convGeom{autoPad: c.AttrString("auto_pad", "NOTSET")}
	if ks, ok := c.AttrInts("kernel_shape"); ok {
		if len(ks) != n {
			return nil, c.Errorf("kernel_shape has %d entries for %d spatial axes", len(ks), n)
		}
		for _, k := range ks {
			g.kernel = append(g.kernel, D(k))
		}
	} else if len(weightKernel) == n {
		g.kernel = weightKernel
	} else {
		return nil, nil // kernel unknown: caller falls back to unknown spatial dims
	}
	var err error
	if g.strides, err = attrPerAxis(c, "strides", n, 1); err != nil {
		return nil, err
	}
	if g.dilations, err = attrPerAxis(c, "dilations", n, 1); err != nil {
		return nil, err
	}
	if g.pads, err = attrPerAxis(c, "pads", 2*n, 0); err != nil {
		return nil, err
	}
	// Bounding every entry by MaxDim keeps (k-1)*d+1 and the pad sums far
	// from int64 overflow.
	lim := c.Limits.MaxDim
	for _, s := range g.strides {
		if s <= 0 || s > lim {
			return nil, c.Errorf("stride %d is out of range", s)
		}
	}
	for _, d := range g.dilations {
		if d <= 0 || d > lim {
			return nil, c.Errorf("dilation %d is out of range", d)
		}
	}
	for _, p := range g.pads {
		if p < -lim || p > lim {
			return nil, c.Errorf("pad %d is out of range", p)
		}
	}
	for _, k := range g.kernel {
		if k.IsKnown() && (k.Value <= 0 || k.Value > lim) {
			return nil, c.Errorf("kernel size %d is out of range", k.Value)
		}
	}
	return g, nil
}

// attrPerAxis reads an INTS attribute that must have n entries, or
// returns n copies of def when it is absent.
func attrPerAxis(c *InferCtx, name string, n int, def int64) ([]int64, error) {
	v, ok := c.AttrInts(name)
	if !ok || len(v) == 0 {
		out := make([]int64, n)
		for i := range out {
			out[i] = def
		}
		return out, nil
	}
	if len(v) != n {
		return nil, c.Errorf("attribute %s has %d entries, want %d", name, len(v), n)
	}
	return v, nil
}

// effectiveKernel is the extent a dilated kernel covers: (k-1)*d+1.
func effectiveKernel(k Dim, d int64) Dim {
	if k.IsKnown() {
		return D((k.Value-1)*d + 1)
	}
	m, _ := MulDim(SubDim(k, D(1)), D(d))
	return AddDim(m, D(1))
}

// slidingOut is ConvOut along spatial axis i of g.
func (g *convGeom) slidingOut(i int, in Dim, ceil bool) Dim {
	n := len(g.kernel)
	return ConvOut(in, g.kernel[i], g.strides[i], g.dilations[i], g.pads[i], g.pads[i+n], g.autoPad, ceil)
}

// ConvOut is the number of window positions along one spatial axis of a
// convolution or pooling, the one home of the spec's formula (shape
// rules, cost rules, passes and the zoo all come here):
// ceil(in/stride) under SAME_* padding, else
// floor((in + padBegin + padEnd − dilation·(k−1) − 1)/stride) + 1, with no
// padding under VALID. ceil selects ceil_mode rounding (pooling only);
// then, as in PyTorch and the ONNX reference, a last window that would
// start inside the end padding is dropped. Symbolic sizes give a symbolic
// result. stride and dilation must be positive.
func ConvOut(in, k Dim, stride, dilation, padBegin, padEnd int64, autoPad string, ceil bool) Dim {
	ek := effectiveKernel(k, dilation)
	switch autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		return DivDim(in, D(stride), true)
	case "VALID":
		return windowCount(in, D(0), ek, stride, false)
	}
	out := windowCount(in, D(padBegin+padEnd), ek, stride, ceil)
	if ceil && out.IsKnown() && in.IsKnown() && (out.Value-1)*stride >= in.Value+padBegin {
		out.Value--
	}
	return out
}

// windowCount is (in + pads - ek) / s + 1, with the constant terms folded
// first so that a symbolic input gives "H-2" rather than "H+0-3+1".
func windowCount(in, pads, ek Dim, s int64, ceil bool) Dim {
	if !pads.IsKnown() || !ek.IsKnown() {
		return AddDim(DivDim(SubDim(AddDim(in, pads), ek), D(s), ceil), D(1))
	}
	off := pads.Value - ek.Value
	if s == 1 {
		return AddDim(in, D(off+1))
	}
	return AddDim(DivDim(AddDim(in, D(off)), D(s), ceil), D(1))
}

// spatialOf returns the spatial dims of an N,C,spatial... shape, or nil
// when the rank is unknown.
func spatialOf(s Shape) []Dim {
	if !s.Ranked || len(s.Dims) < 2 {
		return nil
	}
	return s.Dims[2:]
}

// convShape computes a convolution's output shape from x and w.
func convShape(c *InferCtx, x, w Shape) (Shape, error) {
	n := -1
	switch {
	case x.Ranked:
		n = len(x.Dims) - 2
	case w.Ranked:
		n = len(w.Dims) - 2
	}
	if n < 0 {
		if x.Ranked || w.Ranked {
			return Shape{}, c.Errorf("input of rank %d, need at least 2", max(x.Rank(), w.Rank()))
		}
		return Unranked(), nil
	}
	if w.Ranked && len(w.Dims) != n+2 {
		return Shape{}, c.Errorf("weight rank %d does not match input rank %d", len(w.Dims), n+2)
	}
	batch, outC := dimOr(c, x, 0, "N"), dimOr(c, w, 0, "M")
	g, err := readConvGeom(c, n, spatialOf(w))
	if err != nil {
		return Shape{}, err
	}
	dims := []Dim{batch, outC}
	for i := 0; i < n; i++ {
		if g == nil || !x.Ranked {
			dims = append(dims, c.Fresh("conv"))
			continue
		}
		dims = append(dims, g.slidingOut(i, x.Dims[2+i], false))
	}
	return RankedShape(dims...), nil
}

// The Conv and MatMul families share a shape rule per family and differ
// only in which inputs carry the operands and in the output's dtype: the
// input's for the float ops, int32 for the *Integer ops (they accumulate
// uint8/int8 products into int32), y_zero_point's for QLinear* (x, x_scale,
// x_zp, w, w_scale, w_zp, y_scale, y_zp[, B]).
var (
	inferConv          = operandPairInfer(convShape, 1, inputDType)
	inferConvInteger   = operandPairInfer(convShape, 1, int32DType)
	inferQLinearConv   = operandPairInfer(convShape, 3, qlinearDType)
	inferMatMul        = operandPairInfer(matMulShape, 1, inputDType)
	inferMatMulInteger = operandPairInfer(matMulShape, 1, int32DType)
	inferQLinearMatMul = operandPairInfer(matMulShape, 3, qlinearDType)
)

// operandPairInfer is the shape function of an op whose output shape is
// shape(input 0, input second) and whose dtype is dtype's.
func operandPairInfer(shape func(c *InferCtx, a, b Shape) (Shape, error), second int, dtype func(c *InferCtx) DType) func(c *InferCtx) error {
	return func(c *InferCtx) error {
		s, err := shape(c, c.InShape(0), c.InShape(second))
		if err != nil {
			return err
		}
		return c.SetOut(0, dtype(c), s)
	}
}

func inputDType(c *InferCtx) DType { return c.InType(0) }

func int32DType(*InferCtx) DType { return Int32 }

// qlinearDType is y_zero_point's dtype, or the input's when it is unknown.
func qlinearDType(c *InferCtx) DType {
	if dt := c.InType(7); dt != Undefined {
		return dt
	}
	return c.InType(0)
}

// ConvTranspose: W is [C, M/group, k...], the output has M channels and
// each spatial dim is stride*(in-1) + output_padding + (k-1)*d+1 - pads,
// unless output_shape gives it outright.
func inferConvTranspose(c *InferCtx) error {
	x, w := c.InShape(0), c.InShape(1)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	n := len(x.Dims) - 2
	if n < 0 {
		return c.Errorf("input of rank %d, need at least 2", len(x.Dims))
	}
	outC := c.Fresh("M")
	if w.Ranked {
		if len(w.Dims) != n+2 {
			return c.Errorf("weight rank %d does not match input rank %d", len(w.Dims), n+2)
		}
		var ok bool
		if outC, ok = MulDim(w.Dims[1], D(c.AttrInt("group", 1))); !ok {
			return c.Errorf("output channels overflow")
		}
	}
	dims := []Dim{x.Dims[0], outC}
	if os, ok := c.AttrInts("output_shape"); ok && len(os) > 0 {
		// The spec gives spatial dims; some exporters write the full shape.
		if len(os) == n+2 {
			os = os[2:]
		}
		if len(os) != n {
			return c.Errorf("output_shape has %d entries for %d spatial axes", len(os), n)
		}
		for _, v := range os {
			dims = append(dims, D(v))
		}
		return c.SetOut(0, c.InType(0), RankedShape(dims...))
	}
	g, err := readConvGeom(c, n, spatialOf(w))
	if err != nil {
		return err
	}
	outPad, err := attrPerAxis(c, "output_padding", n, 0)
	if err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		if g == nil {
			dims = append(dims, c.Fresh("convT"))
			continue
		}
		in, s := x.Dims[2+i], g.strides[i]
		if g.autoPad == "SAME_UPPER" || g.autoPad == "SAME_LOWER" {
			d, _ := MulDim(in, D(s))
			dims = append(dims, d)
			continue
		}
		pads := g.pads[i] + g.pads[i+n]
		if g.autoPad == "VALID" {
			pads = 0
		}
		// s*(in-1) + ek + output_padding - pads, constants folded.
		d, _ := MulDim(in, D(s))
		ek := effectiveKernel(g.kernel[i], g.dilations[i])
		if ek.IsKnown() {
			d = AddDim(d, D(ek.Value+outPad[i]-pads-s))
		} else {
			d = AddDim(AddDim(d, ek), D(outPad[i]-pads-s))
		}
		dims = append(dims, d)
	}
	return c.SetOut(0, c.InType(0), RankedShape(dims...))
}

// windowGeom reads the window of an op that requires kernel_shape (the
// pools, MaxUnpool) over the spatial dims of x, n = rank-2 of them.
func windowGeom(c *InferCtx, x Shape) (g *convGeom, n int, err error) {
	n = len(x.Dims) - 2
	if n < 0 {
		return nil, 0, c.Errorf("input of rank %d, need at least 2", len(x.Dims))
	}
	if g, err = readConvGeom(c, n, nil); err != nil {
		return nil, 0, err
	}
	if g == nil {
		return nil, 0, c.Errorf("kernel_shape is required")
	}
	return g, n, nil
}

// inferPool covers MaxPool, AveragePool and LpPool: the window comes from
// kernel_shape; MaxPool's optional second output holds int64 indices.
func inferPool(c *InferCtx) error {
	x := c.InShape(0)
	dt := c.InType(0)
	if !x.Ranked {
		if err := c.SetOut(0, dt, Unranked()); err != nil {
			return err
		}
		return c.SetOut(1, Int64, Unranked())
	}
	g, n, err := windowGeom(c, x)
	if err != nil {
		return err
	}
	ceil := c.AttrInt("ceil_mode", 0) != 0
	dims := []Dim{x.Dims[0], x.Dims[1]}
	for i := 0; i < n; i++ {
		dims = append(dims, g.slidingOut(i, x.Dims[2+i], ceil))
	}
	s := RankedShape(dims...)
	if err := c.SetOut(0, dt, s); err != nil {
		return err
	}
	return c.SetOut(1, Int64, s.Clone())
}

// Global pooling keeps N and C and makes every spatial dim 1.
func inferGlobalPool(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if len(x.Dims) < 2 {
		return c.Errorf("input of rank %d, need at least 2", len(x.Dims))
	}
	dims := append([]Dim{}, x.Dims[:2]...)
	for range x.Dims[2:] {
		dims = append(dims, D(1))
	}
	return c.SetOut(0, c.InType(0), RankedShape(dims...))
}

// MaxUnpool(X, I, output_shape?): the inverse of MaxPool's size formula,
// (in-1)*stride + kernel - pads, unless output_shape is known.
func inferMaxUnpool(c *InferCtx) error {
	dt := c.InType(0)
	if c.HasIn(2) {
		if v, ok := c.ConstInts(2); ok {
			return c.SetOut(0, dt, KnownShape(v...))
		}
		if s := c.InShape(2); s.Rank() == 1 && s.Dims[0].IsKnown() {
			return c.SetOut(0, dt, freshShape(c, int(s.Dims[0].Value), "unpool"))
		}
		return c.SetOut(0, dt, Unranked())
	}
	x := c.InShape(0)
	if !x.Ranked {
		return c.SetOut(0, dt, Unranked())
	}
	g, n, err := windowGeom(c, x)
	if err != nil {
		return err
	}
	dims := []Dim{x.Dims[0], x.Dims[1]}
	for i := 0; i < n; i++ {
		// (in-1)*s + k - pads, constants folded.
		s := g.strides[i]
		d, _ := MulDim(x.Dims[2+i], D(s))
		d = AddDim(d, D(g.kernel[i].Value-g.pads[i]-g.pads[i+n]-s))
		dims = append(dims, d)
	}
	return c.SetOut(0, dt, RankedShape(dims...))
}

// freshShape is a rank-n shape of fresh symbols.
func freshShape(c *InferCtx, n int, hint string) Shape {
	dims := make([]Dim, n)
	for i := range dims {
		dims[i] = c.Fresh(hint)
	}
	return RankedShape(dims...)
}

// dimOr returns s's dim i, or a fresh symbol when s is unranked or short.
func dimOr(c *InferCtx, s Shape, i int, hint string) Dim {
	if s.Ranked && i >= 0 && i < len(s.Dims) {
		return s.Dims[i]
	}
	return c.Fresh(hint)
}

// MaxRoiPool(X [N,C,H,W], rois [R,5]) -> [R, C, pooled_h, pooled_w].
func inferMaxRoiPool(c *InferCtx) error {
	ps, ok := c.AttrInts("pooled_shape")
	if !ok || len(ps) != 2 {
		return c.Errorf("pooled_shape must have 2 entries")
	}
	x, rois := c.InShape(0), c.InShape(1)
	return c.SetOut(0, c.InType(0), RankedShape(dimOr(c, rois, 0, "rois"), dimOr(c, x, 1, "C"), D(ps[0]), D(ps[1])))
}

// RoiAlign(X [N,C,H,W], rois [R,4], batch_indices [R]) -> [R, C, oh, ow].
func inferRoiAlign(c *InferCtx) error {
	x, rois := c.InShape(0), c.InShape(1)
	r := dimOr(c, rois, 0, "rois")
	if !rois.Ranked {
		r = dimOr(c, c.InShape(2), 0, "rois")
	}
	oh, ow := c.AttrInt("output_height", 1), c.AttrInt("output_width", 1)
	return c.SetOut(0, c.InType(0), RankedShape(r, dimOr(c, x, 1, "C"), D(oh), D(ow)))
}

// Gemm: Y = alpha*op(A)*op(B) + beta*C with op = optional transpose; Y is
// [M, N]. C only has to broadcast to it.
func inferGemm(c *InferCtx) error {
	a, b := c.InShape(0), c.InShape(1)
	if a.Ranked && len(a.Dims) != 2 || b.Ranked && len(b.Dims) != 2 {
		return c.Errorf("operands must be 2-D, got %s and %s", a, b)
	}
	// A fresh symbol only for an operand whose shape is unknown: asking
	// for one marks a detached inference (FusedGemm's, ops_fused.go) as
	// resting on an unknown size, and its output would be dropped.
	m := gemmDim(c, a, 0, "transA", "M")
	n := gemmDim(c, b, 1, "transB", "N")
	return c.SetOut(0, c.InType(0), RankedShape(m, n))
}

// gemmDim is the output dim a Gemm operand of shape s gives: its dim i, or
// the other one when the attribute trans transposes it; a fresh symbol
// named fresh when s is unranked.
func gemmDim(c *InferCtx, s Shape, i int, trans, fresh string) Dim {
	if !s.Ranked {
		return c.Fresh(fresh)
	}
	if c.AttrInt(trans, 0) != 0 {
		i = 1 - i
	}
	return s.Dims[i]
}

// matMulShape applies numpy matmul rules: 1-D operands are promoted (a row
// vector on the left, a column vector on the right) and the promoted dim is
// dropped again; leading dims broadcast.
func matMulShape(c *InferCtx, a, b Shape) (Shape, error) {
	if !a.Ranked || !b.Ranked {
		return Unranked(), nil
	}
	if len(a.Dims) == 0 || len(b.Dims) == 0 {
		return Shape{}, c.Errorf("operands must not be scalars, got %s and %s", a, b)
	}
	ad, bd := a.Dims, b.Dims
	aVec, bVec := len(ad) == 1, len(bd) == 1
	if aVec {
		ad = []Dim{D(1), ad[0]}
	}
	if bVec {
		bd = []Dim{bd[0], D(1)}
	}
	ka, kb := ad[len(ad)-1], bd[len(bd)-2]
	if ka.IsKnown() && kb.IsKnown() && ka.Value != kb.Value {
		return Shape{}, c.Errorf("inner dims differ: %s and %s", a, b)
	}
	batch, err := BroadcastShapes(RankedShape(ad[:len(ad)-2]...), RankedShape(bd[:len(bd)-2]...))
	if err != nil {
		return Shape{}, c.Errorf("%w", err)
	}
	dims := append([]Dim{}, batch.Dims...)
	if !aVec {
		dims = append(dims, ad[len(ad)-2])
	}
	if !bVec {
		dims = append(dims, bd[len(bd)-1])
	}
	return RankedShape(dims...), nil
}

// einsumTerm is one parsed operand (or the output) of an Einsum equation:
// its letters in order, and where the ellipsis stands (-1 when absent).
type einsumTerm struct {
	letters  []byte
	ellipsis int
}

// parseEinsumTerm parses "ab...c" (spaces ignored).
func parseEinsumTerm(s string) (einsumTerm, bool) {
	t := einsumTerm{ellipsis: -1}
	s = strings.ReplaceAll(s, " ", "")
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == '.':
			if t.ellipsis >= 0 || !strings.HasPrefix(s[i:], "...") {
				return t, false
			}
			t.ellipsis = len(t.letters)
			i += 2
		case ch >= 'a' && ch <= 'z' || ch >= 'A' && ch <= 'Z':
			t.letters = append(t.letters, ch)
		default:
			return t, false
		}
	}
	return t, true
}

// inferEinsum parses the equation, binds each letter to a dim of its
// operand and each operand's ellipsis to its unlettered dims (broadcast
// across operands), then builds the output term. An implicit output
// ("ij,jk") is the ellipsis followed by the letters used once, sorted.
func inferEinsum(c *InferCtx) error {
	eq := c.AttrString("equation", "")
	lhs, rhs, explicit := strings.Cut(eq, "->")
	parts := strings.Split(lhs, ",")
	if len(parts) != c.NumIn() {
		return c.Errorf("equation %q has %d operands, node has %d inputs", eq, len(parts), c.NumIn())
	}
	dt := c.InType(0)
	letterDim := map[byte]Dim{}
	count := map[byte]int{}
	var ell Shape = RankedShape()
	anyEllipsis := false
	for i, p := range parts {
		t, ok := parseEinsumTerm(p)
		if !ok {
			return c.Errorf("cannot parse equation %q", eq)
		}
		s := c.InShape(i)
		for _, l := range t.letters {
			count[l]++
		}
		if !s.Ranked {
			return c.SetOut(0, dt, Unranked())
		}
		nl := len(t.letters)
		if t.ellipsis < 0 && len(s.Dims) != nl || t.ellipsis >= 0 && len(s.Dims) < nl {
			return c.Errorf("operand %d of rank %d does not fit term %q", i, len(s.Dims), p)
		}
		ne := len(s.Dims) - nl
		for j, l := range t.letters {
			d := s.Dims[j]
			if t.ellipsis >= 0 && j >= t.ellipsis {
				d = s.Dims[j+ne]
			}
			if old, seen := letterDim[l]; seen && old.IsKnown() && d.IsKnown() && old.Value != d.Value && !old.Is(1) && !d.Is(1) {
				return c.Errorf("letter %c is %d in one operand and %d in operand %d", l, old.Value, d.Value, i)
			}
			if old, seen := letterDim[l]; !seen || !old.IsKnown() || old.Is(1) {
				letterDim[l] = d
			}
		}
		if t.ellipsis >= 0 {
			anyEllipsis = true
			b, err := BroadcastShapes(ell, RankedShape(s.Dims[t.ellipsis:t.ellipsis+ne]...))
			if err != nil {
				return c.Errorf("ellipsis dims: %w", err)
			}
			ell = b
		}
	}
	var out einsumTerm
	if explicit {
		var ok bool
		if out, ok = parseEinsumTerm(rhs); !ok {
			return c.Errorf("cannot parse equation %q", eq)
		}
		if out.ellipsis < 0 && anyEllipsis && len(ell.Dims) > 0 {
			return c.Errorf("equation %q drops the ellipsis dims", eq)
		}
	} else {
		out.ellipsis = 0
		for l, n := range count {
			if n == 1 {
				out.letters = append(out.letters, l)
			}
		}
		sort.Slice(out.letters, func(i, j int) bool { return out.letters[i] < out.letters[j] })
	}
	var dims []Dim
	for j, l := range out.letters {
		if j == out.ellipsis {
			dims = append(dims, ell.Dims...)
		}
		d, ok := letterDim[l]
		if !ok {
			return c.Errorf("output letter %q appears in no operand of %q", string(l), eq)
		}
		dims = append(dims, d)
	}
	if out.ellipsis >= len(out.letters) {
		dims = append(dims, ell.Dims...)
	}
	return c.SetOut(0, dt, RankedShape(dims...))
}

// NonMaxSuppression selects a data-dependent number of boxes: [num, 3]
// int64 (batch, class, box index).
func inferNonMaxSuppression(c *InferCtx) error {
	if n, ok := nmsCount(c); ok {
		return c.SetOut(0, Int64, KnownShape(n, 3))
	}
	return c.SetOut(0, Int64, RankedShape(c.Fresh("nms"), D(3)))
}

// GridSample(X [N,C,D1..Dr], grid [N,O1..Or,r]) -> [N, C, O1..Or].
func inferGridSample(c *InferCtx) error {
	x, grid := c.InShape(0), c.InShape(1)
	if !grid.Ranked {
		return c.SetOut(0, c.InType(0), Unranked())
	}
	if len(grid.Dims) < 3 {
		return c.Errorf("grid of rank %d, need at least 3", len(grid.Dims))
	}
	dims := []Dim{dimOr(c, x, 0, "N"), dimOr(c, x, 1, "C")}
	if x.Ranked && len(x.Dims) > 0 && !x.Dims[0].IsKnown() {
		dims[0] = grid.Dims[0]
	}
	dims = append(dims, grid.Dims[1:len(grid.Dims)-1]...)
	return c.SetOut(0, c.InType(0), RankedShape(dims...))
}

// AffineGrid(theta [N,r,r+1], size [N,C,D1..Dr]) -> [N, D1..Dr, r].
func inferAffineGrid(c *InferCtx) error {
	dt := c.InType(0)
	size, ok := c.ConstInts(1)
	if !ok {
		if s := c.InShape(1); s.Rank() == 1 && s.Dims[0].IsKnown() && s.Dims[0].Value >= 2 {
			r := int(s.Dims[0].Value) - 2
			sh := freshShape(c, r+1, "grid")
			sh.Dims = append(sh.Dims, D(int64(r)))
			return c.SetOut(0, dt, sh)
		}
		return c.SetOut(0, dt, Unranked())
	}
	if len(size) < 3 {
		return c.Errorf("size has %d entries, need at least 3", len(size))
	}
	r := int64(len(size) - 2)
	dims := []Dim{D(size[0])}
	for _, v := range size[2:] {
		dims = append(dims, D(v))
	}
	dims = append(dims, D(r))
	return c.SetOut(0, dt, RankedShape(dims...))
}

// nmsCount runs non-max suppression when boxes, scores and the thresholds
// are known (small test inputs, or --input-data), so the selected count is
// a number rather than a symbol. It follows the ONNX reference: per batch
// and class, boxes scoring above score_threshold are taken in descending
// score order, each suppressing later boxes whose IoU with it exceeds
// iou_threshold, up to max_output_boxes_per_class.
func nmsCount(c *InferCtx) (int64, bool) {
	bs, ss := c.InShape(0), c.InShape(1)
	boxes, ok1 := c.ConstFloats(0)
	scores, ok2 := c.ConstFloats(1)
	if !ok1 || !ok2 || bs.Rank() != 3 || ss.Rank() != 3 || !bs.IsKnown() || !ss.IsKnown() {
		return 0, false
	}
	nb, nbox, nc := bs.Dims[0].Value, bs.Dims[1].Value, ss.Dims[1].Value
	if bs.Dims[2].Value != 4 || ss.Dims[0].Value != nb || ss.Dims[2].Value != nbox ||
		int64(len(boxes)) != nb*nbox*4 || int64(len(scores)) != nb*nc*nbox {
		return 0, false
	}
	maxOut, iouThr, scoreThr, hasScoreThr := int64(0), 0.0, 0.0, false
	if c.HasIn(2) {
		v, ok := c.ConstInts(2)
		if !ok || len(v) != 1 {
			return 0, false
		}
		maxOut = v[0]
	}
	if c.HasIn(3) {
		v, ok := c.ConstFloats(3)
		if !ok || len(v) != 1 {
			return 0, false
		}
		iouThr = v[0]
	}
	if c.HasIn(4) {
		v, ok := c.ConstFloats(4)
		if !ok || len(v) != 1 {
			return 0, false
		}
		scoreThr, hasScoreThr = v[0], true
	}
	centre := c.AttrInt("center_point_box", 0) != 0
	total := int64(0)
	for b := int64(0); b < nb; b++ {
		bx := boxes[b*nbox*4 : (b+1)*nbox*4]
		for k := int64(0); k < nc; k++ {
			sc := scores[(b*nc+k)*nbox : (b*nc+k+1)*nbox]
			var cand []int
			for i, s := range sc {
				if !hasScoreThr || s > scoreThr {
					cand = append(cand, i)
				}
			}
			sort.SliceStable(cand, func(i, j int) bool { return sc[cand[i]] > sc[cand[j]] })
			var kept []int
			for _, i := range cand {
				if int64(len(kept)) >= maxOut {
					break
				}
				suppressed := false
				for _, j := range kept {
					if nmsIoU(bx[4*i:4*i+4], bx[4*j:4*j+4], centre) > iouThr {
						suppressed = true
						break
					}
				}
				if !suppressed {
					kept = append(kept, i)
				}
			}
			total += int64(len(kept))
		}
	}
	return total, true
}

// nmsIoU is the intersection over union of two boxes, 0 when either is
// degenerate.
func nmsIoU(a, b []float64, centre bool) float64 {
	box := func(v []float64) (x0, y0, x1, y1 float64) {
		if centre {
			return v[0] - v[2]/2, v[1] - v[3]/2, v[0] + v[2]/2, v[1] + v[3]/2
		}
		return min(v[1], v[3]), min(v[0], v[2]), max(v[1], v[3]), max(v[0], v[2])
	}
	ax0, ay0, ax1, ay1 := box(a)
	bx0, by0, bx1, by1 := box(b)
	iw, ih := min(ax1, bx1)-max(ax0, bx0), min(ay1, by1)-max(ay0, by0)
	if iw <= 0 || ih <= 0 {
		return 0
	}
	inter := iw * ih
	areaA, areaB := (ax1-ax0)*(ay1-ay0), (bx1-bx0)*(by1-by0)
	union := areaA + areaB - inter
	if areaA <= 0 || areaB <= 0 || union <= 0 {
		return 0
	}
	return inter / union
}

// ConvOutDim is ConvOut over concrete sizes without ceil mode. ok is
// false for a non-positive stride or dilation, and for a result that is
// not positive (a window larger than the padded input).
func ConvOutDim(in, k, stride, dilation, padBegin, padEnd int64, autoPad string) (out int64, ok bool) {
	if stride <= 0 || dilation <= 0 {
		return 0, false
	}
	d := ConvOut(D(in), D(k), stride, dilation, padBegin, padEnd, autoPad, false)
	return d.Value, d.Value > 0
}
