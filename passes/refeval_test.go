package passes

// A test-only reference evaluator: it runs a small graph in float64 on
// concrete inputs, so that a rewrite can be checked to preserve meaning
// (same outputs before and after the pass). It covers the ops the passes
// rewrite and the fused ops they produce; the transformer kernels
// (batched MatMul, Softmax, LayerNormalization, attention) are in
// qkv_eval_test.go. Gemm and the Winograd transforms use gonum's dense
// matrices.

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/onnxcost/onnxcost/cost"
	"github.com/onnxcost/onnxcost/ir"
	"gonum.org/v1/gonum/mat"
)

// tensor is a dense float64 array in row-major order.
type tensor struct {
	dims []int
	data []float64
}

func newTensor(dims ...int) *tensor {
	n := 1
	for _, d := range dims {
		n *= d
	}
	return &tensor{dims: append([]int(nil), dims...), data: make([]float64, n)}
}

func (t *tensor) at4(n, c, h, w int) float64 {
	d := t.dims
	return t.data[((n*d[1]+c)*d[2]+h)*d[3]+w]
}

// evaluate runs g on inputs (by graph-input name) and returns the graph
// outputs in order.
func evaluate(g *ir.Graph, inputs map[string]*tensor) ([]*tensor, error) {
	env := map[*ir.Value]*tensor{}
	for _, v := range g.Inputs {
		t, ok := inputs[v.Name]
		if !ok {
			return nil, fmt.Errorf("no value for input %q", v.Name)
		}
		env[v] = t
	}
	for _, v := range g.Initializers {
		if v.Const == nil || !v.Const.HasData {
			return nil, fmt.Errorf("initializer %q has no contents", v.Name)
		}
		env[v] = constTensor(v.Const)
	}
	return evalNodes(g, env)
}

// evalNodes runs g's nodes on env (g's inputs and initializers, and for a
// subgraph the outer values it captures) and returns g's outputs.
func evalNodes(g *ir.Graph, env map[*ir.Value]*tensor) ([]*tensor, error) {
	for _, n := range g.Nodes {
		ins := make([]*tensor, len(n.Inputs))
		for i, v := range n.Inputs {
			if v != nil {
				if ins[i] = env[v]; ins[i] == nil {
					return nil, fmt.Errorf("node %s: input %q not computed", n.Name, v.Name)
				}
			}
		}
		if k := ir.Known(n.Out(0)); k != nil {
			env[n.Out(0)] = constTensor(k) // shape arithmetic inference computed
			continue
		}
		var outs []*tensor
		var err error
		if isOp(n, "If") {
			outs, err = evalIf(n, ins, env)
		} else {
			outs, err = evalNode(n, ins)
		}
		if err != nil {
			return nil, fmt.Errorf("node %s (%s): %v", n.Name, n.OpType, err)
		}
		for i, o := range n.Outputs {
			if o != nil && i < len(outs) {
				env[o] = outs[i]
			}
		}
	}
	var outs []*tensor
	for _, v := range g.Outputs {
		if env[v] == nil {
			return nil, fmt.Errorf("graph output %q not computed", v.Name)
		}
		outs = append(outs, env[v])
	}
	return outs, nil
}

// constTensor converts known contents (integers too) to a tensor.
func constTensor(c *ir.Tensor) *tensor {
	t := &tensor{dims: intsOf(c.Dims), data: append([]float64(nil), c.Floats...)}
	if !c.DType.IsFloat() {
		t.data = nil
		for _, x := range c.Ints {
			t.data = append(t.data, float64(x))
		}
	}
	return t
}

func intsOf(d []int64) []int {
	out := make([]int, len(d))
	for i, x := range d {
		out[i] = int(x)
	}
	return out
}

func in(ins []*tensor, i int) *tensor {
	if i < len(ins) {
		return ins[i]
	}
	return nil
}

// add and mul are the binary functions broadcast applies most.
func add(a, b float64) float64 { return a + b }
func mul(a, b float64) float64 { return a * b }

