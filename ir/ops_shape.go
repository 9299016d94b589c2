package ir

// Shape computation with value propagation. Exporters build shapes at run
// time (Shape -> Gather -> Unsqueeze -> Concat -> Reshape, as PyTorch
// writes x.view(x.size(0), -1)), so inference must evaluate those small
// integer tensors. Elements that are only known symbolically ("batch")
// travel in Value.SymInts, one Dim per element; fully known results are
// stored as Value.Const like any constant.

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

func init() {
	Register(
		&OpSchema{Name: "Shape", Traits: View, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferShapeOp,
			Doc: "the input's dims as a 1-D int64 tensor; start/end (15) select a range"},
		&OpSchema{Name: "Size", Traits: View, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferSize,
			Doc: "the input's element count as an int64 scalar"},
		&OpSchema{Name: "Reshape", Traits: View | Alias, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferReshape,
			Doc: "shape attr (1) or input (5); 0 copies a dim unless allowzero (14); one -1 is inferred"},
		&OpSchema{Name: "Flatten", Traits: View | Alias, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferFlatten,
			Doc: "2-D [prod(d[:axis]), prod(d[axis:])]; negative axis from 11"},
		&OpSchema{Name: "Squeeze", Traits: View | Alias, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferSqueeze,
			Doc: "axes attr (1, negative from 11) or input (13); no axes removes every 1"},
		&OpSchema{Name: "Unsqueeze", Traits: View | Alias, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferUnsqueeze,
			Doc: "axes attr (1, negative from 11) or input (13), relative to the output rank"},
		&OpSchema{Name: "ConstantOfShape", Family: FamilyData, Since: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Check: checkConstantOfShape, Infer: inferConstantOfShape,
			Doc: "a tensor of the given shape filled with the value attr (float32 0 by default)"},
		&OpSchema{Name: "Range", Family: FamilyData, Since: 11, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferRange,
			Doc: "1-D of max(ceil((limit-start)/delta), 0) elements of start's dtype"},
	)
}

// ---------------------------------------------------------------------------
// Known contents of small tensors.

// elemVals is a small tensor's contents in row-major order. Integer and
// bool tensors keep elements as Dims so that values derived from symbolic
// shapes flow through the same data-movement code as numbers; float and
// string tensors are propagated only when every element is known.
type elemVals struct {
	dt   DType
	dims []int64
	ints []Dim
	flts []float64
	strs []string
}

// isFloat and isString pick which slice holds the elements.
func (t elemVals) isFloat() bool  { return t.dt.IsFloat() }
func (t elemVals) isString() bool { return t.dt == String }

func (t elemVals) len() int {
	switch {
	case t.isFloat():
		return len(t.flts)
	case t.isString():
		return len(t.strs)
	}
	return len(t.ints)
}

// pick builds a tensor of dims whose k-th element is t's element src[k]:
// every data-movement op (gather, slice, transpose, expand, tile, split)
// is such a selection.
func (t elemVals) pick(dims []int64, src []int) elemVals {
	out := elemVals{dt: t.dt, dims: append([]int64(nil), dims...)}
	switch {
	case t.isFloat():
		out.flts = make([]float64, len(src))
		for k, s := range src {
			out.flts[k] = t.flts[s]
		}
	case t.isString():
		out.strs = make([]string, len(src))
		for k, s := range src {
			out.strs[k] = t.strs[s]
		}
	default:
		out.ints = make([]Dim, len(src))
		for k, s := range src {
			out.ints[k] = t.ints[s]
		}
	}
	return out
}

// reshaped returns t with new dims and the same elements.
func (t elemVals) reshaped(dims []int64) elemVals {
	t.dims = append([]int64(nil), dims...)
	return t
}

// knownInts returns the elements as numbers when none is symbolic.
func (t elemVals) knownInts() ([]int64, bool) {
	if t.isFloat() || t.isString() {
		return nil, false
	}
	out := make([]int64, len(t.ints))
	for i, d := range t.ints {
		if !d.IsKnown() {
			return nil, false
		}
		out[i] = d.Value
	}
	return out, true
}

