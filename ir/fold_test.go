package ir

import (
	"math"
	"testing"
)

func TestBroadcastDims(t *testing.T) {
	cases := []struct {
		in   [][]int64
		want []int64
		ok   bool
	}{
		{[][]int64{{2, 1, 4}, {3, 1}}, []int64{2, 3, 4}, true},
		{[][]int64{{}, {5}}, []int64{5}, true},
		{[][]int64{{0, 1}, {1, 3}}, []int64{0, 3}, true},
		{[][]int64{{2}, {3}}, nil, false},
	}
	for _, c := range cases {
		got, ok := BroadcastDims(c.in...)
		if ok != c.ok || !KnownShape(got...).Equal(KnownShape(c.want...)) && ok {
			t.Errorf("BroadcastDims(%v) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestBroadcastIndex(t *testing.T) {
	// [2,1] broadcast to [2,3] reads element 0 three times, then element 1.
	got := broadcastIndex([]int64{2, 3}, []int64{2, 1}, 6)
	want := []int64{0, 0, 0, 1, 1, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("index %v, want %v", got, want)
		}
	}
	// [3] broadcast to [2,3] cycles through its elements.
	got = broadcastIndex([]int64{2, 3}, []int64{3}, 6)
	want = []int64{0, 1, 2, 0, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("index %v, want %v", got, want)
		}
	}
}

func TestWrapInt(t *testing.T) {
	cases := []struct {
		v    int64
		dt   DType
		want int64
	}{
		{200, Int8, 200 - 256},
		{-1, Uint8, 255},
		{1 << 31, Int32, -(1 << 31)},
		{-1, Uint32, 1<<32 - 1},
		{70000, Uint16, 70000 - 65536},
		{15, Int4, -1},
		{17, Uint4, 1},
		{5, Bool, 1},
		{1 << 40, Int64, 1 << 40},
	}
	for _, c := range cases {
		if got := WrapInt(c.v, c.dt); got != c.want {
			t.Errorf("WrapInt(%d, %s) = %d, want %d", c.v, c.dt, got, c.want)
		}
	}
}

func TestRoundFloat(t *testing.T) {
	cases := []struct {
		v    float64
		dt   DType
		want float64
	}{
		{0.1, Float32, float64(float32(0.1))},
		{0.1, Float64, 0.1},
		// float16 has 10 mantissa bits: 1 + 2^-11 is a tie, rounding to even (1).
		{1 + math.Ldexp(1, -11), Float16, 1},
		{1 + 3*math.Ldexp(1, -11), Float16, 1 + math.Ldexp(1, -9)},
		{65504, Float16, 65504},
		{70000, Float16, math.Inf(1)},
		{math.Ldexp(1, -24), Float16, math.Ldexp(1, -24)}, // smallest subnormal
		// bfloat16 keeps 7 mantissa bits: 1 + 2^-8 is a tie, rounding to even (1).
		{1 + math.Ldexp(1, -8), BFloat16, 1},
		{1 + 3*math.Ldexp(1, -8), BFloat16, 1 + math.Ldexp(1, -6)},
		{3.0, BFloat16, 3.0},
	}
	for _, c := range cases {
		if got := RoundFloat(c.v, c.dt); got != c.want {
			t.Errorf("RoundFloat(%v, %s) = %v, want %v", c.v, c.dt, got, c.want)
		}
	}
}

func TestCastTensor(t *testing.T) {
	// NaN has no integer value: no fold rather than a made-up number.
	if got := CastTensor(FloatTensor(Float32, []int64{1}, []float64{math.NaN()}), Int64); got != nil {
		t.Errorf("NaN to int folded to %v", got.Ints)
	}
	s := &Tensor{DType: String, Dims: []int64{2}, Strings: []string{"3.5", "-2"}, HasData: true}
	got := CastTensor(s, Int32)
	if got == nil || got.Ints[0] != 3 || got.Ints[1] != -2 {
		t.Errorf("string cast = %v, want [3 -2]", got)
	}
	if got := CastTensor(IntTensor(nil, []int64{1}), Float8E4M3FN); got != nil {
		t.Errorf("cast to float8 folded: %v", got.Floats)
	}
	// uint64's top bit survives a round trip through float64.
	u := &Tensor{DType: Uint64, Dims: []int64{1}, Ints: []int64{-1}, HasData: true}
	if got := CastTensor(u, Float64); got == nil || got.Floats[0] != math.Ldexp(1, 64) {
		t.Errorf("uint64 max to float64 = %v", got)
	}
}

func TestFoldRejectsCorruptData(t *testing.T) {
	// Dims promise 4 elements but only 2 were decoded: no fold, no panic.
	bad := &Tensor{DType: Int64, Dims: []int64{4}, Ints: []int64{1, 2}, HasData: true}
	if got := FoldInts(Int64, 100, func(a []int64) (int64, bool) { return a[0], true }, bad); got != nil {
		t.Errorf("folded corrupt tensor: %v", got)
	}
	if got := ReduceTensor(bad, []int{0}, false, 100, ReduceSumKind); got != nil {
		t.Errorf("reduced corrupt tensor: %v", got)
	}
	if got := CastTensor(bad, Float32); got != nil {
		t.Errorf("cast corrupt tensor: %v", got)
	}
	neg := &Tensor{DType: Int64, Dims: []int64{-1}, HasData: true}
	if Known(&Value{Const: neg}) != nil {
		t.Error("negative dim accepted")
	}
}

func TestReduceTensor(t *testing.T) {
	// [2,2,3] holding 0..11; reducing axes 0 and 2 leaves one sum per middle index.
	vals := make([]int64, 12)
	for i := range vals {
		vals[i] = int64(i)
	}
	x := IntTensor([]int64{2, 2, 3}, vals)
	got := ReduceTensor(x, []int{0, 2}, true, 100, ReduceSumKind)
	// middle 0: {0,1,2} and {6,7,8}; middle 1: {3,4,5} and {9,10,11}.
	want := []int64{0 + 1 + 2 + 6 + 7 + 8, 3 + 4 + 5 + 9 + 10 + 11}
	if got == nil || !KnownShape(got.Dims...).Equal(KnownShape(1, 2, 1)) || got.Ints[0] != want[0] || got.Ints[1] != want[1] {
		t.Fatalf("got %v, want dims [1 2 1] values %v", got, want)
	}
	if got := ReduceTensor(IntTensor([]int64{0}, nil), []int{0}, false, 100, ReduceMaxKind); got != nil {
		t.Errorf("max over empty axis folded to %v", got.Ints)
	}
	if got := ReduceTensor(IntTensor([]int64{0}, nil), []int{0}, false, 100, ReduceProdKind); got == nil || got.Ints[0] != 1 {
		t.Errorf("prod over empty axis = %v, want 1", got)
	}
}

// familyAOps lists the schemas of this family, for checks over all of them.
var familyAOps = []string{
	"Abs", "Acos", "Acosh", "Add", "And", "Asin", "Asinh", "Atan", "Atanh", "BitShift", "BitwiseAnd", "BitwiseNot",
	"BitwiseOr", "BitwiseXor", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Cos", "Cosh", "Div", "Elu", "Equal", "Erf",
	"Exp", "Floor", "Gelu", "Greater", "GreaterOrEqual", "HardSigmoid", "HardSwish", "Hardmax", "Identity", "IsInf",
	"IsNaN", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "Max", "Mean", "Min", "Mish", "Mod", "Mul", "Neg",
	"Not", "Or", "PRelu", "Pow", "Reciprocal", "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
	"Softmax", "SoftmaxCrossEntropyLoss", "NegativeLogLikelihoodLoss", "Softplus", "Softsign", "Sqrt", "Sub", "Sum",
	"Tan", "Tanh", "ThresholdedRelu", "Where", "Xor", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
	"ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare", "ArgMax", "ArgMin",
	"BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization", "LpNormalization",
	"MeanVarianceNormalization", "LRN", "Dropout", "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear",
	"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike", "Multinomial", "Bernoulli", "EyeLike",
	"SimplifiedLayerNormalization",
	"com.microsoft::Gelu", "com.microsoft::FastGelu", "com.microsoft::BiasGelu", "com.microsoft::QuickGelu",
	"com.microsoft::SkipLayerNormalization", "com.microsoft::SimplifiedLayerNormalization",
	"com.microsoft::SkipSimplifiedLayerNormalization",
}

// constVariants are known input values of every kind, including a
// truncated one, that the no-panic test feeds to each schema.
var constVariants = []*Tensor{
	nil,
	IntTensor([]int64{2}, []int64{1, -2}),
	IntTensor([]int64{0}, nil),
	FloatTensor(Float32, []int64{2}, []float64{math.NaN(), 1e30}),
	{DType: Bool, Dims: []int64{2}, Ints: []int64{1, 0}, HasData: true},
	{DType: String, Dims: []int64{1}, Strings: []string{"x"}, HasData: true},
	{DType: Int64, Dims: []int64{3}, Ints: []int64{1}, HasData: true}, // corrupt: too few values
	{DType: Uint64, Dims: []int64{1}, Ints: []int64{-1}, HasData: true},
}

// Every schema must cope with inputs of unknown type, absent optional
// inputs and odd opsets without panicking: such values arise downstream of
// unknown ops and in hostile files.
func TestFamilyANoPanic(t *testing.T) {
	shapes := []Shape{Unranked(), RankedShape(), KnownShape(0), KnownShape(2, 3), RankedShape(S("n"), D(1))}
	for _, name := range familyAOps {
		domain, op := "", name
		if len(name) > 15 && name[:15] == "com.microsoft::" {
			domain, op = "com.microsoft", name[15:]
		}
		s := LookupOp(domain, op)
		if s == nil {
			t.Errorf("%s is not registered", name)
			continue
		}
		nin, nout := s.MaxIn, s.MaxOut
		if nin < 0 {
			nin = 3
		}
		if nout < 0 {
			nout = 3
		}
		for _, opset := range []int64{0, 1, 6, 11, 13, 18, 21} {
			for si, sh := range shapes {
				for _, dropInputs := range []bool{false, true} {
					for _, cv := range constVariants {
						n := &Node{Name: "n", OpType: op, Domain: domain}
						for i := 0; i < nin; i++ {
							if dropInputs && i > 0 {
								n.Inputs = append(n.Inputs, nil)
								continue
							}
							v := &Value{Name: "x", Shape: sh.Clone(), DType: DType(si)}
							if cv != nil {
								v.Const, v.DType, v.Shape = cv, cv.DType, cv.Shape()
							}
							n.Inputs = append(n.Inputs, v)
						}
						for i := 0; i < nout; i++ {
							n.Outputs = append(n.Outputs, &Value{Name: "y"})
						}
						fresh := 0
						c := &InferCtx{Node: n, Opset: opset, Limits: &DefaultLimits, fresh: &fresh}
						func() {
							defer func() {
								if r := recover(); r != nil {
									t.Errorf("%s opset %d shape %s: panic %v", name, opset, sh, r)
								}
							}()
							_ = s.Infer(c) // errors are fine; panics are not
						}()
					}
				}
			}
		}
	}
}