// evalNode computes n's outputs from its inputs (nil where an optional
// input is omitted).
func evalNode(n *ir.Node, ins []*tensor) ([]*tensor, error) {
	one := func(t *tensor) ([]*tensor, error) { return []*tensor{t}, nil }
	switch n.OpType {
	case "Conv":
		y := conv2d(n, ins[0], ins[1])
		return one(addBias(y, in(ins, 2)))
	case "BatchNormalization":
		return one(batchNorm(ins, n.AttrFloat("epsilon", 1e-5)))
	case "Add":
		return one(broadcast(ins[0], ins[1], add))
	case "Sub":
		return one(broadcast(ins[0], ins[1], func(a, b float64) float64 { return a - b }))
	case "Mul":
		return one(broadcast(ins[0], ins[1], mul))
	case "Div":
		return one(broadcast(ins[0], ins[1], func(a, b float64) float64 { return a / b }))
	case "Pow":
		return one(broadcast(ins[0], ins[1], math.Pow))
	case "Sqrt":
		return one(unary(ins[0], math.Sqrt))
	case "Neg":
		return one(unary(ins[0], func(x float64) float64 { return -x }))
	case "Slice": // one axis (input 3, else the last), unit steps
		axis := len(ins[0].dims) - 1
		if a := in(ins, 3); a != nil {
			axis = normAxis(int(a.data[0]), len(ins[0].dims))
		}
		return one(sliceAxis(ins[0], axis, ins[1].data[0], ins[2].data[0]))
	case "Split": // sizes from input 1
		axis := normAxis(int(n.AttrInt("axis", 0)), len(ins[0].dims))
		var outs []*tensor
		at := 0.0
		for _, s := range ins[1].data {
			outs = append(outs, sliceAxis(ins[0], axis, at, at+s))
			at += s
		}
		return outs, nil
	case "Gather": // one index along axis (the only form the tests build)
		x := ins[0]
		axis := normAxis(int(n.AttrInt("axis", 0)), len(x.dims))
		i := ins[1].data[0]
		if i < 0 {
			i += float64(x.dims[axis])
		}
		dims, ok := n.Out(0).Shape.Ints()
		if !ok {
			return nil, fmt.Errorf("unknown output shape")
		}
		return one(reshape(sliceAxis(x, axis, i, i+1), intsOf(dims)))
	case "Concat":
		return one(concatAxis(ins, int(n.AttrInt("axis", 0))))
	case "Rotary":
		x := ins[0]
		d := x.dims[len(x.dims)-1]
		neg := unary(sliceLast(x, float64(d/2), float64(d)), func(v float64) float64 { return -v })
		r := concatLast(neg, sliceLast(x, 0, float64(d/2)))
		return one(broadcast(broadcast(x, ins[1], mul), broadcast(r, ins[2], mul), add))
	case "Reciprocal":
		return one(unary(ins[0], func(x float64) float64 { return 1 / x }))
	case "Cast": // float to float: the evaluator computes in float64, so rounding to the narrower type is not modelled
		if !n.In(0).DType.IsFloat() || !n.Out(0).DType.IsFloat() {
			return nil, fmt.Errorf("Cast: float to float only")
		}
		return one(ins[0])
	case "QuantizeLinear":
		return one(quantize(ins[0], ins[1], ins[2], n.Out(0).DType))
	case "DequantizeLinear":
		if len(ins[1].data) > 1 {
			if n.AttrInt("axis", 1) != 0 {
				return nil, fmt.Errorf("DequantizeLinear: per-channel only along axis 0")
			}
			return one(dequantizeChannels(ins[0], ins[1], ins[2]))
		}
		return one(dequantize(ins[0], ins[1], ins[2]))
	case "QLinearAdd":
		y := broadcast(dequantize(ins[0], ins[1], ins[2]), dequantize(ins[3], ins[4], ins[5]), add)
		return one(quantize(y, ins[6], ins[7], n.Out(0).DType))
	case "QLinearConv", "QLinearMatMul":
		x := dequantize(ins[0], ins[1], ins[2])
		var y *tensor
		if n.OpType == "QLinearConv" {
			y = addBias(conv2d(n, x, dequantizeChannels(ins[3], ins[4], ins[5])), biasDequant(in(ins, 8), ins[1], ins[4]))
		} else {
			y = bmatmul(x, dequantize(ins[3], ins[4], ins[5]))
		}
		return one(quantize(y, ins[6], ins[7], n.Out(0).DType))
	case "MaxPool", "AveragePool":
		return one(pool2d(n.OpType, attrsOf(n, ""), ins[0]))
	case "Pad": // constant mode, 4-D, pads from input 1, value from input 2 (else 0)
		v := 0.0
		if c := in(ins, 2); c != nil {
			v = c.data[0]
		}
		return one(pad4d(ins[0], ins[1].data, v))
	case "Gemm":
		return one(gemm(n, ins[0], ins[1], in(ins, 2)))
	case "MatMul":
		return one(bmatmul(ins[0], ins[1]))
	case "FusedMatMul": // onnxcost's and com.microsoft's: alpha·op(A)·op(B)
		a := transpose(ins[0], ir.FusedMatMulOperand(n, 0, len(ins[0].dims)))
		b := transpose(ins[1], ir.FusedMatMulOperand(n, 1, len(ins[1].dims)))
		alpha := float64(n.AttrFloat("alpha", 1))
		return one(unary(bmatmul(a, b), func(x float64) float64 { return alpha * x }))
	case "Reshape", "Unsqueeze", "Squeeze", "Flatten": // views: the output shape says it all
		dims, ok := n.Out(0).Shape.Ints()
		if !ok {
			return nil, fmt.Errorf("unknown output shape")
		}
		return one(reshape(ins[0], intsOf(dims)))
	case "Transpose":
		perm, _ := n.AttrInts("perm")
		return one(transpose(ins[0], intsOf(perm)))
	case "Softmax":
		if m := in(ins, 1); m != nil { // onnxcost Softmax(x, mask): fuse-bias-softmax
			return one(softmaxLast(broadcast(ins[0], m, add)))
		}
		return one(softmaxLast(ins[0]))
	case "ReduceMean":
		return reduceMeanLast(n, ins[0])
	case "Clip":
		lo, hi, _ := clipBounds(n)
		return one(unary(ins[0], func(x float64) float64 { return math.Min(math.Max(x, lo), hi) }))
	case "RMSNormalization":
		return one(rmsNorm(ins[0], in(ins, 1), n.AttrInt("axis", -1), n.AttrFloat("epsilon", 1e-5)))
	case "LayerNormalization":
		return one(layerNorm(ins[0], in(ins, 1), in(ins, 2), n.AttrInt("axis", -1), n.AttrFloat("epsilon", 1e-5)))
	case "FusedConv", "WinogradConv":
		var y *tensor
		if n.OpType == "WinogradConv" {
			y = winogradConv(n, ins[0], ins[1])
		} else {
			y = conv2d(n, ins[0], ins[1])
		}
		y = addBias(y, in(ins, 2))
		if r := in(ins, 3); r != nil {
			y = broadcast(y, r, add)
		}
		y = unary(y, activation(n, n.AttrString("activation", "")))
		if p := n.AttrString("pool", ""); p != "" {
			y = pool2d(p, attrsOf(n, "pool_"), y)
		}
		return one(y)
	case "FusedGemm":
		var y *tensor
		if n.AttrString("anchor", "") == "Gemm" {
			y = gemm(n, ins[0], ins[1], in(ins, 2))
		} else {
			y = bmatmul(ins[0], ins[1]) // a MatMul anchor may be batched
			if b := in(ins, 2); b != nil {
				y = broadcast(y, b, add)
			}
		}
		if r := in(ins, 3); r != nil {
			y = broadcast(y, r, add)
		}
		y = unary(y, activation(n, n.AttrString("activation", "")))
		if gt := in(ins, 4); gt != nil {
			y = broadcast(y, gt, mul)
		}
		return one(y)
	case "GroupedGemm":
		return groupedGemm(n, ins), nil
	case "SkipLayerNormalization":
		// input + skip + bias (the fifth input, onnxruntime's fused bias
		// Add); the sum output holds the bias too.
		s := broadcast(ins[0], ins[1], add)
		if b := in(ins, 4); b != nil {
			s = broadcast(s, b, add)
		}
		return []*tensor{layerNorm(s, in(ins, 2), in(ins, 3), n.AttrInt("axis", -1), n.AttrFloat("epsilon", 1e-5)), s}, nil
	case "FusedAttention":
		return one(fusedAttention(n, ins))
	}
	if f := activationOf(n, n.OpType, ""); f != nil {
		return one(unary(ins[0], f))
	}
	return nil, fmt.Errorf("op not in the reference evaluator")
}