// valsOf returns v's contents when known, from Const or SymInts.
func valsOf(v *Value) (elemVals, bool) {
	if v == nil || v.Kind != TensorValue {
		return elemVals{}, false
	}
	if t := v.Const; t != nil && t.HasData {
		n, ok := KnownShape(t.Dims...).NumElements()
		if !ok || (v.Shape.Ranked && !v.Shape.Equal(t.Shape())) {
			// A value whose inferred shape disagrees with its contents
			// is not trusted: index maps are built from the shape.
			return elemVals{}, false
		}
		out := elemVals{dt: t.DType, dims: append([]int64(nil), t.Dims...)}
		switch {
		case t.DType.IsFloat():
			if int64(len(t.Floats)) != n {
				return elemVals{}, false
			}
			out.flts = t.Floats
		case t.DType == String:
			if int64(len(t.Strings)) != n {
				return elemVals{}, false
			}
			out.strs = t.Strings
		case t.DType.IsInt() || t.DType == Bool:
			if int64(len(t.Ints)) != n {
				return elemVals{}, false
			}
			out.ints = make([]Dim, n)
			for i, x := range t.Ints {
				out.ints[i] = D(x)
			}
		default:
			return elemVals{}, false
		}
		return out, true
	}
	if v.SymInts != nil {
		dims, ok := v.Shape.Ints()
		if !ok {
			return elemVals{}, false
		}
		n, ok := v.Shape.NumElements()
		if !ok || n != int64(len(v.SymInts)) {
			return elemVals{}, false
		}
		return elemVals{dt: v.DType, dims: dims, ints: append([]Dim(nil), v.SymInts...)}, true
	}
	return elemVals{}, false
}

// inVals returns input i's contents when known.
func inVals(c *InferCtx, i int) (elemVals, bool) { return valsOf(c.In(i)) }

// inDimList reads input i as a list of (possibly symbolic) integers: a
// 1-D or scalar integer tensor whose elements are known or symbolic.
func inDimList(c *InferCtx, i int) ([]Dim, bool) {
	t, ok := inVals(c, i)
	if !ok || t.isFloat() || t.isString() || len(t.dims) > 1 {
		return nil, false
	}
	return t.ints, true
}

// inIntList reads input i as a list of known integers (1-D or scalar).
func inIntList(c *InferCtx, i int) ([]int64, bool) {
	d, ok := inDimList(c, i)
	if !ok {
		return nil, false
	}
	return elemVals{ints: d}.knownInts()
}

// setOutShape sets output i's type and drops any value an earlier run of
// inference left on it, so a re-run with other bindings never reads a
// stale value.
func setOutShape(c *InferCtx, i int, dt DType, s Shape) error {
	if err := c.SetOut(i, dt, s); err != nil {
		return err
	}
	if v := c.Out(i); v != nil {
		v.Const = nil
		v.SymInts = nil
	}
	return nil
}

// setOutVals sets output i's type and contents: a Const when every element
// is known, else SymInts.
func setOutVals(c *InferCtx, i int, t elemVals) error {
	v := c.Out(i)
	if v == nil {
		return nil
	}
	dims := append([]int64(nil), t.dims...)
	switch {
	case t.isFloat():
		if err := c.SetOutConst(i, FloatTensor(t.dt, dims, t.flts)); err != nil {
			return err
		}
	case t.isString():
		if err := c.SetOutConst(i, &Tensor{DType: String, Dims: dims, Strings: t.strs, HasData: true}); err != nil {
			return err
		}
	default:
		if ints, ok := t.knownInts(); ok {
			if err := c.SetOutConst(i, &Tensor{DType: t.dt, Dims: dims, Ints: ints, HasData: true}); err != nil {
				return err
			}
			break
		}
		if err := setOutShape(c, i, t.dt, KnownShape(dims...)); err != nil {
			return err
		}
		v.SymInts = t.ints
		return nil
	}
	v.SymInts = nil
	return nil
}

// smallShape reports whether s is known and small enough that its
// contents are worth computing.
func smallShape(c *InferCtx, dims []int64) bool {
	for _, d := range dims {
		if d < 0 {
			return false // [2,-1] would make a negative count (and [-1,-1] a positive one)
		}
	}
	n := countOf(dims)
	return n >= 0 && int64(n) <= c.Limits.SmallTensorElems
}

// sourceIndex lists, for each element of a tensor of dims out in row-major
// order, the flat source index src returns for its multi-index.
func sourceIndex(out []int64, src func(idx []int64) int) []int {
	n := int64(1)
	for _, d := range out {
		n *= d
	}
	res := make([]int, 0, n)
	idx := make([]int64, len(out))
	for k := int64(0); k < n; k++ {
		res = append(res, src(idx))
		for a := len(out) - 1; a >= 0; a-- {
			idx[a]++
			if idx[a] < out[a] {
				break
			}
			idx[a] = 0
		}
	}
	return res
}

