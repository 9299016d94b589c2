package ir

// Value propagation for small tensors. Exporters compute shapes with
// arithmetic on Shape outputs (Div(Cast(Shape(x)), 2), Mul of two dims,
// Where on a comparison), so shape inference must evaluate those ops when
// their inputs are known. These helpers are shared by every op family:
// they evaluate elementwise functions with numpy broadcasting, reduce over
// axes and cast between dtypes, keeping integer semantics exact.
//
// Representation (see Tensor): integer and bool tensors hold Ints (bools as
// 0/1, uint64 as its two's-complement bit pattern); floating-point tensors
// hold Floats, already rounded to their dtype's precision. Every helper
// returns nil rather than an error when it cannot fold (contents unknown,
// result too large, division by zero, a dtype it cannot represent exactly):
// not folding is always safe, the output just keeps its shape without a value.

import (
	"math"
	"strconv"
)

// registerFresh registers schemas whose shape functions start from outputs
// with no value: a value left by an earlier inference run (other bindings)
// must never survive into this one.
func registerFresh(schemas ...*OpSchema) {
	for _, s := range schemas {
		infer := s.Infer
		s.Infer = func(c *InferCtx) error {
			for _, o := range c.Node.Outputs {
				if o != nil {
					o.Const, o.SymInts = nil, nil
				}
			}
			return infer(c)
		}
	}
	Register(schemas...)
}

// Known returns v's contents when inference knows them (an initializer, a
// Constant, a folded value), or nil.
func Known(v *Value) *Tensor {
	if v == nil || v.Const == nil || !v.Const.HasData {
		return nil
	}
	if !validData(v.Const) {
		return nil
	}
	return v.Const
}

// KnownAll returns the contents of every value, or nil unless all are known.
func KnownAll(vs ...*Value) []*Tensor {
	ts := make([]*Tensor, len(vs))
	for i, v := range vs {
		if ts[i] = Known(v); ts[i] == nil {
			return nil
		}
	}
	return ts
}

// validData reports whether t's decoded slice matches its dims, so that no
// folding loop can index past it whatever a corrupt file declared.
func validData(t *Tensor) bool {
	n, ok := elemCount(t.Dims)
	if !ok {
		return false
	}
	switch {
	case t.DType == String:
		return int64(len(t.Strings)) == n
	case t.DType.IsFloat():
		return int64(len(t.Floats)) == n
	case t.DType.IsInt() || t.DType == Bool:
		return int64(len(t.Ints)) == n
	}
	return false
}