// activation returns a fused node's activation function (identity when none).
func activation(n *ir.Node, name string) func(float64) float64 {
	if name == "" {
		return func(x float64) float64 { return x }
	}
	if name == "Clip" {
		lo, hi := n.AttrFloat("activation_min", math.Inf(-1)), n.AttrFloat("activation_max", math.Inf(1))
		return func(x float64) float64 { return math.Min(math.Max(x, lo), hi) }
	}
	return activationOf(n, name, "activation_")
}

// activationOf is the unary op name with its attributes read under prefix.
func activationOf(n *ir.Node, name, prefix string) func(float64) float64 {
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	switch name {
	case "Relu":
		return func(x float64) float64 { return math.Max(x, 0) }
	case "Sigmoid":
		return sig
	case "Tanh":
		return math.Tanh
	case "Silu":
		return func(x float64) float64 { return x * sig(x) }
	case "QuickGelu": // onnxcost's (fuse-quickgelu-ort) and com.microsoft's
		a := n.AttrFloat(prefix+"alpha", 1.702)
		return func(x float64) float64 { return x * sig(a*x) }
	case "LeakyRelu":
		a := n.AttrFloat(prefix+"alpha", 0.01)
		return func(x float64) float64 {
			if x < 0 {
				return a * x
			}
			return x
		}
	case "HardSwish":
		return func(x float64) float64 { return x * math.Max(0, math.Min(1, x/6+0.5)) }
	case "HardSigmoid":
		a, b := n.AttrFloat(prefix+"alpha", 0.2), n.AttrFloat(prefix+"beta", 0.5)
		return func(x float64) float64 { return math.Max(0, math.Min(1, a*x+b)) }
	case "Identity", "Dropout":
		return func(x float64) float64 { return x }
	}
	return nil
}