// rowMajorStrides are the row-major strides of dims.
func rowMajorStrides(dims []int64) []int64 {
	s := make([]int64, len(dims))
	acc := int64(1)
	for i := len(dims) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= dims[i]
	}
	return s
}

// ---------------------------------------------------------------------------
// Symbolic products, so that Reshape's -1 can cancel symbols:
// (batch*2048) / batch = 2048.

// dimProduct is a product of dims as a number times symbolic factors.
type dimProduct struct {
	coef int64
	syms []string
}

// productOf multiplies dims; ok is false on overflow.
func productOf(ds []Dim) (dimProduct, bool) {
	p := dimProduct{coef: 1}
	for _, d := range ds {
		if !p.mul(d) {
			return dimProduct{}, false
		}
	}
	return p, true
}

func (p *dimProduct) mul(d Dim) bool {
	k, fs := int64(1), []string(nil)
	if d.IsKnown() {
		k = d.Value
	} else {
		k, fs = symFactors(d.Sym)
	}
	m, ok := MulDim(D(p.coef), D(k))
	if !ok {
		return false
	}
	p.coef = m.Value
	p.syms = append(p.syms, fs...)
	return true
}

// dim renders the product as a Dim: symbols in order, number last
// ("batch*seq*64"), the form MulDim gives for a symbol times a number.
func (p dimProduct) dim() Dim {
	if p.coef == 0 || len(p.syms) == 0 {
		return D(p.coef)
	}
	parts := make([]string, 0, len(p.syms)+1)
	for _, s := range p.syms {
		parts = append(parts, wrapSym(s))
	}
	if p.coef != 1 {
		parts = append(parts, strconv.FormatInt(p.coef, 10))
	}
	return S(strings.Join(parts, "*"))
}

// quo divides p by q exactly, cancelling q's symbols against p's; ok is
// false when q has a symbol p lacks or the numbers do not divide.
func (p dimProduct) quo(q dimProduct) (Dim, bool) {
	if q.coef == 0 || p.coef%q.coef != 0 {
		return Dim{}, false
	}
	rest := append([]string(nil), p.syms...)
	for _, s := range q.syms {
		found := false
		for i, r := range rest {
			if r == s {
				rest = append(rest[:i], rest[i+1:]...)
				found = true
				break
			}
		}
		if !found {
			return Dim{}, false
		}
	}
	return dimProduct{coef: p.coef / q.coef, syms: rest}.dim(), true
}

// symFactors splits a symbolic dim that is a plain product ("batch*3",
// "(batch*seq)*64") into its number and its symbolic factors; anything
// else (a sum, a quotient) is one opaque factor.
func symFactors(sym string) (int64, []string) {
	s := unwrapSym(sym)
	parts, ok := splitTopLevel(s, '*')
	if !ok || len(parts) == 1 {
		return 1, []string{s}
	}
	coef := int64(1)
	var fs []string
	for _, part := range parts {
		if v, err := strconv.ParseInt(part, 10, 64); err == nil {
			m, ok := MulDim(D(coef), D(v))
			if !ok {
				return 1, []string{s}
			}
			coef = m.Value
			continue
		}
		k, sub := symFactors(part)
		m, ok := MulDim(D(coef), D(k))
		if !ok {
			return 1, []string{s}
		}
		coef = m.Value
		fs = append(fs, sub...)
	}
	return coef, fs
}

// splitTopLevel splits s at sep outside parentheses; ok is false when s
// has another operator at the top level, where splitting would change
// the meaning ("a*b/2" is (a*b)/2, not a*(b/2)).
func splitTopLevel(s string, sep byte) ([]string, bool) {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch == '(':
			depth++
		case ch == ')':
			depth--
		case depth > 0:
		case ch == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		case strings.IndexByte("+-/%^", ch) >= 0:
			return nil, false
		}
	}
	return append(parts, s[start:]), true
}

// unwrapSym strips parentheses that enclose the whole expression.
func unwrapSym(s string) string {
	for len(s) >= 2 && s[0] == '(' && closingParen(s) == len(s)-1 {
		s = s[1 : len(s)-1]
	}
	return s
}

// closingParen returns the index of the parenthesis closing s[0].
func closingParen(s string) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// wrapSym parenthesises a compound expression so it can be a factor.
func wrapSym(s string) string {
	if !strings.ContainsAny(s, "+-*/%^") || (s[0] == '(' && closingParen(s) == len(s)-1) {
		return s
	}
	return "(" + s + ")"
}

