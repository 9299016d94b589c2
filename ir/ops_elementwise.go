package ir

// Elementwise operators: unary math and activations, broadcasting binary
// and variadic arithmetic, comparisons and logic, Cast, Where, Clip,
// Identity, the softmax family, and the elementwise contrib ops of ONNX
// Runtime. Their outputs take the (broadcast) input shape; ops in the
// constant-folding list also compute small known values (see fold.go).

import (
	"math"
	"strings"
)

func init() {
	registerFresh(unaryOps()...)
	registerFresh(binaryOps()...)
	registerFresh(variadicOps()...)
	registerFresh(
		&OpSchema{Name: "Cast", Traits: Elementwise, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferCast,
			Doc: "output dtype from the to attribute (a type name string at opset 1)"},
		&OpSchema{Name: "CastLike", Traits: Elementwise, Family: FamilyElementwise, Since: 15, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferCastLike},
		&OpSchema{Name: "Where", Traits: Elementwise, Family: FamilyData, Since: 9, MinIn: 3, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferWhere},
		&OpSchema{Name: "Clip", Traits: Elementwise, Family: FamilyElementwise, Since: 1, MinIn: 1, MaxIn: 3, MinOut: 1, MaxOut: 1, Infer: inferClip,
			Doc: "min/max are attributes before opset 11, optional inputs from 11"},
		&OpSchema{Name: "Identity", Traits: View | Alias, Family: FamilyData, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferIdentity,
			Doc: "tensors, and from opset 14/16 sequences and optionals, pass through"},
		&OpSchema{Name: "IsNaN", Since: 9, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferToBool},
		&OpSchema{Name: "IsInf", Since: 10, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1, Infer: inferToBool},
		&OpSchema{Name: "PRelu", Traits: Elementwise, Family: FamilyElementwise, Since: 1, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1, Infer: inferPRelu},
		softmaxLike("Softmax"),
		softmaxLike("LogSoftmax"),
		softmaxLike("Hardmax"),
	)
	// ONNX Runtime contrib activations found in optimized exports.
	for _, name := range []string{"Gelu", "FastGelu", "BiasGelu", "QuickGelu"} {
		registerFresh(&OpSchema{Domain: "com.microsoft", Name: name, Since: 1, MinIn: 1, MaxIn: 2, MinOut: 1, MaxOut: 1,
			Infer: inferSameAsInput, Doc: "ONNX Runtime contrib op: output shaped like input 0"})
	}
}

// with sets traits and family on a schema built by a helper.
func (s *OpSchema) with(t Traits, f Family) *OpSchema {
	s.Traits, s.Family = s.Traits|t, f
	return s
}

// inferSameAsInput gives output 0 input 0's dtype and shape.
func inferSameAsInput(c *InferCtx) error { return c.PassThrough(0, 0) }

// foldLimit is the largest number of elements a folded value may have.
func foldLimit(c *InferCtx) int64 { return c.Limits.SmallTensorElems }

// setFolded records t as output i's value when folding succeeded.
func setFolded(c *InferCtx, i int, t *Tensor) error {
	if t == nil {
		return nil
	}
	return c.SetOutConst(i, t)
}

// unaryFold holds an op's value functions: fi for integer inputs, ff for
// floating-point ones; a nil function means "do not fold that kind".
type unaryFold struct {
	fi func(x int64) (int64, bool)
	ff func(x float64) float64
}

func unarySchema(name string, since int64, fold unaryFold) *OpSchema {
	return &OpSchema{Name: name, Since: since, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
		Infer: func(c *InferCtx) error {
			if err := c.PassThrough(0, 0); err != nil {
				return err
			}
			if err := foldUnary(c, fold); err != nil {
				return err
			}
			foldSymbolic(c)
			return nil
		}}
}