func unary(t *tensor, f func(float64) float64) *tensor {
	out := newTensor(t.dims...)
	for i, x := range t.data {
		out.data[i] = f(x)
	}
	return out
}

// broadcast applies f with numpy broadcasting.
func broadcast(a, b *tensor, f func(a, b float64) float64) *tensor {
	r := max(len(a.dims), len(b.dims))
	pad := func(d []int) []int {
		out := make([]int, r)
		for i := range out {
			out[i] = 1
		}
		copy(out[r-len(d):], d)
		return out
	}
	ad, bd := pad(a.dims), pad(b.dims)
	od := make([]int, r)
	for i := range od {
		od[i] = max(ad[i], bd[i])
	}
	out := newTensor(od...)
	idx := make([]int, r)
	for k := range out.data {
		rem := k
		for i := r - 1; i >= 0; i-- {
			idx[i] = rem % od[i]
			rem /= od[i]
		}
		ai, bi := 0, 0
		for i := 0; i < r; i++ {
			ai = ai*ad[i] + min(idx[i], ad[i]-1)
			bi = bi*bd[i] + min(idx[i], bd[i]-1)
		}
		out.data[k] = f(a.data[ai], b.data[bi])
	}
	return out
}

// addBias adds a per-channel bias ([K], or already [K,1,1]) to NCHW y.
func addBias(y, b *tensor) *tensor {
	if b == nil {
		return y
	}
	if len(b.dims) == 1 {
		b = &tensor{dims: []int{b.dims[0], 1, 1}, data: b.data}
	}
	return broadcast(y, b, add)
}

// convAttrs are a convolution's (or pool's) geometry.
type convAttrs struct {
	kernel, pads, strides, dilations []int
	group                            int
	ceil, countPad                   bool
}

func attrsOf(n *ir.Node, prefix string) convAttrs {
	get := func(name string, def []int) []int {
		v, ok := n.AttrInts(prefix + name)
		if !ok {
			return def
		}
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out
	}
	return convAttrs{
		kernel:    get("kernel_shape", nil),
		pads:      get("pads", []int{0, 0, 0, 0}),
		strides:   get("strides", []int{1, 1}),
		dilations: get("dilations", []int{1, 1}),
		group:     int(n.AttrInt(prefix+"group", 1)),
		ceil:      n.AttrInt(prefix+"ceil_mode", 0) != 0,
		countPad:  n.AttrInt(prefix+"count_include_pad", 0) != 0,
	}
}