// mulDims multiplies dims into one, keeping products flat ("batch*seq*12"
// rather than "(batch*seq)*12").
func mulDims(ds ...Dim) (Dim, bool) {
	p, ok := productOf(ds)
	if !ok {
		return Dim{}, false
	}
	return p.dim(), true
}

// nonNegSym reports whether a symbolic dim is surely >= 0: a name or a
// product of names and non-negative numbers (every tensor dim is).
func nonNegSym(d Dim) bool {
	if d.IsKnown() {
		return d.Value >= 0
	}
	k, fs := symFactors(d.Sym)
	if k < 0 {
		return false
	}
	for _, f := range fs {
		if strings.ContainsAny(f, "+-*/%^()") {
			return false
		}
	}
	return true
}

// ---------------------------------------------------------------------------
// Shape, Size.

func inferShapeOp(c *InferCtx) error {
	s := c.InShape(0)
	if !s.Ranked {
		return setOutShape(c, 0, Int64, RankedShape(c.Fresh("rank")))
	}
	r := int64(len(s.Dims))
	start, end := int64(0), r
	if c.Opset >= 15 {
		start = clampAxisBound(c.AttrInt("start", 0), r)
		end = clampAxisBound(c.AttrInt("end", r), r)
	}
	if end < start {
		end = start
	}
	dims := append([]Dim(nil), s.Dims[start:end]...)
	return setOutVals(c, 0, elemVals{dt: Int64, dims: []int64{int64(len(dims))}, ints: dims})
}

// clampAxisBound maps a possibly negative start/end of Shape into [0, r].
func clampAxisBound(v, r int64) int64 {
	if v < 0 {
		v += r
	}
	return min(max(v, 0), r)
}

func inferSize(c *InferCtx) error {
	s := c.InShape(0)
	if !s.Ranked {
		return setOutShape(c, 0, Int64, RankedShape())
	}
	n, ok := mulDims(s.Dims...)
	if !ok {
		return c.Errorf("element count of %s overflows", s)
	}
	return setOutVals(c, 0, elemVals{dt: Int64, dims: []int64{}, ints: []Dim{n}})
}

// ---------------------------------------------------------------------------
// Reshape, Flatten, Squeeze, Unsqueeze: same elements, new dims.

func inferReshape(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	var target []Dim
	if c.Opset < 5 || c.NumIn() < 2 {
		sh, ok := c.AttrInts("shape")
		if !ok {
			return c.Errorf("has neither a shape input nor a shape attribute")
		}
		for _, v := range sh {
			target = append(target, D(v))
		}
	} else {
		var ok bool
		target, ok = inDimList(c, 1)
		if !ok {
			// The target's length still fixes the rank.
			ss := c.InShape(1)
			if ss.Rank() != 1 || !ss.Dims[0].IsKnown() {
				return setOutShape(c, 0, dt, Unranked())
			}
			n := ss.Dims[0].Value
			if n > int64(c.Limits.MaxRank) {
				return c.Errorf("target rank %d exceeds the limit of %d", n, c.Limits.MaxRank)
			}
			dims := make([]Dim, n)
			for i := range dims {
				dims[i] = c.Fresh("reshape")
			}
			return setOutShape(c, 0, dt, RankedShape(dims...))
		}
	}
	out, err := reshapeDims(c, in, target, c.Opset >= 14 && c.AttrInt("allowzero", 0) != 0)
	if err != nil {
		return err
	}
	return setReshaped(c, out)
}