func foldUnary(c *InferCtx, fold unaryFold) error {
	t := Known(c.In(0))
	if t == nil {
		return nil
	}
	switch {
	case (t.DType.IsInt() || t.DType == Bool) && fold.fi != nil:
		return setFolded(c, 0, FoldInts(t.DType, foldLimit(c), func(a []int64) (int64, bool) { return fold.fi(a[0]) }, t))
	case t.DType.IsFloat() && fold.ff != nil:
		return setFolded(c, 0, FoldFloats(t.DType, foldLimit(c), func(a []float64) (float64, bool) { return fold.ff(a[0]), true }, t))
	}
	return nil
}

// foldSymbolic hands the op to the symbolic shape arithmetic of
// ops_shape.go (symElementwise) when numeric folding left output 0 without
// a value and some input carries symbolic elements (Value.SymInts, as
// Shape of a tensor with a "batch" dim gives). That is how Mul(Gather(
// Shape(x), 0), 8) becomes "batch*8" for a later Reshape.
func foldSymbolic(c *InferCtx) {
	if out := c.Out(0); out == nil || out.Const != nil {
		return
	}
	for _, in := range c.Node.Inputs {
		if in != nil && in.SymInts != nil {
			symElementwise(c.Node.OpType, c)
			return
		}
	}
}

// intIdentity is the value function of rounding ops on integers.
func intIdentity(x int64) (int64, bool) { return x, true }

func unaryOps() []*OpSchema {
	noFold := unaryFold{}
	type row struct {
		name   string
		since  int64
		fold   unaryFold
		traits Traits
		keep   []string // EpilogueAttrs
	}
	const pw, act = Elementwise, Elementwise | FusableActivation
	rows := []row{
		{"Abs", 1, unaryFold{func(x int64) (int64, bool) { return abs64(x), true }, math.Abs}, pw, nil},
		{"Neg", 1, unaryFold{func(x int64) (int64, bool) { return -x, true }, func(x float64) float64 { return -x }}, pw, nil},
		{"Sign", 9, unaryFold{func(x int64) (int64, bool) { return sign(x), true }, sign[float64]}, pw, nil},
		{"Floor", 1, unaryFold{intIdentity, math.Floor}, pw, nil},
		{"Ceil", 1, unaryFold{intIdentity, math.Ceil}, pw, nil},
		{"Round", 11, unaryFold{intIdentity, math.RoundToEven}, pw, nil},
		{"Sqrt", 1, unaryFold{nil, math.Sqrt}, pw, nil},
		{"Reciprocal", 1, unaryFold{nil, func(x float64) float64 { return 1 / x }}, pw, nil},
		{"Relu", 1, unaryFold{func(x int64) (int64, bool) { return max(x, 0), true }, func(x float64) float64 { return math.Max(x, 0) }}, act, nil},
		{"Not", 1, unaryFold{func(x int64) (int64, bool) { return 1 - x, true }, nil}, 0, nil},
		{"BitwiseNot", 18, unaryFold{func(x int64) (int64, bool) { return ^x, true }, nil}, 0, nil},
		{"Exp", 1, unaryFold{nil, math.Exp}, pw, nil},
		{"Log", 1, unaryFold{nil, math.Log}, pw, nil},
		{"Acos", 7, noFold, pw, nil}, {"Acosh", 9, noFold, pw, nil}, {"Asin", 7, noFold, pw, nil}, {"Asinh", 9, noFold, pw, nil},
		{"Atan", 7, noFold, pw, nil}, {"Atanh", 9, noFold, pw, nil}, {"Cos", 7, noFold, pw, nil}, {"Cosh", 9, noFold, pw, nil},
		{"Sin", 7, noFold, pw, nil}, {"Sinh", 9, noFold, pw, nil}, {"Tan", 7, noFold, pw, nil}, {"Tanh", 1, noFold, act, nil},
		{"Erf", 9, noFold, pw, nil}, {"Sigmoid", 1, noFold, act, nil}, {"Softplus", 1, noFold, pw, nil}, {"Softsign", 1, noFold, pw, nil},
		{"Mish", 18, noFold, pw, nil}, {"HardSwish", 14, noFold, act, nil},
		// Activations whose parameters are attributes only.
		{"Celu", 12, noFold, pw, nil}, {"Elu", 1, noFold, act, []string{"alpha"}}, {"HardSigmoid", 1, noFold, act, []string{"alpha", "beta"}}, {"LeakyRelu", 1, noFold, act, []string{"alpha"}},
		{"Selu", 1, noFold, pw, nil}, {"Shrink", 9, noFold, pw, nil},
		// ThresholdedRelu-1 was experimental until opset 10 made it
		// standard; onnxruntime still runs it at 1-9, so those models load.
		{"ThresholdedRelu", 1, noFold, pw, nil}, {"Gelu", 20, noFold, act, nil},
		{"Swish", 24, noFold, pw, nil}, // x·sigmoid(alpha·x)
	}
	out := make([]*OpSchema, len(rows))
	for i, r := range rows {
		out[i] = unarySchema(r.name, r.since, r.fold)
		out[i].Traits, out[i].EpilogueAttrs = r.traits, r.keep
		if r.traits.Has(Elementwise) {
			out[i].Family = FamilyElementwise
		}
	}
	return out
}