// conv2d is direct convolution (cross-correlation), NCHW, no bias.
func conv2d(n *ir.Node, x, w *tensor) *tensor {
	a := attrsOf(n, "")
	N, C, H, W := x.dims[0], x.dims[1], x.dims[2], x.dims[3]
	K, Cg, R, S := w.dims[0], w.dims[1], w.dims[2], w.dims[3]
	P := (H+a.pads[0]+a.pads[2]-a.dilations[0]*(R-1)-1)/a.strides[0] + 1
	Q := (W+a.pads[1]+a.pads[3]-a.dilations[1]*(S-1)-1)/a.strides[1] + 1
	kPerG := K / a.group
	y := newTensor(N, K, P, Q)
	_ = C
	for b := 0; b < N; b++ {
		for k := 0; k < K; k++ {
			g := k / kPerG
			for p := 0; p < P; p++ {
				for q := 0; q < Q; q++ {
					s := 0.0
					for c := 0; c < Cg; c++ {
						for r := 0; r < R; r++ {
							h := p*a.strides[0] - a.pads[0] + r*a.dilations[0]
							if h < 0 || h >= H {
								continue
							}
							for t := 0; t < S; t++ {
								ww := q*a.strides[1] - a.pads[1] + t*a.dilations[1]
								if ww < 0 || ww >= W {
									continue
								}
								s += x.at4(b, g*Cg+c, h, ww) * w.at4(k, c, r, t)
							}
						}
					}
					y.data[((b*K+k)*P+p)*Q+q] = s
				}
			}
		}
	}
	return y
}

// winogradConv evaluates a 3×3 stride-1 convolution by the F(m×m,3×3)
// algorithm with the cost package's transform matrices: per tile,
// Y = Aᵀ[Σ_c (G g Gᵀ) ⊙ (Bᵀ d B)]A.
func winogradConv(n *ir.Node, x, w *tensor) *tensor {
	m := int(n.AttrInt("winograd_tile", 0))
	at, gm, bt, ok := cost.WinogradTransforms(int64(m))
	if !ok {
		panic("bad tile")
	}
	dense := func(rows [][]float64) *mat.Dense {
		d := mat.NewDense(len(rows), len(rows[0]), nil)
		for i, r := range rows {
			d.SetRow(i, r)
		}
		return d
	}
	AT, G, BT := dense(at), dense(gm), dense(bt)
	a := attrsOf(n, "")
	N, C, H, W := x.dims[0], x.dims[1], x.dims[2], x.dims[3]
	K := w.dims[0]
	P, Q := H+a.pads[0]+a.pads[2]-2, W+a.pads[1]+a.pads[3]-2
	alpha := m + 2
	// Offline filter transform U[k][c] = G g Gᵀ.
	U := make([][]*mat.Dense, K)
	for k := range U {
		U[k] = make([]*mat.Dense, C)
		for c := range U[k] {
			g := mat.NewDense(3, 3, nil)
			for r := 0; r < 3; r++ {
				for s := 0; s < 3; s++ {
					g.Set(r, s, w.at4(k, c, r, s))
				}
			}
			var t, u mat.Dense
			t.Mul(G, g)
			u.Mul(&t, G.T())
			U[k][c] = &u
		}
	}
	y := newTensor(N, K, P, Q)
	for b := 0; b < N; b++ {
		for ty := 0; ty*m < P; ty++ {
			for tx := 0; tx*m < Q; tx++ {
				// Input transform V[c] = Bᵀ d B of the α×α patch.
				V := make([]*mat.Dense, C)
				for c := 0; c < C; c++ {
					d := mat.NewDense(alpha, alpha, nil)
					for i := 0; i < alpha; i++ {
						for j := 0; j < alpha; j++ {
							h, ww := ty*m+i-a.pads[0], tx*m+j-a.pads[1]
							if h >= 0 && h < H && ww >= 0 && ww < W {
								d.Set(i, j, x.at4(b, c, h, ww))
							}
						}
					}
					var t, v mat.Dense
					t.Mul(BT, d)
					v.Mul(&t, BT.T())
					V[c] = &v
				}
				for k := 0; k < K; k++ {
					M := mat.NewDense(alpha, alpha, nil)
					for c := 0; c < C; c++ {
						var e mat.Dense
						e.MulElem(U[k][c], V[c])
						M.Add(M, &e)
					}
					var t, o mat.Dense
					t.Mul(AT, M)
					o.Mul(&t, AT.T())
					for i := 0; i < m && ty*m+i < P; i++ {
						for j := 0; j < m && tx*m+j < Q; j++ {
							y.data[((b*K+k)*P+ty*m+i)*Q+tx*m+j] = o.At(i, j)
						}
					}
				}
			}
		}
	}
	return y
}