// reshapeDims resolves Reshape's target against the input shape: 0 copies
// the input dim (unless allowzero), one -1 takes what is left.
func reshapeDims(c *InferCtx, in Shape, target []Dim, allowZero bool) (Shape, error) {
	out := make([]Dim, len(target))
	neg := -1
	for i, d := range target {
		switch {
		case d.Is(0) && !allowZero:
			if !in.Ranked {
				out[i] = c.Fresh("reshape")
				continue
			}
			if i >= len(in.Dims) {
				return Shape{}, c.Errorf("target dim %d is 0 but the input has rank %d", i, len(in.Dims))
			}
			out[i] = in.Dims[i]
		case d.Is(-1):
			if neg >= 0 {
				return Shape{}, c.Errorf("target shape has more than one -1")
			}
			neg = i
		case d.IsKnown() && d.Value < -1:
			return Shape{}, c.Errorf("target dim %d is %d", i, d.Value)
		default:
			out[i] = d
		}
	}
	if allowZero && neg >= 0 {
		for _, d := range target {
			if d.Is(0) {
				return Shape{}, c.Errorf("allowzero target has both 0 and -1")
			}
		}
	}
	if !in.Ranked {
		if neg >= 0 {
			out[neg] = c.Fresh("reshape")
		}
		return RankedShape(out...), nil
	}
	total, ok := productOf(in.Dims)
	if !ok {
		return Shape{}, c.Errorf("element count of %s overflows", in)
	}
	others := dimProduct{coef: 1}
	for i, d := range out {
		if i != neg && !others.mul(d) {
			return Shape{}, c.Errorf("target shape overflows")
		}
	}
	if neg >= 0 {
		switch {
		case len(total.syms) == 0 && len(others.syms) == 0:
			if others.coef == 0 {
				if total.coef != 0 {
					return Shape{}, c.Errorf("cannot reshape %s: -1 next to a 0 dim", in)
				}
				out[neg] = D(0)
			} else if total.coef%others.coef != 0 {
				return Shape{}, c.Errorf("cannot reshape %s (%d elements) to %s", in, total.coef, RankedShape(target...))
			} else {
				out[neg] = D(total.coef / others.coef)
			}
		default:
			if d, ok := total.quo(others); ok {
				out[neg] = d
			} else if others.coef == 0 {
				out[neg] = c.Fresh("reshape")
			} else {
				out[neg] = DivDim(total.dim(), others.dim(), false)
			}
		}
		return RankedShape(out...), nil
	}
	if len(total.syms) == 0 && len(others.syms) == 0 && total.coef != others.coef {
		return Shape{}, c.Errorf("cannot reshape %s (%d elements) to %s (%d elements)", in, total.coef, RankedShape(out...), others.coef)
	}
	return RankedShape(out...), nil
}

// setReshaped sets output 0 to shape s with input 0's elements when they
// are known.
func setReshaped(c *InferCtx, s Shape) error {
	if dims, ok := s.Ints(); ok {
		if t, ok := inVals(c, 0); ok && t.len() == countOf(dims) {
			return setOutVals(c, 0, t.reshaped(dims))
		}
	}
	return setOutShape(c, 0, c.InType(0), s)
}

// countOf is the element count of known dims, or -1 when a dim is
// negative or the count passes 2^62:
// inferred shapes are only bounded in float64 (see Limits), so a product
// of checked dims can still wrap int64.
func countOf(dims []int64) int {
	if slices.ContainsFunc(dims, func(d int64) bool { return d < 0 }) {
		return -1 // not a shape; the caller's checkShape says why
	}
	n, ok := KnownShape(dims...).NumElements()
	if !ok {
		return -1
	}
	return int(n)
}

func inferFlatten(c *InferCtx) error {
	in := c.InShape(0)
	if !in.Ranked {
		return setOutShape(c, 0, c.InType(0), RankedShape(c.Fresh("flatten"), c.Fresh("flatten")))
	}
	r := len(in.Dims)
	axis := c.AttrInt("axis", 1)
	if axis < 0 {
		axis += int64(r)
	}
	if axis < 0 || axis > int64(r) {
		return c.Errorf("axis %d out of range for rank %d", c.AttrInt("axis", 1), r)
	}
	a, ok1 := mulDims(in.Dims[:axis]...)
	b, ok2 := mulDims(in.Dims[axis:]...)
	if !ok1 || !ok2 {
		return c.Errorf("element count of %s overflows", in)
	}
	return setReshaped(c, RankedShape(a, b))
}

// axesFromInputOrAttr reads the axes of Squeeze/Unsqueeze and other ops that moved
// them from an attribute to an input at opset 13 (known=false when the
// input exists but its value is not known; present=false when there are
// no axes at all).
func axesFromInputOrAttr(c *InferCtx, inputFrom int64, idx int) (axes []int64, present, known bool) {
	if c.Opset >= inputFrom {
		if !c.HasIn(idx) {
			return nil, false, true
		}
		a, ok := inIntList(c, idx)
		return a, true, ok
	}
	a, ok := c.AttrInts("axes")
	return a, ok, true
}

// normAxisList normalises axes against rank and rejects duplicates.
func normAxisList(c *InferCtx, axes []int64, rank int) ([]int, error) {
	seen := make([]bool, rank)
	out := make([]int, len(axes))
	for i, a := range axes {
		n, err := c.NormAxis(a, rank)
		if err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, c.Errorf("axis %d repeated", a)
		}
		seen[n] = true
		out[i] = n
	}
	return out, nil
}