// sign is Sign's fold for integers and floats: 1 or -1 by x's sign, and
// otherwise x itself, so 0, -0 and NaN stay as they are.
func sign[T int64 | float64](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// binaryKind says what a broadcasting binary op outputs.
type binaryKind int

const (
	sameType binaryKind = iota // the inputs' element type T
	boolOut                    // comparisons and logic: bool
)

// binaryFold evaluates a binary op on known values; attrs are read from c.
type binaryFold struct {
	fi func(c *InferCtx, dt DType) func(a, b int64) (int64, bool)
	ff func(c *InferCtx) func(a, b float64) (float64, bool)
}

func binarySchema(name string, since int64, kind binaryKind, fold binaryFold) *OpSchema {
	return &OpSchema{Name: name, Since: since, MinIn: 2, MaxIn: 2, MinOut: 1, MaxOut: 1,
		Infer: func(c *InferCtx) error {
			s, err := broadcastInputs(c)
			if err != nil {
				return err
			}
			dt := elemType(c)
			if kind == boolOut {
				dt = Bool
			}
			if err := c.SetOut(0, dt, s); err != nil {
				return err
			}
			if err := foldBinary(c, dt, fold); err != nil {
				return err
			}
			foldSymbolic(c)
			return nil
		}}
}

// elemType is the shared element type T of an op's inputs: input 0's, or
// the first known one when input 0's is not known.
func elemType(c *InferCtx) DType {
	for i := 0; i < c.NumIn(); i++ {
		if dt := c.InType(i); dt != Undefined {
			return dt
		}
	}
	return Undefined
}

// broadcastInputs gives the output shape of a broadcasting op over all its
// present inputs. Before opset 7 ONNX had no implicit broadcasting: B either
// had A's shape or was broadcast onto A (broadcast=1, axis), so the output
// is always A's shape.
func broadcastInputs(c *InferCtx) (Shape, error) {
	if c.Opset > 0 && c.Opset < 7 && c.InShape(0).Ranked && c.Attr("broadcast") != nil {
		return c.InShape(0).Clone(), nil
	}
	var buf [4]Shape // most ops have two or three inputs: no allocation
	shapes := buf[:0]
	for i := 0; i < c.NumIn(); i++ {
		if c.HasIn(i) {
			shapes = append(shapes, c.InShape(i))
		}
	}
	s, err := BroadcastShapes(shapes...)
	if err != nil {
		return Shape{}, c.Errorf("%w", err)
	}
	return s, nil
}

func foldBinary(c *InferCtx, out DType, fold binaryFold) error {
	ts := KnownAll(c.In(0), c.In(1))
	if ts == nil {
		return nil
	}
	a, b := ts[0], ts[1]
	isInt := func(t *Tensor) bool { return t.DType.IsInt() || t.DType == Bool }
	switch {
	case isInt(a) && isInt(b) && fold.fi != nil:
		f := fold.fi(c, a.DType)
		if f == nil {
			return nil
		}
		return setFolded(c, 0, FoldInts(out, foldLimit(c), func(x []int64) (int64, bool) { return f(x[0], x[1]) }, a, b))
	case (a.DType.IsFloat() || b.DType.IsFloat()) && fold.ff != nil:
		f := fold.ff(c)
		if f == nil {
			return nil
		}
		return setFolded(c, 0, FoldFloats(out, foldLimit(c), func(x []float64) (float64, bool) { return f(x[0], x[1]) }, a, b))
	}
	return nil
}

// Value functions of the binary ops. Integer ones get the operand dtype so
// that uint64 can divide and compare without sign.
func intOp(f func(a, b int64) (int64, bool)) func(*InferCtx, DType) func(a, b int64) (int64, bool) {
	return func(*InferCtx, DType) func(a, b int64) (int64, bool) { return f }
}

func floatOp(f func(a, b float64) (float64, bool)) func(*InferCtx) func(a, b float64) (float64, bool) {
	return func(*InferCtx) func(a, b float64) (float64, bool) { return f }
}

func boolVal(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func boolFloat(b bool) float64 { return float64(boolVal(b)) }

// intCompare builds an integer comparison that orders uint64 without sign.
func intCompare(less, equal, greater bool) func(*InferCtx, DType) func(a, b int64) (int64, bool) {
	return func(_ *InferCtx, dt DType) func(a, b int64) (int64, bool) {
		return func(a, b int64) (int64, bool) {
			lt, eq := a < b, a == b
			if dt == Uint64 {
				lt = uint64(a) < uint64(b)
			}
			return boolVal((less && lt) || (equal && eq) || (greater && !lt && !eq)), true
		}
	}
}

func floatCompare(less, equal, greater bool) func(*InferCtx) func(a, b float64) (float64, bool) {
	return floatOp(func(a, b float64) (float64, bool) {
		return boolFloat((less && a < b) || (equal && a == b) || (greater && a > b)), true
	})
}

// intDiv truncates toward zero, as ONNX Div on integers does.
func intDiv(_ *InferCtx, dt DType) func(a, b int64) (int64, bool) {
	return func(a, b int64) (int64, bool) {
		if b == 0 {
			return 0, false
		}
		if dt == Uint64 {
			return int64(uint64(a) / uint64(b)), true
		}
		return a / b, true
	}
}

// intMod follows Mod's fmod attribute: 0 gives the divisor's sign (Python
// %), 1 the dividend's (C fmod).
func intMod(c *InferCtx, dt DType) func(a, b int64) (int64, bool) {
	cFmod := c.AttrInt("fmod", 0) == 1
	return func(a, b int64) (int64, bool) {
		if b == 0 {
			return 0, false
		}
		if dt == Uint64 {
			return int64(uint64(a) % uint64(b)), true
		}
		r := a % b
		if !cFmod && r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r, true
	}
}

func floatMod(c *InferCtx) func(a, b float64) (float64, bool) {
	cFmod := c.AttrInt("fmod", 0) == 1
	return func(a, b float64) (float64, bool) {
		r := math.Mod(a, b)
		if !cFmod && r != 0 && (r < 0) != (b < 0) {
			r += b
		}
		return r, true
	}
}

// intPow raises an integer to a non-negative integer power with wrapping
// multiplication; negative exponents are not folded.
func intPow(a, b int64) (int64, bool) {
	if b < 0 {
		return 0, false
	}
	r := int64(1)
	for ; b > 0; b >>= 1 {
		if b&1 == 1 {
			r *= a
		}
		a *= a
	}
	return r, true
}

func bitShift(c *InferCtx, dt DType) func(a, b int64) (int64, bool) {
	left := strings.EqualFold(c.AttrString("direction", ""), "LEFT")
	return func(a, b int64) (int64, bool) {
		if b < 0 || b >= 64 {
			return 0, true
		}
		if left {
			return a << uint(b), true
		}
		return int64(uint64(a) >> uint(b)), true // operands are unsigned
	}
}

func binaryOps() []*OpSchema {
	add := binaryFold{intOp(func(a, b int64) (int64, bool) { return a + b, true }),
		floatOp(func(a, b float64) (float64, bool) { return a + b, true })}
	sub := binaryFold{intOp(func(a, b int64) (int64, bool) { return a - b, true }),
		floatOp(func(a, b float64) (float64, bool) { return a - b, true })}
	mul := binaryFold{intOp(func(a, b int64) (int64, bool) { return a * b, true }),
		floatOp(func(a, b float64) (float64, bool) { return a * b, true })}
	div := binaryFold{intDiv, floatOp(func(a, b float64) (float64, bool) { return a / b, true })}
	pow := binaryFold{intOp(intPow), floatOp(func(a, b float64) (float64, bool) { return math.Pow(a, b), true })}
	logic := func(f func(a, b bool) bool) binaryFold {
		return binaryFold{fi: intOp(func(a, b int64) (int64, bool) { return boolVal(f(a != 0, b != 0)), true })}
	}
	bitwise := func(f func(a, b int64) int64) binaryFold {
		return binaryFold{fi: intOp(func(a, b int64) (int64, bool) { return f(a, b), true })}
	}
	return []*OpSchema{
		binarySchema("Add", 1, sameType, add).with(Elementwise|Commutative, FamilyElementwise).numeric(),
		binarySchema("Sub", 1, sameType, sub).with(Elementwise, FamilyElementwise).numeric(),
		binarySchema("Mul", 1, sameType, mul).with(Elementwise|Commutative, FamilyElementwise).numeric(),
		binarySchema("Div", 1, sameType, div).with(Elementwise, FamilyElementwise).numeric(),
		binarySchema("Pow", 1, sameType, pow).with(Elementwise, FamilyElementwise).numeric(),
		binarySchema("Mod", 10, sameType, binaryFold{intMod, floatMod}).with(Elementwise, FamilyElementwise).numeric(),
		binarySchema("BitShift", 11, sameType, binaryFold{fi: bitShift}),
		binarySchema("BitwiseAnd", 18, sameType, bitwise(func(a, b int64) int64 { return a & b })),
		binarySchema("BitwiseOr", 18, sameType, bitwise(func(a, b int64) int64 { return a | b })),
		binarySchema("BitwiseXor", 18, sameType, bitwise(func(a, b int64) int64 { return a ^ b })),
		binarySchema("And", 1, boolOut, logic(func(a, b bool) bool { return a && b })),
		binarySchema("Or", 1, boolOut, logic(func(a, b bool) bool { return a || b })),
		binarySchema("Xor", 1, boolOut, logic(func(a, b bool) bool { return a != b })),
		binarySchema("Equal", 1, boolOut, binaryFold{intCompare(false, true, false), floatCompare(false, true, false)}),
		binarySchema("Less", 1, boolOut, binaryFold{intCompare(true, false, false), floatCompare(true, false, false)}),
		binarySchema("Greater", 1, boolOut, binaryFold{intCompare(false, false, true), floatCompare(false, false, true)}),
		binarySchema("LessOrEqual", 12, boolOut, binaryFold{intCompare(true, true, false), floatCompare(true, true, false)}),
		binarySchema("GreaterOrEqual", 12, boolOut, binaryFold{intCompare(false, true, true), floatCompare(false, true, true)}),
	}
}

// variadicOps are Max, Min, Sum and Mean: one or more inputs broadcast
// together (before opset 8 they had to share one shape).
func variadicOps() []*OpSchema {
	type row struct {
		name string
		fi   func(acc, x int64) int64
		ff   func(acc, x float64) float64
		mean bool
	}
	rows := []row{
		{"Max", func(a, b int64) int64 { return max(a, b) }, math.Max, false},
		{"Min", func(a, b int64) int64 { return min(a, b) }, math.Min, false},
		{"Sum", func(a, b int64) int64 { return a + b }, func(a, b float64) float64 { return a + b }, false},
		{"Mean", nil, func(a, b float64) float64 { return a + b }, true},
	}
	out := make([]*OpSchema, len(rows))
	for i, r := range rows {
		out[i] = &OpSchema{Name: r.name, Since: 1, MinIn: 1, MaxIn: -1, MinOut: 1, MaxOut: 1,
			Traits: Elementwise, Family: FamilyElementwise, Check: checkNumeric,
			Infer: func(c *InferCtx) error {
				s, err := broadcastInputs(c)
				if err != nil {
					return err
				}
				dt := elemType(c)
				if err := c.SetOut(0, dt, s); err != nil {
					return err
				}
				if err := foldVariadic(c, dt, r.fi, r.ff, r.mean); err != nil {
					return err
				}
				foldSymbolic(c)
				return nil
			}}
	}
	return out
}

func foldVariadic(c *InferCtx, dt DType, fi func(acc, x int64) int64, ff func(acc, x float64) float64, mean bool) error {
	ts := KnownAll(c.Node.Inputs...)
	if ts == nil {
		return nil
	}
	if dt.IsFloat() {
		return setFolded(c, 0, FoldFloats(dt, foldLimit(c), func(x []float64) (float64, bool) {
			acc := x[0]
			for _, v := range x[1:] {
				acc = ff(acc, v)
			}
			if mean {
				acc /= float64(len(x))
			}
			return acc, true
		}, ts...))
	}
	if fi == nil {
		return nil
	}
	return setFolded(c, 0, FoldInts(dt, foldLimit(c), func(x []int64) (int64, bool) {
		acc := x[0]
		for _, v := range x[1:] {
			acc = fi(acc, v)
		}
		return acc, true
	}, ts...))
}

// onnxTypeNames maps the TensorProto.DataType names that Cast's opset-1
// string attribute uses.
var onnxTypeNames = map[string]DType{
	"FLOAT": Float32, "UINT8": Uint8, "INT8": Int8, "UINT16": Uint16, "INT16": Int16,
	"INT32": Int32, "INT64": Int64, "STRING": String, "BOOL": Bool, "FLOAT16": Float16,
	"DOUBLE": Float64, "UINT32": Uint32, "UINT64": Uint64, "COMPLEX64": Complex64,
	"COMPLEX128": Complex128, "BFLOAT16": BFloat16,
}

func inferCast(c *InferCtx) error {
	a := c.Attr("to")
	if a == nil {
		return c.Errorf("has no to attribute")
	}
	var to DType
	switch a.Type {
	case AttrString:
		var ok bool
		if to, ok = onnxTypeNames[strings.ToUpper(a.S)]; !ok {
			return c.Errorf("to=%q is not a tensor type", a.S)
		}
	default:
		to = DType(a.I)
	}
	if !to.Valid() || to == Undefined {
		return c.Errorf("to=%d is not a tensor type", a.I)
	}
	return castTo(c, to)
}

func inferCastLike(c *InferCtx) error {
	return castTo(c, c.InType(1))
}

// castTo sets output 0 to input 0's shape with dtype to, and folds.
func castTo(c *InferCtx, to DType) error {
	if err := c.SetOut(0, to, c.InShape(0).Clone()); err != nil {
		return err
	}
	t := Known(c.In(0))
	if t == nil {
		foldSymbolic(c)
		return nil
	}
	if t.DType == to {
		return c.SetOutConst(0, t)
	}
	if n, ok := elemCount(t.Dims); !ok || n > foldLimit(c) {
		return nil
	}
	return setFolded(c, 0, CastTensor(t, to))
}

func inferWhere(c *InferCtx) error {
	s, err := broadcastInputs(c)
	if err != nil {
		return err
	}
	dt := c.InType(1)
	if dt == Undefined {
		dt = c.InType(2)
	}
	if err := c.SetOut(0, dt, s); err != nil {
		return err
	}
	ts := KnownAll(c.In(0), c.In(1), c.In(2))
	if ts == nil {
		foldSymbolic(c)
		return nil
	}
	pick := func(x []float64) (float64, bool) {
		if x[0] != 0 {
			return x[1], true
		}
		return x[2], true
	}
	if dt.IsFloat() {
		return setFolded(c, 0, FoldFloats(dt, foldLimit(c), pick, ts...))
	}
	return setFolded(c, 0, FoldInts(dt, foldLimit(c), func(x []int64) (int64, bool) {
		if x[0] != 0 {
			return x[1], true
		}
		return x[2], true
	}, ts...))
}

func inferClip(c *InferCtx) error {
	if err := c.PassThrough(0, 0); err != nil {
		return err
	}
	t := Known(c.In(0))
	if t == nil {
		return nil
	}
	lo, hi := math.Inf(-1), math.Inf(1)
	if c.Opset > 0 && c.Opset < 11 {
		lo, hi = c.AttrFloat("min", lo), c.AttrFloat("max", hi)
	} else {
		for i, bound := range []*float64{&lo, &hi} {
			if !c.HasIn(i + 1) {
				continue
			}
			b := Known(c.In(i + 1))
			if b == nil || len(b.Ints)+len(b.Floats) != 1 {
				return nil // a bound not known: the value is not known
			}
			*bound = elemFloat(b, 0)
		}
	}
	clamp := func(x float64) float64 { return math.Min(math.Max(x, lo), hi) }
	if t.DType.IsFloat() {
		return foldUnary(c, unaryFold{ff: clamp})
	}
	return foldUnary(c, unaryFold{fi: func(x int64) (int64, bool) {
		v := float64(x)
		if v < lo {
			return int64(lo), true
		}
		if v > hi {
			return int64(hi), true
		}
		return x, true
	}})
}

// inferIdentity copies the input's kind, type, shape and known value.
func inferIdentity(c *InferCtx) error {
	in, out := c.In(0), c.Out(0)
	if in == nil || out == nil {
		return nil
	}
	out.Kind = in.Kind
	out.DType = in.DType
	out.Shape = in.Shape.Clone()
	out.Const = in.Const
	out.SymInts = append([]Dim(nil), in.SymInts...)
	if in.SymInts == nil {
		out.SymInts = nil
	}
	return nil
}

func inferToBool(c *InferCtx) error {
	return c.SetOut(0, Bool, c.InShape(0).Clone())
}

// inferPRelu: slope broadcasts onto X (unidirectionally from opset 7), so
// the output has X's shape.
func inferPRelu(c *InferCtx) error {
	x := c.InShape(0)
	if !x.Ranked {
		return c.PassThrough(0, 0)
	}
	if c.Opset >= 7 {
		if _, err := BroadcastShapes(x, c.InShape(1)); err != nil {
			return c.Errorf("slope does not broadcast onto X: %w", err)
		}
	}
	return c.PassThrough(0, 0)
}

// softmaxLike covers Softmax, LogSoftmax and Hardmax: same shape as the
// input; the axis default moved from 1 to -1 at opset 13.
func softmaxLike(name string) *OpSchema {
	return &OpSchema{Name: name, Family: FamilyNorm, Since: 1, MinIn: 1, MaxIn: 1, MinOut: 1, MaxOut: 1,
		Infer: func(c *InferCtx) error {
			def := int64(-1)
			if c.Opset > 0 && c.Opset < 13 {
				def = 1
			}
			if r := c.InShape(0).Rank(); r > 0 {
				if _, err := c.NormAxis(c.AttrInt("axis", def), r); err != nil {
					return err
				}
			}
			return c.PassThrough(0, 0)
		}}
}