func batchNorm(ins []*tensor, eps float64) *tensor {
	x, sc, bi, mean, vr := ins[0], ins[1], ins[2], ins[3], ins[4]
	out := newTensor(x.dims...)
	C := x.dims[1]
	inner := len(x.data) / (x.dims[0] * C)
	for i, v := range x.data {
		c := (i / inner) % C
		out.data[i] = (v-mean.data[c])/math.Sqrt(vr.data[c]+eps)*sc.data[c] + bi.data[c]
	}
	return out
}

// pad4d pads x with v by pads (ONNX order: the begins of every axis,
// then the ends).
func pad4d(x *tensor, pads []float64, v float64) *tensor {
	p := make([]int, 8)
	for i := range p {
		p[i] = int(pads[i])
	}
	d := x.dims
	y := newTensor(d[0]+p[0]+p[4], d[1]+p[1]+p[5], d[2]+p[2]+p[6], d[3]+p[3]+p[7])
	for i := range y.data {
		y.data[i] = v
	}
	for n := 0; n < d[0]; n++ {
		for c := 0; c < d[1]; c++ {
			for h := 0; h < d[2]; h++ {
				for w := 0; w < d[3]; w++ {
					y.data[(((n+p[0])*y.dims[1]+c+p[1])*y.dims[2]+h+p[2])*y.dims[3]+w+p[3]] = x.at4(n, c, h, w)
				}
			}
		}
	}
	return y
}

func pool2d(op string, a convAttrs, x *tensor) *tensor {
	N, C, H, W := x.dims[0], x.dims[1], x.dims[2], x.dims[3]
	R, S := a.kernel[0], a.kernel[1]
	out := func(in, k, pb, pe, s int) int {
		num := in + pb + pe - k
		if a.ceil {
			return (num+s-1)/s + 1
		}
		return num/s + 1
	}
	P, Q := out(H, R, a.pads[0], a.pads[2], a.strides[0]), out(W, S, a.pads[1], a.pads[3], a.strides[1])
	y := newTensor(N, C, P, Q)
	for b := 0; b < N; b++ {
		for c := 0; c < C; c++ {
			for p := 0; p < P; p++ {
				for q := 0; q < Q; q++ {
					best, sum, cnt := math.Inf(-1), 0.0, 0
					for r := 0; r < R; r++ {
						for s := 0; s < S; s++ {
							h, w := p*a.strides[0]-a.pads[0]+r, q*a.strides[1]-a.pads[1]+s
							if h < 0 || h >= H || w < 0 || w >= W {
								// count_include_pad counts a ceil_mode
								// window's overhang past the padding too,
								// as onnxruntime does (PyTorch stops at the
								// padding: TestRefEvalAveragePoolCeilOverhang).
								if a.countPad {
									cnt++
								}
								continue
							}
							v := x.at4(b, c, h, w)
							best, sum, cnt = math.Max(best, v), sum+v, cnt+1
						}
					}
					if op == "MaxPool" {
						y.data[((b*C+c)*P+p)*Q+q] = best
					} else {
						y.data[((b*C+c)*P+p)*Q+q] = sum / float64(cnt)
					}
				}
			}
		}
	}
	return y
}

func toDense(t *tensor) *mat.Dense {
	return mat.NewDense(t.dims[0], t.dims[1], append([]float64(nil), t.data...))
}

func fromDense(d *mat.Dense) *tensor {
	r, c := d.Dims()
	out := newTensor(r, c)
	for i := 0; i < r; i++ {
		for j := 0; j < c; j++ {
			out.data[i*c+j] = d.At(i, j)
		}
	}
	return out
}

func gemm(n *ir.Node, a, b, c *tensor) *tensor {
	A, B := mat.Matrix(toDense(a)), mat.Matrix(toDense(b))
	if n.AttrInt("transA", 0) != 0 {
		A = A.T()
	}
	if n.AttrInt("transB", 0) != 0 {
		B = B.T()
	}
	var y mat.Dense
	y.Mul(A, B)
	y.Scale(n.AttrFloat("alpha", 1), &y)
	out := fromDense(&y)
	if c != nil {
		beta := n.AttrFloat("beta", 1)
		out = broadcast(out, c, func(a, b float64) float64 { return a + beta*b })
	}
	return out
}