func inferSqueeze(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	axes, present, known := axesFromInputOrAttr(c, 13, 1)
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	drop := make([]bool, len(in.Dims))
	if !known {
		// Unknown axes, but only squeezable dims can be named: when the
		// input has exactly as many 1s as there are axes, those are they.
		as := c.InShape(1)
		ones := 0
		for _, d := range in.Dims {
			if d.Is(1) {
				ones++
			}
		}
		if !in.IsKnown() || as.Rank() != 1 || !as.Dims[0].Is(int64(ones)) {
			return setOutShape(c, 0, dt, Unranked())
		}
		present = false
	}
	if present {
		norm, err := normAxisList(c, axes, len(in.Dims))
		if err != nil {
			return err
		}
		for _, a := range norm {
			if d := in.Dims[a]; d.IsKnown() && d.Value != 1 {
				return c.Errorf("cannot squeeze axis %d of size %d", a, d.Value)
			}
			drop[a] = true
		}
	} else {
		// No axes: every dim of size 1 goes. A symbolic dim is taken to
		// be other than 1, as onnx does when it knows nothing better.
		for i, d := range in.Dims {
			drop[i] = d.Is(1)
		}
	}
	var out []Dim
	for i, d := range in.Dims {
		if !drop[i] {
			out = append(out, d)
		}
	}
	return setReshaped(c, RankedShape(out...))
}

func inferUnsqueeze(c *InferCtx) error {
	in := c.InShape(0)
	dt := c.InType(0)
	axes, present, known := axesFromInputOrAttr(c, 13, 1)
	if !present && known {
		return c.Errorf("has no axes")
	}
	if !in.Ranked {
		return setOutShape(c, 0, dt, Unranked())
	}
	if !known {
		// The axes' count still gives the rank.
		as := c.InShape(1)
		if as.Rank() != 1 || !as.Dims[0].IsKnown() {
			return setOutShape(c, 0, dt, Unranked())
		}
		n := len(in.Dims) + int(min(as.Dims[0].Value, int64(c.Limits.MaxRank)+1))
		dims := make([]Dim, n)
		for i := range dims {
			dims[i] = c.Fresh("unsqueeze")
		}
		return setOutShape(c, 0, dt, RankedShape(dims...))
	}
	rank := len(in.Dims) + len(axes)
	if rank > c.Limits.MaxRank {
		return c.Errorf("rank %d exceeds the limit of %d", rank, c.Limits.MaxRank)
	}
	norm, err := normAxisList(c, axes, rank)
	if err != nil {
		return err
	}
	ins := make([]bool, rank)
	for _, a := range norm {
		ins[a] = true
	}
	out := make([]Dim, rank)
	j := 0
	for i := range out {
		if ins[i] {
			out[i] = D(1)
		} else {
			out[i] = in.Dims[j]
			j++
		}
	}
	return setReshaped(c, RankedShape(out...))
}

// ---------------------------------------------------------------------------
// ConstantOfShape, Range.

func inferConstantOfShape(c *InferCtx) error {
	fill := FloatTensor(Float32, nil, []float64{0}) // the spec's default
	if a := c.Attr("value"); a != nil && a.T != nil {
		fill = a.T
	}
	dims, ok := inDimList(c, 0)
	if !ok {
		ss := c.InShape(0)
		if ss.Rank() != 1 || !ss.Dims[0].IsKnown() || ss.Dims[0].Value > int64(c.Limits.MaxRank) {
			return setOutShape(c, 0, fill.DType, Unranked())
		}
		out := make([]Dim, ss.Dims[0].Value)
		for i := range out {
			out[i] = c.Fresh("constantofshape")
		}
		return setOutShape(c, 0, fill.DType, RankedShape(out...))
	}
	s := RankedShape(dims...)
	known, ok := s.Ints()
	if !ok || !smallShape(c, known) || !fill.HasData {
		return setOutShape(c, 0, fill.DType, s)
	}
	one, ok := valsOf(&Value{Kind: TensorValue, Const: fill})
	if !ok || one.len() != 1 {
		return setOutShape(c, 0, fill.DType, s)
	}
	src := make([]int, countOf(known))
	return setOutVals(c, 0, one.pick(known, src))
}