// elemCount multiplies dims, refusing negative dims and products past 2^40
// (no small tensor is anywhere near that).
func elemCount(dims []int64) (int64, bool) {
	n := int64(1)
	for _, d := range dims {
		if d < 0 || (d > 0 && n > (1<<40)/d) {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// BroadcastDims applies numpy broadcasting to concrete dims; ok is false
// when they do not broadcast.
func BroadcastDims(dims ...[]int64) (out []int64, ok bool) {
	rank := 0
	for _, d := range dims {
		rank = max(rank, len(d))
	}
	out = make([]int64, rank)
	for i := range out {
		out[i] = 1
	}
	for _, d := range dims {
		off := rank - len(d)
		for i, v := range d {
			switch o := out[off+i]; {
			case v == 1:
			case o == 1:
				out[off+i] = v
			case o != v:
				return nil, false
			}
		}
	}
	return out, true
}

// broadcastIndex returns, for each element of a tensor of dims out (row
// major), the flat index of the element of a tensor of dims in that numpy
// broadcasting reads. in must broadcast to out.
func broadcastIndex(out, in []int64, n int64) []int64 {
	rank := len(out)
	strides := make([]int64, rank) // 0 along broadcast axes
	s := int64(1)
	for i := len(in) - 1; i >= 0; i-- {
		if in[i] != 1 {
			strides[rank-len(in)+i] = s
		}
		s *= in[i]
	}
	idx := make([]int64, n)
	pos := make([]int64, rank)
	cur := int64(0)
	for k := int64(0); k < n; k++ {
		idx[k] = cur
		// Advance the odometer over out's dims, adjusting cur by strides.
		for ax := rank - 1; ax >= 0; ax-- {
			pos[ax]++
			cur += strides[ax]
			if pos[ax] < out[ax] {
				break
			}
			cur -= strides[ax] * pos[ax]
			pos[ax] = 0
		}
	}
	return idx
}

// broadcastPlan checks that ins are known, broadcast, and give at most
// limit elements; it returns the output dims, its element count and each
// input's index map.
func broadcastPlan(limit int64, ins []*Tensor) (dims []int64, n int64, idx [][]int64, ok bool) {
	all := make([][]int64, len(ins))
	for i, t := range ins {
		if t == nil || !t.HasData || !validData(t) {
			return nil, 0, nil, false
		}
		all[i] = t.Dims
	}
	dims, ok = BroadcastDims(all...)
	if !ok {
		return nil, 0, nil, false
	}
	n, ok = elemCount(dims)
	if !ok || n > limit {
		return nil, 0, nil, false
	}
	idx = make([][]int64, len(ins))
	for i, t := range ins {
		idx[i] = broadcastIndex(dims, t.Dims, n)
	}
	return dims, n, idx, true
}

// FoldInts evaluates f elementwise, with numpy broadcasting, over integer or
// bool tensors, giving a tensor of dtype out (its values wrapped to out's
// width, as arithmetic in that dtype wraps). It returns nil when an input is
// not an integer/bool tensor with known contents, the result would have
// more than limit elements, or f declines an element (division by zero).
func FoldInts(out DType, limit int64, f func(args []int64) (int64, bool), ins ...*Tensor) *Tensor {
	for _, t := range ins {
		if t == nil || !(t.DType.IsInt() || t.DType == Bool) {
			return nil
		}
	}
	if !(out.IsInt() || out == Bool) {
		return nil
	}
	dims, n, idx, ok := broadcastPlan(limit, ins)
	if !ok {
		return nil
	}
	res := make([]int64, n)
	args := make([]int64, len(ins))
	for k := range res {
		for i, t := range ins {
			args[i] = t.Ints[idx[i][k]]
		}
		v, ok := f(args)
		if !ok {
			return nil
		}
		res[k] = WrapInt(v, out)
	}
	return &Tensor{DType: out, Dims: dims, Ints: res, HasData: true}
}

// FoldFloats evaluates f elementwise, with numpy broadcasting, over numeric
// tensors of any dtype read as float64. The result has dtype out: floats are
// rounded to out's precision; for an integer or bool out (comparisons give
// 1 or 0) the value is converted as Cast would. It returns nil under the
// same conditions as FoldInts, or when out is a type it cannot represent
// exactly (float8, float4).
func FoldFloats(out DType, limit int64, f func(args []float64) (float64, bool), ins ...*Tensor) *Tensor {
	for _, t := range ins {
		if t == nil || !(t.DType.IsFloat() || t.DType.IsInt() || t.DType == Bool) {
			return nil
		}
	}
	if !foldableType(out) {
		return nil
	}
	dims, n, idx, ok := broadcastPlan(limit, ins)
	if !ok {
		return nil
	}
	args := make([]float64, len(ins))
	var fres []float64
	var ires []int64
	if out.IsFloat() {
		fres = make([]float64, n)
	} else {
		ires = make([]int64, n)
	}
	for k := int64(0); k < n; k++ {
		for i, t := range ins {
			args[i] = elemFloat(t, idx[i][k])
		}
		v, ok := f(args)
		if !ok {
			return nil
		}
		if fres != nil {
			fres[k] = RoundFloat(v, out)
			continue
		}
		iv, ok := floatToInt(v, out)
		if !ok {
			return nil
		}
		ires[k] = iv
	}
	return &Tensor{DType: out, Dims: dims, Floats: fres, Ints: ires, HasData: true}
}

// foldableType reports whether folded values of dt can be stored exactly.
func foldableType(dt DType) bool {
	switch dt {
	case Float32, Float64, Float16, BFloat16, Bool:
		return true
	}
	return dt.IsInt()
}

// elemFloat reads element k of a numeric tensor as float64.
func elemFloat(t *Tensor, k int64) float64 {
	if t.DType.IsFloat() {
		return t.Floats[k]
	}
	if t.DType == Uint64 {
		return float64(uint64(t.Ints[k]))
	}
	return float64(t.Ints[k])
}

// floatToInt converts like Cast from a float: truncation toward zero, then
// the integer type's width; NaN, infinities and values outside int64 do
// not fold (their result is implementation-defined).
func floatToInt(v float64, to DType) (int64, bool) {
	if to == Bool {
		if v != 0 {
			return 1, true
		}
		return 0, true
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	t := math.Trunc(v)
	if to == Uint64 && t >= 0 && t < 1<<64 {
		return int64(uint64(t)), true
	}
	if t < -(1<<63) || t >= 1<<63 {
		return 0, false
	}
	return WrapInt(int64(t), to), true
}

// WrapInt reduces v to the range of dt as two's-complement arithmetic in
// that type would (int8 200 → -56); bools become 0 or 1; other dtypes pass
// through unchanged.
func WrapInt(v int64, dt DType) int64 {
	switch dt {
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	case Int8:
		return int64(int8(v))
	case Uint8:
		return int64(uint8(v))
	case Int16:
		return int64(int16(v))
	case Uint16:
		return int64(uint16(v))
	case Int32:
		return int64(int32(v))
	case Uint32:
		return int64(uint32(v))
	case Int4:
		return (v << 60) >> 60 // sign-extend the low 4 bits
	case Uint4:
		return v & 0xF
	}
	return v
}

// RoundFloat rounds v to the precision of dt: float32, float16 and bfloat16
// round to nearest even; float64 and non-float dtypes pass v through.
func RoundFloat(v float64, dt DType) float64 {
	switch dt {
	case Float32:
		return float64(float32(v))
	case Float16:
		return roundToBits(v, 10, -14, 65504)
	case BFloat16:
		return bfloat16Round(v)
	}
	return v
}

// roundToBits rounds v to a binary float with mant explicit mantissa bits,
// minimum normal exponent minExp (subnormals below it) and largest finite
// value maxFinite; overflow gives infinity, as IEEE rounding does.
func roundToBits(v float64, mant int, minExp int, maxFinite float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	_, e := math.Frexp(v) // v = f * 2^e, 0.5 <= |f| < 1
	exp := max(e-1, minExp)
	q := math.Ldexp(1, exp-mant) // spacing of representable values near v
	r := math.RoundToEven(v/q) * q
	if math.Abs(r) > maxFinite {
		return math.Inf(int(math.Copysign(1, v)))
	}
	return r
}

// bfloat16Round keeps bfloat16's 8 exponent bits (float32 range) and 7
// mantissa bits, rounding to nearest even.
func bfloat16Round(v float64) float64 {
	f := float32(v)
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return float64(f)
	}
	b := math.Float32bits(f)
	b += 0x7FFF + (b>>16)&1
	return float64(math.Float32frombits(b &^ 0xFFFF))
}

// CastTensor converts t's contents to dtype to with ONNX Cast semantics:
// float→int truncates toward zero, int→narrower int wraps, anything→bool
// is "non-zero", strings parse as numbers. It returns nil when t's contents
// are unknown, when a value has no defined result (NaN to int) or when to
// is a type it cannot represent exactly (string, float8, complex).
func CastTensor(t *Tensor, to DType) *Tensor {
	if t == nil || !t.HasData || !validData(t) || !foldableType(to) {
		return nil
	}
	n := len(t.Ints) + len(t.Floats) + len(t.Strings)
	out := &Tensor{DType: to, Dims: append([]int64(nil), t.Dims...), HasData: true}
	if to.IsFloat() {
		out.Floats = make([]float64, 0, n)
	} else {
		out.Ints = make([]int64, 0, n)
	}
	put := func(f float64, i int64, isInt bool) bool {
		switch {
		case to.IsFloat() && isInt:
			if t.DType == Uint64 {
				f = float64(uint64(i))
			} else {
				f = float64(i)
			}
			out.Floats = append(out.Floats, RoundFloat(f, to))
		case to.IsFloat():
			out.Floats = append(out.Floats, RoundFloat(f, to))
		case isInt:
			out.Ints = append(out.Ints, WrapInt(i, to))
		default:
			iv, ok := floatToInt(f, to)
			if !ok {
				return false
			}
			out.Ints = append(out.Ints, iv)
		}
		return true
	}
	switch {
	case t.DType == String:
		for _, s := range t.Strings {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil
			}
			if !put(f, 0, false) {
				return nil
			}
		}
	case t.DType.IsFloat():
		for _, f := range t.Floats {
			if !put(f, 0, false) {
				return nil
			}
		}
	case t.DType.IsInt() || t.DType == Bool:
		for _, i := range t.Ints {
			put(0, i, true)
		}
	default:
		return nil
	}
	return out
}

// ReduceKind names the reductions ReduceTensor can fold.
type ReduceKind int

const (
	ReduceSumKind ReduceKind = iota
	ReduceProdKind
	ReduceMaxKind
	ReduceMinKind
)

// ReduceTensor folds t over axes (normalised to [0, rank); duplicates are
// harmless), keeping reduced axes as 1 when keepdims is set. Sums and
// products wrap as the dtype's arithmetic would. It returns nil when t's
// contents are unknown, the result has more than limit elements, or Max/Min
// reduce an empty axis (no identity element).
func ReduceTensor(t *Tensor, axes []int, keepdims bool, limit int64, kind ReduceKind) *Tensor {
	if t == nil || !t.HasData || !validData(t) || t.DType == String {
		return nil
	}
	isFloat := t.DType.IsFloat()
	rank := len(t.Dims)
	reduced := make([]bool, rank)
	for _, a := range axes {
		if a < 0 || a >= rank {
			return nil
		}
		reduced[a] = true
	}
	outDims := []int64{}
	keptDims := make([]int64, rank) // every axis, reduced ones as 1
	for i, d := range t.Dims {
		keptDims[i] = d
		if reduced[i] {
			keptDims[i] = 1
			if !keepdims {
				continue
			}
		}
		outDims = append(outDims, keptDims[i])
	}
	n, ok := elemCount(keptDims)
	if !ok || n > limit {
		return nil
	}
	total, _ := elemCount(t.Dims)
	if total > limit {
		return nil // only small tensors are worth walking
	}
	accI := make([]int64, n)
	accF := make([]float64, n)
	seeded := make([]bool, n)
	// Walk t in row-major order, mapping each element to its output slot;
	// the first element of a slot seeds it, so Max/Min need no identity.
	pos := make([]int64, rank)
	for k := int64(0); k < total; k++ {
		o := int64(0)
		for i := 0; i < rank; i++ {
			o *= keptDims[i]
			if !reduced[i] {
				o += pos[i]
			}
		}
		switch {
		case !seeded[o] && isFloat:
			accF[o] = t.Floats[k]
		case !seeded[o]:
			accI[o] = t.Ints[k]
		case isFloat:
			accF[o] = reduceFloat(kind, accF[o], t.Floats[k])
		default:
			accI[o] = reduceInt(kind, accI[o], t.Ints[k])
		}
		seeded[o] = true
		for ax := rank - 1; ax >= 0; ax-- {
			if pos[ax]++; pos[ax] < t.Dims[ax] {
				break
			}
			pos[ax] = 0
		}
	}
	for o, s := range seeded {
		if s {
			continue
		}
		switch kind { // an empty reduction gives the identity
		case ReduceSumKind:
		case ReduceProdKind:
			accI[o], accF[o] = 1, 1
		default:
			return nil
		}
	}
	out := &Tensor{DType: t.DType, Dims: outDims, HasData: true}
	if isFloat {
		for k := range accF {
			accF[k] = RoundFloat(accF[k], t.DType)
		}
		out.Floats = accF
	} else {
		for k := range accI {
			accI[k] = WrapInt(accI[k], t.DType)
		}
		out.Ints = accI
	}
	return out
}

func reduceInt(kind ReduceKind, acc, x int64) int64 {
	switch kind {
	case ReduceSumKind:
		return acc + x
	case ReduceProdKind:
		return acc * x
	case ReduceMaxKind:
		return max(acc, x)
	}
	return min(acc, x)
}

func reduceFloat(kind ReduceKind, acc, x float64) float64 {
	switch kind {
	case ReduceSumKind:
		return acc + x
	case ReduceProdKind:
		return acc * x
	case ReduceMaxKind:
		return math.Max(acc, x)
	}
	return math.Min(acc, x)
}