// randomInputs draws every graph input from [-1, 1).
func randomInputs(g *ir.Graph, seed int64) map[string]*tensor {
	rng := rand.New(rand.NewSource(seed))
	out := map[string]*tensor{}
	for _, v := range g.Inputs {
		dims, _ := v.Shape.Ints()
		t := newTensor(intsOf(dims)...)
		for i := range t.data {
			t.data[i] = 2*rng.Float64() - 1
		}
		out[v.Name] = t
	}
	return out
}

func (t *tensor) len() int { return len(t.data) }

// relErr is max|a-b| / max|a|, the error relative to the output's scale.
func relErr(a, b *tensor) float64 {
	if len(a.data) != len(b.data) {
		return math.Inf(1)
	}
	num, den := 0.0, 0.0
	for i := range a.data {
		num = math.Max(num, math.Abs(a.data[i]-b.data[i]))
		den = math.Max(den, math.Abs(a.data[i]))
	}
	if den == 0 {
		return num
	}
	return num / den
}

// checkPreserves evaluates g, runs the passes, evaluates again on the same
// inputs and requires every output to agree within 1e-4 (float64): the
// Winograd transforms and BatchNorm folding reorder arithmetic.
func checkPreserves(t *testing.T, g *ir.Graph, passNames ...string) {
	t.Helper()
	checkPreservesWithin(t, g, 1e-4, passNames...)
}

// checkPreservesExact is checkPreserves for rewrites that only regroup
// GEMMs and normalisations, which agree within 1e-9.
func checkPreservesExact(t *testing.T, g *ir.Graph, passNames ...string) {
	t.Helper()
	checkPreservesWithin(t, g, 1e-9, passNames...)
}

func checkPreservesWithin(t *testing.T, g *ir.Graph, tol float64, passNames ...string) {
	t.Helper()
	inputs := randomInputs(g, 7)
	before, err := evaluate(g, inputs)
	if err != nil {
		t.Fatal(err)
	}
	runPasses(t, g, passNames...)
	after, err := evaluate(g, inputs)
	if err != nil {
		t.Fatalf("after %s: %v\n%s", strings.Join(passNames, ","), err, ir.Dump(g))
	}
	for i := range before {
		e := relErr(before[i], after[i])
		t.Logf("output %d: relative error %.3g after %v", i, e, passNames)
		if !(e < tol) {
			t.Errorf("output %d: relative error %g after %v, want < %g", i, e, passNames, tol)
		}
	}
}

// TestRefEvalConv sanity-checks the evaluator itself on a convolution
// worked by hand: a 3×3 all-ones filter over a 3×3 all-ones image with
// pad 1 gives the number of in-bounds taps at each output.
func TestRefEvalConv(t *testing.T) {
	b := newBuilder(t)
	x := b.input("x", 1, 1, 3, 3)
	w := b.constant("w", []int64{1, 1, 3, 3}, []float64{1, 1, 1, 1, 1, 1, 1, 1, 1})
	b.output(b.op("Conv", []*ir.Attribute{ir.IntsAttr("pads", 1, 1, 1, 1)}, x, w))
	g := b.infer()
	one := &tensor{dims: []int{1, 1, 3, 3}, data: []float64{1, 1, 1, 1, 1, 1, 1, 1, 1}}
	out, err := evaluate(g, map[string]*tensor{"x": one})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{4, 6, 4, 6, 9, 6, 4, 6, 4} // corner 2x2, edge 2x3, centre 3x3 taps
	for i, v := range want {
		if out[0].data[i] != v {
			t.Fatalf("conv output %v, want %v", out[0].data, want)
		}
	}
}