func inferRange(c *InferCtx) error {
	dt := c.InType(0)
	if dt.IsFloat() {
		fs := make([]float64, 3)
		for i := range fs {
			f, ok := c.ConstFloats(i)
			if !ok || len(f) != 1 {
				return setOutShape(c, 0, dt, RankedShape(c.Fresh("range")))
			}
			fs[i] = f[0]
		}
		start, limit, delta := fs[0], fs[1], fs[2]
		if delta == 0 {
			return c.Errorf("delta is 0")
		}
		n := math.Ceil((limit - start) / delta)
		if !(n <= float64(c.Limits.MaxDim)) {
			return c.Errorf("range of %g elements exceeds the limit", n)
		}
		count := int64(max(n, 0))
		if count > c.Limits.SmallTensorElems {
			return setOutShape(c, 0, dt, KnownShape(count))
		}
		vals := make([]float64, count)
		for i := range vals {
			vals[i] = RoundFloat(start+float64(i)*delta, dt)
		}
		return setOutVals(c, 0, elemVals{dt: dt, dims: []int64{count}, flts: vals})
	}
	var args [3]Dim
	for i := range args {
		l, ok := inDimList(c, i)
		if !ok || len(l) != 1 {
			return setOutShape(c, 0, dt, RankedShape(c.Fresh("range")))
		}
		args[i] = l[0]
	}
	start, limit, delta := args[0], args[1], args[2]
	if start.IsKnown() && limit.IsKnown() && delta.IsKnown() {
		if delta.Value == 0 {
			return c.Errorf("delta is 0")
		}
		count := max(ceilDivI64(limit.Value-start.Value, delta.Value), 0)
		if count > c.Limits.MaxDim {
			return c.Errorf("range of %d elements exceeds the limit", count)
		}
		if count > c.Limits.SmallTensorElems {
			return setOutShape(c, 0, dt, KnownShape(count))
		}
		vals := make([]Dim, count)
		for i := range vals {
			vals[i] = D(start.Value + int64(i)*delta.Value)
		}
		return setOutVals(c, 0, elemVals{dt: dt, dims: []int64{count}, ints: vals})
	}
	// Range(0, seq, 1), as exporters write position ids: seq elements.
	if delta.IsKnown() && delta.Value > 0 {
		return setOutShape(c, 0, dt, RankedShape(DivDim(SubDim(limit, start), delta, true)))
	}
	return setOutShape(c, 0, dt, RankedShape(c.Fresh("range")))
}

// ceilDivI64 is ceiling division of integers (b != 0).
func ceilDivI64(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) == (b < 0) {
		q++
	}
	return q
}

// ---------------------------------------------------------------------------
// Shape arithmetic for the elementwise ops of family A.

// symElementwise evaluates an elementwise op (Add, Sub, Mul, Div, Neg,
// Abs, Max, Min, Equal, Less, Greater, Not, Where, Cast, Identity) on
// small integer inputs whose elements may be symbolic, as exporters write
// shape arithmetic: Mul(Gather(Shape(x), 1), 8) gives "seq*8". It sets
// output 0 (type, shape and value) and returns true when it could; it
// touches nothing and returns false otherwise, so the caller's own shape
// rule applies. Bool results need every element decided.
func symElementwise(op string, c *InferCtx) bool {
	if c.Out(0) == nil || c.NumIn() == 0 {
		return false
	}
	ins := make([]elemVals, c.NumIn())
	for i := range ins {
		t, ok := inVals(c, i)
		if !ok || t.isFloat() || t.isString() {
			return false
		}
		ins[i] = t
	}
	all := make([][]int64, len(ins))
	for i, t := range ins {
		all[i] = t.dims
	}
	dims, ok := BroadcastDims(all...)
	if !ok || !smallShape(c, dims) {
		return false
	}
	maps := make([][]int, len(ins))
	for i, t := range ins {
		maps[i] = broadcastMap(dims, t.dims)
	}
	n := countOf(dims)
	arg := func(i, k int) Dim { return ins[i].ints[maps[i][k]] }
	res := make([]Dim, n)
	dt := ins[0].dt
	for k := 0; k < n; k++ {
		var r Dim
		var ok bool
		switch op {
		case "Add", "Sub", "Mul", "Div", "Max", "Min":
			if len(ins) != 2 {
				return false
			}
			r, ok = symArith(op, arg(0, k), arg(1, k))
		case "Neg":
			r, ok = D(-arg(0, k).Value), arg(0, k).IsKnown()
		case "Abs":
			a := arg(0, k)
			r, ok = a, nonNegSym(a)
			if a.IsKnown() {
				r, ok = D(abs64(a.Value)), true
			}
		case "Identity":
			r, ok = arg(0, k), true
		case "Cast":
			to := DType(c.AttrInt("to", 0))
			switch {
			case to.IsInt():
				r, ok = arg(0, k), true
				dt = to
			case to == Bool:
				a := arg(0, k)
				r, ok = boolDim(a.Value != 0), a.IsKnown()
				dt = Bool
			default:
				return false
			}
		case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual":
			if len(ins) != 2 {
				return false
			}
			r, ok = symCompare(op, arg(0, k), arg(1, k))
			dt = Bool
		case "Not":
			a := arg(0, k)
			r, ok = boolDim(a.Value == 0), a.IsKnown()
		case "Where":
			if len(ins) != 3 {
				return false
			}
			cond := arg(0, k)
			if !cond.IsKnown() {
				return false
			}
			r, ok = arg(2, k), true
			if cond.Value != 0 {
				r = arg(1, k)
			}
			dt = ins[1].dt
		default:
			return false
		}
		if !ok {
			return false
		}
		res[k] = r
	}
	return setOutVals(c, 0, elemVals{dt: dt, dims: dims, ints: res}) == nil
}

func boolDim(b bool) Dim {
	if b {
		return D(1)
	}
	return D(0)
}

// symArith applies a binary integer op to dims that may be symbolic.
func symArith(op string, a, b Dim) (Dim, bool) {
	if a.IsKnown() && b.IsKnown() {
		x, y := a.Value, b.Value
		switch op {
		case "Add":
			return D(x + y), true
		case "Sub":
			return D(x - y), true
		case "Mul":
			return MulDim(a, b)
		case "Div":
			if y == 0 {
				return Dim{}, false
			}
			return D(x / y), true // ONNX integer Div truncates
		case "Max":
			return D(max(x, y)), true
		case "Min":
			return D(min(x, y)), true
		}
		return Dim{}, false
	}
	switch op {
	case "Add":
		return AddDim(a, b), true
	case "Sub":
		return SubDim(a, b), true
	case "Mul":
		return mulDims(a, b)
	case "Div":
		if b.Is(0) {
			return Dim{}, false
		}
		pa, ok1 := productOf([]Dim{a})
		pb, ok2 := productOf([]Dim{b})
		if ok1 && ok2 {
			if q, ok := pa.quo(pb); ok {
				return q, true
			}
		}
		return DivDim(a, b, false), true
	case "Max", "Min":
		if a == b {
			return a, true
		}
		// A dim is >= 0, so Max(dim, k<=0) is the dim and Min the number.
		sym, num := a, b
		if a.IsKnown() {
			sym, num = b, a
		}
		if num.IsKnown() && num.Value <= 0 && nonNegSym(sym) {
			if op == "Max" {
				return sym, true
			}
			return num, true
		}
	}
	return Dim{}, false
}

// symCompare compares dims that may be symbolic; ok is false when the
// answer depends on a symbol's value.
func symCompare(op string, a, b Dim) (Dim, bool) {
	var cmp int // sign of a-b
	switch {
	case a.IsKnown() && b.IsKnown():
		switch {
		case a.Value < b.Value:
			cmp = -1
		case a.Value > b.Value:
			cmp = 1
		}
	case a == b:
		cmp = 0
	case !a.IsKnown() && b.IsKnown() && b.Value < 0 && nonNegSym(a):
		cmp = 1
	case a.IsKnown() && !b.IsKnown() && a.Value < 0 && nonNegSym(b):
		cmp = -1
	default:
		return Dim{}, false
	}
	switch op {
	case "Equal":
		return boolDim(cmp == 0), true
	case "Less":
		return boolDim(cmp < 0), true
	case "Greater":
		return boolDim(cmp > 0), true
	case "LessOrEqual":
		return boolDim(cmp <= 0), true
	case "GreaterOrEqual":
		return boolDim(cmp >= 0), true
	}
	return Dim{}, false
}

// broadcastMap maps each element of dims out to the element of a tensor of
// dims in (which broadcasts to out) that numpy broadcasting reads.
func broadcastMap(out, in []int64) []int {
	st := rowMajorStrides(in)
	off := len(out) - len(in)
	return sourceIndex(out, func(idx []int64) int {
		f := int64(0)
		for i := range in {
			if in[i] != 1 {
				f += idx[off+i] * st[i]
			}
		}
		return int(f)
	})
}