// TestRefEvalAveragePoolCeilOverhang: an AveragePool in ceil_mode whose
// last window hangs past the input, with count_include_pad 1, divides by
// the whole window, overhang included, as onnxruntime 1.23.2's CPU
// provider computes it: [1 2 3 4] under a 3-wide window, stride 2 →
// [2, 7/3] (PyTorch's avg_pool1d(count_include_pad=True) stops at the
// padding: [2, 3.5]); with count_include_pad 0 → [2, 3.5]; with one zero
// of padding at each end and count_include_pad 1 → [1, 3, 4/3] (PyTorch
// [1, 3, 2]). The runtimes disagree, so a pass must not switch
// count_include_pad on a ceil_mode pool (fold-pad: TestFoldPadCeilMode).
func TestRefEvalAveragePoolCeilOverhang(t *testing.T) {
	pool := func(pads []int64, countPad int64) []float64 {
		b := newBuilder(t)
		x := b.input("x", 1, 1, 1, 4)
		b.output(b.op("AveragePool", []*ir.Attribute{ir.IntsAttr("kernel_shape", 1, 3), ir.IntsAttr("strides", 1, 2),
			ir.IntsAttr("pads", pads...), ir.IntAttr("ceil_mode", 1), ir.IntAttr("count_include_pad", countPad)}, x))
		out, err := evaluate(b.infer(), map[string]*tensor{"x": {dims: []int{1, 1, 1, 4}, data: []float64{1, 2, 3, 4}}})
		if err != nil {
			t.Fatal(err)
		}
		return out[0].data
	}
	for _, c := range []struct {
		pads     []int64
		countPad int64
		want     []float64
	}{
		{[]int64{0, 0, 0, 0}, 0, []float64{2, 3.5}},
		{[]int64{0, 0, 0, 0}, 1, []float64{2, 7.0 / 3}},
		{[]int64{0, 1, 0, 1}, 1, []float64{1, 3, 4.0 / 3}},
	} {
		if got := pool(c.pads, c.countPad); !slices.Equal(got, c.want) {
			t.Errorf("pads %v count_include_pad %d: %v, want %v", c.pads, c.countPad, got, c.want)
		}
	}
}

// quantize is QuantizeLinear with a per-tensor scale: round half to even,
// add the zero point, saturate to dt (int8 or uint8).
func quantize(x, scale, zp *tensor, dt ir.DType) *tensor {
	lo, hi := 0.0, 255.0
	if dt == ir.Int8 {
		lo, hi = -128, 127
	}
	return unary(x, func(v float64) float64 {
		return math.Min(math.Max(math.RoundToEven(v/scale.data[0])+zp.data[0], lo), hi)
	})
}

// dequantize is DequantizeLinear with a per-tensor scale.
func dequantize(x, scale, zp *tensor) *tensor {
	return unary(x, func(v float64) float64 { return (v - zp.data[0]) * scale.data[0] })
}

// dequantizeChannels dequantizes a conv weight [K, ...] with a scale and
// zero point per output channel (or one for all).
func dequantizeChannels(w, scale, zp *tensor) *tensor {
	if len(scale.data) == 1 {
		return dequantize(w, scale, zp)
	}
	y := newTensor(w.dims...)
	per := w.len() / w.dims[0]
	for i, v := range w.data {
		k := i / per
		z := zp.data[0]
		if len(zp.data) > 1 {
			z = zp.data[k]
		}
		y.data[i] = (v - z) * scale.data[k]
	}
	return y
}

// biasDequant is QLinearConv's int32 bias at scale x_scale·w_scale.
func biasDequant(b, xs, ws *tensor) *tensor {
	if b == nil {
		return nil
	}
	y := newTensor(b.dims...)
	for i, v := range b.data {
		s := ws.data[0]
		if len(ws.data) > 1 {
			s = ws.data[i]
		}
		y.data[i] = v * xs.data[0] * s
	}
	return y
}

// normAxis is axis counted from the front of a rank-r tensor.
func normAxis(axis, r int) int {
	if axis < 0 {
		return axis + r
	}
	return axis
}

// sliceAxis is t[start:end] along axis (clamped as sliceLast clamps): the
// axis moved last, sliced, and moved back.
func sliceAxis(t *tensor, axis int, start, end float64) *tensor {
	r := len(t.dims)
	if axis == r-1 {
		return sliceLast(t, start, end)
	}
	perm, back := make([]int, r), make([]int, r)
	for i := range perm {
		perm[i] = i
	}
	perm[axis], perm[r-1] = r-1, axis
	for i, p := range perm {
		back[p] = i
	}
	return transpose(sliceLast(transpose(t, perm), start, end), back)
}
